// Ferry's web app: the shell, hash navigation (#/search, #/podcasts, #/podcasts/ID, #/said,
// #/downloads, #/device, and an admin's #/settings and #/users), the login screen, and the live event stream that keeps the transfer store true.

import { h, icon, replace } from "./dom.js";
import { language, onLanguageChange, t, translate } from "./i18n.js";
import { api, onUnauthorized } from "./api.js";
import { store } from "./store.js";
import { EventStream } from "./events.js";
import { notifications } from "./notify.js";
import { Player } from "./player.js";
import { UpNext } from "./up-next.js";
import { Playlists } from "./playlists.js";
import { languageSwitch, mountToasts, toast } from "./ui.js";
import { mountSearch } from "./views/search.js";
import { mountPodcasts } from "./views/podcasts.js";
import { mountPodcast } from "./views/podcast.js";
import { mountSaid } from "./views/said.js";
import { mountDownloads } from "./views/downloads.js";
import { mountSettings } from "./views/settings.js";
import { mountUsers } from "./views/users.js";
import { mountDevice } from "./views/device.js";
import { registerServiceWorker, sendPositionsWhenBack } from "./offline.js";

const $ = (selector) => document.querySelector(selector);

const ROUTES = [
  { pattern: /^\/search$/, nav: "search", title: () => t("nav.search"), mount: mountSearch },
  { pattern: /^\/podcasts$/, nav: "podcasts", title: () => t("nav.podcasts"), mount: mountPodcasts },
  { pattern: /^\/said$/, nav: "podcasts", title: () => t("said.title"), mount: mountSaid },
  { pattern: /^\/podcasts\/(\d+)$/, nav: "podcasts", title: () => t("nav.podcast"), mount: mountPodcast, params: (m) => ({ id: m[1] }) },
  { pattern: /^\/downloads$/, nav: "downloads", title: () => t("nav.downloads"), mount: mountDownloads },
  { pattern: /^\/device$/, nav: "device", title: () => t("nav.device"), mount: mountDevice },
  // An admin's: a member's /v1/me says so, and the daemon refuses them the API (403) anyway.
  { pattern: /^\/settings$/, nav: "settings", admin: true, title: () => t("nav.settings"), mount: mountSettings },
  { pattern: /^\/users$/, nav: "users", admin: true, title: () => t("nav.users"), mount: mountUsers },
];

const app = {
  view: null,
  routeKey: null,
  path: "/search",
  player: null,
  events: null,
  started: false,
  loggedOut: false,
  /** Who is signed in (/v1/me): {user?, role}; admins see Settings and Users. */
  me: null,
};

const isAdmin = () => app.me?.role === "admin";

function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/search";
  const [path, query = ""] = raw.split("?");
  return { path: path || "/search", query: Object.fromEntries(new URLSearchParams(query)) };
}

/** Rewrites the current address's query (#/search?q=jazz) without a navigation. */
function setQuery(query) {
  const search = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== "")).toString();
  const hash = `#${app.path}${search ? `?${search}` : ""}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function route() {
  const { path, query } = parseHash();
  let match = null;
  let found = null;
  for (const candidate of ROUTES) {
    match = candidate.pattern.exec(path);
    if (match) {
      found = candidate;
      break;
    }
  }
  if (!found || (found.admin && !isAdmin())) {
    history.replaceState(null, "", "#/search");
    return route();
  }
  app.path = path;
  const params = { ...query, ...(found.params ? found.params(match) : {}) };
  const key = `${found.mount.name}:${params.id ?? ""}`;
  for (const link of document.querySelectorAll(".nav-link")) {
    if (link.dataset.view === found.nav) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${found.title()} · Ferry`;
  if (key === app.routeKey && app.view) {
    app.view.update?.(params);
    return undefined;
  }
  app.view?.unmount?.();
  const container = h("div", { class: `view-body view-${found.nav}` });
  replace($("#view"), container);
  app.routeKey = key;
  app.view = found.mount(container, params, { store, player: app.player, navigate, setQuery, toast, me: app.me, admin: isAdmin() });
  $("#main").scrollTo?.(0, 0);
  window.scrollTo(0, 0);
  return undefined;
}

