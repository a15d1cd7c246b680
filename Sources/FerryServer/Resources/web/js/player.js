// The now-playing bar: one <audio> element for the whole page, playing finished transfers from
// GET /v1/transfers/{id}/file (served with Range, so seeking works). For an episode or a song it
// keeps the daemon told where the listener is (PUT /v1/episodes/{id}/playback or
// /v1/tracks/{trackId}/playback: every few seconds while playing, on pause, seek and end, and
// when the page is hidden or closed), and starts where the last listen stopped, in any browser.

import { h, icon, replace, artwork } from "./dom.js";
import { api } from "./api.js";
import { clock } from "./format.js";
import { toast } from "./ui.js";
import { store } from "./store.js";

/** How often the position is saved while playing. */
const SAVE_EVERY_MS = 5000;

/** "episodes/12" or "tracks/345": where an item's playback lives in the API, or null. */
export function playbackKey(item) {
  if (item?.episodeId) return `episodes/${item.episodeId}`;
  if (item?.trackId) return `tracks/${item.trackId}`;
  return null;
}

/** The newer of two playbacks (either may be missing). */
function newer(a, b) {
  if (!a) return b || null;
  if (!b) return a;
  return Date.parse(b.updatedAt) > Date.parse(a.updatedAt) ? b : a;
}

const MEDIA_ERRORS = {
  1: "playback was stopped",
  2: "a network error interrupted it",
  3: "the file could not be decoded",
  4: "this browser cannot play this kind of file",
};

