// The panel above the player: an episode's chapters (GET /v1/episodes/{id}/chapters; the one
// playing is also named in the bar) and its transcript (GET /v1/episodes/{id}/transcript), each
// line highlighted as it is spoken, searchable; a click on either seeks there. A file the daemon
// cannot read (422) or fetch is a quiet note: the episode plays on. Other tabs (Up Next) are
// added with addTab, and panes shown under a tab (the playlists, under Up Next's).

import { h, icon, button, replace, debounce } from "./dom.js";
import { api, isAbort } from "./api.js";
import { clock } from "./format.js";
import { onLanguageChange, t } from "./i18n.js";

const chapterName = (chapter, index) => chapter.title || t("panel.chapterNumber", { n: index + 1 });

/** How long the transcript stays where the listener scrolled it before following again. */
const FOLLOW_AGAIN_MS = 5000;

/** The index of the last entry that starts at or before `seconds` (-1: none). */
export function indexAt(entries, seconds) {
  let low = 0;
  let high = entries.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (entries[middle].startSeconds <= seconds + 0.05) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

export class PlayerPanel {
  constructor(player) {
    this.player = player;
    this.tabs = new Map();
    this.active = null;
    this.chapters = null; // [] once read
    this.cues = null;
    this.controller = null;
    this.chapterIndex = -1;
    this.cueIndex = -1;

    this.tabList = h("div", { class: "panel-tabs", role: "tablist" });
    this.body = h("div", { class: "panel-body" });
    this.closeButton = button(t("panel.close"), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => this.close() });
    this.el = h("section", { class: "player-panel", id: "player-panel", hidden: true }, h("header", { class: "panel-header" }, this.tabList, this.closeButton), this.body);
    player.root.after(this.el);

    // The chapter playing, under the title in the bar.
    this.chapterLine = h("p", { class: "player-chapter", hidden: true });
    player.subtitle.after(this.chapterLine);

    this.chapterNote = h("p", { class: "panel-note" });
    this.chapterList = h("ol", { class: "chapter-list" });
    this.addTab("chapters", () => t("panel.chapters"), "chapters", h("div", { class: "panel-pane" }, this.chapterNote, this.chapterList));

    this.filter = h("input", { type: "search", class: "panel-filter", autocomplete: "off", spellcheck: "false" });
    this.filterNote = h("p", { class: "panel-note panel-count", hidden: true, aria: { live: "polite" } });
    this.cueNote = h("p", { class: "panel-note" });
    this.cueList = h("ol", { class: "cue-list" });
    this.addTab("transcript", () => t("panel.transcript"), "transcript", h("div", { class: "panel-pane" }, h("label", { class: "search-field panel-search" }, icon("search", "search-field-icon"), this.filter), this.filterNote, this.cueNote, this.cueList));
    const refilter = debounce(() => this.applyFilter(), 120);
    // A listener scrolling the transcript themselves: it stops following for a few seconds.
    this.scrolledByHand = 0;
    for (const type of ["wheel", "touchmove", "keydown"]) this.cueList.addEventListener(type, () => (this.scrolledByHand = Date.now()), { passive: true });
    this.filter.addEventListener("input", refilter);

    this.relabel();
    onLanguageChange(() => this.relabel());

    player.addEventListener("itemchange", () => this.itemChanged());
    player.audio.addEventListener("timeupdate", () => this.follow());
    player.audio.addEventListener("seeked", () => this.follow());
  }

  /** The panel's names in the page's language, and what it shows that the page wrote. */
  relabel() {
    const name = t("panel.label");
    this.tabList.setAttribute("aria-label", name);
    this.el.setAttribute("aria-label", name);
    this.closeButton.setAttribute("aria-label", t("panel.close"));
    this.closeButton.title = t("panel.close");
    this.chapterList.setAttribute("aria-label", t("panel.chapters"));
    this.cueList.setAttribute("aria-label", t("panel.transcript"));
    this.filter.placeholder = t("panel.filter");
    this.filter.setAttribute("aria-label", t("panel.filter"));
    for (const { tab, opener, label } of this.tabs.values()) {
      if (!tab) continue;
      tab.textContent = label();
      opener.setAttribute("aria-label", label());
      opener.title = label();
    }
    // Notes and rows the page wrote (loading, none, unreadable; untitled chapters): again.
    for (const note of [this.chapterNote, this.cueNote]) {
      if (note.dataset.key) note.textContent = t(note.dataset.key);
    }
    if (this.chapters?.length) {
      replace(this.chapterList, this.chapters.map((chapter, index) => this.chapterRow(chapter, index)));
      this.chapterIndex = -1;
      this.follow(true);
    }
    if (this.cues) this.applyFilter();
  }

  /** Sets a panel note to the text of `key` ("" and no key: empty), kept to say again in another language. */
  say(note, key) {
    if (key) note.dataset.key = key;
    else delete note.dataset.key;
    note.textContent = key ? t(key) : "";
  }

  /**
   * A tab of the panel, with a button for it in the player bar; `label()` names it in the
   * page's language. With `under` (a tab's name): a pane shown under that tab, with no tab or
   * button of its own (the tabs only just fit side by side on a phone). Returns the tab.
   */
  addTab(name, label, iconName, pane, { under } = {}) {
    pane.id = `panel-${name}`;
    pane.setAttribute("role", "tabpanel");
    pane.setAttribute("aria-labelledby", `panel-tab-${under || name}`);
    pane.hidden = true;
    this.body.append(pane);
    if (under) {
      const entry = { name, label, under, tab: null, opener: null, pane, onOpen: null };
      this.tabs.set(name, entry);
      return entry;
    }
    const tab = h("button", { type: "button", class: "panel-tab", role: "tab", id: `panel-tab-${name}`, aria: { selected: "false", controls: `panel-${name}` }, text: label() });
    tab.addEventListener("click", () => this.open(name));
    const opener = button(label(), { icon: iconName, iconOnly: true, kind: "ghost", class: `btn btn-icon btn-ghost player-open-${name}`, onClick: () => (this.active === name && !this.el.hidden ? this.close() : this.open(name)) });
    opener.setAttribute("aria-expanded", "false");
    this.tabList.append(tab);
    this.player.extras.insertBefore(opener, this.player.extras.querySelector(".player-help"));
    const entry = { name, label, tab, opener, pane, onOpen: null };
    this.tabs.set(name, entry);
    return entry;
  }

  /** Whether a tab has something for the current item (its button and tab are shown). */
  setAvailable(name, available) {
    const entry = this.tabs.get(name);
    entry.tab.hidden = !available;
    entry.opener.hidden = !available;
    if (!available && this.active === name) this.close();
  }

  open(name) {
    const entry = this.tabs.get(name);
    const selected = entry?.under ? this.tabs.get(entry.under) : entry;
    if (!selected || selected.tab.hidden) return;
    this.active = name;
    for (const other of this.tabs.values()) {
      other.pane.hidden = other !== entry;
      if (!other.tab) continue;
      const on = other === selected;
      other.tab.setAttribute("aria-selected", String(on));
      other.opener.setAttribute("aria-expanded", String(on));
      other.opener.classList.toggle("is-on", on);
    }
    this.el.hidden = false;
    document.body.classList.add("has-panel");
    entry.onOpen?.();
    if (name === "transcript") this.loadTranscript();
    this.follow(true);
  }

  close() {
    this.el.hidden = true;
    document.body.classList.remove("has-panel");
    for (const other of this.tabs.values()) {
      other.opener?.setAttribute("aria-expanded", "false");
      other.opener?.classList.remove("is-on");
    }
    this.active = null;
  }

  itemChanged() {
    this.controller?.abort();
    this.controller = new AbortController();
    const item = this.player.current;
    this.chapters = null;
    this.cues = null;
    this.chapterIndex = -1;
    this.cueIndex = -1;
    this.chapterLine.hidden = true;
    replace(this.chapterList);
    replace(this.cueList);
    this.filter.value = "";
    this.filterNote.hidden = true;
    // An episode the views did not describe (from Up Next after a reload): its chapters are
    // asked for (404: none) and its transcript offered (which may turn out to be none).
    const episode = item?.episodeId;
    const chapters = episode && (item.chaptersURL || item.chaptersURL === undefined);
    this.setAvailable("chapters", Boolean(episode && item.chaptersURL));
    this.setAvailable("transcript", Boolean(episode && (item.transcriptURL || item.transcriptURL === undefined)));
    if (!item && this.active) this.close();
    if (chapters) this.loadChapters();
  }

  async loadChapters() {
    const item = this.player.current;
    const { signal } = this.controller;
    this.say(this.chapterNote, "status.loading");
    this.chapterNote.hidden = false;
    this.chapterNote.classList.remove("is-quiet-error");
    this.chapterNote.removeAttribute("title");
    try {
      const { chapters } = await api.episodes.chapters(item.episodeId, signal);
      if (signal.aborted) return;
      this.chapters = chapters;
      this.setAvailable("chapters", true);
      this.say(this.chapterNote, chapters.length ? null : "panel.noChapters");
      this.chapterNote.hidden = chapters.length > 0;
      replace(this.chapterList, chapters.map((chapter, index) => this.chapterRow(chapter, index)));
      this.follow(true);
    } catch (error) {
      if (isAbort(error) || signal.aborted) return;
      this.chapters = [];
      if (error.status === 404 && item.chaptersURL === undefined) return; // none, as the daemon says
      this.setAvailable("chapters", true);
      this.say(this.chapterNote, error.status === 404 ? "panel.noChapters" : "panel.badChapters");
      this.chapterNote.title = error.message;
      this.chapterNote.classList.add("is-quiet-error");
    }
  }

  chapterRow(chapter, index) {
    const title = chapterName(chapter, index);
    return h(
      "li",
      { class: "chapter", data: { index } },
      h("button", { type: "button", class: "chapter-button", aria: { label: t("panel.chapterAt", { title, at: clock(chapter.startSeconds) }) }, on: { click: () => this.player.seekTo(chapter.startSeconds) } },
        h("span", { class: "chapter-time", text: clock(chapter.startSeconds) }),
        h("span", { class: "chapter-title", text: title })),
    );
  }

  async loadTranscript() {
    if (this.cues || this.transcriptLoading) return;
    const item = this.player.current;
    if (!item?.episodeId || !item.transcriptURL) return;
    const controller = this.controller;
    this.transcriptLoading = true;
    this.say(this.cueNote, "status.loading");
    this.cueNote.hidden = false;
    this.cueNote.classList.remove("is-quiet-error");
    this.cueNote.removeAttribute("title");
    try {
      const { cues } = await api.episodes.transcript(item.episodeId, controller.signal);
      if (controller.signal.aborted) return;
      this.cues = cues;
      this.cueNote.hidden = cues.length > 0;
      this.say(this.cueNote, cues.length ? null : "panel.noTranscript");
      replace(this.cueList, cues.map((cue) => this.cueRow(cue)));
      this.applyFilter();
      this.follow(true);
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      this.cues = [];
      this.say(this.cueNote, error.status === 404 ? "panel.noTranscript" : "panel.badTranscript");
      this.cueNote.title = error.message;
      this.cueNote.classList.add("is-quiet-error");
    } finally {
      if (controller === this.controller) this.transcriptLoading = false;
    }
  }

  cueRow(cue) {
    return h(
      "li",
      { class: "cue" },
      h("button", { type: "button", class: "cue-button", on: { click: () => this.player.seekTo(cue.startSeconds) } },
        h("span", { class: "cue-time", text: clock(cue.startSeconds) }),
        h("span", { class: "cue-text" }, cue.speaker ? h("strong", { class: "cue-speaker", text: `${cue.speaker}: ` }) : null, cue.text)),
    );
  }

  applyFilter() {
    if (!this.cues) return;
    const words = this.filter.value.trim().toLowerCase();
    let shown = 0;
    this.cues.forEach((cue, index) => {
      const match = !words || `${cue.speaker || ""} ${cue.text}`.toLowerCase().includes(words);
      this.cueList.children[index].hidden = !match;
      if (match) shown += 1;
    });
    this.filterNote.hidden = !words;
    this.filterNote.textContent = shown ? t("panel.matches", { count: shown }) : t("panel.noMatch");
    if (!words) this.follow(true);
  }

  /** The chapter and line at the current time: marked, named in the bar, scrolled to. */
  follow(force = false) {
    const time = this.player.audio.currentTime || 0;
    if (this.chapters?.length) {
      const index = indexAt(this.chapters, time);
      if (index !== this.chapterIndex || force) {
        this.mark(this.chapterList, this.chapterIndex, index);
        this.chapterIndex = index;
        const chapter = this.chapters[index];
        this.chapterLine.hidden = !chapter;
        this.chapterLine.textContent = chapter ? chapterName(chapter, index) : "";
        if (this.active === "chapters") this.reveal(this.chapterList, index);
      }
    }
    if (this.cues?.length) {
      let index = indexAt(this.cues, time);
      // Between two lines (a pause in speech): none is highlighted.
      if (index >= 0 && this.cues[index].endSeconds > this.cues[index].startSeconds && time > this.cues[index].endSeconds + 0.5) index = -1;
      if (index !== this.cueIndex || force) {
        this.mark(this.cueList, this.cueIndex, index);
        this.cueIndex = index;
        const reading = Date.now() - this.scrolledByHand < FOLLOW_AGAIN_MS;
        if (this.active === "transcript" && !this.filter.value.trim() && (!reading || force)) this.reveal(this.cueList, index);
      }
    }
  }

  mark(list, before, after) {
    const old = list.children[before];
    if (old) {
      old.classList.remove("is-current");
      old.firstChild.removeAttribute("aria-current");
    }
    const now = list.children[after];
    if (now) {
      now.classList.add("is-current");
      now.firstChild.setAttribute("aria-current", "true");
    }
  }

  /** Scrolls `list` (and only it) so its entry `index` is in view. */
  reveal(list, index) {
    const row = list.children[index];
    if (!row || this.el.hidden) return;
    const top = row.offsetTop;
    if (top < list.scrollTop || top + row.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = Math.max(0, top - list.clientHeight / 3);
  }

  /** The start of the chapter before (-1) or after (1) the one playing; null when there is none. */
  chapterStart(direction) {
    const chapters = this.chapters;
    if (!chapters?.length) return null;
    const time = this.player.audio.currentTime || 0;
    const index = indexAt(chapters, time);
    if (direction > 0) return chapters[index + 1]?.startSeconds ?? null;
    // Well into a chapter: back to its start; at its start: the one before.
    if (index >= 0 && time - chapters[index].startSeconds > 3) return chapters[index].startSeconds;
    return index > 0 ? chapters[index - 1].startSeconds : null;
  }
}
