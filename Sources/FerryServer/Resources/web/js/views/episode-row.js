// One episode of a podcast's page: its facts, where the listener is in it (played, or the time
// left), its download, and what can be done with it. A click on the row opens it: the show notes
// and labelled buttons (play or stream, download, mark played). An episode downloaded plays from
// its own file (with or without a transfer); one that is not can be streamed; one without media
// is offered neither. One with media can be kept on this device (keep-control.js): from its file
// when it is downloaded, else from its host through the daemon.

import { h, icon, button, confirmButton, replace } from "../dom.js";
import { api } from "../api.js";
import { store, transferMedia } from "../store.js";
import { bytes, clock, date, eta, length } from "../format.js";
import { phase, shortStatus, pause, resume, cancel, troubled } from "../transfers.js";
import { sanitizedFragment } from "../sanitize.js";
import { withBusy, showError } from "../ui.js";
import { t as tr } from "../i18n.js";
import { keepControl } from "../keep-control.js";
import { people } from "./podcast-about.js";

/**
 * A row for `initial`. `env`: {ctx, podcast() (the show), transferOf(episodeId),
 * setTransfer(episodeId, transfer), playbackOf(episode), markPlayed(episode, played, button),
 * deleteFile(episode, button), extraActions(episode) (more labelled buttons for the open row, or
 * none)}.
 */
