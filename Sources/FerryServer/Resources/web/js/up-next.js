// Up Next: what plays after the current episode or song, kept by the daemon (GET and PUT
// /v1/up-next, the whole list at once) so every browser shows the same. Episodes and songs are
// added at its end or to play next; the player panel's "Up Next" tab reorders (buttons, or
// dragging a row) and removes them. An item leaves the list when it starts playing; when one
// ends, the first of the list starts (unless the sleep timer stopped at the end). When the app
// starts, the first waits in the player, paused.

import { h, icon, button, replace, artwork } from "./dom.js";
import { api } from "./api.js";
import { showError, toast } from "./ui.js";
import { sameMedia } from "./player.js";
import { onLanguageChange, t } from "./i18n.js";

/** {kind, id} of a player item (an episode or a song), or null for a file that is neither. */
export function entryOf(item) {
  if (item?.episodeId) return { kind: "episode", id: Number(item.episodeId) };
  if (item?.trackId) return { kind: "track", id: Number(item.trackId) };
  return null;
}

const refOf = (entry) => (entry.kind === "episode" ? { episodeId: entry.id } : { trackId: entry.id });

export class UpNext {
  constructor(player) {
    this.player = player;
    this.items = [];
    this.listeners = new Set();
    // What the views knew of an item when it was added (speed, chapters...), by "kind:id".
    this.known = new Map();
    this.list = h("ol", { class: "upnext-list", aria: { label: t("upnext.tab") } });
    this.note = h("p", { class: "panel-note", text: t("upnext.empty") });
    const tab = player.panel.addTab("upnext", () => t("upnext.tab"), "queue", h("div", { class: "panel-pane" }, this.note, this.list));
    tab.onOpen = () => this.load();
    player.upNext = this;
    player.addEventListener("ended", (event) => {
      if (!event.defaultPrevented) this.playNext();
    });
    // Whatever starts playing leaves the list, however it was started.
    player.audio.addEventListener("play", () => {
      const entry = entryOf(player.current);
      if (entry && this.has(player.current)) this.save(this.entries().filter((e) => !(e.kind === entry.kind && e.id === entry.id)));
    });
    this.dragged = null;
    // A new language: the list's words again (the panel relabels the tab).
    onLanguageChange(() => {
      this.list.setAttribute("aria-label", t("upnext.tab"));
      this.note.textContent = t("upnext.empty");
      replace(this.list, this.items.map((item, index) => this.row(item, index)));
    });
    this.load().then(() => this.cue());
  }

  /** At start, with nothing playing: the first of the list waits in the bar, paused. */
  async cue() {
    const first = this.items.find((item) => item.playURL);
    if (!first || this.player.current) return;
    const item = this.playItem(first);
    if (!this.player.current) this.player.play(item, { autoplay: false });
  }

  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async load() {
    try {
      this.show((await api.upNext.get()).items);
    } catch (error) {
      if (error.status !== 401 && navigator.onLine) showError(error, t("upnext.notRead"));
    }
  }

  /** Replaces the whole list with `entries` ({kind, id}, in order); the daemon answers the list. */
  async save(entries) {
    try {
      this.show((await api.upNext.set(entries)).items);
      return true;
    } catch (error) {
      showError(error, t("upnext.notChanged"));
      return false;
    }
  }

  /** What a view knows of an item (its podcast, speed, chapters...), kept for when it plays from here. */
  learn(item) {
    const entry = entryOf(item);
    if (entry && this.has(item)) this.known.set(`${entry.kind}:${entry.id}`, item);
  }

  entries() {
    return this.items.map((item) => ({ kind: item.kind, id: item.id }));
  }

  has(item) {
    const entry = entryOf(item);
    return Boolean(entry && this.items.some((i) => i.kind === entry.kind && i.id === entry.id));
  }

  /** Adds a player item at the end, or first (`next`); one already there moves. */
  async add(item, { next = false } = {}) {
    const entry = entryOf(item);
    if (!entry) return;
    this.known.set(`${entry.kind}:${entry.id}`, item);
    const rest = this.entries().filter((e) => !(e.kind === entry.kind && e.id === entry.id));
    if (await this.save(next ? [entry, ...rest] : [...rest, entry])) toast(next ? t("upnext.addedNext", { title: item.title || t("player.untitled") }) : t("upnext.added", { title: item.title || t("player.untitled") }), { kind: "success" });
  }

  remove(index) {
    const entries = this.entries();
    entries.splice(index, 1);
    return this.save(entries);
  }

  move(from, to) {
    const entries = this.entries();
    if (to < 0 || to >= entries.length || from === to) return undefined;
    const [entry] = entries.splice(from, 1);
    entries.splice(to, 0, entry);
    return this.save(entries);
  }

