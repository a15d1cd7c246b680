// Commands on transfers and the words for their state, shared by every view.

import { api } from "./api.js";
import { store } from "./store.js";
import { amount, bytes, eta, fraction, percent, speed, timeOfDay, transferName } from "./format.js";
import { t } from "./i18n.js";
import { showError, toast } from "./ui.js";

/** Runs a command that returns the transfer, puts the answer in the store. */
async function command(call, what) {
  try {
    const transfer = await call();
    if (transfer) store.upsert(transfer);
    return transfer;
  } catch (error) {
    showError(error, what);
    // The page's idea of the transfer may be out of date: read it again.
    return null;
  }
}

export const pause = (id) => command(() => api.transfers.pause(id), t("transfer.error.pause"));
export const resume = (id) => command(() => api.transfers.resume(id), t("transfer.error.resume"));
export const cancel = (id) => command(() => api.transfers.cancel(id), t("transfer.error.cancel"));

/** Puts a queued transfer ahead of every other (PATCH position first). */
export async function moveToTop(id) {
  const moved = await command(() => api.transfers.move(id, { position: "first" }), t("transfer.error.move"));
  if (moved) toast(t("transfer.nextInQueue", { name: transferName(moved) }), { kind: "success" });
  return moved;
}

/**
 * Downloads a completed transfer whose file was deleted or moved once more: the daemon makes a
 * new transfer of its URL (as it would for any URL whose file is gone), to the folder the user
 * chose for it, checked against the same checksum; the old entry, which only said the file was
 * gone, is forgotten. `create()` asks for it (the song's preview endpoint, or by default the URL).
 * Returns the new transfer, or null.
 */
export async function downloadAgain(old, create = () => createLike(old)) {
  try {
    const fresh = await create();
    if (!fresh) return null;
    store.upsert(fresh);
    if (fresh.id !== old.id) await forget(old.id);
    if (fresh.state === "completed" && fresh.fileMissing) {
      toast(t("transfer.againNoFile", { name: transferName(old) }), { kind: "error" });
    } else {
      toast(fresh.state === "completed" ? t("transfer.thereAgain", { name: transferName(fresh) }) : t("transfer.downloadingAgain", { name: transferName(fresh) }), { kind: "success" });
    }
    return fresh;
  } catch (error) {
    showError(error, t("transfer.error.again", { name: transferName(old) }));
    return null;
  }
}

async function createLike(old) {
  const extra = {};
  if (old.taskDescription) extra.taskDescription = old.taskDescription;
  if (old.directory) {
    extra.directory = old.directory;
    const name = old.path ? old.path.split("/").pop() : "";
    if (name) extra.filename = name;
  }
  if (old.checksum) extra.checksum = old.checksum;
  const mirrors = (old.mirrors || []).filter((m) => m && !m.dropped && typeof m.url === "string").map((m) => m.url);
  if (mirrors.length) extra.mirrors = mirrors;
  if (old.priority && old.priority !== "normal") extra.priority = old.priority;
  const { transfers } = await api.transfers.create([old.url], extra);
  return transfers[0] || null;
}

/** Forgets a transfer quietly (the file, if any, stays): for entries another one replaces. */
async function forget(id) {
  try {
    await api.transfers.remove(id, false);
  } catch (error) {
    if (error.status !== 404) return;
  }
  store.remove(id);
}

export async function remove(id, deleteFile = false) {
  try {
    await api.transfers.remove(id, deleteFile);
    store.remove(id);
    return true;
  } catch (error) {
    showError(error, deleteFile ? t("transfer.error.delete") : t("transfer.error.remove"));
    return false;
  }
}

export const ACTIVE = new Set(["queued", "running", "waiting"]);

/**
 * What a row shows for its transfer: "idle" (nothing yet), "active", "paused", "failed", "done",
 * or "missing" (completed, but its file was deleted or moved since).
 */
export function phase(transfer) {
  if (!transfer || transfer.state === "cancelled") return "idle";
  if (ACTIVE.has(transfer.state)) return "active";
  if (transfer.state === "paused") return "paused";
  if (transfer.state === "failed") return "failed";
  if (transfer.fileMissing) return "missing";
  return "done";
}

/** "High priority" / "Low priority", or "" for the normal one. */
export function priorityLabel(transfer) {
  if (transfer?.priority === "high") return t("transfer.priority.high");
  if (transfer?.priority === "low") return t("transfer.priority.low");
  return "";
}

/** Whether its status line reports a problem: failed, waiting (for the network, a server), or connecting again. */
export function troubled(transfer) {
  if (!transfer) return false;
  if (transfer.state === "failed" || transfer.state === "waiting") return true;
  return transfer.state === "running" && Boolean(transfer.error) && !transfer.bytesReceived;
}

/** "42.0% of 1.2 MB", "Paused · 42.0% of 1.2 MB", "Queued…", "Connecting…", "Waiting · no network · next try 14:05:10". */
export function shortStatus(transfer) {
  switch (transfer.state) {
    case "queued":
      return transfer.bytesReceived > 0 ? t("status.queuedAmount", { amount: amount(transfer) }) : t("status.queued");
    case "running":
      // Nothing received yet: still connecting, perhaps again after a failed attempt.
      if (!transfer.bytesReceived && !(transfer.totalBytes > 0)) return transfer.error ? t("status.connectingAgain", { reason: transfer.error.message }) : t("status.connecting");
      return amount(transfer);
    case "paused":
      return t("status.paused", { amount: amount(transfer) });
    case "waiting": {
      const reason = transfer.waitReason || transfer.error?.message || t("status.connectionFailed");
      const at = timeOfDay(transfer.retryAt);
      return at ? t("status.waitingUntil", { reason, time: at }) : t("status.waiting", { reason });
    }
    case "failed":
      return t("status.failed", { reason: transfer.error?.message || t("status.unknownError") });
    case "cancelled":
      return t("status.cancelled");
    case "completed":
      if (transfer.fileMissing) return t("status.missing");
      return typeof transfer.totalBytes === "number" ? bytes(transfer.totalBytes) : bytes(transfer.bytesReceived);
    default:
      return transfer.state;
  }
}

/** The downloads view's line: "512 kB of 1.2 MB · 42.0% · 300 kB/s · 3 s left" while running;
 * in a cluster, with the member that runs it ("· on host-a"). */
export function longStatus(transfer) {
  const line = progressLine(transfer);
  const held = transfer.state === "running" || transfer.state === "waiting" || transfer.state === "queued";
  return transfer.member && held ? `${line} · ${t("status.onMember", { member: transfer.member })}` : line;
}

function progressLine(transfer) {
  if (transfer.state !== "running" || (!transfer.bytesReceived && !(transfer.totalBytes > 0))) return shortStatus(transfer);
  const done = fraction(transfer);
  const parts = [done === null ? bytes(transfer.bytesReceived) : t("status.bytesOf", { received: bytes(transfer.bytesReceived), total: bytes(transfer.totalBytes) })];
  if (done !== null) parts.push(percent(done));
  const rate = speed(transfer.bytesPerSecond);
  if (rate) parts.push(rate);
  if (transfer.connections > 1) parts.push(t("status.connections", { count: transfer.connections }));
  const left = eta(transfer.etaSeconds);
  if (left) parts.push(left);
  return parts.join(" · ");
}
