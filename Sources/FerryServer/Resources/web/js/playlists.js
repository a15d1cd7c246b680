// Playlists: named queues beside Up Next ("road trip"), each listener's own, kept by the daemon
// (/v1/playlists). Their pane, under the player panel's "Up Next" tab (a switch at the top of
// either goes to the other; the podcasts view opens it too), makes, renames and deletes them,
// shows one's items, reorders them (buttons), removes them, and moves one to Up Next or another
// playlist.
// "Play" plays a playlist through: unlike Up Next, a playlist keeps its items as they play; the
// player remembers which playlist and which item it is at, and when that item ends the next one
// of the playlist starts. Playing anything else ends the play-through. Episode rows and songs get
// "Add to playlist…" beside "Add to Up Next".

import { h, button, confirmButton, replace, artwork } from "./dom.js";
import { api } from "./api.js";
import { length } from "./format.js";
import { showError, toast } from "./ui.js";
import { sameMedia } from "./player.js";
import { entryOf } from "./up-next.js";
import { onLanguageChange, t } from "./i18n.js";

const refOf = (entry) => (entry.kind === "episode" ? { episodeId: entry.id } : { trackId: entry.id });
const same = (a, b) => a.kind === b.kind && a.id === b.id;

export class Playlists {
  /**
   * Listens for the end of an item before Up Next does (construct it first), so that a playlist
   * played through goes on; `mount()` adds its tab once Up Next's is there.
   */
  constructor(player) {
    this.player = player;
    this.summaries = []; // [{id, name, count, durationSeconds}]
    this.open = null; // the playlist shown: {id, name, items}
    this.playing = null; // {id, kind, itemId, items}: the playlist played through, at which item
    player.playlists = this;
    player.addEventListener("ended", (event) => {
      if (!event.defaultPrevented && this.playNextOf()) event.preventDefault();
    });
    // Anything else started (by hand, from Up Next): the play-through ends.
    player.addEventListener("itemchange", () => {
      const playing = this.playing;
      if (playing && !sameMedia(player.current, refOf({ kind: playing.kind, id: playing.itemId }))) this.setPlaying(null);
      this.markCurrent();
    });
  }

  mount() {
    this.note = h("p", { class: "panel-note playlists-note" });
    this.nameInput = h("input", { type: "text", class: "input playlist-new-name", maxlength: "100", autocomplete: "off", required: true });
    this.createButton = button(t("playlists.create"), { icon: "plus", kind: "secondary", type: "submit", class: "btn btn-secondary act-create-playlist" });
    this.form = h("form", { class: "playlist-new", on: { submit: (event) => this.create(event) } }, this.nameInput, this.createButton);
    this.list = h("ul", { class: "playlist-list" });
    this.detail = h("div", { class: "playlist-detail", hidden: true });
    this.home = h("div", { class: "playlist-home" }, this.form, this.note, this.list);
    // Shown under Up Next's tab: a switch at the top of either pane goes to the other.
    this.switches = [this.queueSwitch("upnext"), this.queueSwitch("playlists")];
    const tab = this.player.panel.addTab("playlists", () => t("playlists.tab"), "playlist", h("div", { class: "panel-pane playlists-pane" }, this.switches[1], this.home, this.detail), { under: "upnext" });
    this.player.panel.tabs.get("upnext")?.pane.prepend(this.switches[0]);
    tab.onOpen = () => this.load();
    onLanguageChange(() => this.render());
    this.render();
  }

  async load() {
    try {
      this.summaries = (await api.playlists.list()).playlists;
      if (this.open) await this.show(this.open.id, { quiet: true });
    } catch (error) {
      if (error.status !== 401 && navigator.onLine) showError(error, t("playlists.notRead"));
    }
    this.render();
  }

  /** The playlist `id` opened in the tab (null: the list of them). */
  async show(id, { quiet = false } = {}) {
    if (id === null) {
      this.open = null;
      this.render();
      return;
    }
    try {
      this.shown(await api.playlists.get(id));
    } catch (error) {
      if (error.status === 404) this.open = null;
      if (!quiet) showError(error, t("playlists.notRead"));
      this.render();
    }
  }

