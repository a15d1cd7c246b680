// The extension's settings and pairing, in chrome.storage.local (only this extension reads it).

export const DEFAULTS = Object.freeze({
  // Where the daemon answers: `ferry status` says (7447 unless that port was taken).
  daemonURL: "http://127.0.0.1:7447",
  // The token the daemon gave at pairing; it may create and read transfers, nothing else.
  token: "",
  pairedAt: "",
  // True after the daemon refused the token (revoked, or another extension paired since).
  needsPairing: false,
  // The session Ferry files the browser's downloads under.
  session: "browser",
  takeOver: {
    enabled: false,
    // Only downloads at least this large (MB); 0: any size. Unknown sizes are taken.
    minSizeMB: 0,
    // File extensions ("zip iso") or MIME types ("video/*"); empty: every type.
    types: "",
    // Sites (host names, their subdomains included) whose downloads stay with the browser.
    bypassSites: "",
    // Held while clicking a link, this key keeps its download with the browser: alt, shift, ctrl, meta or none.
    modifier: "alt",
  },
  // What happened to the last download handed over (or not), for the popup.
  lastResult: null,
});

export async function loadSettings() {
  const stored = await chrome.storage.local.get(null);
  return { ...DEFAULTS, ...stored, takeOver: { ...DEFAULTS.takeOver, ...(stored.takeOver ?? {}) } };
}

export async function saveSettings(changes) {
  await chrome.storage.local.set(changes);
}

/// The daemon's address as typed, checked: http(s), loopback only (the daemon listens there; its
/// token is never sent anywhere else), no path.
export function normalizeDaemonURL(text) {
  let url;
  try {
    url = new URL(String(text).trim());
  } catch {
    throw new Error(`"${text}" is not an address; give one like http://127.0.0.1:7447.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("The daemon's address starts with http://.");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const loopback = host === "localhost" || host.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "::1";
  if (!loopback) throw new Error("Ferry's daemon listens on this machine only: use http://127.0.0.1:PORT or http://localhost:PORT.");
  return url.origin;
}
