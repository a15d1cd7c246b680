// Podcasts: subscriptions (search the catalog, or paste a feed / Apple Podcasts link), OPML
// import and export. Every text here comes from feeds or the catalog: it is set as text.

import { h, icon, button, replace, artwork } from "../dom.js";
import { api, isSuperseded } from "../api.js";
import { store } from "../store.js";
import { list } from "../format.js";
import { t } from "../i18n.js";
import { errorBox, emptyState, toast, withBusy, spinner } from "../ui.js";

const looksLikeURL = (text) => /^(https?:\/\/|podcasts\.apple\.com\/|itunes\.apple\.com\/)/i.test(text.trim()) || /^[\w.-]+\.[a-z]{2,}\/\S*/i.test(text.trim());

const searchState = { term: "", results: null, error: null, controller: null, client: `web-podcasts-${Math.random().toString(36).slice(2, 10)}` };

export function mountPodcasts(root, params, ctx) {
  let podcasts = null;
  let loadError = null;

  const input = h("input", {
    type: "search",
    id: "podcast-input",
    class: "search-input",
    placeholder: t("podcasts.input.placeholder"),
    autocomplete: "off",
    spellcheck: "false",
    enterkeyhint: "go",
    aria: { label: t("podcasts.input.label") },
    value: searchState.term,
  });
  const submit = button(t("action.search"), { type: "submit", kind: "primary", icon: "search" });
  const form = h("form", { class: "search-bar", role: "search", novalidate: true }, h("label", { class: "search-field" }, icon("search", "search-field-icon"), input), submit);
  // A private feed (HTTP Basic): asked for only when the feed says it needs a login.
  const userInput = h("input", { type: "text", id: "feed-user", class: "text-input", autocomplete: "username", spellcheck: "false", aria: { label: t("podcasts.login.user") } });
  const passwordInput = h("input", { type: "password", id: "feed-password", class: "text-input", autocomplete: "current-password", aria: { label: t("podcasts.login.password") } });
  const loginSubmit = button(t("podcasts.subscribe"), { type: "submit", kind: "primary", icon: "plus" });
  const loginMessage = h("p", { class: "feed-login-message", role: "status" });
  const login = h(
    "form",
    { class: "feed-login", hidden: true, novalidate: true, aria: { label: t("podcasts.login.label") } },
    loginMessage,
    h("label", { class: "field" }, h("span", { text: t("podcasts.login.user") }), userInput),
    h("label", { class: "field" }, h("span", { text: t("podcasts.login.password") }), passwordInput),
    loginSubmit,
  );
  const importInput = h("input", { type: "file", accept: ".opml,.xml,text/x-opml,application/xml,text/xml", class: "visually-hidden", tabindex: "-1", aria: { hidden: "true" } });
  const importButton = button(t("podcasts.import"), { icon: "upload", kind: "ghost", onClick: () => importInput.click() });
  const exportLink = h("a", { class: "btn btn-ghost", href: api.podcasts.exportURL, download: "ferry-podcasts.opml" }, icon("export"), h("span", { class: "btn-label", text: t("podcasts.export") }));
  const saidLink = h("a", { class: "btn btn-ghost", href: "#/said" }, icon("search"), h("span", { class: "btn-label", text: t("podcasts.said") }));
  const refreshButton = button(t("podcasts.refreshAll"), { icon: "refresh", kind: "ghost", onClick: (e) => refreshAll(e.currentTarget) });
  // The playlists live in the player's panel; nothing need be playing to open it.
  const playlistsButton = button(t("playlists.tab"), { icon: "playlist", kind: "ghost", class: "btn btn-ghost act-open-playlists", onClick: () => ctx.player.panel.open("playlists") });
  const resultsSection = h("section", { class: "section", aria: { label: t("podcasts.results") } });
  const subscriptions = h("section", { class: "section", aria: { labelledby: "subscriptions-title" } });

  replace(
    root,
    h(
      "header",
      { class: "view-header" },
      h("div", null, h("h1", { text: t("nav.podcasts") }), h("p", { class: "view-subtitle", text: t("podcasts.subtitle") })),
      h("div", { class: "toolbar" }, saidLink, playlistsButton, refreshButton, importButton, exportLink, importInput),
    ),
    h("div", { class: "sticky-tools" }, form, login),
    resultsSection,
    subscriptions,
  );

  const setSubmitLabel = () => {
    const url = looksLikeURL(input.value);
    replace(submit, icon(url ? "plus" : "search"), h("span", { class: "btn-label", text: url ? t("podcasts.subscribe") : t("action.search") }));
  };
  input.addEventListener("input", () => {
    setSubmitLabel();
    if (!input.value.trim()) {
      searchState.controller?.abort();
      searchState.term = "";
      searchState.results = null;
      searchState.error = null;
      renderResults();
    }
  });
  setSubmitLabel();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return input.focus();
    if (looksLikeURL(text)) {
      await subscribeTo(submit, { url: /^https?:/i.test(text) ? text : `https://${text}` });
      return;
    }
    login.hidden = true;
    searchPodcasts(text);
  });

  // Subscribes; a feed that needs a login opens the login form instead of an error toast.
  async function subscribeTo(busyButton, what) {
    let needsLogin = null;
    const detail = await withBusy(busyButton, async () => {
      try {
        return await api.podcasts.subscribe(what);
      } catch (error) {
        if (error?.code !== "feed_credentials") throw error;
        needsLogin = error;
        return undefined;
      }
    }, t("podcasts.subscribing"));
    if (needsLogin) {
      // The daemon's sentence, without the command-line hint it gives the CLI.
      const text = needsLogin.message;
      loginMessage.textContent = text.startsWith("This feed needs") ? t("podcasts.login.needed") : text;
      login.hidden = false;
      login.dataset.url = what.url;
      (what.user ? passwordInput : userInput).focus();
      return;
    }
    if (detail) {
      input.value = "";
      login.hidden = true;
      userInput.value = passwordInput.value = "";
      setSubmitLabel();
      toast(t("podcasts.subscribed", { title: detail.podcast.title }), { kind: "success" });
      ctx.navigate(`#/podcasts/${detail.podcast.id}`);
    }
  }

  login.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!userInput.value.trim()) return userInput.focus();
    await subscribeTo(loginSubmit, { url: login.dataset.url, user: userInput.value.trim(), password: passwordInput.value });
  });

  importInput.addEventListener("change", async () => {
    const file = importInput.files?.[0];
    importInput.value = "";
    if (!file) return;
    await withBusy(importButton, async () => {
      const outcome = await api.podcasts.import(await file.text());
      const ok = outcome.subscribed.length;
      const failed = outcome.failures.length;
      if (failed) {
        const first = outcome.failures[0];
        toast(t("podcasts.importedSome", { count: ok, failed, url: first.url, reason: first.error.message }), { kind: failed && !ok ? "error" : "info", timeout: 10000 });
      } else {
        toast(t("podcasts.imported", { count: ok }), { kind: "success" });
      }
      await load();
    }, t("podcasts.importing"));
  });

  async function refreshAll(target) {
    await withBusy(target, async () => {
      const outcome = await api.podcasts.refreshAll();
      if (outcome.failures.length) {
        const names = outcome.failures.map((f) => podcasts?.find((p) => p.id === f.podcastId)?.title || `#${f.podcastId}`);
        toast(t("podcasts.refreshFailed", { names: list(names), reason: outcome.failures[0].error.message }), { kind: "error" });
      } else {
        toast(outcome.newEpisodes ? t("podcasts.newEpisodes", { count: outcome.newEpisodes }) : t("podcasts.upToDate"), { kind: "success" });
      }
      await load();
    }, t("podcasts.refreshing"));
  }

  async function searchPodcasts(term) {
    searchState.controller?.abort();
    const controller = new AbortController();
    searchState.controller = controller;
    searchState.term = term;
    searchState.error = null;
    renderResults(true);
    try {
      const { results } = await api.catalog.search(term, { media: "podcast", limit: 24, client: searchState.client, signal: controller.signal });
      if (controller !== searchState.controller) return;
      searchState.results = results.filter((r) => r.kind === "podcast" || r.feedURL);
    } catch (error) {
      if (isSuperseded(error) || controller !== searchState.controller) return;
      searchState.results = null;
      searchState.error = error.message;
    }
    if (controller === searchState.controller) {
      searchState.controller = null;
      renderResults();
    }
  }

  function renderResults(loading = false) {
    if (loading) {
      replace(resultsSection, h("div", { class: "section-loading" }, spinner(t("podcasts.searching")), h("span", { text: t("podcasts.searchingFor", { term: searchState.term }) })));
      return;
    }
    if (searchState.error) {
      replace(resultsSection, errorBox(searchState.error, { retry: () => searchPodcasts(searchState.term) }));
      return;
    }
    if (!searchState.results) {
      replace(resultsSection);
      return;
    }
    const header = h(
      "div",
      { class: "section-header" },
      h("h2", { text: t("podcasts.resultsFor", { term: searchState.term }) }),
      button(t("podcasts.clearResults"), { icon: "x", kind: "ghost", iconOnly: true, onClick: () => { input.value = ""; input.dispatchEvent(new Event("input")); input.focus(); } }),
    );
    if (searchState.results.length === 0) {
      replace(resultsSection, header, h("p", { class: "muted", text: t("podcasts.noResults") }));
      return;
    }
    replace(resultsSection, header, h("ul", { class: "card-grid results-grid" }, searchState.results.map((r) => resultCard(r))));
  }

  function resultCard(result) {
    const subscribedId = () => result.podcastId ?? podcasts?.find((p) => p.feedURL === result.feedURL)?.id;
    const action = h("div", { class: "card-action" });
    const renderAction = () => {
      const id = subscribedId();
      if (id) {
        replace(action, h("a", { class: "btn btn-secondary", href: `#/podcasts/${id}` }, icon("check"), h("span", { class: "btn-label", text: t("podcasts.subscribedBadge") })));
      } else {
        const b = button(t("podcasts.subscribe"), {
          icon: "plus",
          kind: "primary",
          onClick: async () => {
            const detail = await withBusy(b, () => api.podcasts.subscribe({ catalogId: result.collectionId ?? result.id }), t("podcasts.subscribing"));
            if (detail) {
              result.podcastId = detail.podcast.id;
              toast(t("podcasts.subscribed", { title: detail.podcast.title }), { kind: "success" });
              renderAction();
              load();
            }
          },
        });
        replace(action, b);
      }
    };
    renderAction();
    return h(
      "li",
      { class: "card result-card" },
      artwork(result.artworkURL, { placeholder: "podcast", size: "card" }),
      h("div", { class: "card-body" }, h("p", { class: "card-title", text: result.title, title: result.title }), h("p", { class: "card-subtitle", text: [result.artist, result.genre].filter(Boolean).join(" · ") })),
      action,
    );
  }

  async function load() {
    try {
      podcasts = (await api.podcasts.list()).podcasts;
      loadError = null;
    } catch (error) {
      loadError = error.message;
    }
    renderSubscriptions();
    if (searchState.results) renderResults();
  }

  function renderSubscriptions() {
    const title = h("h2", { id: "subscriptions-title", text: t("podcasts.yours") });
    if (loadError) {
      replace(subscriptions, h("div", { class: "section-header" }, title), errorBox(loadError, { retry: load }));
      return;
    }
    if (!podcasts) {
      replace(subscriptions, h("div", { class: "section-header" }, title), h("div", { class: "section-loading" }, spinner(), h("span", { text: t("podcasts.loading") })));
      return;
    }
    if (podcasts.length === 0) {
      replace(subscriptions, h("div", { class: "section-header" }, title), emptyState("podcast", t("podcasts.empty"), t("podcasts.emptyHint")));
      return;
    }
    replace(
      subscriptions,
      h("div", { class: "section-header" }, title, h("span", { class: "muted", text: t("podcasts.shows", { count: podcasts.length }) })),
      h("ul", { class: "card-grid", aria: { labelledby: "subscriptions-title" } }, podcasts.map(subscriptionCard)),
    );
  }

  function subscriptionCard(podcast) {
    return h(
      "li",
      { class: "card podcast-card" },
      h(
        "a",
        { class: "card-link", href: `#/podcasts/${podcast.id}`, aria: { label: podcast.newCount ? t("podcasts.cardLabelNew", { title: podcast.title, count: podcast.newCount }) : podcast.title } },
        h("div", { class: "card-art-wrap" }, artwork(podcast.artworkURL, { placeholder: "podcast", size: "card" }), podcast.newCount > 0 ? h("span", { class: "badge badge-new", text: t("podcasts.newBadge", { count: podcast.newCount }) }) : null),
        h(
          "div",
          { class: "card-body" },
          h("p", { class: "card-title", text: podcast.title, title: podcast.title }),
          h("p", { class: "card-subtitle", text: podcast.author || podcast.feedURL }),
          h("p", { class: "card-meta" }, t("podcasts.episodes", { count: podcast.episodeCount }), podcast.downloadedCount ? ` · ${t("podcasts.downloaded", { count: podcast.downloadedCount })}` : ""),
          podcast.error ? h("p", { class: "card-error", title: podcast.error.message }, icon("alert"), h("span", { text: t("podcasts.feedProblem") })) : null,
        ),
      ),
    );
  }

  const unsubscribeStore = store.subscribe((change) => {
    // Back from a reconnection: counts may have changed meanwhile.
    if (change.type === "reset") load();
  });

  renderResults();
  renderSubscriptions();
  load();

  return {
    update() {},
    focus: () => input.focus(),
    unmount() {
      unsubscribeStore();
    },
  };
}
