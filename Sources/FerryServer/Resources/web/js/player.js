// The now-playing bar: one <audio> element for the whole page, playing finished transfers from
// GET /v1/transfers/{id}/file (served with Range, so seeking works).

import { h, icon, replace, artwork } from "./dom.js";
import { api } from "./api.js";
import { clock } from "./format.js";
import { toast } from "./ui.js";
import { store } from "./store.js";

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
    audio.addEventListener("loadedmetadata", () => this.updateTime());
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

  /** listener() after every change of track or play state. */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed() {
    const playing = this.isPlaying();
    replace(this.toggleButton, icon(playing ? "pause" : "play"));
    this.toggleButton.setAttribute("aria-label", playing ? "Pause" : "Play");
    this.root.classList.toggle("playing", playing);
    for (const listener of [...this.listeners]) listener();
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

  /** Plays a finished transfer: {transferId, title, subtitle, artworkURL, placeholder}. */
  play(item) {
    if (this.current?.transferId === item.transferId) {
      if (this.audio.paused) this.audio.play().catch((error) => this.playFailed(error));
      return;
    }
    this.current = item;
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

  close() {
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