  /** The player item for an entry of the list: what the daemon says (with an episode's podcast
   * and the speed it keeps), and what a view knew. */
  playItem(item) {
    const known = this.known.get(`${item.kind}:${item.id}`) || {};
    const base = { ...known, title: item.title, subtitle: item.subtitle, artworkURL: item.artworkURL, playback: item.playback };
    if (item.kind === "episode") {
      return {
        placeholder: "podcast", ...base, episodeId: item.id, stream: /\/stream$/.test(item.playURL || ""),
        podcastId: item.podcastId ?? known.podcastId, speed: item.playbackSpeed ?? known.speed,
      };
    }
    const transfer = /\/v1\/transfers\/(\d+)\/file$/.exec(item.playURL || "");
    return { placeholder: "music", ...base, trackId: item.id, transferId: transfer ? Number(transfer[1]) : undefined };
  }

  /** Plays the first playable item and takes it (and any unplayable before it) off the list. */
  async playNext() {
    const items = [...this.items];
    let index = 0;
    while (index < items.length && (!items[index].playURL || sameMedia(this.player.current, refOf(items[index])))) index += 1;
    if (index >= items.length) {
      if (items.length) await this.save([]);
      return false;
    }
    return this.playAt(index, { dropBefore: true });
  }

  /** Plays item `index` now and takes it off the list (with those before it when `dropBefore`). */
  async playAt(index, { dropBefore = false } = {}) {
    const item = this.items[index];
    if (!item) return false;
    if (!item.playURL) {
      toast(t("upnext.notDownloaded", { title: item.title || t("player.untitled") }), { kind: "info" });
      return false;
    }
    const entries = this.entries();
    this.player.play(this.playItem(item));
    if (dropBefore) entries.splice(0, index + 1);
    else entries.splice(index, 1);
    await this.save(entries);
    return true;
  }

  show(items) {
    // The same list again (the panel opened, another save answered): nothing to draw.
    const same = JSON.stringify(items) === JSON.stringify(this.items);
    this.items = items;
    if (same && this.list.childElementCount === items.length) return;
    this.note.hidden = items.length > 0;
    replace(this.list, items.map((item, index) => this.row(item, index)));
    for (const listener of [...this.listeners]) listener();
  }

  row(item, index) {
    const title = item.title || t("player.untitled");
    const last = this.items.length - 1;
    const el = h(
      "li",
      { class: ["upnext-item", !item.playURL && "is-unplayable"], draggable: "true", data: { kind: item.kind, id: item.id } },
      artwork(item.artworkURL, { placeholder: item.kind === "episode" ? "podcast" : "music", className: "upnext-art" }),
      h("div", { class: "upnext-text" }, h("p", { class: "upnext-title", text: title }), item.subtitle ? h("p", { class: "upnext-subtitle", text: item.subtitle }) : null),
      h(
        "div",
        { class: "upnext-actions" },
        button(t("upnext.playNow", { title }), { icon: "play", iconOnly: true, kind: "ghost", disabled: !item.playURL, onClick: () => this.playAt(index) }),
        button(t("upnext.moveUp", { title }), { icon: "up", iconOnly: true, kind: "ghost", disabled: index === 0, onClick: () => this.move(index, index - 1) }),
        button(t("upnext.moveDown", { title }), { icon: "down", iconOnly: true, kind: "ghost", disabled: index === last, onClick: () => this.move(index, index + 1) }),
        button(t("upnext.remove", { title }), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => this.remove(index) }),
      ),
    );
    el.addEventListener("dragstart", (event) => {
      this.dragged = index;
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", String(index));
      el.classList.add("is-dragged");
    });
    el.addEventListener("dragend", () => el.classList.remove("is-dragged"));
    el.addEventListener("dragover", (event) => {
      if (this.dragged === null) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
    });
    el.addEventListener("drop", (event) => {
      event.preventDefault();
      const from = this.dragged;
      this.dragged = null;
      if (from !== null) this.move(from, index);
    });
    return el;
  }

  /** "Play next" and "Add to Up Next" buttons for a player item (`item()` makes it when clicked). */
  buttons(title, item, { iconOnly = false } = {}) {
    const kind = iconOnly ? "ghost" : "secondary";
    const next = t("upnext.playNextName", { title });
    const add = t("upnext.addName", { title });
    return [
      button(iconOnly ? next : t("upnext.playNext"), { icon: "top", iconOnly, kind, class: iconOnly ? "btn btn-icon btn-ghost act-play-next" : "btn btn-secondary act-play-next", "aria-label": next, onClick: () => this.add(item(), { next: true }) }),
      button(iconOnly ? add : t("upnext.add"), { icon: "queue", iconOnly, kind, class: iconOnly ? "btn btn-icon btn-ghost act-up-next" : "btn btn-secondary act-up-next", "aria-label": add, onClick: () => this.add(item()) }),
    ];
  }
}
