// Browser notifications when a download completes or fails (the Notification API). Off until the
// user turns them on with a click on the page (the only time the permission is asked for); the
// choice is remembered in localStorage. A notification's title and body are plain text by
// definition: names and messages from the daemon (a URL's file name, a server's error) go there
// and nowhere else.

import { api } from "./api.js";
import { store } from "./store.js";
import { transferName } from "./format.js";

const KEY = "ferry.notifications";

function remembered() {
  try {
    return localStorage.getItem(KEY) === "on";
  } catch {
    return false; // storage blocked: never on by itself
  }
}

function remember(on) {
  try {
    localStorage.setItem(KEY, on ? "on" : "off");
  } catch {
    // Storage blocked: the choice lasts until the page closes.
  }
}

let onForPage = null; // the choice when storage is blocked
const notified = new Set();

export const notifications = {
  supported() {
    return typeof window.Notification === "function";
  },

  /** "granted", "denied", "default", or "unsupported". */
  permission() {
    return this.supported() ? window.Notification.permission : "unsupported";
  },

  /** On: the user turned them on and the browser still allows them. */
  enabled() {
    return this.permission() === "granted" && (onForPage ?? remembered());
  },

  /**
   * Turns them on, asking the browser first if it has not been asked (call it from a click).
   * Resolves to null when on, else a sentence that says why not.
   */
  async enable() {
    if (!this.supported()) return "This browser can't show notifications.";
    let permission = window.Notification.permission;
    if (permission === "default") {
      try {
        permission = await window.Notification.requestPermission();
      } catch {
        permission = window.Notification.permission;
      }
    }
    if (permission !== "granted") {
      return permission === "denied"
        ? "Notifications are blocked for this page. Allow them in the browser's site settings, then turn them on again."
        : "Notifications stay off: the browser's question was dismissed.";
    }
    onForPage = true;
    remember(true);
    return null;
  },

  disable() {
    onForPage = false;
    remember(false);
  },

  /** Shows a notification for a `completed` or `failed` event of the stream, once per event. */
  async handle(event) {
    if (event.kind !== "completed" && event.kind !== "failed") return;
    if (!this.enabled()) return;
    const key = `${event.transferId}:${event.kind}:${event.seq ?? event.date ?? ""}`;
    if (notified.has(key)) return;
    notified.add(key);
    let t = store.get(event.transferId);
    if (!t) t = await api.transfers.get(event.transferId).catch(() => null);
    const name = t ? t.taskDescription || transferName({ ...t, path: event.path || t.path }) : event.path ? event.path.split("/").pop() : "A download";
    const failed = event.kind === "failed";
    const reason = event.error?.message || t?.error?.message || "";
    show(failed ? "Download failed" : "Download finished", failed && reason ? `${name}: ${reason}` : name, event.transferId);
  },
};

function show(title, body, transferId) {
  try {
    const note = new window.Notification(String(title), { body: String(body), tag: `ferry-${transferId}`, icon: "/img/logo.svg", lang: "en" });
    note.addEventListener("click", () => {
      window.focus();
      if (location.hash.split("?")[0] !== "#/downloads") location.hash = "#/downloads";
      note.close();
    });
  } catch (error) {
    // Some browsers (Chrome on Android) only show them from a service worker.
    console.warn("notification not shown", error);
  }
}