// MARK: Connection state

let bannerTimer = null;
let connection = "connecting";

function connectionLabel(status) {
  if (status === "open") return t("connection.open");
  if (status === "reconnecting") return t("connection.reconnecting");
  if (status === "stopped") return t("connection.stopped");
  return t("connection.connecting");
}

function connectionChanged(status) {
  connection = status;
  for (const el of document.querySelectorAll(".connection")) {
    el.dataset.state = status;
    el.querySelector(".connection-text").textContent = connectionLabel(status);
  }
  const banner = $("#banner");
  clearTimeout(bannerTimer);
  if (status === "reconnecting") {
    // A blip shorter than this is not worth a banner.
    bannerTimer = setTimeout(() => {
      banner.hidden = false;
      document.body.classList.add("is-reconnecting");
    }, 300);
  } else {
    const wasShown = !banner.hidden;
    banner.hidden = true;
    document.body.classList.remove("is-reconnecting");
    if (status === "open" && wasShown) toast(t("connection.back"), { kind: "success" });
  }
}

let badgeFrame = 0;
function updateBadge() {
  if (badgeFrame) return;
  badgeFrame = requestAnimationFrame(() => {
    badgeFrame = 0;
    const count = store.activeCount();
    const badge = $("#nav-badge");
    badge.hidden = count === 0;
    badge.textContent = String(count);
    badge.setAttribute("aria-label", t("nav.activeCount", { count }));
  });
}

// MARK: Login

function showLogin() {
  if (app.loggedOut) return;
  app.loggedOut = true;
  app.events?.stop();
  app.view?.unmount?.();
  app.view = null;
  app.routeKey = null;
  app.player?.close();
  $("#shell").hidden = true;
  renderLogin({ focus: true });
}

/** `focus`: the name field takes the focus (not when the language switch redraws it). */
function renderLogin({ focus = false } = {}) {
  document.title = `${t("login.title")} · Ferry`;
  replace(
    $("#login"),
    h(
      "div",
      { class: "login-card", role: "main" },
      h("img", { class: "login-logo", src: "/img/logo.svg", alt: "", width: "64", height: "64" }),
      h("h1", { text: t("login.heading") }),
      passwordForm(focus),
      onThisMachine() ? linkSteps() : trustHint(),
      h("div", { class: "login-language" }, languageSwitch()),
    ),
  );
  $("#login").hidden = false;
}

/** The page was opened on the server itself: the one-time link of `ferry open` works here. */
function onThisMachine() {
  const host = location.hostname;
  return host === "localhost" || host === "127.0.0.1" || host === "[::1]" || host.endsWith(".localhost");
}

/** A user's name and password (`ferry user add NAME`): the session cookie comes back. */
function passwordForm(focus) {
  const name = h("input", { id: "login-name", name: "username", autocomplete: "username", autocapitalize: "none", spellcheck: "false", required: true, maxlength: "64" });
  const password = h("input", { id: "login-password", name: "password", type: "password", autocomplete: "current-password", required: true, maxlength: "1024" });
  const error = h("p", { class: "login-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "btn btn-primary login-submit" }, h("span", { class: "btn-label", text: t("login.submit") }));
  const form = h(
    "form",
    { class: "login-form", on: { submit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      error.hidden = true;
      try {
        await api.logIn(name.value.trim(), password.value);
        location.reload();
      } catch (failure) {
        password.value = "";
        error.textContent = failure.status === 401 ? t("login.wrong") : failure.message;
        error.hidden = false;
        password.focus();
      } finally {
        submit.disabled = false;
      }
    } } },
    h("label", { for: "login-name", text: t("login.name") }),
    name,
    h("label", { for: "login-password", text: t("login.password") }),
    password,
    error,
    submit,
  );
  if (focus) queueMicrotask(() => name.focus());
  return form;
}

/** On the server's own screen: `ferry open` prints a one-time link. */
function linkSteps() {
  const copy = h("button", { type: "button", class: "btn btn-icon btn-ghost", aria: { label: t("login.copyCommand") }, title: t("login.copy") }, icon("copy"));
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText("ferry open");
      toast(t("login.copied", { command: "ferry open" }), { kind: "success" });
    } catch {
      toast(t("login.copyByHand"), { kind: "info" });
    }
  });
  const retry = h("button", { type: "button", class: "btn btn-ghost", on: { click: () => location.reload() } }, icon("refresh"), h("span", { class: "btn-label", text: t("login.retry") }));
  return h(
    "div",
    { class: "login-link" },
    h("p", { class: "login-lead", text: t("login.lead") }),
    h("ol", { class: "login-steps" },
      h("li", null, h("span", { text: t("login.step1") }), h("div", { class: "command" }, icon("terminal"), h("code", { text: "ferry open" }), copy)),
      h("li", { text: t("login.step2") }),
    ),
    retry,
  );
}

