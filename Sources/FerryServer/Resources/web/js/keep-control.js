// "Keep on this device" for one episode or song (keep.js): a button to keep it; while its bytes
// come, how many, with pause or resume and remove; once kept, a mark and remove; a failure says
// why (no room: the browser's quota) in the page's language.

import { h, icon, button, replace, progressBar } from "./dom.js";
import { amount, bytes } from "./format.js";
import { t } from "./i18n.js";
import { showError, toast } from "./ui.js";
import { keeper } from "./keep.js";

/** Why keeping stopped, in words. */
export function keepError(facts) {
  if (facts?.error === "quota") return t("keep.error.quota");
  if (facts?.error === "http") return t("keep.error.refused");
  return t("keep.error.network");
}

/** Runs a keeping action: no room is said in words (the browser's quota), anything else as the error says. */
function attempt(action) {
  return action().catch((error) => (error?.name === "QuotaExceededError" ? toast(t("keep.error.quota"), { kind: "error" }) : showError(error)));
}

/**
 * The control for the item `what()` describes ({key, kind, id, title, ..., source, total}, read
 * when it is kept). `compact`: icon buttons only (a song's row). Updates itself; nothing at all
 * where the browser cannot keep anything (no service worker: not HTTPS).
 */
export function keepControl(what, { compact = false } = {}) {
  const el = h("div", { class: ["keep", compact && "keep-compact"] });
  if (!keeper.supported()) {
    el.hidden = true;
    return el;
  }
  const key = what().key;
  const bar = progressBar("keep-bar");
  const text = h("span", { class: "keep-text" });
  const actions = h("span", { class: "keep-actions" });
  let shown = null;
  let wasConnected = false;

  const title = () => what().title || t("player.untitled");
  const remove = () =>
    button(t("keep.remove"), { icon: "trash", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost act-unkeep", "aria-label": t("keep.removeName", { title: title() }), onClick: () => attempt(() => keeper.remove(key)) });

  function render() {
    const facts = keeper.get(key);
    const state = facts?.state ?? "none";
    el.dataset.state = state;
    if (state === "fetching" || state === "paused" || state === "failed") {
      const kept = keeper.bytes(key);
      const total = facts.total || null;
      bar.set(total ? kept / total : state === "fetching" ? null : 0, amount({ state: "running", bytesReceived: kept, totalBytes: total }));
      bar.el.classList.toggle("paused", state !== "fetching");
      const done = total ? amount({ state: "running", bytesReceived: kept, totalBytes: total }) : bytes(kept);
      text.textContent = state === "failed" ? keepError(facts) : state === "paused" ? t("keep.paused", { done }) : t("keep.fetching", { done });
      text.classList.toggle("is-error", state === "failed");
      text.setAttribute("role", state === "failed" ? "alert" : "status");
    } else if (state === "done") {
      text.textContent = compact ? "" : t("keep.kept", { size: bytes(facts.total || facts.bytes) });
      text.classList.remove("is-error");
      text.removeAttribute("role");
    }
    if (state === shown) return;
    shown = state;
    switch (state) {
      case "none":
        replace(
          el,
          button(t("keep.keep"), {
            icon: "phone",
            iconOnly: compact,
            kind: compact ? "ghost" : "secondary",
            class: compact ? "btn btn-icon btn-ghost act-keep" : "btn btn-secondary act-keep",
            "aria-label": t("keep.keepName", { title: title() }),
            onClick: () => attempt(() => keeper.keep(what())),
          }),
        );
        break;
      case "fetching":
        replace(actions, button(t("keep.pause"), { icon: "pause", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost act-keep-pause", "aria-label": t("keep.pauseName", { title: title() }), onClick: () => attempt(() => keeper.pause(key)) }), remove());
        replace(el, compact ? null : bar.el, text, actions);
        break;
      case "paused":
      case "failed":
        replace(actions, button(t("keep.resume"), { icon: state === "failed" ? "refresh" : "resume", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost act-keep-resume", "aria-label": t("keep.resumeName", { title: title() }), onClick: () => attempt(() => keeper.resume(key)) }), remove());
        replace(el, compact ? null : bar.el, text, actions);
        break;
      default:
        replace(el, h("span", { class: "tag tag-done keep-done", title: t("keep.onDevice") }, icon("phone"), h("span", { class: "tag-label", text: t("keep.onDevice") })), text, remove());
    }
  }

  const unsubscribe = keeper.subscribe((changed) => {
    // Gone from the page (its row redrawn): it stops listening.
    if (wasConnected && !el.isConnected) {
      unsubscribe();
      return;
    }
    wasConnected ||= el.isConnected;
    if (changed === null || changed === key) render();
  });
  render();
  return el;
}
