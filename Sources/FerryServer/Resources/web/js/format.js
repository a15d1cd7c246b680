// Human-readable numbers in the page's language (i18n.js), through Intl: sizes in decimal units
// as file managers show them ("1.2 MB", "1,2 МБ"), percentages with one decimal ("42.0% of
// 1.2 MB"), speeds, times left, durations, dates and relative times.

import { language, t } from "./i18n.js";

const UNITS = ["byte", "kilobyte", "megabyte", "gigabyte", "terabyte", "petabyte"];

const formatters = new Map();

/** An Intl formatter of the current language with these options, made once. */
function intl(Kind, options) {
  const key = `${Kind.name}:${language()}:${JSON.stringify(options)}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Kind(language(), options);
    formatters.set(key, formatter);
  }
  return formatter;
}

/** A number with a byte unit: narrow symbols (CLDR's short English byte is "byte"), spaced even
 * where the narrow form glues them ("1.2kB" in English). */
function withUnit(value, unit, digits) {
  const parts = intl(Intl.NumberFormat, { style: "unit", unit, unitDisplay: "narrow", minimumFractionDigits: digits, maximumFractionDigits: digits }).formatToParts(value);
  const at = parts.findIndex((part) => part.type === "unit");
  if (at > 0 && parts[at - 1].type !== "literal") parts.splice(at, 0, { value: " " });
  return parts.map((part) => part.value).join("");
}

function sized(count, perSecond) {
  let value = count;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  // One decimal below 100 ("12.3 MB"), none above ("123 MB"); 999.7 kB is 1.0 MB, not 1000 kB.
  let rounded = unit === 0 ? Math.round(value) : value < 100 ? Math.round(value * 10) / 10 : Math.round(value);
  if (rounded >= 1000 && unit > 0 && unit < UNITS.length - 1) {
    rounded = 1;
    unit += 1;
  }
  const digits = unit === 0 || rounded >= 100 ? 0 : 1;
  return withUnit(rounded, perSecond ? `${UNITS[unit]}-per-second` : UNITS[unit], digits);
}

/** 999 B, 1.2 kB, 12.3 MB, 123 MB, 1.5 GB (ru: 1,2 кБ) */
export function bytes(count) {
  if (typeof count !== "number" || !Number.isFinite(count) || count < 0) return "";
  return sized(count, false);
}

/** 0.42 → "42.0%" (ru: "42,0 %") */
export function percent(fraction) {
  const clamped = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  return intl(Intl.NumberFormat, { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(clamped);
}

/** The fraction done (0…1) of a transfer, or null when its size is unknown. */
export function fraction(transfer) {
  if (!transfer) return null;
  if (transfer.state === "completed") return 1;
  const total = transfer.totalBytes;
  if (typeof total !== "number" || total <= 0) return null;
  return Math.min(1, Math.max(0, (transfer.bytesReceived || 0) / total));
}

/** "42.0% of 1.2 MB", or "340 kB" while the size is unknown. */
export function amount(transfer) {
  const f = fraction(transfer);
  if (f === null) return bytes(transfer.bytesReceived || 0);
  return t("format.percentOf", { percent: percent(f), total: bytes(transfer.totalBytes) });
}

/** "312 kB/s", or "" when unknown. */
export function speed(bytesPerSecond) {
  if (typeof bytesPerSecond !== "number" || !Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return "";
  return sized(bytesPerSecond, true);
}

// Durations: the numbers from Intl, the unit words from the catalogues, since CLDR's short
// English ("8 sec", "1 hr") is not the "8 s", "1 h" Ferry shows.
const seconds = (n) => t("duration.seconds", { n });
const minutes = (n) => t("duration.minutes", { n });
const hours = (h, m) => (m ? t("duration.hoursMinutes", { h, m }) : t("duration.hours", { n: h }));

/** "8 s left", "3 min left", "1 h 5 min left"; "" when unknown. */
export function eta(secondsLeft) {
  if (typeof secondsLeft !== "number" || !Number.isFinite(secondsLeft) || secondsLeft < 0) return "";
  const s = Math.ceil(secondsLeft);
  let time;
  if (s < 60) time = seconds(s);
  else if (s < 3600) time = minutes(Math.round(s / 60));
  else time = hours(Math.floor(s / 3600), Math.round((s % 3600) / 60));
  return t("duration.left", { time });
}

/** 449.3 → "7:29", 3723 → "1:02:03" */
export function clock(total) {
  if (typeof total !== "number" || !Number.isFinite(total) || total < 0) return "";
  const rounded = Math.round(total);
  const h = Math.floor(rounded / 3600);
  const m = Math.floor(rounded / 60) % 60;
  const s = rounded % 60;
  const pad = (n) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** An episode's length: "34 min", "1 h 5 min", "45 s". */
export function length(total) {
  if (typeof total !== "number" || !Number.isFinite(total) || total <= 0) return "";
  if (total < 60) return seconds(Math.round(total));
  const m = Math.round(total / 60);
  return m < 60 ? minutes(m) : hours(Math.floor(m / 60), m % 60);
}

function toDate(value) {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** "Nov 22, 2026" (ru: "22 нояб. 2026 г.") */
export function date(value) {
  const d = toDate(value);
  return d ? intl(Intl.DateTimeFormat, { year: "numeric", month: "short", day: "numeric" }).format(d) : "";
}

/** "Nov 22, 2026, 02:15 PM" (ru: "22 нояб. 2026 г., 14:15") */
export function dateTime(value) {
  const d = toDate(value);
  return d ? intl(Intl.DateTimeFormat, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }).format(d) : "";
}

/** "14:05:10": a time of day on the 24-hour clock. */
export function timeOfDay(value) {
  const d = toDate(value);
  return d ? intl(Intl.DateTimeFormat, { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" }).format(d) : "";
}

/** "just now", "5 minutes ago", "3 hours ago", or the date. */
export function ago(value, now = Date.now()) {
  const d = toDate(value);
  if (!d) return "";
  const elapsed = (now - d.getTime()) / 1000;
  if (elapsed < 45) return t("format.justNow");
  const relative = intl(Intl.RelativeTimeFormat, { numeric: "auto", style: "long" });
  if (elapsed < 3600) return relative.format(-Math.max(1, Math.round(elapsed / 60)), "minute");
  if (elapsed < 86400) return relative.format(-Math.round(elapsed / 3600), "hour");
  return date(d);
}

/** "A, B and C" (ru: "A, B и C"). */
export function list(items) {
  return intl(Intl.ListFormat, { type: "conjunction" }).format(items.map(String));
}

/** A short name for a transfer: its file name once known, else the URL's last path segment. */
export function transferName(transfer) {
  if (transfer.path) return transfer.path.split("/").pop();
  try {
    const url = new URL(transfer.url);
    const last = decodeURIComponent(url.pathname.split("/").filter(Boolean).pop() || "");
    return last || url.host;
  } catch {
    return transfer.url;
  }
}

/** The host of a URL, or the text itself. */
export function host(text) {
  try {
    return new URL(text).host;
  } catch {
    return text || "";
  }
}

const AUDIO = /\.(mp3|m4a|aac|ogg|oga|opus|flac|wav)$/i;
const VIDEO = /\.(mp4|m4v|webm)$/i;

/** "audio", "video" or "file", from a file name. */
export function mediaKind(name) {
  if (AUDIO.test(name || "")) return "audio";
  if (VIDEO.test(name || "")) return "video";
  return "file";
}
