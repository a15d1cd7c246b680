// "Half Tunes": search the catalog for songs, download their previews, play them.
//
// A row remembers only which catalog track it shows; whether that track is downloading, paused
// or finished comes from the transfer store (`trackTransfers` maps the track to its transfer),
// so rows are right however often the list is rebuilt.

import { h, icon, button, replace, reconcile, artwork, progressBar, debounce } from "../dom.js";
import { api, isSuperseded } from "../api.js";
import { store, trackTransfers, transferMedia } from "../store.js";
import { clock } from "../format.js";
import { t as tr } from "../i18n.js";
import { phase, shortStatus, pause, resume, cancel, troubled, downloadAgain } from "../transfers.js";
import { errorBox, emptyState, withBusy } from "../ui.js";
import { keepControl } from "../keep-control.js";

// Kept while the page is open, so leaving the view and coming back shows the same results.
const state = {
  term: "",
  results: null,
  error: null,
  loading: false,
  controller: null,
  client: `web-${Math.random().toString(36).slice(2, 10)}`,
};

export function mountSearch(root, params, ctx) {
  const rows = new Map();
  const input = h("input", {
    type: "search",
    id: "search-input",
    class: "search-input",
    name: "term",
    placeholder: tr("search.placeholder"),
    autocomplete: "off",
    spellcheck: "false",
    enterkeyhint: "search",
    aria: { label: tr("search.label") },
    value: state.term,
  });
  const form = h(
    "form",
    { class: "search-bar", role: "search", novalidate: true },
    h("label", { class: "search-field" }, icon("search", "search-field-icon"), input),
    button(tr("action.search"), { type: "submit", kind: "primary", icon: "search" }),
  );
  const summary = h("p", { class: "list-summary", aria: { live: "polite" } });
  const loadingBar = h("div", { class: "loading-line", hidden: true });
  const list = h("ol", { class: "track-list", aria: { label: tr("search.songs") } });
  const body = h("div", { class: "results" });

  replace(
    root,
    h(
      "header",
      { class: "view-header" },
      h("div", null, h("h1", { text: tr("nav.search") }), h("p", { class: "view-subtitle", text: tr("search.subtitle") })),
    ),
    h("div", { class: "sticky-tools" }, form, loadingBar),
    body,
  );

  const typeAhead = debounce((term) => search(term), 400);

  input.addEventListener("input", () => {
    const term = input.value.trim();
    if (term.length >= 2) typeAhead(term);
    else {
      typeAhead.cancel();
      if (!term) clearResults();
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    typeAhead.cancel();
    const term = input.value.trim();
    if (term) search(term, { force: true });
    else input.focus();
  });

  function clearResults() {
    state.controller?.abort();
    state.term = "";
    state.results = null;
    state.error = null;
    state.loading = false;
    ctx.setQuery({});
    render();
  }

  async function search(term, { force = false } = {}) {
    if (!force && term === state.term && (state.results || state.loading)) return;
    // Typing a new search cancels the one in flight: here (abort) and in the daemon (client key).
    state.controller?.abort();
    const controller = new AbortController();
    state.controller = controller;
    state.term = term;
    state.loading = true;
    state.error = null;
    ctx.setQuery({ q: term });
    render();
    try {
      const { results } = await api.catalog.search(term, { media: "music", limit: 50, client: state.client, signal: controller.signal });
      if (controller !== state.controller) return;
      state.results = results.filter((r) => r.kind === "song" || r.previewURL);
      for (const result of state.results) {
        if (result.download) {
          trackTransfers.set(result.trackId ?? result.id, result.download.id);
          transferMedia.set(result.download.id, { trackId: result.trackId ?? result.id, playback: result.playback });
          store.adopt(result.download);
        }
      }
    } catch (error) {
      if (isSuperseded(error) || controller !== state.controller) return;
      state.results = null;
      state.error = error.message;
    } finally {
      if (controller === state.controller) {
        state.loading = false;
        state.controller = null;
        render();
      }
    }
  }

  function render() {
    loadingBar.hidden = !state.loading;
    root.classList.toggle("is-loading", state.loading);
    if (state.error) {
      rows.clear();
      replace(body, errorBox(state.error, { retry: () => search(state.term, { force: true }) }));
      return;
    }
    if (!state.results) {
      rows.clear();
      replace(
        body,
        state.loading
          ? h("div", { class: "empty" }, h("span", { class: "spinner" }), h("p", { text: tr("search.searching", { term: state.term }) }))
          : emptyState("music", tr("search.empty"), tr("search.emptyHint")),
      );
      return;
    }
    if (state.results.length === 0) {
      rows.clear();
      replace(body, emptyState("search", tr("search.noResults", { term: state.term }), tr("search.noResultsHint")));
      return;
    }
    summary.textContent = tr("search.summary", { count: state.results.length, term: state.term });
    if (!body.contains(list)) replace(body, summary, list);
    reconcile(list, rows, state.results, (r) => r.trackId ?? r.id, (r) => trackRow(r, ctx));
  }

  const unsubscribeStore = store.subscribe((change) => {
    for (const row of rows.values()) {
      if (change.type === "reset" || row.transferId() === change.id) row.renderState();
    }
  });
  const unsubscribePlayer = ctx.player.subscribe(() => {
    for (const row of rows.values()) row.renderState();
  });

  function update(next) {
    const term = (next.q || "").trim();
    if (term && term !== state.term) {
      input.value = term;
      search(term);
    }
  }

  render();
  update(params);
  if (!state.results && !state.term) input.focus();

  return {
    update,
    focus: () => input.focus(),
    unmount() {
      typeAhead.cancel();
      unsubscribeStore();
      unsubscribePlayer();
    },
  };
}

function trackRow(initial, ctx) {
  let result = initial;
  const trackId = () => result.trackId ?? result.id;

  const title = h("p", { class: "track-title" });
  const subtitle = h("p", { class: "track-subtitle" });
  const duration = h("span", { class: "track-duration" });
  const bar = progressBar();
  const statusText = h("span", { class: "progress-text" });
  const progress = h("div", { class: "track-progress", hidden: true }, bar.el, statusText);
  const actions = h("div", { class: "track-actions" });
  const art = h("div", { class: "track-art" });
  const el = h(
    "li",
    { class: "track", data: { trackId: trackId() } },
    art,
    h("div", { class: "track-main" }, title, subtitle, progress),
    duration,
    actions,
  );

  const transfer = () => store.get(trackTransfers.get(trackId()));
  const playItem = (t) => ({
    transferId: t.id,
    trackId: trackId(),
    playback: result.playback,
    title: result.title,
    subtitle: [result.artist, result.collection].filter(Boolean).join(" · "),
    artworkURL: result.artworkURL,
  });

  /** What "Keep on this device" keeps of it: its downloaded preview. */
  const keepItem = (t) => ({
    key: `tracks/${trackId()}`,
    kind: "track",
    id: trackId(),
    transferId: t.id,
    title: result.title,
    subtitle: [result.artist, result.collection].filter(Boolean).join(" · "),
    artworkURL: result.artworkURL,
    source: api.transfers.fileURL(t.id),
    total: t.totalBytes > 0 ? t.totalBytes : null,
    exactSize: t.totalBytes > 0,
  });

  async function download(event) {
    await withBusy(event.currentTarget, async () => {
      const t = await api.catalog.preview(trackId());
      trackTransfers.set(trackId(), t.id);
      transferMedia.set(t.id, { trackId: trackId(), playback: result.playback });
      store.upsert(t);
    });
    renderState();
  }

  // A click anywhere on the row (not on one of its buttons): play it when it is downloaded,
  // download it when it is not.
  el.addEventListener("click", (event) => {
    if (event.target.closest("button, a, input, select")) return;
    const t = transfer();
    const p = phase(t);
    if (p === "done") ctx.player.toggle(playItem(t));
    else if (p === "idle") actions.querySelector("button")?.click();
    else if (p === "missing") actions.querySelector("button.btn-secondary")?.click();
  });

  /** The song's file was deleted or moved: the catalog downloads its preview once more. */
  async function again(event) {
    const old = transfer();
    if (!old) return download(event);
    await withBusy(event.currentTarget, () =>
      downloadAgain(old, async () => {
        const t = await api.catalog.preview(trackId());
        trackTransfers.set(trackId(), t.id);
        return t;
      }),
    );
    renderState();
  }

  let lastPhase = null;
  let lastPlaying = null;

  function renderState() {
    const t = transfer();
    const p = phase(t);
    el.dataset.state = t ? t.state : "none";
    const playing = p === "done" && ctx.player.isPlaying({ trackId: trackId(), transferId: t.id });
    if (p !== lastPhase || playing !== lastPlaying || p === "failed") {
      lastPhase = p;
      lastPlaying = playing;
      replace(actions, actionsFor(t, p, playing));
    }
    const showProgress = p === "active" || p === "paused" || p === "failed";
    progress.hidden = !showProgress;
    el.classList.toggle("is-done", p === "done");
    el.classList.toggle("is-missing", p === "missing");
    el.classList.toggle("is-playing", playing);
    if (showProgress) {
      const text = shortStatus(t);
      bar.set(p === "failed" ? 0 : t.totalBytes > 0 ? t.bytesReceived / t.totalBytes : null, text);
      bar.el.classList.toggle("paused", p === "paused");
      statusText.textContent = text;
      statusText.classList.toggle("is-error", troubled(t));
      // A problem is a sentence (often with a path or URL in it): it wraps below the bar.
      progress.classList.toggle("has-error", troubled(t));
    }
  }

  function actionsFor(t, p, playing) {
    switch (p) {
      case "idle":
        // A song the catalog has no preview of: nothing to download.
        if (!result.previewURL) return h("span", { class: "tag tag-none", title: tr("search.noPreviewHint") }, h("span", { class: "tag-label", text: tr("search.noPreview") }));
        return button(tr("episode.download"), { icon: "download", kind: "secondary", onClick: download });
      case "active":
        return [
          button(tr("downloads.pauseOne"), { icon: "pause", iconOnly: true, kind: "ghost", onClick: () => pause(t.id) }),
          button(tr("downloads.cancelOne"), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }),
        ];
      case "paused":
        return [
          button(tr("downloads.resumeOne"), { icon: "resume", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }),
          button(tr("downloads.cancelOne"), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }),
        ];
      case "failed":
        return [
          button(tr("downloads.retryOne"), { icon: "refresh", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }),
          button(tr("downloads.cancelOne"), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }),
        ];
      case "missing":
        // Its file was deleted or moved: playing it would fail.
        return [
          h("span", { class: "tag tag-missing", title: tr("search.missingHint") }, icon("alert"), h("span", { class: "tag-label", text: tr("search.missing") })),
          button(tr("downloads.again"), { icon: "download", kind: "secondary", onClick: again, "aria-label": tr("search.againName", { title: result.title }) }),
        ];
      default:
        return [
          h("span", { class: "tag tag-done", title: tr("episode.downloaded") }, icon("check"), h("span", { class: "tag-label", text: tr("episode.downloaded") })),
          keepControl(() => keepItem(t), { compact: true }),
          ctx.player.upNext?.buttons(result.title, () => playItem(t), { iconOnly: true }),
          ctx.player.playlists?.picker(result.title, () => playItem(t), { iconOnly: true }),
          h(
            "button",
            {
              type: "button",
              class: "btn btn-icon btn-round btn-primary act-play",
              aria: { label: playing ? tr("episode.pauseName", { title: result.title }) : tr("episode.playName", { title: result.title }) },
              title: playing ? tr("action.pause") : tr("action.play"),
              on: { click: () => ctx.player.toggle(playItem(t)) },
            },
            icon(playing ? "pause" : "play"),
          ),
        ];
    }
  }

  return {
    el,
    transferId: () => trackTransfers.get(trackId()) ?? null,
    renderState,
    update(next) {
      const newArt = next.artworkURL !== result.artworkURL || !art.firstChild;
      result = next;
      if (newArt) replace(art, artwork(result.artworkURL, { placeholder: "music" }));
      title.textContent = result.title;
      title.title = result.title;
      const sub = [result.artist, result.collection].filter(Boolean).join(" · ");
      subtitle.textContent = sub;
      subtitle.title = sub;
      duration.textContent = clock(result.durationSeconds);
      if (result.download && !trackTransfers.has(trackId())) trackTransfers.set(trackId(), result.download.id);
      renderState();
    },
  };
}
