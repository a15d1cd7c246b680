// "On this device": the episodes and songs kept in this browser (keep.js), to play with no
// network, with their progress while they come; the storage they use and what the browser
// allows (navigator.storage.estimate()), and whether it keeps them when space runs low.

import { h, icon, replace, reconcile, artwork, debounce } from "../dom.js";
import { bytes } from "../format.js";
import { t } from "../i18n.js";
import { emptyState } from "../ui.js";
import { keeper } from "../keep.js";
import { keepControl } from "../keep-control.js";

/** What the player plays for a kept item (it plays from this device: player.sourceOf). */
export function keptPlayItem(facts) {
  const ids = facts.kind === "episode" ? { episodeId: facts.id, podcastId: facts.podcastId, speed: facts.speed } : { trackId: facts.id, transferId: facts.transferId };
  return {
    ...ids,
    title: facts.title,
    subtitle: facts.subtitle,
    artworkURL: facts.artworkURL,
    placeholder: facts.kind === "episode" ? "podcast" : "music",
    chaptersURL: facts.chaptersURL ?? null,
    transcriptURL: facts.transcriptURL ?? null,
  };
}

export function mountDevice(root, _params, ctx) {
  const rows = new Map();
  const usage = h("p", { class: "keep-usage", aria: { live: "polite" } });
  const persisted = h("p", { class: "keep-persisted" });
  const list = h("ol", { class: "kept-list", aria: { label: t("device.title") } });
  const body = h("div", { class: "kept" });
  replace(
    root,
    h("header", { class: "view-header" }, h("div", null, h("h1", { text: t("device.title") }), h("p", { class: "view-subtitle", text: t("device.subtitle") }))),
    h("section", { class: "keep-storage" }, usage, persisted),
    body,
  );

  function keptRow(initial) {
    let facts = initial;
    let shownArt;
    const art = h("div", { class: "kept-art" });
    const title = h("p", { class: "kept-title" });
    const subtitle = h("p", { class: "kept-subtitle" });
    const play = h("button", { type: "button", class: "btn btn-icon btn-round btn-primary act-play" });
    play.addEventListener("click", () => ctx.player.toggle(keptPlayItem(facts)));
    const el = h("li", { class: "kept-item", data: { key: facts.key } }, art, h("div", { class: "kept-main" }, title, subtitle, keepControl(() => facts)), play);
    return {
      el,
      update(next) {
        facts = next;
        if (shownArt !== facts.artworkURL) replace(art, artwork(facts.artworkURL, { placeholder: facts.kind === "episode" ? "podcast" : "music" }));
        shownArt = facts.artworkURL;
        title.textContent = facts.title || t("player.untitled");
        subtitle.textContent = facts.subtitle || "";
        const playing = ctx.player.isPlaying(keptPlayItem(facts));
        play.hidden = facts.state !== "done";
        replace(play, icon(playing ? "pause" : "play"));
        play.setAttribute("aria-label", playing ? t("episode.pauseName", { title: title.textContent }) : t("episode.playName", { title: title.textContent }));
      },
    };
  }

  function render() {
    const items = keeper.list();
    if (!keeper.supported()) {
      rows.clear();
      replace(body, emptyState("alert", t("device.unsupported"), t("device.unsupportedHint")));
    } else if (!items.length) {
      rows.clear();
      replace(body, emptyState("phone", t("device.empty"), t("device.emptyHint")));
    } else {
      if (!body.contains(list)) replace(body, list);
      reconcile(list, rows, items, (facts) => facts.key, keptRow);
    }
    showUsage();
  }

  // Asked again as bytes arrive, not on every piece.
  const showUsage = debounce(async () => {
    const kept = keeper.list().reduce((sum, facts) => sum + (facts.state === "done" ? facts.total || 0 : keeper.bytes(facts.key)), 0);
    const room = await keeper.estimate();
    usage.textContent = room?.quota ? t("device.usage", { kept: bytes(kept), used: bytes(room.usage), quota: bytes(room.quota) }) : t("device.usageKept", { kept: bytes(kept) });
    const lasting = await navigator.storage?.persisted?.().catch(() => null);
    persisted.textContent = lasting ? t("device.persisted") : t("device.notPersisted");
  }, 250);

  const unsubscribeKeeper = keeper.subscribe(render);
  const unsubscribePlayer = ctx.player.subscribe(() => {
    for (const row of rows.values()) {
      const facts = keeper.get(row.el.dataset.key);
      if (facts) row.update(facts);
    }
  });
  keeper.ready.then(render);
  render();

  return {
    unmount() {
      showUsage.cancel();
      unsubscribeKeeper();
      unsubscribePlayer();
    },
  };
}