export function episodeRow(initial, env) {
  const { ctx } = env;
  let episode = initial;
  const fill = h("div", { class: "episode-fill", aria: { hidden: "true" } });
  const newBadge = h("span", { class: "badge badge-new", text: tr("episode.new") });
  const metaText = h("span", { class: "episode-facts" });
  const playedMark = h("span", { class: "episode-played" }, icon("check"), h("span", { text: tr("episode.played") }));
  const progressBar = h("span", { class: "episode-progress-bar", aria: { hidden: "true" } });
  const progressText = h("span", { class: "episode-progress-text" });
  const progress = h("span", { class: "episode-progress" }, progressBar, progressText);
  const meta = h("p", { class: "episode-meta" }, newBadge, metaText, playedMark, progress);
  const markButton = h("button", { type: "button", class: "btn btn-icon btn-ghost act-mark" }, icon("check"));
  markButton.addEventListener("click", (event) => env.markPlayed(episode, !env.playbackOf(episode)?.played, event.currentTarget));
  const openButton = h("button", { type: "button", class: "episode-open", aria: { expanded: "false" } });
  const title = h("h3", { class: "episode-title" }, openButton);
  const status = h("p", { class: "episode-status", aria: { live: "off" } });
  const notesBody = h("div", { class: "rich-text episode-notes-body" });
  const notes = h("details", { class: "episode-notes" }, h("summary", { text: tr("episode.showNotes") }), notesBody);
  const more = h("div", { class: "episode-more", hidden: true });
  const actions = h("div", { class: "episode-actions" });
  const el = h("li", { class: "episode" }, fill, h("div", { class: "episode-main" }, meta, title, status, notes), h("div", { class: "episode-controls" }, markButton, actions), more);
  let notesFilled = false;
  const fillNotes = () => {
    notesFilled = true;
    replace(notesBody, episode.descriptionHTML ? sanitizedFragment(episode.descriptionHTML) : episode.descriptionText || "");
  };
  notes.addEventListener("toggle", () => {
    if (notes.open && !notesFilled) fillNotes();
  });

  // Opening the row: a click on its title, or anywhere on it but a button, a link or the notes.
  const setOpen = (open) => {
    el.classList.toggle("is-open", open);
    openButton.setAttribute("aria-expanded", String(open));
    more.hidden = !open;
    if (open && !notes.hidden) notes.open = true;
    lastKey = null;
    renderState();
  };
  openButton.addEventListener("click", () => setOpen(!el.classList.contains("is-open")));
  el.addEventListener("click", (event) => {
    if (event.target.closest("button, a, input, select, summary, .episode-notes-body, .episode-more")) return;
    setOpen(!el.classList.contains("is-open"));
  });

  const label = () => episode.title || tr("episode.untitled");
  const transfer = () => store.get(env.transferOf(episode.id));
  const hasMedia = () => Boolean(episode.enclosureURL);

  /** What the player plays for this episode: its file, or its stream (`stream`). */
  function playItem(stream) {
    const podcast = env.podcast();
    return {
      episodeId: episode.id,
      transferId: transfer()?.id,
      podcastId: podcast.id,
      speed: podcast.playbackSpeed,
      stream,
      playback: episode.playback,
      title: episode.title,
      subtitle: podcast.title,
      artworkURL: episode.artworkURL || podcast.artworkURL,
      placeholder: "podcast",
      // null: none (undefined would mean "not known", which the player asks the daemon about).
      chaptersURL: episode.chaptersURL ?? null,
      transcriptURL: episode.transcriptURL ?? null,
    };
  }

  /** What "Keep on this device" keeps of it. */
  function keepItem() {
    const podcast = env.podcast();
    const t = transfer();
    const onDisk = ["done", "disk"].includes(currentPhase());
    return {
      key: `episodes/${episode.id}`,
      kind: "episode",
      id: episode.id,
      podcastId: podcast.id,
      speed: podcast.playbackSpeed,
      title: episode.title,
      subtitle: podcast.title,
      artworkURL: episode.artworkURL || podcast.artworkURL,
      chaptersURL: episode.chaptersURL ?? null,
      transcriptURL: episode.transcriptURL ?? null,
      source: onDisk ? api.episodes.fileURL(episode.id) : api.episodes.streamURL(episode.id),
      total: onDisk && t?.totalBytes > 0 ? t.totalBytes : episode.enclosureLength > 0 ? episode.enclosureLength : null,
      // A downloaded file's length is exact; a feed's enclosure length often is not.
      exactSize: Boolean(onDisk && t?.totalBytes > 0),
    };
  }

  async function download(event) {
    await withBusy(event.currentTarget, async () => {
      const t = await api.episodes.download(episode.id);
      env.setTransfer(episode.id, t);
      store.upsert(t);
    });
    renderState();
  }

  /** Played, or how much is left of an episode begun; the mark button says what it would do. */
  function renderPlayback() {
    const playback = env.playbackOf(episode);
    const played = Boolean(playback?.played);
    el.classList.toggle("is-played", played);
    playedMark.hidden = !played;
    const position = !played && playback?.positionSeconds > 0 ? playback.positionSeconds : 0;
    const audio = ctx.player.audio;
    const duration = ctx.player.isCurrent({ episodeId: episode.id }) && Number.isFinite(audio.duration) ? audio.duration : episode.durationSeconds;
    progress.hidden = !position;
    if (position) {
      const left = duration > position ? duration - position : 0;
      progressText.textContent = left > 0 ? eta(left) : tr("episode.at", { at: clock(position) });
      progressBar.style.setProperty("--fraction", duration > 0 ? String(Math.min(1, position / duration)) : "0");
      progress.title = tr("episode.stoppedAt", { at: clock(position) });
    }
    markButton.setAttribute("aria-label", played ? tr("episode.markUnplayedName", { title: label() }) : tr("episode.markPlayedName", { title: label() }));
    markButton.title = played ? tr("episode.markUnplayed") : tr("episode.markPlayed");
    markButton.classList.toggle("is-on", played);
    return position;
  }

  /** Where the episode's download stands: idle, active, paused, failed, done, disk or nomedia. */
  function currentPhase() {
    const t = transfer();
    // Without a transfer in the store, the episode's own state (a file already on disk).
    // A file deleted or moved since: the episode is not downloaded any more.
    const known = t ? phase(t) : episode.state === "downloaded" ? "disk" : "idle";
    const p = known === "missing" ? "idle" : known;
    return p === "idle" && !hasMedia() ? "nomedia" : p;
  }

  function playButton(playing, { stream = false, labelled = false } = {}) {
    const name = playing ? tr("episode.pauseName", { title: label() }) : stream ? tr("episode.streamName", { title: label() }) : tr("episode.playName", { title: label() });
    const text = playing ? tr("action.pause") : stream ? tr("episode.stream") : tr("action.play");
    const classes = labelled ? ["btn", stream ? "btn-secondary" : "btn-primary", "act-play-labelled"] : stream ? ["btn", "btn-icon", "btn-ghost", "act-stream"] : ["btn", "btn-icon", "btn-round", "btn-primary", "act-play"];
    return h(
      "button",
      { type: "button", class: classes, aria: { label: name }, title: labelled ? null : text, on: { click: () => ctx.player.toggle(playItem(stream)) } },
      icon(playing ? "pause" : "play"),
      labelled ? h("span", { class: "btn-label", text }) : null,
    );
  }

  let lastKey = null;
  function renderState() {
    const position = renderPlayback();
    const t = transfer();
    const p = currentPhase();
    const playing = ctx.player.isPlaying({ episodeId: episode.id });
    const onDisk = p === "done" || p === "disk";
    el.dataset.state = p;
    el.classList.toggle("is-playing", playing);
    const fraction = t && (p === "active" || p === "paused") && t.totalBytes > 0 ? t.bytesReceived / t.totalBytes : p === "active" ? 0 : null;
    fill.style.setProperty("--fraction", fraction === null ? "0" : String(Math.min(1, fraction)));
    fill.classList.toggle("paused", p === "paused");

    let text = "";
    if (p === "active" || p === "paused" || p === "failed") text = shortStatus(t);
    else if (p === "done") text = `${tr("episode.downloaded")} · ${shortStatus(t)}`;
    else if (p === "disk") text = tr("episode.downloaded");
    else if (p === "nomedia") text = tr("episode.noMediaHint");
    status.textContent = text;
    status.hidden = !text;
    status.classList.toggle("is-error", troubled(t));

    const open = el.classList.contains("is-open");
    const key = `${p}:${playing}:${open}:${open ? position : ""}`;
    if (key === lastKey) return;
    lastKey = key;
    const stream = hasMedia() && !onDisk ? playButton(playing, { stream: true }) : null;
    switch (p) {
      case "nomedia":
        replace(actions, h("span", { class: "tag tag-none", title: tr("episode.noMediaHint") }, h("span", { class: "tag-label", text: tr("episode.noMedia") })));
        break;
      case "idle":
        replace(actions, stream, button(tr("episode.download"), { icon: "download", kind: "secondary", onClick: download, "aria-label": tr("episode.downloadName", { title: label() }) }));
        break;
      case "active":
        replace(actions, stream, button(tr("downloads.pauseOne"), { icon: "pause", iconOnly: true, kind: "ghost", onClick: () => pause(t.id) }), button(tr("downloads.cancelOne"), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }));
        break;
      case "paused":
        replace(actions, stream, button(tr("downloads.resumeOne"), { icon: "resume", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }), button(tr("downloads.cancelOne"), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }));
        break;
      case "failed":
        replace(actions, stream, button(tr("downloads.retryOne"), { icon: "refresh", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }), button(tr("downloads.cancelOne"), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }));
        break;
      default:
        replace(actions, playButton(playing));
    }
    if (open) renderMore(p, playing, position);
  }

  /** "S2 · Egypt", "S2 E5" or the feed's own display ("Ch. 3"), from itunes and podcast: tags. */
  function season() {
    const extra = episode.podcasting || {};
    const number = episode.season ?? extra.season;
    const name = extra.seasonName;
    const ep = extra.episodeDisplay || (episode.episodeNumber != null ? tr("episode.number", { number: episode.episodeNumber }) : null);
    const s = number != null ? tr("episode.season", { number }) : null;
    return [s && name ? `${s} · ${name}` : s || name, ep].filter(Boolean).join(" ") || null;
  }

  // The listener's bookmarks of this episode: read when the row first opens, and again when the
  // player bookmarks it.
  let marks = null;
  const marksEl = h("div", { class: "episode-bookmarks" });
  async function loadMarks() {
    try {
      marks = (await api.bookmarks.ofEpisode(episode.id)).bookmarks;
    } catch (error) {
      marks = [];
      showError(error);
    }
    renderMarks();
  }
  const onBookmark = (event) => {
    if (event.detail?.media === "episode" && event.detail.mediaId === episode.id && marks !== null) loadMarks();
  };
  ctx.player.addEventListener?.("bookmark", onBookmark);
  function renderMarks() {
    if (!marks?.length) return replace(marksEl);
    const onDisk = ["done", "disk"].includes(currentPhase());
    replace(marksEl, h("h4", { class: "episode-bookmarks-title", text: tr("episode.bookmarks") }), h("ul", { class: "bookmark-list" }, marks.map((mark) => {
      const jump = h("button", { type: "button", class: "btn btn-secondary act-bookmark", aria: { label: tr("episode.bookmarkAt", { at: clock(mark.seconds) }) }, on: {
        click: () => {
          ctx.player.play(playItem(!onDisk));
          ctx.player.seekTo(mark.seconds);
        },
      } }, icon("bookmark"), h("span", { class: "btn-label", text: clock(mark.seconds) }));
      const note = h("input", { type: "text", class: "input bookmark-note", value: mark.note || "", maxlength: "1000", placeholder: tr("episode.bookmarkNote"), aria: { label: tr("episode.bookmarkNoteAt", { at: clock(mark.seconds) }) } });
      note.addEventListener("change", async () => {
        try {
          Object.assign(mark, await api.bookmarks.setNote(mark.id, note.value));
        } catch (error) {
          showError(error);
          note.value = mark.note || "";
        }
      });
      const remove = button(tr("episode.bookmarkRemove"), { icon: "trash", iconOnly: true, kind: "ghost", onClick: async () => {
        try {
          await api.bookmarks.remove(mark.id);
          marks = marks.filter((m) => m.id !== mark.id);
          renderMarks();
        } catch (error) {
          showError(error);
        }
      } });
      return h("li", { class: "bookmark" }, jump, note, remove);
    })));
  }

  /** The feed's soundbites: each plays its moment of the episode and stops. */
  function soundbites(onDisk) {
    const bites = (episode.podcasting?.soundbites || []).slice(0, 10);
    if (!bites.length || !hasMedia()) return null;
    return h("div", { class: "episode-soundbites", role: "group", aria: { label: tr("episode.soundbites") } },
      bites.map((bite) => h("button", {
        type: "button",
        class: "btn btn-secondary act-soundbite",
        on: { click: () => ctx.player.playClip(playItem(!onDisk), bite.start, bite.duration) },
      }, icon("play"), h("span", { class: "btn-label", text: tr("episode.soundbite", { title: bite.title || clock(bite.start), length: clock(bite.duration) }) }))));
  }

  /** The open row's labelled buttons. */
  function renderMore(p, playing, position) {
    const onDisk = p === "done" || p === "disk";
    if (marks === null) loadMarks();
    const main = [];
    if (onDisk) {
      const b = playButton(playing, { labelled: true });
      if (!playing && position > 0) b.querySelector(".btn-label").textContent = tr("episode.resumeAt", { at: clock(position) });
      main.push(b);
    } else if (hasMedia()) {
      main.push(playButton(playing, { stream: true, labelled: true }));
      if (p === "idle") main.push(button(tr("episode.download"), { icon: "download", kind: "secondary", onClick: download, class: "btn btn-secondary act-download-labelled" }));
    }
    // Its file can go, but not while it plays from it.
    const remove =
      onDisk && !ctx.player.isCurrent({ episodeId: episode.id })
        ? confirmButton(tr("episode.deleteFile"), {
            question: tr("episode.deleteFileQuestion"),
            confirmLabel: tr("episode.deleteFileConfirm", { title: label() }),
            onConfirm: () => env.deleteFile(episode, remove),
          })
        : null;
    remove?.classList.add("act-delete-file");
    const facts = [episode.chaptersURL ? tr("panel.chapters") : null, episode.transcriptURL ? tr("panel.transcript") : null].filter(Boolean);
    replace(
      more,
      h("div", { class: "episode-more-actions" }, main, hasMedia() ? env.extraActions?.(episode, () => playItem(!onDisk)) : null, remove),
      hasMedia() ? keepControl(keepItem) : null,
      episode.podcasting?.persons?.length ? h("p", { class: "episode-people", text: people(episode.podcasting.persons) }) : null,
      soundbites(onDisk),
      marksEl,
      facts.length ? h("p", { class: "episode-more-facts" }, facts.map((f) => h("span", { class: "tag", text: f }))) : null,
    );
  }

  return {
    el,
    renderState,
    destroy: () => ctx.player.removeEventListener?.("bookmark", onBookmark),
    transferId: () => env.transferOf(episode.id) ?? null,
    update(next) {
      episode = next;
      newBadge.hidden = !(episode.isNew && episode.state === "notDownloaded");
      const t = transfer();
      const size = t?.totalBytes > 0 ? t.totalBytes : episode.enclosureLength > 0 ? episode.enclosureLength : null;
      metaText.textContent = [season(), date(episode.published), length(episode.durationSeconds), size ? bytes(size) : null].filter(Boolean).join(" · ");
      openButton.textContent = label();
      notes.hidden = !(episode.descriptionHTML || episode.descriptionText);
      if (notesFilled) fillNotes();
      if (t) transferMedia.set(t.id, { ...playItem(false), transferId: t.id, title: undefined, subtitle: undefined });
      ctx.player.upNext?.learn(playItem(false));
      lastKey = null;
      renderState();
    },
  };
}
