// What was said: a search of the transcripts of the listener's podcasts (GET
// /v1/transcripts/search). Each hit is a moment: its episode, its show, the words around the
// match, and a button that plays the episode from that second. The words typed stay in the
// address (#/said?q=…), so Back returns to the same hits. Every text here comes from feeds and
// transcripts: it is set as text, the matched words in <mark>.

import { h, icon, button, replace, artwork } from "../dom.js";
import { api, isSuperseded } from "../api.js";
import { clock } from "../format.js";
import { t } from "../i18n.js";
import { errorBox, emptyState, spinner } from "../ui.js";

export function mountSaid(root, params, ctx) {
  let controller = null;
  const input = h("input", {
    type: "search",
    id: "said-input",
    class: "search-input",
    placeholder: t("said.placeholder"),
    autocomplete: "off",
    spellcheck: "false",
    enterkeyhint: "search",
    maxlength: "200",
    aria: { label: t("said.label") },
    value: params.q || "",
  });
  const form = h(
    "form",
    { class: "search-bar", role: "search", novalidate: true },
    h("label", { class: "search-field" }, icon("search", "search-field-icon"), input),
    button(t("action.search"), { type: "submit", kind: "primary", icon: "search" }),
  );
  const coverage = h("p", { class: "said-coverage", role: "status" });
  const results = h("section", { class: "section", aria: { label: t("said.results") } });

  replace(
    root,
    h(
      "header",
      { class: "view-header" },
      h("div", null, h("h1", { text: t("said.title") }), h("p", { class: "view-subtitle", text: t("said.subtitle") })),
      h("div", { class: "toolbar" }, h("a", { class: "btn btn-ghost", href: "#/podcasts" }, icon("podcast"), h("span", { class: "btn-label", text: t("nav.podcasts") }))),
    ),
    h("div", { class: "sticky-tools" }, form),
    coverage,
    results,
  );

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const words = input.value.trim();
    if (!words) return input.focus();
    ctx.setQuery({ q: words });
    search(words);
  });

  async function search(words) {
    controller?.abort();
    const mine = new AbortController();
    controller = mine;
    replace(results, h("div", { class: "section-loading" }, spinner(t("said.searching"))));
    try {
      const found = await api.transcripts.search(words, { limit: 50, signal: mine.signal });
      if (mine !== controller) return;
      show(found);
    } catch (error) {
      if (isSuperseded(error) || mine !== controller) return;
      replace(results, errorBox(error.message, { retry: () => search(words) }));
    }
  }

  function show(found) {
    const { indexed, pending, failed } = found.index;
    const notes = [t("said.indexed", { count: indexed })];
    if (pending) notes.push(t("said.pending", { count: pending }));
    if (failed) notes.push(t("said.failed", { count: failed }));
    coverage.textContent = notes.join(" · ");
    if (!found.hits.length) {
      const none = indexed + pending === 0;
      replace(results, emptyState("search", none ? t("said.noTranscripts") : t("said.none"), none ? t("said.noTranscriptsHint") : t("said.noneHint")));
      return;
    }
    replace(
      results,
      h("h2", { class: "visually-hidden", text: t("said.results") }),
      h("ol", { class: "said-hits" }, found.hits.map(hitRow)),
    );
  }

  function hitRow(hit) {
    const at = clock(hit.seconds);
    const play = button(at, {
      icon: "play",
      kind: "secondary",
      aria: { label: t("said.playAt", { title: hit.episodeTitle, at }) },
      onClick: () => {
        ctx.player.play({
          episodeId: hit.episodeId,
          podcastId: hit.podcastId,
          stream: /\/stream$/.test(hit.playURL || ""),
          title: hit.episodeTitle,
          subtitle: hit.podcastTitle,
          artworkURL: hit.artworkURL,
          placeholder: "podcast",
        });
        ctx.player.seekTo(hit.seconds);
      },
    });
    play.classList.add("said-play");
    if (!hit.playURL) play.disabled = true;
    const words = h("p", { class: "said-snippet" }, hit.speaker ? h("span", { class: "said-speaker", text: `${hit.speaker}: ` }) : null,
      hit.snippet.map((part) => (part.match ? h("mark", { text: part.text }) : document.createTextNode(part.text))));
    return h(
      "li",
      { class: "said-hit" },
      artwork(hit.artworkURL, { placeholder: "podcast", className: "said-art" }),
      h(
        "div",
        { class: "said-body" },
        h("p", { class: "said-episode" }, h("a", { href: `#/podcasts/${hit.podcastId}`, text: hit.episodeTitle })),
        h("p", { class: "said-show", text: hit.podcastTitle }),
        words,
      ),
      play,
    );
  }

  if (input.value.trim()) search(input.value.trim());
  else input.focus();

  return {
    update(next) {
      if ((next.q || "") !== input.value.trim()) {
        input.value = next.q || "";
        if (input.value) search(input.value);
      }
    },
    unmount: () => controller?.abort(),
  };
}
