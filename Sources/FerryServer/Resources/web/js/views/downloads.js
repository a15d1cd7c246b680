// Downloads: every transfer of every session, like a download manager's tabs: in progress
// (queued, running, paused, waiting, failed), finished (completed) and cancelled. Add a download
// by pasting a URL, or several with `ferry get`'s options in the New download dialog; pause or
// resume them all; clear the finished ones from the list.
//
// Long lists come in pages, newest first: each tab reads its first page at once and the next as
// the list scrolls to its end. A tab shows the transfers of its states that are at least as new
// as the oldest one it has read (its frontier), so what the event stream adds (new downloads,
// transfers moving from one tab to another) shows at once, and an older transfer another view
// put in the store waits for its page.

import { h, icon, button, confirmButton, replace, reconcile, progressBar } from "../dom.js";
import { api } from "../api.js";
import { store, PAGE_SIZE, transferMedia } from "../store.js";
import { bytes, dateTime, host, mediaKind, transferName } from "../format.js";
import { t as tr } from "../i18n.js"; // `t` is a transfer here
import { longStatus, pause, resume, cancel, remove, moveToTop, downloadAgain, priorityLabel, troubled } from "../transfers.js";
import { notifications } from "../notify.js";
import { emptyState, errorBox, showError, toast, withBusy } from "../ui.js";
import { newDownloadDialog } from "./new-download.js";

const TABS = [
  {
    name: "active",
    label: () => tr("downloads.tab.active"),
    states: ["queued", "running", "paused", "waiting", "failed"],
    empty: () => ["downloads", tr("downloads.empty.active"), tr("downloads.empty.activeHint")],
  },
  {
    name: "finished",
    label: () => tr("downloads.tab.finished"),
    states: ["completed"],
    empty: () => ["check", tr("downloads.empty.finished"), tr("downloads.empty.finishedHint")],
  },
  {
    name: "cancelled",
    label: () => tr("downloads.tab.cancelled"),
    states: ["cancelled"],
    empty: () => ["x", tr("downloads.empty.cancelled"), tr("downloads.empty.cancelledHint")],
  },
];
const TAB = Object.fromEntries(TABS.map((t) => [t.name, t]));
const FINISHED = new Set(["completed", "cancelled"]);
const PAUSABLE = ["queued", "running", "waiting"];

/** The tab a transfer belongs to. */
function tabOf(t) {
  if (t.state === "completed") return "finished";
  if (t.state === "cancelled") return "cancelled";
  return "active";
}

const tabFromParams = (params) => (TAB[params.tab] ? params.tab : "active");

