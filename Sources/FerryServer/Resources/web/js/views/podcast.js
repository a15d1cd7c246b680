// One podcast: its artwork, description, what its Podcasting 2.0 feed says of it (podcast-about.js) and settings (refresh now or how often, auto-download,
// unsubscribe), and its episodes (rows in episode-row.js) with their downloads, their files (to
// delete one) and where the listener is in them (played, or the time left; played or unplayed by
// hand, one or all at once), shown all or only the unplayed, downloaded or begun ones, searched by
// words, newest or oldest first (the podcast's own order, kept by the daemon). Every text here comes from the feed: it is set as
// text, and show notes go through the allowlist sanitiser.

import { h, icon, button, confirmButton, replace, reconcile, artwork, debounce } from "../dom.js";
import { api, isSuperseded } from "../api.js";
import { store } from "../store.js";
import { ago } from "../format.js";
import { t as tr } from "../i18n.js";
import { playbackKey } from "../player.js";
import { phase } from "../transfers.js";
import { sanitizedFragment } from "../sanitize.js";
import { errorBox, emptyState, showError, toast, withBusy, spinner } from "../ui.js";
import { episodeRow } from "./episode-row.js";
import { podcastAbout } from "./podcast-about.js";

const FILTERS = ["all", "unplayed", "downloaded", "progress"];

function filterName(name) {
  if (name === "unplayed") return tr("podcast.filter.unplayed");
  if (name === "downloaded") return tr("podcast.filter.downloaded");
  if (name === "progress") return tr("podcast.filter.progress");
  return tr("podcast.filter.all");
}

/** The auto-download choices: how many of the newest episodes download by themselves. */
const AUTO_DOWNLOAD = [0, 1, 3, 5, 10];
const autoDownloadName = (count) => (count ? tr("podcast.autoDownload.newest", { count }) : tr("podcast.autoDownload.off"));

/** How often the feed is fetched, in minutes; 0 follows the daemon's interval (an hour). */
const REFRESH_EVERY = [0, 15, 30, 60, 180, 360, 720, 1440, 10080];
function refreshName(minutes) {
  if (!minutes) return tr("podcast.refreshEvery.default");
  if (minutes === 60) return tr("podcast.refreshEvery.hour");
  if (minutes === 1440) return tr("podcast.refreshEvery.day");
  if (minutes === 10080) return tr("podcast.refreshEvery.week");
  if (minutes % 1440 === 0) return tr("podcast.refreshEvery.days", { count: minutes / 1440 });
  if (minutes % 60 === 0) return tr("podcast.refreshEvery.hours", { count: minutes / 60 });
  return tr("podcast.refreshEvery.minutes", { count: minutes });
}

