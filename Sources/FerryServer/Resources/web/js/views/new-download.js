// The New download dialog: what `ferry get` takes. Several URLs (typed, or a text file of them
// chosen or dropped: one a line, as aria2c's input files; or a Metalink, whose files the daemon
// downloads from their mirrors and checks against their digests), the folder (an admin's), the file's
// name, its checksum and mirrors (with one URL), connections, priority, a start time and extra
// headers. One request: the daemon checks every URL before it creates any, so a bad one creates
// nothing, and its sentence is shown at the top and next to the field it is about.

import { h, button } from "../dom.js";
import { api } from "../api.js";
import { t } from "../i18n.js";
import { check, clearRequestError, field, integerOf, select, showRequestError } from "../forms.js";
import { toast, withBusy } from "../ui.js";

/**
 * The URLs of a list: the first word of each line; blank lines, # comments and aria2c's
 * indented option lines (`  out=name`) skipped.
 */
export function urlsOf(text) {
  return text
    .split(/\r?\n/)
    .filter((line) => !/^\s+\S+=/.test(line))
    .map((line) => line.trim().split(/\s+/)[0])
    .filter((word) => word && !word.startsWith("#"));
}

/** "Name: value" lines → {headers} or {error: the first line that is not one}. */
function headersOf(text) {
  const headers = {};
  for (const line of text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean)) {
    const colon = line.indexOf(":");
    if (colon < 1) return { error: line };
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return { headers };
}