  /** A playlist the daemon answered: shown if open, and what a play-through knows of its items. */
  shown(playlist) {
    if (!this.open || this.open.id === playlist.id) this.open = playlist;
    if (this.playing?.id === playlist.id) this.playing.items = playlist.items;
    const summary = this.summaries.find((s) => s.id === playlist.id);
    if (summary) Object.assign(summary, { name: playlist.name, count: playlist.items.length });
    this.render();
  }

  async create(event) {
    event.preventDefault();
    const name = this.nameInput.value.trim();
    if (!name) return;
    try {
      const playlist = await api.playlists.create(name);
      this.nameInput.value = "";
      toast(t("playlists.created", { name: playlist.name }), { kind: "success" });
      this.summaries = (await api.playlists.list()).playlists;
      this.shown(playlist);
    } catch (error) {
      showError(error, t("playlists.notChanged"));
    }
  }

  async rename(event, input) {
    event.preventDefault();
    try {
      this.shown(await api.playlists.rename(this.open.id, input.value));
    } catch (error) {
      showError(error, t("playlists.notChanged"));
    }
  }

  async remove(id) {
    try {
      await api.playlists.remove(id);
      if (this.playing?.id === id) this.setPlaying(null);
      if (this.open?.id === id) this.open = null;
      await this.load();
    } catch (error) {
      showError(error, t("playlists.notChanged"));
    }
  }

  /** Replaces the open playlist's items with `entries` ({kind, id}, in order). */
  async save(entries) {
    try {
      this.shown(await api.playlists.set(this.open.id, entries));
      return true;
    } catch (error) {
      showError(error, t("playlists.notChanged"));
      return false;
    }
  }

  entries() {
    return this.open.items.map((item) => ({ kind: item.kind, id: item.id }));
  }

  reorder(from, to) {
    const entries = this.entries();
    if (to < 0 || to >= entries.length || from === to) return undefined;
    const [entry] = entries.splice(from, 1);
    entries.splice(to, 0, entry);
    return this.save(entries);
  }

  /** Moves an item of the open playlist to `to` (a playlist's id or "up-next"), in one step. */
  async moveItem(item, to) {
    const entry = { kind: item.kind, id: item.id };
    try {
      await api.playlists.move(entry, this.open.id, to);
      const place = to === "up-next" ? t("upnext.tab") : this.summaries.find((s) => s.id === Number(to))?.name || "";
      toast(t("playlists.moved", { title: item.title || t("player.untitled"), place }), { kind: "success" });
      if (to === "up-next") this.player.upNext?.load();
      this.summaries = (await api.playlists.list()).playlists;
      await this.show(this.open.id);
    } catch (error) {
      showError(error, t("playlists.notChanged"));
    }
  }

  /** Adds a player item at the end of playlist `id`. */
  async add(id, item) {
    const entry = entryOf(item);
    if (!entry) return;
    try {
      const playlist = await api.playlists.add(id, entry);
      toast(t("playlists.added", { title: item.title || t("player.untitled"), name: playlist.name }), { kind: "success" });
      this.summaries = (await api.playlists.list()).playlists;
      if (this.open?.id === id) this.shown(playlist);
      else this.render();
    } catch (error) {
      showError(error, t("playlists.notChanged"));
    }
  }

  // MARK: Playing through

  /** Plays playlist `id` through from item `index` (the first playable from there). */
  async play(id, index = 0) {
    let items = this.open?.id === id ? this.open.items : null;
    try {
      if (!items) items = (await api.playlists.get(id)).items;
    } catch (error) {
      showError(error, t("playlists.notRead"));
      return false;
    }
    return this.playFrom(id, items, index);
  }

  playFrom(id, items, index) {
    let at = index;
    while (at < items.length && !items[at].playURL) at += 1;
    const item = items[at];
    if (!item) {
      if (items[index]) toast(t("upnext.notDownloaded", { title: items[index].title || t("player.untitled") }), { kind: "info" });
      this.setPlaying(null);
      return false;
    }
    // Known before the player hears of the new item, so that its "itemchange" keeps it.
    this.setPlaying({ id, kind: item.kind, itemId: item.id, items });
    this.player.play(this.player.upNext ? this.player.upNext.playItem(item) : { title: item.title, ...refOf(item) });
    this.markCurrent();
    return true;
  }

