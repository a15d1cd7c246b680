// Browser notifications when a download completes or fails (the Notification API). Off until the
// user turns them on with a click on the page (the only time the permission is asked for); the
// choice is remembered in localStorage. A notification's title and body are plain text by
// definition: names and messages from the daemon (a URL's file name, a server's error) go there
// and nowhere else.

import { api } from "./api.js";
import { store } from "./store.js";
import { transferName } from "./format.js";
import { language, t } from "./i18n.js";

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
    if (!this.supported()) return t("notify.unsupported");
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
        ? t("notify.blocked")
        : t("notify.dismissed");
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
    let transfer = store.get(event.transferId);
    if (!transfer) transfer = await api.transfers.get(event.transferId).catch(() => null);
    const name = transfer ? transfer.taskDescription || transferName({ ...transfer, path: event.path || transfer.path }) : event.path ? event.path.split("/").pop() : t("notify.aDownload");
    const failed = event.kind === "failed";
    const reason = event.error?.message || transfer?.error?.message || "";
    show(failed ? t("notify.failed") : t("notify.finished"), failed && reason ? t("error.withPrefix", { prefix: name, message: reason }) : name, event.transferId);
  },
};

function show(title, body, transferId) {
  try {
    const note = new window.Notification(String(title), { body: String(body), tag: `ferry-${transferId}`, icon: "/img/logo.svg", lang: language() });
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
