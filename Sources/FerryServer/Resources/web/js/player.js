// The now-playing bar: one <audio> element for the whole page. An episode plays from its file
// (GET /v1/episodes/{id}/file: downloaded, with or without a transfer) or streams from its host
// through the daemon before it is downloaded (GET /v1/episodes/{id}/stream); a song or any other
// file plays from its transfer (GET /v1/transfers/{id}/file). All are served with Range, so
// seeking works. For an episode or a song the player keeps the daemon told where the listener is
// (PUT /v1/episodes/{id}/playback or /v1/tracks/{trackId}/playback: every few seconds while
// playing, on pause, seek and end, and when the page is hidden or closed; kept to send later when
// the daemon cannot be reached, playback-queue.js), and starts where the last listen stopped, in
// any browser. An episode plays at its podcast's speed. An item kept on this device (keep.js)
// plays from there (/kept/..., answered by the service worker), with or without a network.
//
// The controls (skip, speed, sleep timer), keyboard shortcuts, the Media Session and the panel
// with chapters and the transcript live in player-*.js; they listen to the player's events:
// "itemchange" (another item or none) and "ended" (the current item played to its end).

import { h, icon, replace, artwork } from "./dom.js";
import { api } from "./api.js";
import { clock } from "./format.js";
import { toast, showError } from "./ui.js";
import { store } from "./store.js";
import { PlayerControls, SPEEDS } from "./player-controls.js";
import { PlayerPanel } from "./player-panel.js";
import { mountShortcuts } from "./player-keys.js";
import { mountMediaSession } from "./player-session.js";
import { keeper } from "./keep.js";
import { pendingPlayback } from "./playback-queue.js";
import { onLanguageChange, t } from "./i18n.js";

/** Why the <audio> element stopped, by MediaError code. */
function mediaError(code) {
  if (code === 1) return t("player.error.aborted");
  if (code === 2) return t("player.error.network");
  if (code === 3) return t("player.error.decode");
  if (code === 4) return t("player.error.unsupported");
  return t("status.unknownError");
}

/** How often the position is saved while playing. */
const SAVE_EVERY_MS = 5000;
/** The player's own speed (for songs, and podcasts without one), kept in this browser. */
const SPEED_KEY = "ferry.player.speed";

/** "episodes/12" or "tracks/345": where an item's playback lives in the API, or null. */
export function playbackKey(item) {
  if (item?.episodeId) return `episodes/${item.episodeId}`;
  if (item?.trackId) return `tracks/${item.trackId}`;
  return null;
}

/**
 * Whether two references name the same thing to play: the same episode, the same song, or
 * (when neither says more) the same transfer. A reference is {episodeId} / {trackId} /
 * {transferId}, or several of them.
 */
export function sameMedia(a, b) {
  if (!a || !b) return false;
  if (a.episodeId && b.episodeId) return Number(a.episodeId) === Number(b.episodeId);
  if (a.trackId && b.trackId) return Number(a.trackId) === Number(b.trackId);
  if (a.transferId && b.transferId) return Number(a.transferId) === Number(b.transferId);
  return false;
}

/** The newer of two playbacks (either may be missing). */
function newer(a, b) {
  if (!a) return b || null;
  if (!b) return a;
  return Date.parse(b.updatedAt) > Date.parse(a.updatedAt) ? b : a;
}

function storedSpeed() {
  const value = Number(localStorage.getItem(SPEED_KEY));
  return SPEEDS.includes(value) ? value : 1;
}