/** → {el, open()}; `onCreated(transfers)` after the daemon took them. `admin`: the folder field. */
export function newDownloadDialog({ admin, onCreated }) {
  const text = (props = {}) => h("input", { type: "text", spellcheck: "false", autocapitalize: "none", autocomplete: "off", ...props });
  const urls = field(t("newDownload.urls"), h("textarea", { id: "nd-urls", rows: "4", spellcheck: "false", placeholder: "https://example.com/file.iso" }), { hint: t("newDownload.urlsHint"), wide: true });
  const fileInput = h("input", { type: "file", id: "nd-file", accept: ".txt,.list,.uris,.aria2,text/plain,.meta4,.metalink,application/metalink4+xml" });
  // A Metalink chosen or dropped: sent whole, instead of URLs.
  let metalink = null;
  const metalinkNote = h("p", { class: "field-hint metalink-note", id: "nd-metalink", hidden: true });
  const filePick = h("div", { class: "field field-wide" }, h("label", { for: "nd-file", text: t("newDownload.file") }), h("div", { class: "file-pick" }, fileInput));
  const folder = field(t("newDownload.folder"), text({ id: "nd-folder", placeholder: "/srv/media/Downloads" }), { hint: t("newDownload.folderHint") });
  const mkdir = check(t("newDownload.mkdir"), { id: "nd-mkdir" });
  const name = field(t("newDownload.name"), text({ id: "nd-name" }), { hint: t("newDownload.oneURL") });
  const checksum = field(t("newDownload.checksum"), text({ id: "nd-checksum", placeholder: "sha-256=…" }), { hint: t("newDownload.checksumHint") });
  const mirrors = field(t("newDownload.mirrors"), h("textarea", { id: "nd-mirrors", rows: "2", spellcheck: "false" }), { hint: t("newDownload.mirrorsHint"), wide: true });
  const connections = field(t("newDownload.connections"), h("input", { type: "number", id: "nd-connections", min: "1", max: "64", step: "1", inputmode: "numeric", placeholder: t("form.auto") }), { hint: t("newDownload.connectionsHint") });
  const prioritySelect = select([["normal", t("newDownload.priority.normal")], ["high", t("newDownload.priority.high")], ["low", t("newDownload.priority.low")]], "normal");
  prioritySelect.id = "nd-priority";
  const priority = field(t("newDownload.priority"), prioritySelect);
  const startAt = field(t("newDownload.startAt"), h("input", { type: "datetime-local", id: "nd-start" }), { hint: t("newDownload.startAtHint") });
  const headers = field(t("newDownload.headers"), h("textarea", { id: "nd-headers", rows: "2", spellcheck: "false", placeholder: "Authorization: Bearer …" }), { hint: t("newDownload.headersHint"), wide: true });
  const top = h("div", { hidden: true });
  const submit = button(t("newDownload.submit"), { type: "submit", kind: "primary", icon: "download" });
  const dismiss = button(t("action.cancel"), { kind: "secondary" });

  const drop = h("div", { class: "fields drop-target" }, urls.el, filePick, metalinkNote);
  const form = h(
    "form",
    { method: "dialog", novalidate: true },
    h("h2", { class: "dialog-title", id: "nd-title", text: t("newDownload.title") }),
    drop,
    h("div", { class: "fields" },
      admin ? folder.el : null,
      admin ? h("div", { class: "field" }, h("span", { class: "field-label", text: "\u00a0" }), mkdir.el) : null,
      name.el, checksum.el, mirrors.el, connections.el, priority.el, startAt.el, headers.el),
    top,
    h("div", { class: "dialog-actions" }, dismiss, submit),
  );
  const el = h("dialog", { class: "dialog dialog-form", id: "new-download", aria: { labelledby: "nd-title" } }, form);

  dismiss.addEventListener("click", () => el.close());

  /** A Metalink's text and how many files it names, or null for another file. */
  function metalinkOf(file, content) {
    const named = /\.(meta4|metalink)$/i.test(file.name);
    if (!named && !/<metalink[\s>]/.test(content.slice(0, 4096))) return null;
    const xml = new DOMParser().parseFromString(content, "application/xml");
    const root = xml.documentElement;
    if (root.localName !== "metalink" || xml.getElementsByTagName("parsererror").length) return { text: content, files: null };
    return { text: content, files: root.getElementsByTagNameNS("*", "file").length };
  }

  function setMetalink(found, fileName) {
    metalink = found;
    metalinkNote.hidden = !found;
    metalinkNote.textContent = found ? (found.files === null ? t("newDownload.metalinkBroken", { name: fileName }) : t("newDownload.metalinkRead", { count: found.files, name: fileName })) : "";
  }

  /** A file of URLs, chosen or dropped: its lines join what is typed. A Metalink is kept whole. */
  async function readList(file) {
    if (!file) return;
    if (file.size > 16 << 20) {
      urls.showError(t("newDownload.fileTooBig"));
      return;
    }
    const content = await file.text();
    const found = metalinkOf(file, content);
    if (found) {
      setMetalink(found, file.name);
      urls.clearError();
      return;
    }
    if (file.size > 4 << 20) {
      urls.showError(t("newDownload.fileTooBig"));
      return;
    }
    const list = urlsOf(content);
    if (!list.length) {
      urls.showError(t("newDownload.fileEmpty", { name: file.name }));
      return;
    }
    const typed = urls.input.value.trim();
    urls.input.value = [typed, ...list].filter(Boolean).join("\n");
    urls.clearError();
    toast(t("newDownload.fileRead", { count: list.length, name: file.name }), { kind: "info" });
  }
  fileInput.addEventListener("change", () => readList(fileInput.files?.[0]));
  drop.addEventListener("dragover", (event) => {
    if (!event.dataTransfer?.types?.includes("Files")) return;
    event.preventDefault();
    drop.classList.add("dragging");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("dragging"));
  drop.addEventListener("drop", (event) => {
    const file = event.dataTransfer?.files?.[0];
    drop.classList.remove("dragging");
    if (!file) return;
    event.preventDefault();
    readList(file);
  });

  /** The request, or null when a field is wrong (said next to it). */
  function request() {
    const list = urlsOf(urls.input.value);
    if (metalink && list.length) {
      urls.showError(t("newDownload.metalinkAndURLs"));
      urls.input.focus();
      return null;
    }
    if (!list.length && !metalink) {
      urls.showError(t("newDownload.noURLs"));
      urls.input.focus();
      return null;
    }
    const extra = { priority: priority.input.value };
    const options = {};
    if (admin && folder.input.value.trim()) {
      extra.directory = folder.input.value.trim();
      if (mkdir.input.checked) extra.createDirectory = true;
    }
    if (name.input.value.trim()) extra.filename = name.input.value.trim();
    if (checksum.input.value.trim()) extra.checksum = checksum.input.value.trim();
    const mirrorList = urlsOf(mirrors.input.value);
    if (mirrorList.length) extra.mirrors = mirrorList;
    const count = integerOf(connections.input);
    if (Number.isNaN(count)) {
      connections.showError(t("form.wholeNumber"));
      connections.input.focus();
      return null;
    }
    if (count !== null) options.connections = count;
    if (startAt.input.value) {
      const date = new Date(startAt.input.value);
      if (Number.isNaN(date.getTime())) {
        startAt.showError(t("newDownload.badTime"));
        return null;
      }
      options.startAfter = date.toISOString();
    }
    const parsed = headersOf(headers.input.value);
    if (parsed.error) {
      headers.showError(t("newDownload.badHeader", { line: parsed.error }));
      headers.input.focus();
      return null;
    }
    if (Object.keys(parsed.headers).length) options.headers = parsed.headers;
    if (Object.keys(options).length) extra.options = options;
    if (metalink) extra.metalink = metalink.text;
    return { list, extra };
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearRequestError(top);
    const asked = request();
    if (!asked) return;
    await withBusy(submit, async () => {
      try {
        const { transfers } = await api.transfers.create(asked.list, asked.extra);
        toast(t("newDownload.added", { count: transfers.length }), { kind: "success" });
        el.close();
        form.reset();
        setMetalink(null);
        onCreated(transfers);
      } catch (error) {
        // Which field the daemon's sentence is about: a URL it quotes, else its words.
        const quoted = /'([^']+)'/.exec(error.message)?.[1];
        const inMirrors = quoted && mirrors.input.value.includes(quoted) && !urls.input.value.includes(quoted);
        showRequestError(top, error, [
          [/^/, error.code === "invalid_url" || error.code === "unsupported_scheme" ? (inMirrors ? mirrors : urls) : null],
          [/^/, error.code === "metalink_invalid" ? urls : null],
          [/checksum|digest/i, checksum],
          [/mirror/i, mirrors],
          [/file name|filename/i, name],
          [/folder|directory/i, admin ? folder : urls],
          [/header/i, headers],
          [/connections/i, connections],
          [/startAfter|date/i, startAt],
          [/URL/, urls],
        ].filter(([, f]) => f));
      }
    });
  });

  return {
    el,
    open() {
      if (!el.open) el.showModal();
      urls.input.focus();
    },
    close() {
      if (el.open) el.close();
    },
  };
}
