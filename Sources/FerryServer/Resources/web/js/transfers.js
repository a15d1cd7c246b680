// Commands on transfers and the words for their state, shared by every view.

import { api } from "./api.js";
import { store } from "./store.js";
import { amount, bytes, eta, fraction, percent, speed } from "./format.js";
import { showError } from "./ui.js";

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

export const pause = (id) => command(() => api.transfers.pause(id), "Couldn't pause");
export const resume = (id) => command(() => api.transfers.resume(id), "Couldn't resume");
export const cancel = (id) => command(() => api.transfers.cancel(id), "Couldn't cancel");

export async function remove(id, deleteFile = false) {
  try {
    await api.transfers.remove(id, deleteFile);
    store.remove(id);
    return true;
  } catch (error) {
    showError(error, deleteFile ? "Couldn't delete the file" : "Couldn't remove it");
    return false;
  }
}

export const ACTIVE = new Set(["queued", "running", "waiting"]);

/** What a row shows for its transfer: "idle" (nothing yet), "active", "paused", "failed", "done". */
export function phase(transfer) {
  if (!transfer || transfer.state === "cancelled") return "idle";
  if (ACTIVE.has(transfer.state)) return "active";
  if (transfer.state === "paused") return "paused";
  if (transfer.state === "failed") return "failed";
  return "done";
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
      return transfer.bytesReceived > 0 ? `Queued · ${amount(transfer)}` : "Queued…";
    case "running":
      // Nothing received yet: still connecting, perhaps again after a failed attempt.
      if (!transfer.bytesReceived && !(transfer.totalBytes > 0)) return transfer.error ? `Connecting again · ${transfer.error.message}` : "Connecting…";
      return amount(transfer);
    case "paused":
      return `Paused · ${amount(transfer)}`;
    case "waiting": {
      const reason = transfer.waitReason || transfer.error?.message || "the connection failed";
      const next = transfer.retryAt ? new Date(transfer.retryAt) : null;
      const at = next && !Number.isNaN(next.getTime()) ? ` · next try ${next.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false })}` : "";
      return `Waiting · ${reason}${at}`;
    }
    case "failed":
      return `Failed · ${transfer.error?.message || "unknown error"}`;
    case "cancelled":
      return "Cancelled";
    case "completed":
      return typeof transfer.totalBytes === "number" ? bytes(transfer.totalBytes) : bytes(transfer.bytesReceived);
    default:
      return transfer.state;
  }
}

/** The downloads view's line: "512 kB of 1.2 MB · 42.0% · 300 kB/s · 3 s left" while running. */
export function longStatus(transfer) {
  if (transfer.state !== "running" || (!transfer.bytesReceived && !(transfer.totalBytes > 0))) return shortStatus(transfer);
  const done = fraction(transfer);
  const parts = [done === null ? bytes(transfer.bytesReceived) : `${bytes(transfer.bytesReceived)} of ${bytes(transfer.totalBytes)}`];
  if (done !== null) parts.push(percent(done));
  const rate = speed(transfer.bytesPerSecond);
  if (rate) parts.push(rate);
  if (transfer.connections > 1) parts.push(`${transfer.connections} connections`);
  const left = eta(transfer.etaSeconds);
  if (left) parts.push(left);
  return parts.join(" · ");
}
