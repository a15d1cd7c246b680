// Positions the daemon did not get (offline, the phone out of reach): each is noted in this
// browser (localStorage) before it is sent and forgotten once the daemon has it, the last one per
// item winning; what is left is sent when the daemon is back (`online`, a new connection, the
// page's start). Never over a newer position: the daemon's `updatedAt` is read first and a
// position noted before it is dropped. Those are two clocks (the daemon's and this device's); a
// clock set by the network is a few seconds off at most, less than a listen on another device.

import { api } from "./api.js";

const STORAGE_KEY = "ferry.playback.pending";

function read() {
  try {
    return JSON.parse(localStorage.getItem(STORAGE_KEY)) || {};
  } catch {
    return {};
  }
}

function write(entries) {
  try {
    if (Object.keys(entries).length) localStorage.setItem(STORAGE_KEY, JSON.stringify(entries));
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage blocked: positions go only while the daemon is there.
  }
}

let flushing = null;

export const pendingPlayback = {
  /** Notes `update` of `key` ("episodes/12") before it is sent. → its time, for sent(). */
  note(key, update) {
    const entries = read();
    const at = Date.now();
    entries[key] = { update, at };
    write(entries);
    return at;
  },

  /** The daemon has it (or refused it): forgotten, unless a newer one was noted since. */
  sent(key, at) {
    const entries = read();
    if (entries[key]?.at !== at) return;
    delete entries[key];
    write(entries);
  },

  /** The position noted of `key` and not yet sent, as a playback, or null. */
  playback(key) {
    const entry = read()[key];
    if (!entry || !(entry.update.positionSeconds >= 0)) return null;
    return { positionSeconds: entry.update.positionSeconds, played: false, updatedAt: new Date(entry.at).toISOString() };
  },

  /** Sends what is left, each unless the daemon's is newer; `remember(key, playback)` hears the daemon's answer. */
  flush(remember = () => {}) {
    flushing ??= (async () => {
      for (const [key, entry] of Object.entries(read())) {
        try {
          const known = await api.playback.get(key);
          const playback = known && Date.parse(known.updatedAt) >= entry.at ? known : await api.playback.save(key, entry.update);
          remember(key, playback);
        } catch (error) {
          if (error.code === "network" || error.status === 401) break; // still away: the next time
          // Refused (the episode is gone): nothing to send later.
        }
        this.sent(key, entry.at);
      }
    })().finally(() => {
      flushing = null;
    });
    return flushing;
  },
};
