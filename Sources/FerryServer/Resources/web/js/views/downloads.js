// Downloads: every transfer of every session, like a download manager's two tabs: in progress
// (queued, running, paused, waiting, failed) and finished (completed, cancelled). Add a
// download by pasting a URL.

import { h, icon, button, confirmButton, replace, reconcile, progressBar } from "../dom.js";
import { api } from "../api.js";
import { store } from "../store.js";
import { bytes, dateTime, host, mediaKind, transferName, plural } from "../format.js";
import { longStatus, pause, resume, cancel, remove, phase, troubled } from "../transfers.js";
import { emptyState, toast, withBusy } from "../ui.js";

const FINISHED = new Set(["completed", "cancelled"]);

export function mountDownloads(root, params, ctx) {
  let tab = params.tab === "finished" ? "finished" : "active";
  const rows = new Map();

  const input = h("input", {
    type: "text",
    inputmode: "url",
    id: "url-input",
    class: "search-input",
    placeholder: "Paste a link to download (http or https)",
    autocomplete: "off",
    spellcheck: "false",
    enterkeyhint: "go",
    aria: { label: "URL to download", describedby: "add-error" },
  });
  const submit = button("Download", { type: "submit", kind: "primary", icon: "download" });
  const formError = h("p", { class: "form-error", id: "add-error", role: "alert", hidden: true });
  const form = h("form", { class: "search-bar", novalidate: true }, h("label", { class: "search-field" }, icon("link", "search-field-icon"), input), submit);

  const tabActive = h("button", { type: "button", role: "tab", id: "tab-active", class: "tab", aria: { controls: "downloads-panel" } });
  const tabFinished = h("button", { type: "button", role: "tab", id: "tab-finished", class: "tab", aria: { controls: "downloads-panel" } });
  const tabs = h("div", { class: "tabs", role: "tablist", aria: { label: "Downloads" } }, tabActive, tabFinished);
  const list = h("ul", { class: "download-list" });
  const empty = h("div");
  const panel = h("div", { id: "downloads-panel", role: "tabpanel" }, list, empty);

  replace(
    root,
    h("header", { class: "view-header" }, h("div", null, h("h1", { text: "Downloads" }), h("p", { class: "view-subtitle", text: "Everything Ferry downloads, from this page, the command line or other apps. Downloads go on when you close the page." }))),
    h("div", { class: "sticky-tools" }, form, formError),
    tabs,
    panel,
  );

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const url = input.value.trim();
    formError.hidden = true;
    if (!url) {
      showFormError("Paste the address of a file to download.");
      input.focus();
      return;
    }
    try {
      await withBusyOrThrow(submit, async () => {
        const { transfers } = await api.transfers.create([url]);
        for (const t of transfers) store.upsert(t);
        input.value = "";
        const t = transfers[0];
        toast(t && t.state === "completed" ? `Already downloaded: ${transferName(t)}` : `Downloading ${t ? transferName(t) : url}`, { kind: "success" });
        if (t && !FINISHED.has(t.state)) setTab("active");
      });
    } catch (error) {
      showFormError(error.message);
      input.focus();
    }
  });
  input.addEventListener("input", () => {
    formError.hidden = true;
    input.removeAttribute("aria-invalid");
  });

  function showFormError(message) {
    formError.textContent = message;
    formError.hidden = false;
    input.setAttribute("aria-invalid", "true");
  }

  for (const [el, name] of [
    [tabActive, "active"],
    [tabFinished, "finished"],
  ]) {
    el.addEventListener("click", () => setTab(name));
    el.addEventListener("keydown", (event) => {
      if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
        event.preventDefault();
        setTab(name === "active" ? "finished" : "active");
        (tab === "active" ? tabActive : tabFinished).focus();
      }
    });
  }

  function setTab(name) {
    if (tab === name) return;
    tab = name;
    ctx.setQuery(name === "finished" ? { tab: "finished" } : {});
    render();
  }

  function render() {
    const all = store.all();
    const active = all.filter((t) => !FINISHED.has(t.state)).sort((a, b) => a.id - b.id);
    const finished = all.filter((t) => FINISHED.has(t.state)).sort((a, b) => (b.completedAt || b.updatedAt || "").localeCompare(a.completedAt || a.updatedAt || "") || b.id - a.id);
    replace(tabActive, h("span", { text: "In progress" }), h("span", { class: "tab-count", text: String(active.length) }));
    replace(tabFinished, h("span", { text: "Finished" }), h("span", { class: "tab-count", text: String(finished.length) }));
    for (const [el, name] of [
      [tabActive, "active"],
      [tabFinished, "finished"],
    ]) {
      el.setAttribute("aria-selected", String(tab === name));
      el.tabIndex = tab === name ? 0 : -1;
    }
    panel.setAttribute("aria-labelledby", tab === "active" ? "tab-active" : "tab-finished");
    const items = tab === "active" ? active : finished;
    reconcile(list, rows, items, (t) => t.id, (t) => downloadRow(t, ctx));
    list.hidden = items.length === 0;
    if (items.length === 0) {
      replace(
        empty,
        tab === "active"
          ? emptyState("downloads", "Nothing downloading", "Paste a link above, or download songs and episodes from Half Tunes and Podcasts.")
          : emptyState("check", "No finished downloads yet", "Finished downloads appear here with their size and checksum."),
      );
    } else {
      replace(empty);
    }
    list.setAttribute("aria-label", tab === "active" ? `In progress, ${plural(active.length, "download")}` : `Finished, ${plural(finished.length, "download")}`);
  }

  const unsubscribeStore = store.subscribe((change) => {
    const row = change.type === "change" ? rows.get(change.id) : null;
    const t = change.type === "change" ? store.get(change.id) : null;
    // A change that keeps the transfer on its tab only redraws its row.
    if (row && t && FINISHED.has(t.state) === (tab === "finished")) row.update(t);
    else render();
  });
  const unsubscribePlayer = ctx.player.subscribe(() => {
    for (const row of rows.values()) row.refreshPlay?.();
  });

  render();

  return {
    update(next) {
      const name = next.tab === "finished" ? "finished" : "active";
      if (name !== tab) {
        tab = name;
        render();
      }
    },
    focus: () => input.focus(),
    unmount() {
      unsubscribeStore();
      unsubscribePlayer();
    },
  };
}