export function mountDownloads(root, params, ctx) {
  let tab = tabFromParams(params);
  const rows = new Map();
  // Per tab: whether its first page was asked for, the oldest id read (the frontier), done.
  const pagers = Object.fromEntries(TABS.map((t) => [t.name, { started: false, loading: false, done: false, frontier: null, error: null, generation: 0 }]));

  const input = h("input", {
    type: "text",
    inputmode: "url",
    id: "url-input",
    class: "search-input",
    placeholder: tr("downloads.add.placeholder"),
    autocomplete: "off",
    spellcheck: "false",
    enterkeyhint: "go",
    aria: { label: tr("downloads.add.label"), describedby: "add-error" },
  });
  const submit = button(tr("downloads.add.submit"), { type: "submit", kind: "primary", icon: "download" });
  const newDownload = newDownloadDialog({
    admin: ctx.admin,
    onCreated: (transfers) => {
      for (const t of transfers) store.upsert(t);
      store.refreshCounts(0);
      if (transfers.some((t) => !FINISHED.has(t.state))) setTab("active");
    },
  });
  const openNew = button(tr("newDownload.open"), { kind: "secondary", icon: "plus", title: tr("newDownload.openTitle"), aria: { haspopup: "dialog" }, onClick: () => newDownload.open() });
  const formError = h("p", { class: "form-error", id: "add-error", role: "alert", hidden: true });
  const form = h("form", { class: "search-bar", novalidate: true }, h("label", { class: "search-field" }, icon("link", "search-field-icon"), input), submit, openNew);

  const tabButtons = new Map(
    TABS.map((t) => [t.name, h("button", { type: "button", role: "tab", id: `tab-${t.name}`, class: "tab", aria: { controls: "downloads-panel" } })]),
  );
  const tabs = h("div", { class: "tabs", role: "tablist", aria: { label: tr("nav.downloads") } }, ...tabButtons.values());

  const pauseAll = button(tr("downloads.pauseAll"), { icon: "pause", kind: "ghost", onClick: (event) => runAll(event.currentTarget, "pause") });
  const resumeAll = button(tr("downloads.resumeAll"), { icon: "resume", kind: "ghost", onClick: (event) => runAll(event.currentTarget, "resume") });
  const clearFinished = button(tr("downloads.clearFinished"), { icon: "x", kind: "ghost", onClick: () => askToClear() });
  const bulk = h("div", { class: "bulk-actions", role: "group", aria: { label: tr("downloads.all") } }, pauseAll, resumeAll, clearFinished);

  const list = h("ul", { class: "download-list" });
  const empty = h("div");
  // The end of the list: reading the next page starts when it scrolls into view; its button
  // does the same for a browser without IntersectionObserver, or a keyboard.
  const more = button(tr("downloads.loadMore"), { icon: "downloads", kind: "secondary", onClick: () => loadPage(tab) });
  const moreStatus = h("div", { class: "list-end-status", role: "status" });
  const sentinel = h("div", { class: "list-end" }, moreStatus, more);
  const panel = h("div", { id: "downloads-panel", role: "tabpanel" }, list, empty, sentinel);

  const notifyToggle = h("input", { type: "checkbox", role: "switch", id: "notify-toggle", class: "switch-input" });
  const notifyHint = h("span", { class: "switch-hint", id: "notify-hint" });
  const notifyField = h(
    "div",
    { class: "notify-field" },
    h("label", { class: "switch", for: "notify-toggle" }, notifyToggle, h("span", { class: "switch-track", aria: { hidden: "true" } }), h("span", { class: "switch-label", text: tr("downloads.notify") })),
    notifyHint,
  );

  const clearDialog = clearConfirmation(() => clear());

  replace(
    root,
    h(
      "header",
      { class: "view-header" },
      h("div", null, h("h1", { text: tr("nav.downloads") }), h("p", { class: "view-subtitle", text: tr("downloads.subtitle") })),
      notifyField,
    ),
    h("div", { class: "sticky-tools" }, form, formError),
    h("div", { class: "downloads-bar" }, tabs, bulk),
    panel,
    clearDialog.el,
    newDownload.el,
  );

  // MARK: Adding

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const url = input.value.trim();
    formError.hidden = true;
    if (!url) {
      showFormError(tr("downloads.add.empty"));
      input.focus();
      return;
    }
    try {
      await withBusyOrThrow(submit, async () => {
        const { transfers } = await api.transfers.create([url]);
        for (const t of transfers) store.upsert(t);
        input.value = "";
        const t = transfers[0];
        toast(t && t.state === "completed" ? tr("downloads.add.already", { name: transferName(t) }) : tr("downloads.add.started", { name: t ? transferName(t) : url }), { kind: "success" });
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

  // MARK: Tabs

  for (const [name, el] of tabButtons) {
    el.addEventListener("click", () => setTab(name));
    el.addEventListener("keydown", (event) => {
      const index = TABS.findIndex((t) => t.name === name);
      let next = null;
      if (event.key === "ArrowRight") next = TABS[(index + 1) % TABS.length];
      else if (event.key === "ArrowLeft") next = TABS[(index + TABS.length - 1) % TABS.length];
      else if (event.key === "Home") next = TABS[0];
      else if (event.key === "End") next = TABS[TABS.length - 1];
      if (!next) return;
      event.preventDefault();
      setTab(next.name);
      tabButtons.get(next.name).focus();
    });
  }

  function setTab(name) {
    if (tab === name) return;
    tab = name;
    ctx.setQuery(name === "active" ? {} : { tab: name });
    render();
    watchEnd();
  }

  // MARK: Pages

  async function loadPage(name) {
    const pager = pagers[name];
    if (pager.loading || pager.done) return;
    pager.started = true;
    pager.loading = true;
    pager.error = null;
    const generation = pager.generation;
    if (name === tab) renderEnd();
    try {
      const page = await api.transfers.list({ state: TAB[name].states.join(","), limit: PAGE_SIZE, order: "desc", cursor: pager.frontier ?? undefined });
      if (generation !== pager.generation) return;
      store.merge(page, { quiet: true });
      const ids = page.transfers.map((t) => t.id);
      if (page.nextCursor) {
        const cursor = Number(page.nextCursor);
        pager.frontier = Number.isFinite(cursor) ? cursor : Math.min(...ids);
      } else {
        pager.done = true;
      }
    } catch (error) {
      if (generation !== pager.generation) return;
      pager.error = error;
    } finally {
      if (generation === pager.generation) pager.loading = false;
    }
    if (name === tab) {
      render();
      watchEnd();
    }
  }

  /** Whether the list of this tab shows `t`: its tab's, and not older than the pages read. */
  function shown(t, name) {
    const pager = pagers[name];
    return tabOf(t) === name && (pager.done || (pager.frontier !== null && t.id >= pager.frontier));
  }

  const observer = typeof IntersectionObserver === "function"
    ? new IntersectionObserver((entries) => {
        if (entries[entries.length - 1]?.isIntersecting) loadPage(tab);
      }, { rootMargin: "0px 0px 600px 0px" })
    : null;

  /** (Re)starts watching the list's end: observing again reports at once whether it is in view. */
  function watchEnd() {
    if (!observer) return;
    observer.unobserve(sentinel);
    observer.takeRecords(); // what it saw before this page came: stale
    const pager = pagers[tab];
    if (pager.started && !pager.done && !pager.error) observer.observe(sentinel);
  }

  function renderEnd() {
    const pager = pagers[tab];
    const moreToRead = !pager.done;
    sentinel.hidden = !moreToRead;
    if (!moreToRead) return;
    if (pager.error) {
      replace(moreStatus, errorBox(tr("error.withPrefix", { prefix: tr("downloads.error.more"), message: pager.error.message }), { retry: () => loadPage(tab) }));
      more.hidden = true;
    } else if (pager.loading || !pager.started) {
      replace(moreStatus, h("span", { class: "spinner", aria: { hidden: "true" } }), h("span", { class: "list-end-text", text: tr("status.loading") }));
      more.hidden = true;
    } else {
      replace(moreStatus);
      more.hidden = false;
    }
  }

  // MARK: All at once

  async function runAll(el, what) {
    await withBusy(el, async () => {
      const { transfers } = what === "pause" ? await api.transfers.pauseAll() : await api.transfers.resumeAll();
      for (const t of transfers) store.upsert(t);
      store.refreshCounts(0);
      const count = transfers.length;
      if (what === "pause") toast(count ? tr("downloads.paused", { count }) : tr("downloads.nothingToPause"), { kind: count ? "success" : "info" });
      else toast(count ? tr("downloads.resumed", { count }) : tr("downloads.nothingToResume"), { kind: count ? "success" : "info" });
    });
    renderBulk();
  }

  function askToClear() {
    const count = store.count(["completed", "cancelled"]);
    clearDialog.open(count);
  }

  async function clear() {
    try {
      const { ids } = await api.transfers.clearFinished();
      for (const id of ids) {
        ctx.player.forget(id);
        store.remove(id);
      }
      store.refreshCounts(0);
      toast(ids.length ? tr("downloads.cleared", { count: ids.length }) : tr("downloads.nothingToClear"), { kind: ids.length ? "success" : "info" });
      return true;
    } catch (error) {
      showError(error, tr("downloads.error.clear"));
      return false;
    }
  }

  function renderBulk() {
    const counts = Boolean(store.counts);
    const pausable = counts ? store.count(PAUSABLE) : store.all().filter((t) => PAUSABLE.includes(t.state)).length;
    const paused = counts ? store.count(["paused"]) : store.all().filter((t) => t.state === "paused").length;
    const finished = counts ? store.count(["completed", "cancelled"]) : store.all().filter((t) => FINISHED.has(t.state)).length;
    if (!pauseAll.classList.contains("busy")) pauseAll.disabled = pausable === 0;
    if (!resumeAll.classList.contains("busy")) resumeAll.disabled = paused === 0;
    clearFinished.disabled = finished === 0;
    pauseAll.title = pausable ? tr("downloads.pauseAllTitle", { count: pausable }) : tr("downloads.pauseAllNone");
    resumeAll.title = paused ? tr("downloads.resumeAllTitle", { count: paused }) : tr("downloads.resumeAllNone");
    clearFinished.title = finished ? tr("downloads.clearTitle", { count: finished }) : tr("downloads.clearNone");
  }

  // MARK: Notifications

  function renderNotify() {
    const supported = notifications.supported();
    notifyToggle.checked = notifications.enabled();
    notifyToggle.disabled = !supported;
    const permission = notifications.permission();
    notifyHint.textContent = !supported ? tr("notify.unsupported") : permission === "denied" ? tr("notify.blockedHint") : "";
    notifyHint.hidden = !notifyHint.textContent;
  }

  notifyToggle.addEventListener("change", async () => {
    if (!notifyToggle.checked) {
      notifications.disable();
      renderNotify();
      return;
    }
    notifyToggle.disabled = true;
    const problem = await notifications.enable();
    renderNotify();
    if (problem) toast(problem, { kind: "error" });
    else toast(tr("notify.on"), { kind: "success" });
  });

  // MARK: Rendering

  function render() {
    const pager = pagers[tab];
    if (!pager.started) loadPage(tab);
    for (const t of TABS) {
      const el = tabButtons.get(t.name);
      const count = store.counts ? store.count(t.states) : store.all().filter((x) => tabOf(x) === t.name).length;
      replace(el, h("span", { text: t.label() }), h("span", { class: "tab-count", text: String(count) }));
      el.setAttribute("aria-selected", String(tab === t.name));
      el.tabIndex = tab === t.name ? 0 : -1;
    }
    panel.setAttribute("aria-labelledby", `tab-${tab}`);
    const items = store.all().filter((t) => shown(t, tab)).sort((a, b) => b.id - a.id);
    reconcile(list, rows, items, (t) => t.id, (t) => downloadRow(t, ctx));
    list.hidden = items.length === 0;
    if (items.length === 0 && pager.done) replace(empty, emptyState(...TAB[tab].empty()));
    else replace(empty);
    const label = { tab: TAB[tab].label(), count: items.length };
    list.setAttribute("aria-label", pager.done ? tr("downloads.listLabel", label) : tr("downloads.listLabelShown", label));
    renderEnd();
    renderBulk();
  }

  const unsubscribeStore = store.subscribe((change) => {
    if (change.type === "counts") {
      render();
      return;
    }
    const row = change.type === "change" ? rows.get(change.id) : null;
    const t = change.type === "change" ? store.get(change.id) : null;
    // A change that keeps the transfer on its tab only redraws its row; one of a transfer this
    // tab does not show changes nothing here (the tabs' counts are the daemon's).
    if (row && t && shown(t, tab)) row.update(t);
    else if (store.counts && change.type !== "reset" && !rows.has(change.id) && !(t && shown(t, tab))) return;
    else render();
    if (change.type === "reset") watchEnd();
  });
  const unsubscribePlayer = ctx.player.subscribe(() => {
    for (const row of rows.values()) row.refreshPlay?.();
  });
  // Back to the page (after deleting or moving files elsewhere, perhaps): read what is shown again.
  const onVisible = () => {
    if (document.visibilityState === "visible") refreshShown();
  };
  document.addEventListener("visibilitychange", onVisible);

  /** Reads the first page of the tab again (files deleted or moved since show as missing). */
  async function refreshShown() {
    try {
      const page = await api.transfers.list({ state: TAB[tab].states.join(","), limit: PAGE_SIZE, order: "desc" });
      store.merge(page);
    } catch {
      // The connection banner says it when the daemon is away.
    }
  }

  renderNotify();
  store.refreshCounts(0);
  render();
  watchEnd();

  return {
    update(next) {
      const name = tabFromParams(next);
      if (name !== tab) {
        tab = name;
        render();
        watchEnd();
      }
    },
    focus: () => input.focus(),
    unmount() {
      observer?.disconnect();
      for (const pager of Object.values(pagers)) pager.generation += 1;
      document.removeEventListener("visibilitychange", onVisible);
      clearDialog.close();
      newDownload.close();
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

/** The question before clearing the finished downloads from the list: a modal <dialog>. */
function clearConfirmation(onConfirm) {
  const text = h("p", { class: "dialog-text", id: "clear-dialog-text" });
  const confirm = button(tr("downloads.clearDialog.confirm"), { kind: "primary", icon: "x" });
  const dismiss = button(tr("action.cancel"), { kind: "secondary" });
  const el = h(
    "dialog",
    { class: "dialog", id: "clear-dialog", aria: { labelledby: "clear-dialog-title", describedby: "clear-dialog-text" } },
    h("h2", { class: "dialog-title", id: "clear-dialog-title", text: tr("downloads.clearDialog.title") }),
    text,
    h("div", { class: "dialog-actions" }, dismiss, confirm),
  );
  dismiss.addEventListener("click", () => el.close());
  confirm.addEventListener("click", async () => {
    const done = await withBusy(confirm, onConfirm, tr("downloads.clearDialog.busy"));
    if (done) el.close();
  });
  return {
    el,
    open(count) {
      text.textContent = count ? tr("downloads.clearDialog.text", { count }) : tr("downloads.clearDialog.textAll");
      if (!el.open) el.showModal();
      dismiss.focus();
    },
    close() {
      if (el.open) el.close();
    },
  };
}

function downloadRow(initial, ctx) {
  let t = initial;
  const kindIcon = h("div", { class: "download-icon" });
  const name = h("p", { class: "download-name" });
  const badge = h("span", { class: "badge badge-priority", hidden: true });
  const source = h("p", { class: "download-source" });
  const bar = progressBar("download-bar");
  // A segmented download's ranges, each filled as far as its bytes reach (decorative: the bar
  // and the status line say the same in words).
  const ranges = h("div", { class: "download-ranges", aria: { hidden: "true" } });
  const status = h("p", { class: "download-status" });
  const details = h("div", { class: "download-details" });
  const actions = h("div", { class: "download-actions" });
  const el = h("li", { class: "download" }, kindIcon, h("div", { class: "download-main" }, h("div", { class: "download-heading" }, name, badge), source, bar.el, ranges, status, details), actions);
  let lastKey = null;

  const fileName = () => transferName(t);
  const playable = () => t.state === "completed" && !t.fileMissing && mediaKind(fileName()) === "audio";

  /** What the player plays for this row: the transfer, and its episode or song when a view named it. */
  function playItem() {
    const media = transferMedia.get(t.id) || {};
    return { transferId: t.id, ...media, title: t.taskDescription || fileName(), subtitle: fileName(), placeholder: t.folder?.startsWith("Podcasts") ? "podcast" : "music" };
  }

  function playButton() {
    const playing = ctx.player.isPlaying(playItem());
    return h(
      "button",
      {
        type: "button",
        class: "btn btn-icon btn-round btn-primary act-play",
        aria: { label: playing ? tr("downloads.pauseName", { name: fileName() }) : tr("downloads.playName", { name: fileName() }) },
        title: playing ? tr("action.pause") : tr("action.play"),
        on: { click: () => ctx.player.toggle(playItem()) },
      },
      icon(playing ? "pause" : "play"),
    );
  }

  function removeButton() {
    return button(tr("downloads.remove"), {
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
    return confirmButton(tr("downloads.delete"), {
      question: tr("downloads.deleteQuestion"),
      confirmLabel: tr("downloads.deleteConfirm"),
      onConfirm: async () => {
        ctx.player.forget(t.id, { deleted: true });
        if (await remove(t.id, true)) toast(tr("downloads.deleted", { name: fileName() }), { kind: "success" });
      },
    });
  }

  function againButton() {
    return button(tr("downloads.again"), {
      icon: "download",
      kind: "secondary",
      title: tr("downloads.againTitle"),
      onClick: async (event) => {
        ctx.player.forget(t.id, { deleted: true });
        const old = t;
        await withBusy(event.currentTarget, () => downloadAgain(old));
      },
    });
  }

  function renderActions() {
    const missing = t.state === "completed" && Boolean(t.fileMissing);
    const key = `${t.state}:${missing}:${t.state === "completed" && ctx.player.isPlaying(playItem())}`;
    if (key === lastKey) return;
    lastKey = key;
    const pauseButton = () => button(tr("downloads.pauseOne"), { icon: "pause", iconOnly: true, kind: "ghost", onClick: () => pause(t.id) });
    const cancelButton = () => button(tr("downloads.cancelOne"), { icon: "x", iconOnly: true, kind: "ghost", onClick: () => cancel(t.id) });
    switch (t.state) {
      case "queued":
        replace(actions, button(tr("downloads.moveToTop"), { icon: "top", iconOnly: true, kind: "ghost", onClick: () => moveToTop(t.id) }), pauseButton(), cancelButton());
        break;
      case "running":
      case "waiting":
        replace(actions, pauseButton(), cancelButton());
        break;
      case "paused":
        replace(actions, button(tr("downloads.resumeOne"), { icon: "resume", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }), cancelButton());
        break;
      case "failed":
        replace(actions, button(tr("downloads.retryOne"), { icon: "refresh", iconOnly: true, kind: "ghost", onClick: () => resume(t.id) }), removeButton());
        break;
      case "completed":
        if (missing) {
          replace(actions, againButton(), removeButton());
          break;
        }
        replace(
          actions,
          playable() ? playButton() : null,
          h("a", { class: "btn btn-icon btn-ghost", href: api.transfers.fileURL(t.id, true), download: fileName(), aria: { label: tr("downloads.saveName", { name: fileName() }) }, title: tr("downloads.save") }, icon("download")),
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
    const missing = t.state === "completed" && Boolean(t.fileMissing);
    el.dataset.state = t.state;
    el.dataset.transferId = String(t.id);
    if (missing) el.dataset.missing = "true";
    else delete el.dataset.missing;
    const kind = mediaKind(fileName());
    const iconName = missing ? "alert" : t.folder?.startsWith("Podcasts") ? "podcast" : kind === "audio" ? "music" : "file";
    if (kindIcon.dataset.icon !== iconName) {
      kindIcon.dataset.icon = iconName;
      replace(kindIcon, icon(iconName));
    }
    name.textContent = t.taskDescription || fileName();
    name.title = t.url;
    const priority = FINISHED.has(t.state) ? "" : priorityLabel(t);
    badge.textContent = priority;
    badge.hidden = !priority;
    if (priority) badge.dataset.priority = t.priority;
    source.textContent = [
      t.taskDescription ? fileName() : host(t.url),
      t.session !== "web" ? tr("downloads.fromSession", { session: t.session }) : null,
      t.options?.insecure ? tr("transfer.insecure") : null,
    ].filter(Boolean).join(" · ");
    const finished = FINISHED.has(t.state);
    bar.el.hidden = finished;
    if (!finished) {
      const text = longStatus(t);
      bar.set(t.state === "failed" ? 0 : t.totalBytes > 0 ? t.bytesReceived / t.totalBytes : t.state === "queued" ? 0 : null, text);
      bar.el.classList.toggle("paused", t.state === "paused");
      bar.el.classList.toggle("failed", t.state === "failed");
    }
    renderRanges(!finished && t.totalBytes > 0 && Array.isArray(t.ranges) && t.ranges.length > 1 ? t.ranges : []);
    if (missing) status.textContent = [tr("status.missing"), dateTime(t.completedAt || t.updatedAt)].filter(Boolean).join(" · ");
    else if (t.state === "completed") status.textContent = [bytes(t.totalBytes ?? t.bytesReceived), dateTime(t.completedAt || t.updatedAt)].filter(Boolean).join(" · ");
    else status.textContent = longStatus(t);
    status.classList.toggle("is-error", troubled(t) || missing);
    if (t.state === "completed" && t.sha256 && !missing) {
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
