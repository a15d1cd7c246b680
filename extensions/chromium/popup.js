// Ferry's transfers, newest first, with their progress: polled once a second while open.

import { FerryNeedsPairing, FerryUnreachable, transfers } from "./lib/ferry.js";
import { loadSettings } from "./lib/settings.js";

const $ = (id) => document.getElementById(id);

function size(bytes) {
  if (bytes == null || bytes < 0) return "?";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

function nameOf(transfer) {
  const path = transfer.path || transfer.url;
  try {
    return decodeURIComponent(path.split("?")[0].split("/").filter(Boolean).pop() || path);
  } catch {
    return path;
  }
}

function row(transfer) {
  const item = document.createElement("li");
  item.dataset.id = transfer.id;
  item.dataset.state = transfer.state;
  const name = document.createElement("div");
  name.className = "name";
  name.textContent = nameOf(transfer); // text only: names come from servers
  name.title = transfer.url;
  const bar = document.createElement("progress");
  bar.max = 1;
  const fraction = transfer.totalBytes > 0 ? transfer.bytesReceived / transfer.totalBytes : transfer.state === "completed" ? 1 : null;
  if (fraction != null) bar.value = Math.min(1, fraction);
  const detail = document.createElement("div");
  detail.className = "detail";
  const percent = fraction != null ? `${(fraction * 100).toFixed(1)}% of ${size(transfer.totalBytes)}` : size(transfer.bytesReceived);
  detail.textContent = `${transfer.state} · ${percent}${transfer.error ? ` · ${transfer.error.message}` : ""}`;
  item.append(name, bar, detail);
  return item;
}

async function refresh() {
  const settings = await loadSettings();
  $("last").textContent = settings.lastResult?.message ?? "";
  const status = $("status");
  try {
    const list = await transfers(20);
    status.textContent = list.length ? "" : "No transfers yet. Right-click a link: Download with Ferry.";
    status.dataset.state = "ok";
    $("transfers").replaceChildren(...list.map(row));
  } catch (error) {
    status.dataset.state = error instanceof FerryNeedsPairing ? "needs-pairing" : error instanceof FerryUnreachable ? "unreachable" : "error";
    status.textContent = error.message;
    $("transfers").replaceChildren();
  }
}

$("options").addEventListener("click", (event) => {
  event.preventDefault();
  chrome.runtime.openOptionsPage();
});
$("open-ferry").addEventListener("click", async (event) => {
  event.preventDefault();
  const settings = await loadSettings();
  chrome.tabs.create({ url: settings.daemonURL });
});

refresh();
setInterval(refresh, 1000);
