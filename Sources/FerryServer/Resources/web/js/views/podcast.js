// One podcast: its artwork, description and settings (refresh, auto-download, unsubscribe),
// and its episodes with their downloads and where the listener is in them (played, or the time
// left; played or unplayed by hand, one or all at once). Every text here comes from the feed: it
// is set as text, and show notes go through the allowlist sanitiser.

import { h, icon, button, confirmButton, replace, reconcile, artwork } from "../dom.js";
import { api, isSuperseded } from "../api.js";
import { store } from "../store.js";
import { ago, bytes, clock, date, eta, length, plural } from "../format.js";
import { playbackKey } from "../player.js";
import { phase, shortStatus, pause, resume, cancel, troubled } from "../transfers.js";
import { sanitizedFragment } from "../sanitize.js";
import { errorBox, emptyState, showError, toast, withBusy, spinner } from "../ui.js";

const AUTO_DOWNLOAD = [
  [0, "Off"],
  [1, "Newest 1"],
  [3, "Newest 3"],
  [5, "Newest 5"],
  [10, "Newest 10"],
];

export function mountPodcast(root, params, ctx) {
  const id = Number(params.id);
  let detail = null;
  let loadError = null;
  let controller = null;
  const rows = new Map();
  // Which transfer downloads each episode (from the detail, and from download commands).
  const episodeTransfers = new Map();

  const hero = h("section", { class: "podcast-hero" });
  const list = h("ol", { class: "episode-list", aria: { label: "Episodes" } });
  const episodesSection = h("section", { class: "section", aria: { label: "Episodes" } });

  replace(root, h("a", { class: "back-link", href: "#/podcasts" }, icon("back"), h("span", { text: "Podcasts" })), hero, episodesSection);
  replace(hero, h("div", { class: "section-loading" }, spinner(), h("span", { text: "Loading…" })));

  async function load() {
    controller?.abort();
    controller = new AbortController();
    try {
      apply(await api.podcasts.get(id, controller.signal));
      loadError = null;
    } catch (error) {
      if (isSuperseded(error)) return;
      loadError = error;
      if (!detail) renderError();
      else showError(error);
    }
  }

  function apply(next) {
    detail = next;
    for (const episode of detail.episodes) {
      if (episode.transfer) {
        episodeTransfers.set(episode.id, episode.transfer.id);
        store.adopt(episode.transfer);
      }
    }
    renderHero();
    renderEpisodes();
    renderMarkAll();
  }

  function renderError() {
    const notFound = loadError?.status === 404;
    replace(hero, errorBox(notFound ? "This podcast is not in your subscriptions (any more)." : loadError.message, notFound ? {} : { retry: load }));
    replace(episodesSection);
  }

  function renderHero() {
    const p = detail.podcast;
    document.title = `${p.title} · Ferry`;
    const description = h("div", { class: "podcast-description rich-text" }, p.descriptionHTML ? sanitizedFragment(p.descriptionHTML) : p.descriptionText || "");
    const more = h("button", { type: "button", class: "link-button", text: "More", aria: { expanded: "false" } });
    more.addEventListener("click", () => {
      const open = description.classList.toggle("expanded");
      more.textContent = open ? "Less" : "More";
      more.setAttribute("aria-expanded", String(open));
    });

    const select = h(
      "select",
      { id: "auto-download", class: "select", title: "Download the newest episodes by themselves" },
      AUTO_DOWNLOAD.map(([value, label]) => h("option", { value: String(value), text: label, selected: value === p.autoDownload })),
      AUTO_DOWNLOAD.some(([value]) => value === p.autoDownload) ? null : h("option", { value: String(p.autoDownload), text: `Newest ${p.autoDownload}`, selected: true }),
    );
    select.addEventListener("change", async () => {
      const value = Number(select.value);
      select.disabled = true;
      try {
        apply(await api.podcasts.update(id, { autoDownload: value }));
        toast(value ? `New episodes will download by themselves (newest ${value}).` : "Auto-download is off.", { kind: "success" });
      } catch (error) {
        showError(error, "Couldn't change auto-download");
        select.value = String(detail.podcast.autoDownload);
      } finally {
        select.disabled = false;
      }
    });

    const refresh = button("Refresh", {
      icon: "refresh",
      kind: "secondary",
      onClick: async () => {
        await withBusy(refresh, async () => {
          const outcome = await api.podcasts.refresh(id);
          toast(outcome.newEpisodes ? `${plural(outcome.newEpisodes, "new episode")}.` : "No new episodes.", { kind: "success" });
        }, "Refreshing…");
        // Also after a failure: the podcast now carries the refresh's error.
        await load();
      },
    });
    const seen = button("Mark all as seen", {
      icon: "check",
      kind: "ghost",
      onClick: () => withBusy(seen, async () => apply(await api.podcasts.seen(id))),
    });
    const unsubscribe = confirmButton("Unsubscribe", {
      question: "Unsubscribe?",
      confirmLabel: "Click again to unsubscribe",
      onConfirm: async () => {
        const done = await withBusy(unsubscribe, async () => {
          await api.podcasts.unsubscribe(id);
          return true;
        });
        if (done) {
          toast(`Unsubscribed from “${p.title}”. Downloaded episodes stay in your library.`, { kind: "success" });
          ctx.navigate("#/podcasts");
        }
      },
    });

    const meta = [plural(p.episodeCount, "episode"), p.newCount ? `${p.newCount} new` : null, p.downloadedCount ? `${p.downloadedCount} downloaded` : null, p.refreshedAt ? `refreshed ${ago(p.refreshedAt)}` : null].filter(Boolean).join(" · ");

    replace(
      hero,
      artwork(p.artworkURL, { placeholder: "podcast", size: "hero" }),
      h(
        "div",
        { class: "podcast-hero-text" },
        h("p", { class: "kicker", text: "Podcast" }),
        h("h1", { class: "podcast-title", text: p.title }),
        p.author ? h("p", { class: "podcast-author", text: p.author }) : null,
        h("p", { class: "podcast-meta", text: meta }),
        p.error ? errorBox(`The last refresh failed: ${p.error.message}`) : null,
        description.childNodes.length ? [description, more] : null,
        h(
          "div",
          { class: "podcast-actions" },
          refresh,
          p.newCount ? seen : null,
          markAll,
          h("label", { class: "select-field" }, h("span", { class: "select-label", text: "Auto-download" }), select),
          unsubscribe,
        ),
      ),
    );
    // "More" only when the description is actually cut.
    requestAnimationFrame(() => {
      more.hidden = description.scrollHeight <= description.clientHeight + 2 && !description.classList.contains("expanded");
    });
  }

  function renderEpisodes() {
    if (detail.episodes.length === 0) {
      rows.clear();
      replace(episodesSection, emptyState("rss", "No episodes yet", "The feed has no episodes. Refresh later."));
      return;
    }
    if (!episodesSection.contains(list)) replace(episodesSection, h("div", { class: "section-header" }, h("h2", { text: "Episodes" })), list);
    reconcile(list, rows, detail.episodes, (e) => e.id, (e) => episodeRow(e));
  }

  /** The newest playback of an episode: the detail's, or one the player saved since. */
  function playbackOf(episode) {
    return ctx.player.playbackFor(playbackKey({ episodeId: episode.id }), episode.playback);
  }

  /** Played or unplayed by hand; unplayed after it was heard to the end starts it over. */
  async function markPlayed(episode, played, target) {
    const key = playbackKey({ episodeId: episode.id });
    const update = { played };
    const known = playbackOf(episode);
    const duration = episode.durationSeconds;
    if (!played && known && duration > 0 && known.positionSeconds >= duration - Math.min(30, duration * 0.05)) update.positionSeconds = 0;
    await withBusy(target, async () => {
      const playback = await api.playback.save(key, update);
      episode.playback = playback;
      ctx.player.remember(key, playback);
    });
    renderMarkAll();
  }

  // "Mark all played": there while an episode is not.
  const markAll = button("Mark all played", {
    icon: "check",
    kind: "ghost",
    onClick: () =>
      withBusy(markAll, async () => {
        apply(await api.podcasts.played(id));
        toast("Every episode is marked played.", { kind: "success" });
      }),
  });
  function renderMarkAll() {
    markAll.hidden = !detail || detail.episodes.every((e) => playbackOf(e)?.played);
  }

  function episodeRow(initial) {
    let episode = initial;
    const fill = h("div", { class: "episode-fill", aria: { hidden: "true" } });
    const newBadge = h("span", { class: "badge badge-new", text: "New" });
    const metaText = h("span", { class: "episode-facts" });
    const playedMark = h("span", { class: "episode-played" }, icon("check"), h("span", { text: "Played" }));
    const progressBar = h("span", { class: "episode-progress-bar", aria: { hidden: "true" } });
    const progressText = h("span", { class: "episode-progress-text" });
    const progress = h("span", { class: "episode-progress" }, progressBar, progressText);
    const meta = h("p", { class: "episode-meta" }, newBadge, metaText, playedMark, progress);
    const markButton = h("button", { type: "button", class: "btn btn-icon btn-ghost act-mark" }, icon("check"));
    markButton.addEventListener("click", (event) => markPlayed(episode, !playbackOf(episode)?.played, event.currentTarget));
    const title = h("h3", { class: "episode-title" });
    const status = h("p", { class: "episode-status", aria: { live: "off" } });
    const notesBody = h("div", { class: "rich-text episode-notes-body" });
    const notes = h("details", { class: "episode-notes" }, h("summary", { text: "Show notes" }), notesBody);
    const actions = h("div", { class: "episode-actions" });
    const el = h("li", { class: "episode" }, fill, h("div", { class: "episode-main" }, meta, title, status, notes), h("div", { class: "episode-controls" }, markButton, actions));
    let notesFilled = false;
    notes.addEventListener("toggle", () => {
      if (notes.open && !notesFilled) {
        notesFilled = true;
        replace(notesBody, episode.descriptionHTML ? sanitizedFragment(episode.descriptionHTML) : episode.descriptionText || "");
      }
    });

    const transfer = () => store.get(episodeTransfers.get(episode.id));

    async function download(event) {
      await withBusy(event.currentTarget, async () => {
        const t = await api.episodes.download(episode.id);
        episodeTransfers.set(episode.id, t.id);
        store.upsert(t);
      });
      renderState();
    }

    /** Played, or how much is left of an episode begun; the mark button says what it would do. */
    function renderPlayback() {
      const label = episode.title || "Untitled episode";
      const playback = playbackOf(episode);
      const played = Boolean(playback?.played);
      el.classList.toggle("is-played", played);
      playedMark.hidden = !played;
      const position = !played && playback?.positionSeconds > 0 ? playback.positionSeconds : 0;
      const duration = ctx.player.isCurrent(transfer()?.id) && Number.isFinite(ctx.player.audio.duration) ? ctx.player.audio.duration : episode.durationSeconds;
      progress.hidden = !position;
      if (position) {
        const left = duration > position ? duration - position : 0;
        progressText.textContent = left > 0 ? eta(left) : `At ${clock(position)}`;
        progressBar.style.setProperty("--fraction", duration > 0 ? String(Math.min(1, position / duration)) : "0");
        progress.title = `Stopped at ${clock(position)}`;
      }
      const action = played ? `Mark ${label} as unplayed` : `Mark ${label} as played`;
      markButton.setAttribute("aria-label", action);
      markButton.title = played ? "Mark as unplayed" : "Mark as played";
      markButton.classList.toggle("is-on", played);
    }

    let lastKey = null;
    function renderState() {
      renderPlayback();
      const t = transfer();
      // Without a transfer in the store, the episode's own state (a file already on disk).
      // A file deleted or moved since: the episode is not downloaded any more.
      const known = t ? phase(t) : episode.state === "downloaded" ? "disk" : "idle";
      const p = known === "missing" ? "idle" : known;
      const playing = p === "done" && ctx.player.isPlaying(t.id);
      el.dataset.state = p;
      el.classList.toggle("is-playing", playing);
      const fraction = t && (p === "active" || p === "paused") && t.totalBytes > 0 ? t.bytesReceived / t.totalBytes : p === "active" ? 0 : null;
      fill.style.setProperty("--fraction", fraction === null ? "0" : String(Math.min(1, fraction)));
      fill.classList.toggle("paused", p === "paused");

      let text = "";
      if (p === "active" || p === "paused" || p === "failed") text = shortStatus(t);
      else if (p === "done") text = `Downloaded · ${shortStatus(t)}`;
      else if (p === "disk") text = "Downloaded";
      status.textContent = text;
      status.hidden = !text;
      status.classList.toggle("is-error", troubled(t));

      const key = `${p}:${playing}`;
      if (key === lastKey) return;
      lastKey = key;
      const label = episode.title || "Untitled episode";
      switch (p) {
        case "idle":
          replace(actions, button("Download", { icon: "download", kind: "secondary", onClick: download, "aria-label": `Download ${label}` }));
          break;
        case "active":
          replace(actions, button("Pause download", { icon: "pause", iconOnly: true, kind: "ghost", onClick: () => pause(t.id) }), button("Cancel download", { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }));
          break;
        case "paused":
          replace(actions, button("Resume download", { icon: "resume", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }), button("Cancel download", { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }));
          break;
        case "failed":
          replace(actions, button("Retry download", { icon: "refresh", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }), button("Cancel download", { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }));
          break;
        case "done":
          replace(
            actions,
            h(
              "button",
              {
                type: "button",
                class: "btn btn-icon btn-round btn-primary act-play",
                aria: { label: playing ? `Pause ${label}` : `Play ${label}` },
                title: playing ? "Pause" : "Play",
                on: {
                  click: () =>
                    ctx.player.toggle({
                      transferId: t.id,
                      episodeId: episode.id,
                      playback: episode.playback,
                      title: episode.title,
                      subtitle: detail.podcast.title,
                      artworkURL: episode.artworkURL || detail.podcast.artworkURL,
                      placeholder: "podcast",
                    }),
                },
              },
              icon(playing ? "pause" : "play"),
            ),
          );
          break;
        default:
          replace(actions, h("span", { class: "tag tag-done" }, icon("check"), h("span", { class: "tag-label", text: "On disk" })));
      }
    }

    return {
      el,
      transferId: () => episodeTransfers.get(episode.id) ?? null,
      renderState,
      update(next) {
        episode = next;
        newBadge.hidden = !(episode.isNew && episode.state === "notDownloaded");
        const t = transfer();
        const size = t?.totalBytes > 0 ? t.totalBytes : episode.enclosureLength > 0 ? episode.enclosureLength : null;
        metaText.textContent = [date(episode.published), length(episode.durationSeconds), size ? bytes(size) : null].filter(Boolean).join(" · ");
        title.textContent = episode.title || "Untitled episode";
        notes.hidden = !(episode.descriptionHTML || episode.descriptionText);
        if (notesFilled) replace(notesBody, episode.descriptionHTML ? sanitizedFragment(episode.descriptionHTML) : episode.descriptionText || "");
        lastKey = null;
        renderState();
      },
    };
  }

  // A download of this podcast that no row knows (auto-download, the CLI): read the episodes again.
  let reloadTimer = null;
  const reloadSoon = () => {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(load, 300);
  };

  const unsubscribeStore = store.subscribe((change) => {
    if (change.type === "reset") {
      load();
      return;
    }
    let known = false;
    for (const row of rows.values()) {
      if (row.transferId() === change.id) {
        known = true;
        row.renderState();
      }
    }
    const t = change.type === "change" ? store.get(change.id) : null;
    if (!known && t && detail && t.folder === detail.podcast.folder) reloadSoon();
  });
  const unsubscribePlayer = ctx.player.subscribe(() => {
    for (const row of rows.values()) row.renderState();
    renderMarkAll();
  });
  // Back to this page (another tab, another device listened meanwhile): where each episode is now.
  const visible = () => {
    if (document.visibilityState === "visible" && detail) load();
  };
  document.addEventListener("visibilitychange", visible);

  load();

  return {
    update() {},
    unmount() {
      controller?.abort();
      clearTimeout(reloadTimer);
      unsubscribeStore();
      unsubscribePlayer();
      document.removeEventListener("visibilitychange", visible);
    },
  };
}