  /** The current item ended: the next of the playlist it plays through starts. False: none. */
  playNextOf() {
    const playing = this.playing;
    if (!playing?.items) return false;
    const index = playing.items.findIndex((item) => same(item, { kind: playing.kind, id: playing.itemId }));
    if (index < 0 || !playing.items.slice(index + 1).some((item) => item.playURL)) {
      this.setPlaying(null);
      return false;
    }
    this.playFrom(playing.id, playing.items, index + 1);
    return true;
  }

  setPlaying(playing) {
    this.playing = playing;
  }

  /** The item playing through, marked in the open playlist. */
  markCurrent() {
    if (!this.detail) return;
    for (const row of this.detail.querySelectorAll(".playlist-item")) {
      const on = Boolean(this.playing && this.playing.id === this.open?.id && row.dataset.kind === this.playing.kind && Number(row.dataset.id) === this.playing.itemId);
      row.classList.toggle("is-current", on);
      if (on) row.setAttribute("aria-current", "true");
      else row.removeAttribute("aria-current");
    }
  }

  // MARK: Drawing

  /** Up Next and Playlists, side by side: `active` pressed, the other opened with a click. */
  queueSwitch(active) {
    return h("div", { class: "segmented queue-switch", role: "group" }, ["upnext", "playlists"].map((name) =>
      h("button", { type: "button", class: `segment queue-${name}`, aria: { pressed: String(name === active) }, on: { click: () => this.player.panel.open(name) } })));
  }

  render() {
    if (!this.list) return;
    for (const group of this.switches) {
      group.setAttribute("aria-label", t("playlists.lists"));
      group.querySelector(".queue-upnext").textContent = t("upnext.tab");
      group.querySelector(".queue-playlists").textContent = t("playlists.tab");
    }
    this.nameInput.placeholder = t("playlists.newName");
    this.nameInput.setAttribute("aria-label", t("playlists.newName"));
    this.createButton.querySelector(".btn-label").textContent = t("playlists.create");
    this.note.textContent = t("playlists.empty");
    this.note.hidden = this.summaries.length > 0;
    replace(this.list, this.summaries.map((summary) => this.summaryRow(summary)));
    this.home.hidden = Boolean(this.open);
    this.detail.hidden = !this.open;
    if (this.open) this.renderDetail();
    else replace(this.detail);
  }

