// Human-readable numbers: decimal units as file managers show them ("1.2 MB"), percentages with
// one decimal ("42.0% of 1.2 MB"), speeds, times left, durations and dates.

const UNITS = ["B", "kB", "MB", "GB", "TB", "PB"];

/** 999 B, 1.2 kB, 12.3 MB, 123 MB, 1.5 GB */
export function bytes(count) {
  if (typeof count !== "number" || !Number.isFinite(count) || count < 0) return "";
  let value = count;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(count)} B`;
  let text = value < 100 ? value.toFixed(1) : value.toFixed(0);
  if (text === "100.0") text = "100";
  // 999.7 kB would print as "1000 kB": the next unit says it better.
  if (text === "1000" && unit < UNITS.length - 1) return `1.0 ${UNITS[unit + 1]}`;
  return `${text} ${UNITS[unit]}`;
}

/** 0.42 → "42.0%" */
export function percent(fraction) {
  const clamped = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  return `${(clamped * 100).toFixed(1)}%`;
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
  return `${percent(f)} of ${bytes(transfer.totalBytes)}`;
}

/** "312 kB/s", or "" when unknown. */
export function speed(bytesPerSecond) {
  if (typeof bytesPerSecond !== "number" || !Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return "";
  return `${bytes(bytesPerSecond)}/s`;
}

/** "8 s left", "3 min left", "1 h 5 min left"; "" when unknown. */
export function eta(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return "";
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s left`;
  if (s < 3600) return `${Math.round(s / 60)} min left`;
  const hours = Math.floor(s / 3600);
  const minutes = Math.round((s % 3600) / 60);
  return minutes ? `${hours} h ${minutes} min left` : `${hours} h left`;
}

/** 449.3 → "7:29", 3723 → "1:02:03" */
export function clock(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return "";
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor(total / 60) % 60;
  const s = total % 60;
  const pad = (n) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** An episode's length: "34 min", "1 h 5 min", "45 s". */
export function length(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) return "";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m ? `${h} h ${m} min` : `${h} h`;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });

function toDate(value) {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** "Nov 22, 2026" */
export function date(value) {
  const d = toDate(value);
  return d ? dateFormat.format(d) : "";
}

/** "Nov 22, 2026, 02:15 PM" */
export function dateTime(value) {
  const d = toDate(value);
  return d ? dateTimeFormat.format(d) : "";
}

/** "just now", "5 min ago", "3 h ago", or the date. */
export function ago(value, now = Date.now()) {
  const d = toDate(value);
  if (!d) return "";
  const seconds = (now - d.getTime()) / 1000;
  if (seconds < 45) return "just now";
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return date(d);
}

/** "1 episode", "3 episodes" */
export function plural(count, one, many = `${one}s`) {
  return `${count} ${count === 1 ? one : many}`;
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