export function mountPodcast(root, params, ctx) {
  const id = Number(params.id);
  let detail = null;
  let loadError = null;
  let controller = null;
  const rows = new Map();
  // Which transfer downloads each episode (from the detail, and from download commands).
  const episodeTransfers = new Map();

  const hero = h("section", { class: "podcast-hero" });
  const list = h("ol", { class: "episode-list", aria: { label: tr("podcast.episodes") } });
  const episodesSection = h("section", { class: "section", aria: { label: tr("podcast.episodes") } });
  let filter = FILTERS.includes(params.filter) ? params.filter : "all";
  let words = (params.q || "").trim();

  replace(root, h("a", { class: "back-link", href: "#/podcasts" }, icon("back"), h("span", { text: tr("nav.podcasts") })), hero, episodesSection);
  replace(hero, h("div", { class: "section-loading" }, spinner(), h("span", { text: tr("status.loading") })));

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
    oldest.checked = Boolean(detail.podcast.oldestFirst);
    renderHero();
    renderEpisodes();
    renderMarkAll();
  }

  function renderError() {
    const notFound = loadError?.status === 404;
    replace(hero, errorBox(notFound ? tr("podcast.notFound") : loadError.message, notFound ? {} : { retry: load }));
    replace(episodesSection);
  }

  function renderHero() {
    const p = detail.podcast;
    document.title = `${p.title} · Ferry`;
    const description = h("div", { class: "podcast-description rich-text" }, p.descriptionHTML ? sanitizedFragment(p.descriptionHTML) : p.descriptionText || "");
    const more = h("button", { type: "button", class: "link-button", text: tr("podcast.more"), aria: { expanded: "false" } });
    more.addEventListener("click", () => {
      const open = description.classList.toggle("expanded");
      more.textContent = open ? tr("podcast.less") : tr("podcast.more");
      more.setAttribute("aria-expanded", String(open));
    });

    const select = h(
      "select",
      { id: "auto-download", class: "select", title: tr("podcast.autoDownload.title") },
      AUTO_DOWNLOAD.map((value) => h("option", { value: String(value), text: autoDownloadName(value), selected: value === p.autoDownload })),
      AUTO_DOWNLOAD.includes(p.autoDownload) ? null : h("option", { value: String(p.autoDownload), text: autoDownloadName(p.autoDownload), selected: true }),
    );
    select.addEventListener("change", async () => {
      const value = Number(select.value);
      select.disabled = true;
      try {
        apply(await api.podcasts.update(id, { autoDownload: value }));
        toast(value ? tr("podcast.autoDownload.on", { count: value }) : tr("podcast.autoDownload.isOff"), { kind: "success" });
      } catch (error) {
        showError(error, tr("podcast.autoDownload.notChanged"));
        select.value = String(detail.podcast.autoDownload);
      } finally {
        select.disabled = false;
      }
    });

    const every = p.refreshMinutes || 0;
    const interval = h(
      "select",
      { id: "refresh-every", class: "select", title: tr("podcast.refreshEvery.title") },
      REFRESH_EVERY.map((value) => h("option", { value: String(value), text: refreshName(value), selected: value === every })),
      REFRESH_EVERY.includes(every) ? null : h("option", { value: String(every), text: refreshName(every), selected: true }),
    );
    interval.addEventListener("change", async () => {
      const value = Number(interval.value);
      interval.disabled = true;
      try {
        apply(await api.podcasts.update(id, { refreshMinutes: value }));
        toast(tr("podcast.refreshEvery.changed", { every: refreshName(value) }), { kind: "success" });
      } catch (error) {
        showError(error, tr("podcast.refreshEvery.notChanged"));
        interval.value = String(detail.podcast.refreshMinutes || 0);
      } finally {
        interval.disabled = false;
      }
    });

    // Which file downloads take, offered when the feed gives an episode in several.
    const offersFiles = detail.episodes.some((e) => e.podcasting?.alternateEnclosures?.some((a) => !a.isDefault));
    const files = h(
      "select",
      { id: "enclosure-choice", class: "select", title: tr("podcast.files.title") },
      ["feed", "smallest-audio", "highest-quality"].map((value) => h("option", { value, text: tr(`podcast.files.${value}`), selected: value === (p.enclosureChoice || "feed") })),
    );
    files.addEventListener("change", async () => {
      files.disabled = true;
      try {
        apply(await api.podcasts.update(id, { enclosureChoice: files.value }));
        toast(tr("podcast.files.changed", { files: tr(`podcast.files.${files.value}`) }), { kind: "success" });
      } catch (error) {
        showError(error, tr("podcast.files.notChanged"));
        files.value = detail.podcast.enclosureChoice || "feed";
      } finally {
        files.disabled = false;
      }
    });

    const refresh = button(tr("podcast.refresh"), {
      icon: "refresh",
      kind: "secondary",
      onClick: async () => {
        await withBusy(refresh, async () => {
          const outcome = await api.podcasts.refresh(id);
          toast(outcome.newEpisodes ? tr("podcasts.newEpisodes", { count: outcome.newEpisodes }) : tr("podcast.noNewEpisodes"), { kind: "success" });
        }, tr("podcasts.refreshing"));
        // Also after a failure: the podcast now carries the refresh's error.
        await load();
      },
    });
    const seen = button(tr("podcast.markSeen"), {
      icon: "check",
      kind: "ghost",
      onClick: () => withBusy(seen, async () => apply(await api.podcasts.seen(id))),
    });
    const unsubscribe = confirmButton(tr("podcast.unsubscribe"), {
      question: tr("podcast.unsubscribeQuestion"),
      confirmLabel: tr("podcast.unsubscribeConfirm"),
      onConfirm: async () => {
        const done = await withBusy(unsubscribe, async () => {
          await api.podcasts.unsubscribe(id);
          return true;
        });
        if (done) {
          toast(tr("podcast.unsubscribed", { title: p.title }), { kind: "success" });
          ctx.navigate("#/podcasts");
        }
      },
    });

    const meta = [tr("podcasts.episodes", { count: p.episodeCount }), p.newCount ? tr("podcasts.newBadge", { count: p.newCount }) : null, p.downloadedCount ? tr("podcasts.downloaded", { count: p.downloadedCount }) : null, p.refreshedAt ? tr("podcast.refreshed", { when: ago(p.refreshedAt) }) : null].filter(Boolean).join(" · ");

    replace(
      hero,
      artwork(p.artworkURL, { placeholder: "podcast", size: "hero" }),
      h(
        "div",
        { class: "podcast-hero-text" },
        h("p", { class: "kicker", text: tr("nav.podcast") }),
        h("h1", { class: "podcast-title", text: p.title }),
        p.author ? h("p", { class: "podcast-author", text: p.author }) : null,
        h("p", { class: "podcast-meta", text: meta }),
        p.error ? errorBox(tr("podcast.refreshFailed", { reason: p.error.message })) : null,
        description.childNodes.length ? [description, more] : null,
        podcastAbout(p, ctx),
        h(
          "div",
          { class: "podcast-actions" },
          refresh,
          p.newCount ? seen : null,
          markAll,
          h("label", { class: "select-field" }, h("span", { class: "select-label", text: tr("podcast.autoDownload") }), select),
          h("label", { class: "select-field" }, h("span", { class: "select-label", text: tr("podcast.refreshEvery") }), interval),
          offersFiles || p.enclosureChoice ? h("label", { class: "select-field" }, h("span", { class: "select-label", text: tr("podcast.files") }), files) : null,
          unsubscribe,
        ),
      ),
    );
    // "More" only when the description is actually cut.
    requestAnimationFrame(() => {
      more.hidden = description.scrollHeight <= description.clientHeight + 2 && !description.classList.contains("expanded");
    });
  }

  // MARK: The episodes' toolbar: filters, search, order

  const filterButtons = FILTERS.map((name) => {
    const b = h("button", { type: "button", class: "segment", data: { filter: name }, aria: { pressed: String(name === filter) }, text: filterName(name) });
    b.addEventListener("click", () => setFilter(name));
    return b;
  });
  const searchInput = h("input", { type: "search", class: "search-input episode-search", placeholder: tr("podcast.search"), aria: { label: tr("podcast.search") }, autocomplete: "off", spellcheck: "false", value: words });
  const oldest = h("input", { type: "checkbox", class: "switch-input", id: "oldest-first", role: "switch" });
  const countText = h("p", { class: "list-summary episode-count", aria: { live: "polite" } });
  const noMatch = h("div", { class: "episode-none", hidden: true }, emptyState("search", tr("podcast.noMatch"), tr("podcast.noMatchHint"), button(tr("podcast.showAll"), { kind: "secondary", onClick: () => { searchInput.value = ""; words = ""; setFilter("all"); } })));
  const toolbar = h(
    "div",
    { class: "episode-toolbar" },
    h("div", { class: "segmented", role: "group", aria: { label: tr("podcast.filters") } }, filterButtons),
    h("label", { class: "search-field episode-search-field" }, icon("search", "search-field-icon"), searchInput),
    h("label", { class: "switch", for: "oldest-first" }, oldest, h("span", { class: "switch-track", aria: { hidden: "true" } }), h("span", { class: "switch-label", text: tr("podcast.oldestFirst") })),
  );
  const research = debounce(() => {
    words = searchInput.value.trim();
    remember();
    renderEpisodes();
  }, 150);
  searchInput.addEventListener("input", research);
  oldest.addEventListener("change", async () => {
    const value = oldest.checked;
    oldest.disabled = true;
    try {
      apply(await api.podcasts.update(id, { oldestFirst: value }));
      toast(value ? tr("podcast.order.oldest") : tr("podcast.order.newest"), { kind: "success" });
    } catch (error) {
      showError(error, tr("podcast.order.notChanged"));
      oldest.checked = Boolean(detail.podcast.oldestFirst);
    } finally {
      oldest.disabled = false;
    }
  });

  function setFilter(name) {
    filter = name;
    for (const b of filterButtons) b.setAttribute("aria-pressed", String(b.dataset.filter === name));
    remember();
    renderEpisodes();
  }

  /** The filter and words in the address, so a reload or a link shows the same. */
  function remember() {
    ctx.setQuery({ filter: filter === "all" ? "" : filter, q: words });
  }

  function downloaded(episode) {
    const t = store.get(episodeTransfers.get(episode.id));
    return t ? phase(t) === "done" : episode.state === "downloaded";
  }

  function shown(episode) {
    const playback = playbackOf(episode);
    if (filter === "unplayed" && playback?.played) return false;
    if (filter === "downloaded" && !downloaded(episode)) return false;
    if (filter === "progress" && !(playback && !playback.played && playback.positionSeconds > 0)) return false;
    if (!words) return true;
    const haystack = `${episode.title || ""} ${episode.descriptionText || ""}`.toLowerCase();
    return words.toLowerCase().split(/\s+/).every((word) => haystack.includes(word));
  }

  function renderEpisodes() {
    if (detail.episodes.length === 0) {
      rows.clear();
      replace(episodesSection, emptyState("rss", tr("podcast.empty"), tr("podcast.emptyHint")));
      return;
    }
    if (!episodesSection.contains(list)) replace(episodesSection, h("div", { class: "section-header" }, h("h2", { text: tr("podcast.episodes") }), countText), toolbar, noMatch, list);
    const visible = detail.episodes.filter(shown);
    countText.textContent = visible.length === detail.episodes.length ? tr("podcasts.episodes", { count: visible.length }) : tr("podcast.shownOf", { shown: visible.length, count: detail.episodes.length });
    noMatch.hidden = visible.length > 0;
    reconcile(list, rows, withSeasons(visible), (e) => (e.heading ? `season:${e.season}` : e.id), (e) => (e.heading ? seasonHeading(e) : episodeRow(e, rowEnv)));
  }

  /** A feed of several seasons is listed season by season: a heading where each run begins. */
  function seasonOf(episode) {
    return episode.season ?? episode.podcasting?.season ?? null;
  }
  function withSeasons(episodes) {
    if (new Set(detail.episodes.map(seasonOf).filter((s) => s !== null)).size < 2) return episodes;
    const items = [];
    let last;
    for (const episode of episodes) {
      const season = seasonOf(episode);
      if (season !== last && season !== null) {
        const name = detail.episodes.find((e) => seasonOf(e) === season && e.podcasting?.seasonName)?.podcasting.seasonName;
        items.push({ heading: true, season, name });
      }
      last = season;
      items.push(episode);
    }
    return items;
  }
  function seasonHeading(item) {
    const title = tr("podcast.seasonHeading", { number: item.season });
    const el = h("li", { class: "season-heading", role: "presentation" }, h("h3", { text: item.name ? `${title} · ${item.name}` : title }));
    return { el, update() {}, renderState() {}, transferId: () => undefined };
  }

  const rowEnv = {
    ctx,
    podcast: () => detail.podcast,
    transferOf: (episodeId) => episodeTransfers.get(episodeId),
    setTransfer: (episodeId, t) => episodeTransfers.set(episodeId, t.id),
    playbackOf: (episode) => playbackOf(episode),
    markPlayed: (episode, played, target) => markPlayed(episode, played, target),
    deleteFile: (episode, target) => deleteFile(episode, target),
    extraActions: (episode, item) => [
      ctx.player.upNext?.buttons(episode.title || tr("episode.untitled"), item),
      ctx.player.playlists?.picker(episode.title || tr("episode.untitled"), item),
    ],
  };

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

  /** Deletes the episode's file (its transfer is forgotten); the episode stays, to stream or download again. */
  async function deleteFile(episode, target) {
    const next = await withBusy(target, () => api.episodes.deleteFile(episode.id));
    if (!next) return;
    const transferId = episodeTransfers.get(episode.id);
    episodeTransfers.delete(episode.id);
    if (transferId) store.remove(transferId);
    // The row's episode is the detail's own object: updated in place, the list sees it too.
    Object.assign(episode, next);
    toast(tr("episode.fileDeleted", { title: episode.title || tr("episode.untitled") }), { kind: "success" });
    renderEpisodes();
    rows.get(episode.id)?.update(episode);
  }

  // "Mark all played": there while an episode is not.
  const markAll = button(tr("podcast.markAllPlayed"), {
    icon: "check",
    kind: "ghost",
    onClick: () =>
      withBusy(markAll, async () => {
        apply(await api.podcasts.played(id));
        toast(tr("podcast.allPlayed"), { kind: "success" });
      }),
  });
  function renderMarkAll() {
    markAll.hidden = !detail || detail.episodes.every((e) => playbackOf(e)?.played);
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
    // Rows hidden by a filter are not in `rows`: whether the transfer is one of this podcast's
    // comes from the episodes themselves.
    let known = false;
    for (const transferId of episodeTransfers.values()) if (transferId === change.id) known = true;
    if (known && detail && filter === "downloaded") renderEpisodes();
    for (const row of rows.values()) {
      if (row.transferId() === change.id) row.renderState();
    }
    const t = change.type === "change" ? store.get(change.id) : null;
    if (!known && t && detail && t.folder === detail.podcast.folder) reloadSoon();
  });
  const unsubscribePlayer = ctx.player.subscribe(() => {
    // Filtered by where the listener is: what is shown may change as one plays.
    if (detail && filter !== "all") renderEpisodes();
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
      for (const row of rows.values()) row.destroy?.();
      document.removeEventListener("visibilitychange", visible);
    },
  };
}