export class Player extends EventTarget {
  constructor(root) {
    super();
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
    this.ownSpeed = storedSpeed();
    // Speeds chosen here since the page loaded, by podcast id (newer than a view's copy).
    this.podcastSpeeds = new Map();

    this.audio = h("audio", { id: "player-audio", preload: "auto" });
    this.art = h("div", { class: "player-art" });
    this.title = h("p", { class: "player-title" });
    this.subtitle = h("p", { class: "player-subtitle" });
    this.toggleButton = h("button", { type: "button", class: "btn btn-icon btn-round btn-primary player-toggle", on: { click: () => this.toggle() } }, icon("play"));
    this.elapsed = h("span", { class: "player-time", text: "0:00" });
    this.total = h("span", { class: "player-time", text: "0:00" });
    this.seek = h("input", { type: "range", class: "player-seek", min: "0", max: "0", step: "0.1", value: "0" });
    this.closeButton = h("button", { type: "button", class: "btn btn-icon btn-ghost player-close", on: { click: () => this.close() } }, icon("x"));
    this.transport = h("div", { class: "player-transport" }, this.toggleButton);
    this.extras = h("div", { class: "player-extras" });

    replace(
      root,
      h("div", { class: "player-now" }, this.art, h("div", { class: "player-text" }, this.title, this.subtitle)),
      h("div", { class: "player-controls" }, this.transport, h("div", { class: "player-timeline" }, this.elapsed, this.seek, this.total)),
      this.extras,
      this.closeButton,
      this.audio,
    );
    root.hidden = true;
    this.relabel();

    const audio = this.audio;
    for (const type of ["play", "pause", "ended", "emptied", "ratechange"]) audio.addEventListener(type, () => this.changed());
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
      this.dispatchEvent(new Event("ended", { cancelable: true }));
    });
    // A closed tab or a phone's app switch: the last position, on a request that outlives the page.
    addEventListener("pagehide", () => this.save({ keepalive: true }));
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "hidden") this.save({ keepalive: true });
    });
    audio.addEventListener("durationchange", () => this.updateTime());
    audio.addEventListener("timeupdate", () => {
      // A soundbite ends where it ends; the item stays a clip until played or sought by hand.
      const clip = this.current?.clip;
      if (clip && audio.currentTime >= clip.end && !audio.paused) audio.pause();
      this.updateTime();
    });
    audio.addEventListener("error", () => {
      if (!this.current || !audio.error) return;
      toast(t("player.cantPlay", { title: this.current.title || t("player.untitled"), reason: mediaError(audio.error.code) }), { kind: "error" });
      // Perhaps its file was deleted or moved: read the transfer again, so its row says so.
      if (this.current.transferId) store.refetch(this.current.transferId);
      this.changed();
    });
    this.seek.addEventListener("input", () => {
      this.seeking = true;
      this.elapsed.textContent = clock(Number(this.seek.value));
    });
    this.seek.addEventListener("change", () => {
      this.seeking = false;
      if (this.current) this.current.clip = null;
      if (Number.isFinite(audio.duration)) audio.currentTime = Number(this.seek.value);
    });

    this.controls = new PlayerControls(this);
    this.panel = new PlayerPanel(this);
    mountShortcuts(this);
    mountMediaSession(this);
    // A new language: the bar's names again (its parts relabel themselves).
    onLanguageChange(() => this.relabel());
  }

  /** The names of the bar's own controls, and an untitled item's title, in the page's language. */
  relabel() {
    this.toggleButton.setAttribute("aria-label", this.isPlaying() ? t("action.pause") : t("action.play"));
    this.seek.setAttribute("aria-label", t("player.position"));
    this.closeButton.setAttribute("aria-label", t("player.close"));
    this.closeButton.title = t("player.close");
    if (this.current) this.title.textContent = this.current.title || t("player.untitled");
  }

  /** listener() after every change of item, play state, speed or saved playback. */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed() {
    const playing = this.isPlaying();
    replace(this.toggleButton, icon(playing ? "pause" : "play"));
    this.toggleButton.setAttribute("aria-label", playing ? t("action.pause") : t("action.play"));
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
    if (!item?.key || this.loading || this.audio.error || item.clip) return;
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
    const noted = pendingPlayback.note(item.key, update);
    api.playback
      .save(item.key, update, { keepalive })
      .then((playback) => {
        pendingPlayback.sent(item.key, noted);
        this.remember(item.key, playback);
      })
      .catch((error) => {
        // Unreachable: noted, it goes when the daemon is back. Refused: never.
        if (error.code !== "network") pendingPlayback.sent(item.key, noted);
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

  /** Whether `ref` ({episodeId} / {trackId} / {transferId}; anything when omitted) is playing now. */
  isPlaying(ref) {
    if (!this.current || this.audio.paused || this.audio.ended) return false;
    return ref === undefined || sameMedia(this.current, ref);
  }

  isCurrent(ref) {
    return sameMedia(this.current, ref);
  }

  /** Where `item` plays from: this device when it is kept here, its episode's file or stream, else its transfer's file. */
  sourceOf(item) {
    const kept = keeper.playableURL(playbackKey(item));
    if (kept) return kept;
    if (item.episodeId) return item.stream ? api.episodes.streamURL(item.episodeId) : api.episodes.fileURL(item.episodeId);
    return api.transfers.fileURL(item.transferId);
  }

  /** The speed `item` plays at: its podcast's (chosen here, or as the view knows it), else the player's own. */
  speedFor(item) {
    if (item?.podcastId) {
      const chosen = this.podcastSpeeds.has(item.podcastId) ? this.podcastSpeeds.get(item.podcastId) : item.speed;
      if (chosen > 0) return chosen;
    }
    return this.ownSpeed;
  }

  /**
   * Plays an item: {title, subtitle, artworkURL, placeholder} and what to play — an episode
   * ({episodeId, podcastId, speed: its podcast's, stream: true before it is downloaded,
   * chaptersURL, transcriptURL}), a song ({trackId, transferId}) or a file ({transferId}) —
   * with the `playback` the view knows of it. Not `autoplay`: only put in the bar, paused.
   */
  play(item, { autoplay = true } = {}) {
    if (sameMedia(this.current, item)) {
      if (autoplay) this.current.clip = null;
      if (this.audio.paused && autoplay) this.audio.play().catch((error) => this.playFailed(error));
      return;
    }
    this.leave();
    const key = playbackKey(item);
    // A position not yet sent (made offline) is as good as the daemon's, when newer.
    const playback = newer(this.playbackFor(key, item.playback), key && pendingPlayback.playback(key));
    const at = playback && !playback.played && playback.positionSeconds > 0 ? playback.positionSeconds : 0;
    this.current = { ...item, key, savedPosition: at || null };
    this.loading = true;
    this.resumeAt = at;
    this.root.hidden = false;
    document.body.classList.add("has-player");
    this.title.textContent = item.title || t("player.untitled");
    this.subtitle.textContent = item.subtitle || "";
    replace(this.art, artwork(item.artworkURL, { placeholder: item.placeholder || "music" }));
    this.audio.src = this.sourceOf(item);
    const data = this.audio.dataset;
    for (const name of ["transferId", "episodeId", "trackId"]) {
      if (item[name]) data[name] = String(item[name]);
      else delete data[name];
    }
    data.source = this.audio.src.includes("/kept/") ? "device" : item.episodeId ? (item.stream ? "stream" : "file") : "transfer";
    const speed = this.speedFor(item);
    this.audio.defaultPlaybackRate = speed;
    this.audio.playbackRate = speed;
    if (autoplay) this.audio.play().catch((error) => this.playFailed(error));
    this.dispatchEvent(new Event("itemchange"));
    this.changed();
  }

  playFailed(error) {
    // Not an error: a newer play() or pause() interrupted this one.
    if (error?.name === "AbortError") return;
    if (error?.name === "NotAllowedError") {
      toast(t("player.pressPlay"), { kind: "info" });
      return;
    }
    if (this.audio.error) return; // reported by the error event
    toast(t("player.cantPlay", { title: this.current?.title || t("player.untitled"), reason: error?.message || String(error) }), { kind: "error" });
  }

  /** Plays or pauses the current item, or plays `item` if given and different. */
  toggle(item) {
    if (item && !this.isCurrent(item)) return this.play(item);
    if (!this.current) return undefined;
    this.current.clip = null;
    if (this.audio.paused || this.audio.ended) this.audio.play().catch((error) => this.playFailed(error));
    else this.audio.pause();
    return undefined;
  }

  /** Plays the current item on (nothing when there is none). */
  resumePlaying() {
    if (this.current && (this.audio.paused || this.audio.ended)) this.audio.play().catch((error) => this.playFailed(error));
  }

  pause() {
    if (this.current && !this.audio.paused) this.audio.pause();
  }

  /** Moves by `seconds` (back when negative), within the item. */
  skip(seconds) {
    if (!this.current) return;
    const audio = this.audio;
    const end = Number.isFinite(audio.duration) ? audio.duration : Infinity;
    audio.currentTime = Math.max(0, Math.min(end, audio.currentTime + seconds));
  }

  /**
   * Plays `seconds` of `item` from `start` and pauses (a soundbite). Where the listener was in
   * it stays as it was: a clip is not listening on.
   */
  playClip(item, start, seconds) {
    this.play(item, { autoplay: false });
    if (!this.current) return;
    this.current.clip = { end: start + seconds };
    this.seekTo(start);
  }

  /** Goes to `seconds` into the item (a chapter, a line of the transcript), and plays. */
  seekTo(seconds) {
    if (!this.current) return;
    if (this.loading) this.resumeAt = seconds;
    else this.audio.currentTime = seconds;
    if (this.audio.paused) this.audio.play().catch((error) => this.playFailed(error));
  }

  /** To the start of this chapter, or the one before, or of the item. */
  previous() {
    if (!this.current) return;
    this.seekTo(this.panel.chapterStart(-1) ?? 0);
  }

  /** To the next chapter, else the next item of the Up Next (when there is one). */
  next() {
    if (!this.current) return;
    const at = this.panel.chapterStart(1);
    if (at !== null) this.seekTo(at);
    else this.upNext?.playNext();
  }

  /**
   * A new speed: for an episode, its podcast's from now on (PATCH /v1/podcasts/{id}
   * playbackSpeed); for anything else the player's own, kept in this browser.
   */
  async setSpeed(speed) {
    this.audio.defaultPlaybackRate = speed;
    this.audio.playbackRate = speed;
    const podcastId = this.current?.podcastId;
    if (!podcastId) {
      this.ownSpeed = speed;
      localStorage.setItem(SPEED_KEY, String(speed));
      return;
    }
    this.podcastSpeeds.set(podcastId, speed);
    try {
      await api.podcasts.update(podcastId, { playbackSpeed: speed });
    } catch (error) {
      showError(error, t("player.speedNotKept"));
    }
  }

  /**
   * A transfer left the list or its file was deleted: stops if the current item plays from that
   * transfer's file (an episode plays from its own file, which outlives its transfer, unless
   * `deleted`).
   */
  forget(transferId, { deleted = false } = {}) {
    const current = this.current;
    if (!current?.transferId || Number(current.transferId) !== Number(transferId)) return;
    if (current.episodeId && !deleted) return;
    this.close();
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
    for (const name of ["transferId", "episodeId", "trackId", "source"]) delete this.audio.dataset[name];
    this.audio.load();
    this.root.hidden = true;
    document.body.classList.remove("has-player");
    this.dispatchEvent(new Event("itemchange"));
    this.changed();
  }
}
