// Keyboard shortcuts for the player, anywhere in the app but a text field: Space plays or
// pauses, ← and → skip back and forward, ? lists them in a dialog.

import { h, button } from "./dom.js";
import { SKIP_BACK, SKIP_FORWARD } from "./player-controls.js";

const TEXT = {
  title: "Keyboard shortcuts",
  close: "Close",
  help: "Keyboard shortcuts",
  shortcuts: [
    [["Space"], "Play or pause"],
    [["←"], `Back ${SKIP_BACK} seconds`],
    [["→"], `Forward ${SKIP_FORWARD} seconds`],
    [["?"], "Show these shortcuts"],
  ],
  note: "They work anywhere but in a text field.",
};

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
  player.extras.append(button(TEXT.help, { icon: "keyboard", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost player-help", onClick: () => dialog.open() }));

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
  const close = button(TEXT.close, { kind: "secondary" });
  const el = h(
    "dialog",
    { class: "dialog shortcuts-dialog", id: "shortcuts-dialog", aria: { labelledby: "shortcuts-title" } },
    h("h2", { class: "dialog-title", id: "shortcuts-title", text: TEXT.title }),
    h(
      "dl",
      { class: "shortcuts" },
      TEXT.shortcuts.map(([keys, what]) => h("div", { class: "shortcut" }, h("dt", null, keys.map((k) => h("kbd", { text: k }))), h("dd", { text: what }))),
    ),
    h("p", { class: "dialog-text", text: TEXT.note }),
    h("div", { class: "dialog-actions" }, close),
  );
  close.addEventListener("click", () => el.close());
  return {
    el,
    open() {
      if (!el.open) el.showModal();
      close.focus();
    },
  };
}
