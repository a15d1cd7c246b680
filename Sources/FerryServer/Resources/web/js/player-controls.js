// The player's own controls beside play/pause: skip back 15 s and forward 30 s, a bookmark of
// this moment of an episode or song, the speed (0.5×–3×; an episode's is its podcast's, see
// Player.setSpeed) and a sleep timer that pauses after 15, 30 or 60 minutes or at the end of the
// episode.

import { h, icon, button } from "./dom.js";
import { clock } from "./format.js";
import { toast, showError } from "./ui.js";
import { api } from "./api.js";
import { onLanguageChange, t } from "./i18n.js";

/** The sleep timer's choices: a value, and its name in the page's language. */
const SLEEP_OPTIONS = ["off", "15", "30", "60", "end"];
function sleepName(value) {
  if (value === "off") return t("player.sleep.off");
  if (value === "end") return t("player.sleep.end");
  return t("player.sleep.minutes", { n: Number(value) });
}
const speedName = (speed) => t("player.speedOption", { speed: Number(speed) });
/** A control's accessible name and tooltip. */
function named(el, name) {
  el.setAttribute("aria-label", name);
  el.title = name;
}

/** The speeds offered (one the daemon kept for a podcast is added when it is another). */
export const SPEEDS = [0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3];
export const SKIP_BACK = 15;
export const SKIP_FORWARD = 30;

/**
 * How long a sleep timer's minute lasts, in milliseconds: 60,000, unless the page's storage says
 * otherwise (`ferry.player.sleepMinuteMs`: a browser test's short minute).
 */
function minuteMs() {
  const value = Number(localStorage.getItem("ferry.player.sleepMinuteMs"));
  return value > 0 ? value : 60_000;
}

export class PlayerControls {
  constructor(player) {
    this.player = player;
    const back = button(t("player.back", { count: SKIP_BACK }), { icon: "skip-back", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost player-skip player-back", onClick: () => player.skip(-SKIP_BACK) });
    const forward = button(t("player.forward", { count: SKIP_FORWARD }), { icon: "skip-forward", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost player-skip player-forward", onClick: () => player.skip(SKIP_FORWARD) });
    player.transport.prepend(back);
    player.transport.append(forward);

    // A bookmark of this moment (episodes and songs: the daemon keeps them per listener).
    const mark = button(t("player.bookmark"), { icon: "bookmark", iconOnly: true, kind: "ghost", class: "btn btn-icon btn-ghost player-bookmark", onClick: () => this.bookmark() });
    player.transport.append(mark);
    const showMark = () => {
      mark.hidden = !(player.current?.episodeId || player.current?.trackId);
    };
    player.addEventListener("itemchange", showMark);
    showMark();

    this.speed = h("select", { class: "select player-speed", aria: { label: t("player.speed") }, title: t("player.speed") }, SPEEDS.map((s) => h("option", { value: String(s), text: speedName(s) })));
    this.speed.addEventListener("change", () => player.setSpeed(Number(this.speed.value)));

    this.sleepSelect = h("select", { class: "select player-sleep", aria: { label: t("player.sleep.label") }, title: t("player.sleep.label") }, SLEEP_OPTIONS.map((value) => h("option", { value, text: sleepName(value) })));
    this.sleepSelect.addEventListener("change", () => this.setSleep(this.sleepSelect.value));
    this.sleep = { mode: "off", endsAt: 0 };
    this.sleepTimer = null;
    this.sleepTicker = null;

    player.extras.append(
      h("label", { class: "select-field player-field" }, this.speed),
      h("label", { class: "select-field player-field" }, icon("moon", "player-field-icon"), this.sleepSelect),
    );

    onLanguageChange(() => {
      named(back, t("player.back", { count: SKIP_BACK }));
      named(mark, t("player.bookmark"));
      named(forward, t("player.forward", { count: SKIP_FORWARD }));
      named(this.speed, t("player.speed"));
      named(this.sleepSelect, t("player.sleep.label"));
      for (const option of this.speed.options) option.textContent = speedName(option.value);
      this.showSleep();
    });

    player.audio.addEventListener("ratechange", () => this.showSpeed());
    player.addEventListener("itemchange", () => {
      this.showSpeed();
      if (!player.current) this.setSleep("off");
    });
    // Asleep at the end: nothing plays after it (the Up Next sees the event cancelled).
    player.addEventListener("ended", (event) => {
      if (this.sleep.mode !== "end") return;
      event.preventDefault();
      this.fallAsleep();
    });
  }

  async bookmark() {
    const item = this.player.current;
    if (!item) return;
    const seconds = Math.round(this.player.audio.currentTime * 10) / 10;
    try {
      const saved = item.episodeId ? await api.bookmarks.addToEpisode(item.episodeId, { seconds }) : await api.bookmarks.addToTrack(item.trackId, { seconds });
      toast(t("player.bookmarked", { at: clock(saved.seconds) }), { kind: "success" });
      this.player.dispatchEvent(new CustomEvent("bookmark", { detail: saved }));
    } catch (error) {
      showError(error, t("player.notBookmarked"));
    }
  }

  showSpeed() {
    const rate = this.player.audio.playbackRate;
    const value = String(Math.round(rate * 100) / 100);
    if (![...this.speed.options].some((o) => o.value === value)) this.speed.append(h("option", { value, text: speedName(value) }));
    this.speed.value = value;
  }

  /** "off", "end" (the end of the current item) or a number of minutes. */
  setSleep(mode) {
    clearTimeout(this.sleepTimer);
    clearInterval(this.sleepTicker);
    this.sleepTimer = null;
    this.sleepTicker = null;
    const minutes = Number(mode);
    this.sleep = { mode: minutes > 0 ? minutes : mode === "end" ? "end" : "off", endsAt: 0 };
    if (minutes > 0) {
      const ms = minutes * minuteMs();
      this.sleep.endsAt = Date.now() + ms;
      this.sleepTimer = setTimeout(() => this.fallAsleep(), ms);
      this.sleepTicker = setInterval(() => this.showSleep(), 1000);
    }
    this.showSleep();
  }

  showSleep() {
    const { mode, endsAt } = this.sleep;
    this.sleepSelect.value = String(mode);
    this.player.root.dataset.sleep = String(mode);
    if (endsAt) this.player.root.dataset.sleepEndsAt = String(endsAt);
    else delete this.player.root.dataset.sleepEndsAt;
    const left = clock(Math.max(0, (endsAt - Date.now()) / 1000));
    // A timer running: its choice says the time left (no wider than "End of episode").
    SLEEP_OPTIONS.forEach((value, index) => {
      const name = sleepName(value);
      this.sleepSelect.options[index].textContent = endsAt && value === String(mode) ? t("player.sleep.left", { name, left }) : name;
    });
  }

  fallAsleep() {
    this.setSleep("off");
    this.player.pause();
    toast(t("player.slept"), { kind: "info" });
  }
}
