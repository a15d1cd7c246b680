// The page's language: English, 简体中文, Русский or Tiếng Việt. Each has a catalogue in
// /i18n/<lang>.json of flat keys ("nav.podcasts") to text with {name} placeholders; a plural is
// an object keyed by Intl.PluralRules categories ({"one": "{count} episode", "other": ...}).
//
// The catalogues load while this module is evaluated (a top-level await), so every module that
// imports it, and so the first render, has its words. A key the language lacks falls back to
// English, with a console warning: a missing translation is a bug, never a blank.

export const LANGUAGES = [
  { code: "en", name: "English" },
  { code: "zh-Hans", name: "简体中文" },
  { code: "ru", name: "Русский" },
  { code: "vi", name: "Tiếng Việt" },
];

const KEY = "ferry.language";
const catalogues = new Map(); // code → {key: text or plural forms}
const listeners = new Set();
const warned = new Set();
let current = "en";
let plurals = new Intl.PluralRules("en");
let numbers = new Intl.NumberFormat("en");

/** The supported code for a BCP 47 tag ("ru-RU" → "ru", "zh-TW" → "zh-Hans"), or null. */
export function supported(tag) {
  const primary = String(tag || "").toLowerCase().split(/[-_]/)[0];
  return LANGUAGES.find(({ code }) => code.slice(0, 2) === primary)?.code ?? null;
}

function saved() {
  try {
    return supported(localStorage.getItem(KEY));
  } catch {
    return null; // storage blocked
  }
}

/** The user's choice, else the first of the browser's languages that Ferry speaks, else English. */
export function preferredLanguage(languages = navigator.languages || [navigator.language]) {
  return saved() ?? languages.map(supported).find(Boolean) ?? "en";
}

async function load(code) {
  if (catalogues.has(code)) return catalogues.get(code);
  const response = await fetch(`/i18n/${code}.json`, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`/i18n/${code}.json: ${response.status}`);
  const catalogue = await response.json();
  catalogues.set(code, catalogue);
  return catalogue;
}

/** The current language's code ("en", "zh-Hans", "ru", "vi"): also its BCP 47 tag for Intl. */
export function language() {
  return current;
}

function use(code) {
  current = code;
  plurals = new Intl.PluralRules(code);
  numbers = new Intl.NumberFormat(code);
  document.documentElement.lang = code;
}

/**
 * The text of `key` in the current language, its {placeholders} replaced by `params` (numbers
 * formatted for the language). With a plural, `params.count` picks the form.
 */
export function t(key, params = {}) {
  let entry = catalogues.get(current)?.[key];
  if (entry === undefined) {
    entry = catalogues.get("en")?.[key];
    warn(key);
    if (entry === undefined) return key;
  }
  if (typeof entry === "object" && entry !== null) entry = entry[plurals.select(Number(params.count))] ?? entry.other;
  return String(entry).replace(/\{(\w+)\}/g, (whole, name) => {
    const value = params[name];
    if (value === undefined || value === null) return whole;
    return typeof value === "number" ? numbers.format(value) : String(value);
  });
}

function warn(key) {
  const what = `${current}:${key}`;
  if (warned.has(what)) return;
  warned.add(what);
  console.warn(`i18n: missing key "${key}" in ${current}`);
}

/**
 * Switches the page to `code`: loads its catalogue, remembers the choice, sets <html lang>, and
 * tells every listener (the app re-renders its shell and the current view).
 */
export async function setLanguage(code) {
  const next = supported(code);
  if (!next) throw new Error(`unsupported language: ${code}`);
  await load(next);
  try {
    localStorage.setItem(KEY, next);
  } catch {
    // Storage blocked: the choice lasts until the page closes.
  }
  if (next === current) return;
  use(next);
  for (const listener of listeners) listener(next);
}

/** listener(code) after every change of language; returns unsubscribe. */
export function onLanguageChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Fills elements marked data-i18n (text), data-i18n-label (aria-label) and data-i18n-title. */
export function translate(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
  for (const el of root.querySelectorAll("[data-i18n-title]")) el.setAttribute("title", t(el.dataset.i18nTitle));
}

// English is every language's fallback, so it always loads; without it the keys show.
async function start() {
  const wanted = preferredLanguage();
  const [english] = await Promise.allSettled([load("en"), wanted === "en" ? null : load(wanted)]);
  if (english.status === "rejected") console.warn("i18n: the English catalogue did not load", english.reason);
  use(catalogues.has(wanted) ? wanted : "en");
}

await start();