/** From another device: Ferry's own CA, to trust once, when it signed this server's certificate. */
function trustHint() {
  const hint = h("p", { class: "login-trust", hidden: true }, h("a", { href: "/ca.pem", download: "ferry-ca.crt", text: t("login.trust") }));
  fetch("/ca.pem", { credentials: "omit", cache: "no-store" }).then((response) => { hint.hidden = !response.ok; }).catch(() => {});
  return hint;
}

// MARK: Language

/** Says everything again in the new language: the shell, the login screen or the current view. */
function languageChanged() {
  translate();
  for (const select of document.querySelectorAll(".language-select")) select.value = language();
  connectionChanged(connection);
  updateBadge();
  if (app.loggedOut) {
    renderLogin();
    $("#login .language-select")?.focus(); // the switch that was just used was redrawn
    return;
  }
  if (!app.events) return; // not started yet: the first route comes in the new language
  app.routeKey = null;
  route();
}

// MARK: Start

async function start() {
  mountToasts($("#toasts"));
  translate();
  $(".sidebar-footer").prepend(languageSwitch());
  $(".topbar .logout").before(languageSwitch({ compact: true }));
  onLanguageChange(languageChanged);
  onUnauthorized(showLogin);
  registerServiceWorker();
  try {
    await api.status();
  } catch (error) {
    if (error.status === 401) return; // the login screen is up
    // The daemon served this page, so this is a blip: start anyway; the stream reconnects.
    // (Offline, the service worker served it: the banner says so, what is kept plays.)
    if (navigator.onLine) toast(error.message, { kind: "error" });
  }
  app.me = await api.me().catch(() => null);
  for (const link of document.querySelectorAll("[data-admin]")) link.hidden = !isAdmin();
  $("#login").hidden = true;
  $("#shell").hidden = false;
  app.player = new Player($("#player"));
  // A playlist played through hears an item's end before Up Next does: it goes on.
  const playlists = new Playlists(app.player);
  new UpNext(app.player);
  playlists.mount();
  const sendPositions = sendPositionsWhenBack(app.player);
  for (const button of document.querySelectorAll(".logout")) {
    button.addEventListener("click", async () => {
      await api.logout().catch(() => {});
      showLogin();
    });
  }
  store.subscribe(updateBadge);
  store.subscribe((change) => {
    if (change.type === "remove") app.player.forget(change.id);
  });

  app.events = new EventStream({
    onEvent: (event) => {
      store.apply(event);
      notifications.handle(event).catch((error) => console.warn("notification failed", error));
    },
    onOpen: () => {
      sendPositions();
      store.resync().catch((error) => {
        if (error.status !== 401) toast(t("error.withPrefix", { prefix: t("error.readDownloads"), message: error.message }), { kind: "error" });
      });
    },
    onResync: () => store.resync().catch(() => {}),
    onStatus: connectionChanged,
    probe: () => api.status(),
  });
  app.events.start();

  window.addEventListener("hashchange", route);
  route();
  document.body.classList.add("ready");
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
