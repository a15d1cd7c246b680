// Keyboard shortcuts for the player, anywhere in the app but a text field: Space plays or
// pauses, ← and → skip back and forward, ? lists them in a dialog.

import { h, button, replace } from "./dom.js";
import { SKIP_BACK, SKIP_FORWARD } from "./player-controls.js";
import { onLanguageChange, t } from "./i18n.js";

/** The shortcuts: their keys, and what they do in the page's language. */
const shortcuts = () => [
  [[t("player.keys.space")], t("player.keys.toggle")],
  [["←"], t("player.back", { count: SKIP_BACK })],
  [["→"], t("player.forward", { count: SKIP_FORWARD })],
  [["?"], t("player.keys.show")],
];

/** Where a key belongs to what has the focus: typing, a list box, a slider, a button's Space. */
function typing(target, key) {
  if (!(target instanceof Element)) return false;
  if (target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']")) return true;
  // Space on a button or a link presses it; a dialog's keys are its own.
  if (key === " " && target.closest("button, a[href], summary, [role='button']")) return true;
  return Boolean(target.closest("dialog"));
}

export function mountShortcuts(player) {
  const dialog = helpDialog();
  document.body.append(dialog.el);
  const help = button(t("player.keys.title"), { icon: "keyboard", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost player-help", onClick: () => dialog.open() });
  player.extras.append(help);
  onLanguageChange(() => {
    help.setAttribute("aria-label", t("player.keys.title"));
    help.title = t("player.keys.title");
    dialog.relabel();
  });

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || typing(event.target, event.key)) return;
    // Signed out: the login screen has no player.
    if (player.root.closest("#shell")?.hidden) return;
    if (event.key === "?") {
      event.preventDefault();
      dialog.open();
      return;
    }
    if (!player.current) return;
    switch (event.key) {
      case " ":
        player.toggle();
        break;
      case "ArrowLeft":
        player.skip(-SKIP_BACK);
        break;
      case "ArrowRight":
        player.skip(SKIP_FORWARD);
        break;
      default:
        return;
    }
    event.preventDefault();
  });
}

function helpDialog() {
  const close = button(t("player.keys.close"), { kind: "secondary" });
  const title = h("h2", { class: "dialog-title", id: "shortcuts-title" });
  const list = h("dl", { class: "shortcuts" });
  const note = h("p", { class: "dialog-text" });
  const el = h("dialog", { class: "dialog shortcuts-dialog", id: "shortcuts-dialog", aria: { labelledby: "shortcuts-title" } }, title, list, note, h("div", { class: "dialog-actions" }, close));
  close.addEventListener("click", () => el.close());
  const relabel = () => {
    title.textContent = t("player.keys.title");
    replace(list, shortcuts().map(([keys, what]) => h("div", { class: "shortcut" }, h("dt", null, keys.map((k) => h("kbd", { text: k }))), h("dd", { text: what }))));
    note.textContent = t("player.keys.note");
    close.querySelector(".btn-label").textContent = t("player.keys.close");
  };
  relabel();
  return {
    el,
    relabel,
    open() {
      if (!el.open) el.showModal();
      close.focus();
    },
  };
}