export class Player {
  constructor(root) {
    this.root = root;
    this.current = null;
    this.listeners = new Set();
    this.seeking = false;
    // The newest playback the daemon answered, by key: newer than a view's copy once saved.
    this.playbacks = new Map();
    this.saveTimer = null;
    // Between a new src and its metadata: no position to save yet, and where to start.
    this.loading = false;
    this.resumeAt = 0;

    this.audio = h("audio", { id: "player-audio", preload: "auto" });
    this.art = h("div", { class: "player-art" });
    this.title = h("p", { class: "player-title" });
    this.subtitle = h("p", { class: "player-subtitle" });
    this.toggleButton = h("button", { type: "button", class: "btn btn-icon btn-round btn-primary player-toggle", aria: { label: "Play" }, on: { click: () => this.toggle() } }, icon("play"));
    this.elapsed = h("span", { class: "player-time", text: "0:00" });
    this.total = h("span", { class: "player-time", text: "0:00" });
    this.seek = h("input", { type: "range", class: "player-seek", min: "0", max: "0", step: "0.1", value: "0", aria: { label: "Position" } });
    this.closeButton = h("button", { type: "button", class: "btn btn-icon btn-ghost player-close", aria: { label: "Close player" }, title: "Close player", on: { click: () => this.close() } }, icon("x"));

    replace(
      root,
      h("div", { class: "player-now" }, this.art, h("div", { class: "player-text" }, this.title, this.subtitle)),
      h("div", { class: "player-controls" }, this.toggleButton, h("div", { class: "player-timeline" }, this.elapsed, this.seek, this.total)),
      this.closeButton,
      this.audio,
    );
    root.hidden = true;

    const audio = this.audio;
    for (const type of ["play", "pause", "ended", "emptied"]) audio.addEventListener(type, () => this.changed());
    audio.addEventListener("loadedmetadata", () => {
      this.resume();
      this.updateTime();
    });
    audio.addEventListener("play", () => this.startSaving());
    audio.addEventListener("pause", () => {
      this.stopSaving();
      this.save();
    });
    audio.addEventListener("seeked", () => this.save());
    audio.addEventListener("ended", () => {
      this.stopSaving();
      this.save({ ended: true });
    });
    // A closed tab or a phone's app switch: the last position, on a request that outlives the page.
    addEventListener("pagehide", () => this.save({ keepalive: true }));
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "hidden") this.save({ keepalive: true });
    });
    audio.addEventListener("durationchange", () => this.updateTime());
    audio.addEventListener("timeupdate", () => this.updateTime());
    audio.addEventListener("error", () => {
      if (!this.current || !audio.error) return;
      toast(`Can't play “${this.current.title}”: ${MEDIA_ERRORS[audio.error.code] || "unknown error"}.`, { kind: "error" });
      // Perhaps its file was deleted or moved: read the transfer again, so its row says so.
      store.refetch(this.current.transferId);
      this.changed();
    });
    this.seek.addEventListener("input", () => {
      this.seeking = true;
      this.elapsed.textContent = clock(Number(this.seek.value));
    });
    this.seek.addEventListener("change", () => {
      this.seeking = false;
      if (Number.isFinite(audio.duration)) audio.currentTime = Number(this.seek.value);
    });
  }

  /** listener() after every change of track, play state or saved playback. */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed() {
    const playing = this.isPlaying();
    replace(this.toggleButton, icon(playing ? "pause" : "play"));
    this.toggleButton.setAttribute("aria-label", playing ? "Pause" : "Play");
    this.root.classList.toggle("playing", playing);
    this.notify();
  }

  notify() {
    for (const listener of [...this.listeners]) listener();
  }

  /** The newest playback known of `key` ("episodes/ID", "tracks/ID"): the player's or `fallback` (a view's copy). */
  playbackFor(key, fallback) {
    return key ? newer(this.playbacks.get(key), fallback) : fallback || null;
  }

  /** A playback the daemon answered (a save, or played / unplayed by hand): listeners hear of it. */
  remember(key, playback) {
    if (!key || !playback) return;
    const known = this.playbacks.get(key);
    if (known && newer(known, playback) !== playback) return;
    this.playbacks.set(key, playback);
    this.notify();
  }

  startSaving() {
    this.stopSaving();
    this.saveTimer = setInterval(() => this.save(), SAVE_EVERY_MS);
  }

  stopSaving() {
    clearInterval(this.saveTimer);
    this.saveTimer = null;
  }

  /**
   * Tells the daemon where the current episode or song is (at its end when `ended`, which the
   * daemon counts as played). Nothing while its metadata loads, nor for a file without an episode
   * or song, nor when the position has not moved since the last save.
   */
  save({ ended = false, keepalive = false } = {}) {
    const item = this.current;
    if (!item?.key || this.loading || this.audio.error) return;
    const audio = this.audio;
    const duration = Number.isFinite(audio.duration) && audio.duration > 0 ? audio.duration : null;
    const position = Math.round((ended && duration ? duration : audio.currentTime) * 10) / 10;
    if (!Number.isFinite(position) || position < 0) return;
    if (!ended && position === item.savedPosition) return;
    // Nothing heard yet of something never played: no playback to keep.
    if (!ended && position === 0 && item.savedPosition === null) return;
    item.savedPosition = position;
    const update = { positionSeconds: position };
    if (duration) update.durationSeconds = duration;
    api.playback
      .save(item.key, update, { keepalive })
      .then((playback) => this.remember(item.key, playback))
      .catch(() => {
        // Not worth a message every few seconds: the next save tries again.
        if (item.savedPosition === position) item.savedPosition = undefined;
      });
  }

  /** Once the metadata is there: to where the last listen stopped (unless it was heard to the end). */
  resume() {
    if (!this.loading) return;
    this.loading = false;
    const at = this.resumeAt;
    this.resumeAt = 0;
    const duration = this.audio.duration;
    if (at > 0 && (!Number.isFinite(duration) || at < duration - 1)) this.audio.currentTime = at;
  }

  updateTime() {
    const audio = this.audio;
    const duration = Number.isFinite(audio.duration) ? audio.duration : 0;
    this.seek.max = String(duration);
    if (!this.seeking) {
      this.seek.value = String(audio.currentTime);
      this.elapsed.textContent = clock(audio.currentTime);
    }
    this.total.textContent = clock(duration);
    this.seek.style.setProperty("--fraction", duration > 0 ? String(audio.currentTime / duration) : "0");
  }

  /** Whether `transferId` (or anything, without an id) is playing now. */
  isPlaying(transferId) {
    if (!this.current || this.audio.paused || this.audio.ended) return false;
    return transferId === undefined || this.current.transferId === transferId;
  }

  isCurrent(transferId) {
    return this.current?.transferId === transferId;
  }

  /**
   * Plays a finished transfer: {transferId, title, subtitle, artworkURL, placeholder}, and for an
   * episode or a song its `episodeId` or `trackId` and the `playback` the view knows of it.
   */
  play(item) {
    if (this.current?.transferId === item.transferId) {
      if (this.audio.paused) this.audio.play().catch((error) => this.playFailed(error));
      return;
    }
    this.leave();
    const key = playbackKey(item);
    const playback = this.playbackFor(key, item.playback);
    const at = playback && !playback.played && playback.positionSeconds > 0 ? playback.positionSeconds : 0;
    this.current = { ...item, key, savedPosition: at || null };
    this.loading = true;
    this.resumeAt = at;
    this.root.hidden = false;
    document.body.classList.add("has-player");
    this.title.textContent = item.title || "Untitled";
    this.subtitle.textContent = item.subtitle || "";
    replace(this.art, artwork(item.artworkURL, { placeholder: item.placeholder || "music" }));
    this.audio.src = api.transfers.fileURL(item.transferId);
    this.audio.dataset.transferId = String(item.transferId);
    this.audio.play().catch((error) => this.playFailed(error));
    this.changed();
  }

  playFailed(error) {
    // Not an error: a newer play() or pause() interrupted this one.
    if (error?.name === "AbortError") return;
    if (error?.name === "NotAllowedError") {
      toast("Press play to start playback.", { kind: "info" });
      return;
    }
    if (this.audio.error) return; // reported by the error event
    toast(`Can't play “${this.current?.title}”: ${error?.message || error}`, { kind: "error" });
  }

  /** Plays or pauses the current track, or `item` if given and different. */
  toggle(item) {
    if (item && !this.isCurrent(item.transferId)) return this.play(item);
    if (!this.current) return undefined;
    if (this.audio.paused || this.audio.ended) this.audio.play().catch((error) => this.playFailed(error));
    else this.audio.pause();
    return undefined;
  }

  /** Stops if the current track is this transfer (removed or deleted). */
  forget(transferId) {
    if (this.isCurrent(transferId)) this.close();
  }

  /** Saves where the current item is before another takes its place (or none). */
  leave() {
    this.stopSaving();
    if (this.current) this.save();
    this.loading = false;
  }

  close() {
    this.leave();
    this.current = null;
    this.audio.pause();
    this.audio.removeAttribute("src");
    delete this.audio.dataset.transferId;
    this.audio.load();
    this.current = null;
    this.root.hidden = true;
    document.body.classList.remove("has-player");
    this.changed();
  }
}