/** Like withBusy, but lets the caller handle the error (shown next to the form). */
async function withBusyOrThrow(buttonEl, action) {
  buttonEl.disabled = true;
  buttonEl.classList.add("busy");
  try {
    return await action();
  } finally {
    buttonEl.disabled = false;
    buttonEl.classList.remove("busy");
  }
}

function downloadRow(initial, ctx) {
  let t = initial;
  const kindIcon = h("div", { class: "download-icon" });
  const name = h("p", { class: "download-name" });
  const source = h("p", { class: "download-source" });
  const bar = progressBar("download-bar");
  // A segmented download's ranges, each filled as far as its bytes reach (decorative: the bar
  // and the status line say the same in words).
  const ranges = h("div", { class: "download-ranges", aria: { hidden: "true" } });
  const status = h("p", { class: "download-status" });
  const details = h("div", { class: "download-details" });
  const actions = h("div", { class: "download-actions" });
  const el = h("li", { class: "download" }, kindIcon, h("div", { class: "download-main" }, name, source, bar.el, ranges, status, details), actions);
  let lastKey = null;

  const fileName = () => transferName(t);
  const playable = () => t.state === "completed" && mediaKind(fileName()) === "audio";

  function playButton() {
    const playing = ctx.player.isPlaying(t.id);
    return h(
      "button",
      {
        type: "button",
        class: "btn btn-icon btn-round btn-primary act-play",
        aria: { label: playing ? `Pause ${fileName()}` : `Play ${fileName()}` },
        title: playing ? "Pause" : "Play",
        on: { click: () => ctx.player.toggle({ transferId: t.id, title: t.taskDescription || fileName(), subtitle: fileName(), placeholder: t.folder?.startsWith("Podcasts") ? "podcast" : "music" }) },
      },
      icon(playing ? "pause" : "play"),
    );
  }

  function removeButton() {
    return button("Remove from list", {
      icon: "x",
      iconOnly: true,
      kind: "ghost",
      onClick: async () => {
        // The file stays in the library; "Delete file" removes it too.
        ctx.player.forget(t.id);
        await remove(t.id, false);
      },
    });
  }

  function deleteButton() {
    return confirmButton("Delete file", {
      question: "Delete?",
      confirmLabel: "Click again to delete the file",
      onConfirm: async () => {
        ctx.player.forget(t.id);
        if (await remove(t.id, true)) toast(`Deleted ${fileName()}.`, { kind: "success" });
      },
    });
  }

  function renderActions() {
    const p = phase(t);
    const key = `${t.state}:${p === "done" && ctx.player.isPlaying(t.id)}`;
    if (key === lastKey) return;
    lastKey = key;
    switch (t.state) {
      case "queued":
      case "running":
      case "waiting":
        replace(actions, button("Pause download", { icon: "pause", iconOnly: true, kind: "ghost", onClick: () => pause(t.id) }), button("Cancel download", { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }));
        break;
      case "paused":
        replace(actions, button("Resume download", { icon: "resume", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }), button("Cancel download", { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) }));
        break;
      case "failed":
        replace(actions, button("Retry download", { icon: "refresh", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }), removeButton());
        break;
      case "completed":
        replace(
          actions,
          playable() ? playButton() : null,
          h("a", { class: "btn btn-icon btn-ghost", href: api.transfers.fileURL(t.id, true), download: fileName(), aria: { label: `Save ${fileName()} to this computer` }, title: "Save to this computer" }, icon("download")),
          removeButton(),
          deleteButton(),
        );
        break;
      default:
        replace(actions, removeButton());
    }
  }

  /** One piece per range, placed and filled through CSS custom properties (CSSOM, which the
   * page's Content-Security-Policy allows, unlike style attributes). */
  function renderRanges(list) {
    ranges.hidden = list.length === 0;
    while (ranges.children.length > list.length) ranges.lastChild.remove();
    while (ranges.children.length < list.length) ranges.append(h("span", { class: "range" }));
    list.forEach((range, index) => {
      const piece = ranges.children[index];
      const length = Math.max(1, range.end - range.start);
      piece.style.setProperty("--start", String(range.start / t.totalBytes));
      piece.style.setProperty("--width", String(length / t.totalBytes));
      piece.style.setProperty("--fill", String(Math.min(1, Math.max(0, range.bytes / length))));
    });
  }

  function update(next) {
    t = next;
    el.dataset.state = t.state;
    el.dataset.transferId = String(t.id);
    const kind = mediaKind(fileName());
    const iconName = t.folder?.startsWith("Podcasts") ? "podcast" : kind === "audio" ? "music" : "file";
    if (kindIcon.dataset.icon !== iconName) {
      kindIcon.dataset.icon = iconName;
      replace(kindIcon, icon(iconName));
    }
    name.textContent = t.taskDescription || fileName();
    name.title = t.url;
    source.textContent = [t.taskDescription ? fileName() : host(t.url), t.session !== "web" ? `from ${t.session}` : null].filter(Boolean).join(" · ");
    const finished = t.state === "completed" || t.state === "cancelled";
    bar.el.hidden = finished;
    if (!finished) {
      const text = longStatus(t);
      bar.set(t.state === "failed" ? 0 : t.totalBytes > 0 ? t.bytesReceived / t.totalBytes : t.state === "queued" ? 0 : null, text);
      bar.el.classList.toggle("paused", t.state === "paused");
      bar.el.classList.toggle("failed", t.state === "failed");
    }
    renderRanges(!finished && t.totalBytes > 0 && Array.isArray(t.ranges) && t.ranges.length > 1 ? t.ranges : []);
    status.textContent = t.state === "completed" ? [bytes(t.totalBytes ?? t.bytesReceived), dateTime(t.completedAt || t.updatedAt)].filter(Boolean).join(" · ") : longStatus(t);
    status.classList.toggle("is-error", troubled(t));
    if (t.state === "completed" && t.sha256) {
      if (details.dataset.sha !== t.sha256) {
        details.dataset.sha = t.sha256;
        replace(details, h("span", { class: "sha-label", text: "SHA-256" }), h("code", { class: "sha", title: t.sha256, text: t.sha256 }));
      }
    } else if (details.dataset.sha) {
      delete details.dataset.sha;
      replace(details);
    }
    renderActions();
  }

  return {
    el,
    update,
    refreshPlay() {
      renderActions();
    },
  };
}