  summaryRow(summary) {
    const facts = [t("playlists.count", { count: summary.count }), summary.durationSeconds > 0 ? length(summary.durationSeconds) : null].filter(Boolean).join(" · ");
    return h(
      "li",
      { class: "playlist-row", data: { id: summary.id } },
      h("button", { type: "button", class: "playlist-open", aria: { label: t("playlists.open", { name: summary.name }) }, on: { click: () => this.show(summary.id) } },
        h("span", { class: "playlist-name", text: summary.name }),
        h("span", { class: "playlist-facts", text: facts })),
      button(t("playlists.play", { name: summary.name }), { icon: "play", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost act-play-playlist", disabled: summary.count === 0, onClick: () => this.play(summary.id) }),
    );
  }

  renderDetail() {
    const playlist = this.open;
    const nameInput = h("input", { type: "text", class: "input playlist-rename-name", value: playlist.name, maxlength: "100", required: true, aria: { label: t("playlists.name") } });
    const remove = confirmButton(t("playlists.delete", { name: playlist.name }), {
      question: t("playlists.deleteQuestion"),
      confirmLabel: t("playlists.deleteConfirm", { name: playlist.name }),
      onConfirm: () => this.remove(playlist.id),
    });
    remove.classList.add("act-delete-playlist");
    const items = h("ol", { class: "upnext-list playlist-items", aria: { label: playlist.name } }, playlist.items.map((item, index) => this.itemRow(item, index)));
    replace(
      this.detail,
      h("div", { class: "playlist-head" },
        button(t("playlists.back"), { icon: "back", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost act-playlists-back", onClick: () => this.show(null) }),
        h("form", { class: "playlist-rename", on: { submit: (event) => this.rename(event, nameInput) } }, nameInput,
          button(t("playlists.rename"), { icon: "check", iconOnly: true, kind: "ghost", type: "submit", class: "btn btn-icon btn-ghost act-rename-playlist" })),
        remove),
      h("div", { class: "playlist-actions" },
        button(t("playlists.playAll"), { icon: "play", kind: "primary", class: "btn btn-primary act-play-playlist", disabled: !playlist.items.some((i) => i.playURL), onClick: () => this.play(playlist.id) }),
        h("span", { class: "playlist-facts", text: t("playlists.count", { count: playlist.items.length }) })),
      playlist.items.length ? items : h("p", { class: "panel-note", text: t("playlists.itemsEmpty") }),
    );
    this.markCurrent();
  }

  itemRow(item, index) {
    const title = item.title || t("player.untitled");
    const last = this.open.items.length - 1;
    const others = this.summaries.filter((s) => s.id !== this.open.id);
    const move = h("select", { class: "select playlist-move", aria: { label: t("playlists.moveTo", { title }) } },
      h("option", { value: "", text: t("playlists.moveToLabel"), selected: true }),
      h("option", { value: "up-next", text: t("upnext.tab") }),
      others.map((s) => h("option", { value: String(s.id), text: s.name })));
    move.addEventListener("change", () => {
      if (move.value) this.moveItem(item, move.value === "up-next" ? "up-next" : Number(move.value));
    });
    return h(
      "li",
      { class: ["upnext-item", "playlist-item", !item.playURL && "is-unplayable"], data: { kind: item.kind, id: item.id } },
      artwork(item.artworkURL, { placeholder: item.kind === "episode" ? "podcast" : "music", className: "upnext-art" }),
      h("div", { class: "upnext-text" },
        h("p", { class: "upnext-title", text: title }),
        item.subtitle ? h("p", { class: "upnext-subtitle", text: item.subtitle }) : null,
        move),
      h(
        "div",
        { class: "upnext-actions" },
        button(t("playlists.playFrom", { title }), { icon: "play", iconOnly: true, kind: "ghost", disabled: !item.playURL, onClick: () => this.play(this.open.id, index) }),
        button(t("upnext.moveUp", { title }), { icon: "up", iconOnly: true, kind: "ghost", disabled: index === 0, onClick: () => this.reorder(index, index - 1) }),
        button(t("upnext.moveDown", { title }), { icon: "down", iconOnly: true, kind: "ghost", disabled: index === last, onClick: () => this.reorder(index, index + 1) }),
        button(t("playlists.remove", { title }), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => this.save(this.entries().filter((_, i) => i !== index)) }),
      ),
    );
  }

  /**
   * "Add to playlist…" for a player item (`item()` makes it when chosen): a button that opens a
   * picker of the listener's playlists, with a name field to make a new one.
   */
  picker(title, item, { iconOnly = false } = {}) {
    const label = t("playlists.addName", { title });
    const opener = button(iconOnly ? label : t("playlists.add"), { icon: "playlist", iconOnly, kind: iconOnly ? "ghost" : "secondary", class: iconOnly ? "btn btn-icon btn-ghost act-add-to-playlist" : "btn btn-secondary act-add-to-playlist", "aria-label": label });
    const wrap = h("span", { class: "playlist-picker" }, opener);
    opener.addEventListener("click", async () => {
      try {
        this.summaries = (await api.playlists.list()).playlists;
      } catch (error) {
        showError(error, t("playlists.notRead"));
        return;
      }
      const choose = h("select", { class: "select playlist-choose", aria: { label } },
        h("option", { value: "", text: t("playlists.choose"), selected: true }),
        this.summaries.map((s) => h("option", { value: String(s.id), text: s.name })),
        h("option", { value: "new", text: t("playlists.newFromRow") }));
      const nameInput = h("input", { type: "text", class: "input playlist-new-name", maxlength: "100", required: true, placeholder: t("playlists.newName"), aria: { label: t("playlists.newName") } });
      const newForm = h("form", { class: "playlist-picker-new", hidden: true, on: { submit: async (event) => {
        event.preventDefault();
        try {
          const made = await api.playlists.create(nameInput.value.trim());
          await this.add(made.id, item());
          close();
        } catch (error) {
          showError(error, t("playlists.notChanged"));
        }
      } } }, nameInput, button(t("playlists.create"), { kind: "secondary", type: "submit" }));
      const close = () => replace(wrap, opener);
      choose.addEventListener("change", async () => {
        if (choose.value === "new") {
          choose.hidden = true;
          newForm.hidden = false;
          nameInput.focus();
        } else if (choose.value) {
          await this.add(Number(choose.value), item());
          close();
        }
      });
      replace(wrap, choose, newForm, button(t("panel.close"), { icon: "x", iconOnly: true, kind: "ghost", onClick: close }));
      choose.focus();
    });
    return wrap;
  }
}
