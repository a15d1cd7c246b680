// Messages in the page: toasts for errors and confirmations, and the connection banner
// ("Reconnecting…"). Errors are always readable sentences, never silence.

import { h, icon, button } from "./dom.js";
import { LANGUAGES, language, setLanguage, t } from "./i18n.js";

let toasts = null;

export function mountToasts(container) {
  toasts = container;
}

/**
 * Shows a message. kind: "error" (stays 8 s, role=alert), "success" or "info" (4 s).
 * Returns a function that dismisses it.
 */
export function toast(message, { kind = "info", timeout } = {}) {
  if (!toasts) {
    console.warn(message);
    return () => {};
  }
  const text = typeof message === "string" ? message : message?.message || String(message);
  // The same message twice in a row: show it once.
  for (const existing of toasts.children) {
    if (existing.dataset.text === text) existing.remove();
  }
  const dismiss = () => {
    el.classList.add("leaving");
    setTimeout(() => el.remove(), 180);
  };
  const el = h(
    "div",
    { class: ["toast", `toast-${kind}`], role: kind === "error" ? "alert" : "status", data: { text } },
    icon(kind === "error" ? "alert" : kind === "success" ? "check" : "wave", "toast-icon"),
    h("p", { class: "toast-text", text }),
    button(t("action.dismiss"), { icon: "x", iconOnly: true, kind: "ghost", onClick: dismiss }),
  );
  toasts.append(el);
  while (toasts.children.length > 4) toasts.firstElementChild.remove();
  setTimeout(dismiss, timeout ?? (kind === "error" ? 8000 : 4000));
  return dismiss;
}

/** Shows an error from a failed call as a toast. */
export function showError(error, prefix = "") {
  const message = error?.message || String(error);
  toast(prefix ? t("error.withPrefix", { prefix, message }) : message, { kind: "error" });
}

/** An inline error box, for messages that belong to one place (a form, a list). */
export function errorBox(message, { retry } = {}) {
  return h(
    "div",
    { class: "error-box", role: "alert" },
    icon("alert", "error-icon"),
    h("p", { text: message }),
    retry ? button(t("action.tryAgain"), { kind: "secondary", icon: "refresh", onClick: retry }) : null,
  );
}

/** The empty state of a list: an icon, a title and a hint. */
export function emptyState(iconName, title, hint, ...extra) {
  return h("div", { class: "empty" }, h("div", { class: "empty-icon" }, icon(iconName)), h("h2", { text: title }), hint ? h("p", { text: hint }) : null, ...extra);
}

/** A spinner with a label for screen readers. */
export function spinner(label = t("status.loading")) {
  return h("span", { class: "spinner", role: "status", aria: { label } });
}

/**
 * A button that runs an async action: disabled while it runs, errors shown as a toast.
 * `busyLabel` replaces the label meanwhile.
 */
export async function withBusy(buttonEl, action, busyLabel) {
  if (buttonEl.disabled) return undefined;
  const label = buttonEl.querySelector(".btn-label");
  const original = label?.textContent;
  buttonEl.disabled = true;
  buttonEl.classList.add("busy");
  if (label && busyLabel) label.textContent = busyLabel;
  try {
    return await action();
  } catch (error) {
    if (error?.name !== "AbortError") showError(error);
    return undefined;
  } finally {
    buttonEl.disabled = false;
    buttonEl.classList.remove("busy");
    if (label && busyLabel) label.textContent = original;
  }
}

/**
 * The language switch: a <select> of the languages, each named in itself. `compact` shows only
 * a globe over the (invisible, still focusable) select, for the phone's top bar.
 */
export function languageSwitch({ compact = false } = {}) {
  const select = h(
    "select",
    // data-i18n-*: the shell's switches stay, so translate() names them anew in each language.
    { class: "language-select", aria: { label: t("language.label") }, title: t("language.label"), data: { i18nLabel: "language.label", i18nTitle: "language.label" } },
    LANGUAGES.map(({ code, name }) => h("option", { value: code, lang: code, selected: code === language(), text: name })),
  );
  select.addEventListener("change", () => {
    setLanguage(select.value).catch((error) => {
      console.warn("language not switched", error);
      select.value = language();
      toast(t("language.error"), { kind: "error" });
    });
  });
  return h("label", { class: ["language", compact && "language-compact"] }, icon("globe"), select);
}
