// "Keep on this device": an episode or a song saved in this browser's own storage (kept-store.js),
// to play with no network. Fetched by the browser itself with Background Fetch where there is one
// (Chromium: it goes on after the tab closes, with a progress notification), else by this page,
// chunk by chunk; paused, resumed from the bytes kept with `Range`, removed. The service worker
// plays a kept item back (`/kept/<key>`).
//
// An item's facts ("meta"): {key ("episodes/12" | "tracks/345"), kind, id, title, subtitle,
// artworkURL, podcastId, speed, chaptersURL, transcriptURL, source (the URL its bytes come from),
// contentType, total, etag, bytes (kept), state: fetching | paused | done | failed, error: quota |
// network | http | null, via: fetch | background}.

import "./kept-store.js";

const storage = globalThis.keptStore;
const BACKGROUND = "keep:";

/** Thrown when the browser has no room: the quota (`QuotaExceededError`) or our own check first. */
export class QuotaError extends Error {
  constructor(needed) {
    super("quota");
    this.name = "QuotaExceededError";
    this.needed = needed;
  }
}

const isQuota = (error) => error?.name === "QuotaExceededError";
const isAbort = (error) => error?.name === "AbortError";

class Keeper {
  constructor() {
    this.items = new Map();
    // Bytes fetched so far of what is being fetched (fresher than the facts' `bytes`).
    this.live = new Map();
    this.controllers = new Map();
    this.listeners = new Set();
    this.ready = this.supported() ? this.load().catch((error) => console.warn("kept items not read", error)) : Promise.resolve();
    navigator.serviceWorker?.addEventListener("message", (event) => {
      if (event.data?.type === "kept") this.refresh(event.data.key);
    });
  }

  /** The origin private file system and a service worker: what keeping needs (a secure context: HTTPS or loopback). */
  supported() {
    return Boolean(navigator.storage?.getDirectory) && "serviceWorker" in navigator && isSecureContext;
  }

  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(key) {
    for (const listener of [...this.listeners]) listener(key);
  }

  async load() {
    for (const facts of await storage.all()) this.items.set(facts.key, facts);
    for (const facts of this.items.values()) {
      if (facts.state !== "fetching") continue;
      if (facts.via === "background" && (await this.backgroundFetch(facts.key))) continue;
      // Fetched by a page that closed (or a Background Fetch that ended unheard): it waits.
      await this.save({ ...facts, state: "paused", bytes: await storage.keptBytes(facts.key) });
    }
    this.notify(null);
  }

  async refresh(key) {
    const facts = await storage.meta(key);
    if (facts) this.items.set(key, facts);
    else this.items.delete(key);
    this.live.delete(key);
    this.notify(key);
  }

  async save(facts) {
    this.items.set(facts.key, facts);
    await storage.saveMeta(facts);
    this.notify(facts.key);
    return facts;
  }

  get(key) {
    return this.items.get(key) || null;
  }

  /** Every kept item, the newest first. */
  list() {
    return [...this.items.values()].sort((a, b) => (b.keptAt || 0) - (a.keptAt || 0));
  }

  /** Bytes kept of `key` now (while it is fetched, as they arrive). */
  bytes(key) {
    return this.live.get(key) ?? this.items.get(key)?.bytes ?? 0;
  }

  /** Where the player gets a kept item: from the service worker, once all of it is kept. */
  playableURL(key) {
    const facts = this.items.get(key);
    return facts?.state === "done" && navigator.serviceWorker?.controller ? `/kept/${key}` : null;
  }

  /** What the browser lets this app store, and how much it uses: {usage, quota} (bytes) or null. */
  async estimate() {
    try {
      return await navigator.storage.estimate();
    } catch {
      return null;
    }
  }

  /**
   * Keeps an item: `item` is its facts but the state ({key, kind, id, title, ..., source, total
   * when known}). Throws a QuotaError when the browser says there is no room.
   */
  async keep(item) {
    // Asked with each keep (answered at once after the first): a browser that grants it keeps
    // these when it runs short of space (Chromium decides by itself, Firefox asks the user).
    navigator.storage?.persist?.().catch(() => {});
    const facts = await this.save({ bytes: 0, etag: null, contentType: null, ...this.items.get(item.key), ...item, state: "fetching", error: null, keptAt: Date.now() });
    return this.start(facts);
  }

  async resume(key) {
    const facts = this.items.get(key);
    if (!facts || facts.state === "done" || this.controllers.has(key)) return;
    await this.start(await this.save({ ...facts, state: "fetching", error: null }));
  }

  async start(facts) {
    const kept = await storage.keptBytes(facts.key);
    try {
      await this.checkRoom(facts, kept);
      const registration = await this.registration();
      if (registration?.backgroundFetch) await this.startBackground(registration, facts, kept);
      else await this.fetchInto(facts, kept);
    } catch (error) {
      if (!this.items.has(facts.key)) return; // removed meanwhile
      await this.save({ ...this.items.get(facts.key), state: "failed", error: isQuota(error) ? "quota" : error.code || "network", bytes: await storage.keptBytes(facts.key) });
      if (isQuota(error)) throw error instanceof QuotaError ? error : new QuotaError(null);
    }
  }

  /** Our own check before the browser's: the rest of the item must fit in what the browser allows. */
  async checkRoom(facts, kept) {
    const room = await this.estimate();
    if (!room || !facts.total || !Number.isFinite(room.quota)) return;
    const needed = facts.total - kept;
    if (needed > room.quota - room.usage) throw new QuotaError(needed);
  }

  async registration() {
    try {
      return navigator.serviceWorker?.controller ? await navigator.serviceWorker.ready : null;
    } catch {
      return null;
    }
  }

  // MARK: Background Fetch

  /**
   * The rest of the item in one Background Fetch (with Range from what is kept). The worker
   * writes it when it succeeds (backgroundfetchsuccess in sw.js): Background Fetch hands over a
   * response only then, so a pause (an abort) keeps the bytes kept before, not those since.
   */
  async startBackground(registration, facts, kept) {
    const headers = kept > 0 ? { Range: `bytes=${kept}-` } : {};
    const request = new Request(facts.source, { headers, credentials: "same-origin" });
    // downloadTotal must not be less than what arrives (the fetch fails past it): 0 when unsure.
    const downloadTotal = facts.exactSize && facts.total ? facts.total - kept : 0;
    await this.save({ ...facts, via: "background", bytes: kept });
    const fetch = await registration.backgroundFetch.fetch(BACKGROUND + facts.key, [request], {
      title: facts.title,
      icons: [{ src: "/img/icon-192.png", sizes: "192x192", type: "image/png" }],
      downloadTotal,
    });
    this.follow(fetch, facts.key, kept);
  }

  /** A Background Fetch still going (after a reload, too): its progress shows. → whether there is one. */
  async backgroundFetch(key) {
    const registration = await this.registration();
    const fetch = await registration?.backgroundFetch?.get(BACKGROUND + key);
    if (!fetch) return false;
    this.follow(fetch, key, this.items.get(key)?.bytes || 0);
    return true;
  }

  follow(fetch, key, kept) {
    fetch.addEventListener("progress", () => {
      this.live.set(key, kept + fetch.downloaded);
      this.notify(key);
    });
  }

  // MARK: Plain fetch

  /** Fetches the rest of the item here, from the bytes kept on (`Range`), writing as it arrives. */
  async fetchInto(facts, kept) {
    const controller = new AbortController();
    this.controllers.set(facts.key, controller);
    let current = { ...facts, via: "fetch", bytes: kept };
    try {
      const response = await fetch(facts.source, {
        headers: kept > 0 ? { Range: `bytes=${kept}-` } : {},
        signal: controller.signal,
        credentials: "same-origin",
        cache: "no-store",
      });
      const etag = response.headers.get("ETag");
      if (response.status === 416 && kept > 0 && kept === facts.total) {
        await this.save({ ...current, state: "done" });
        return;
      }
      if (response.status !== 200 && response.status !== 206) throw Object.assign(new Error(`HTTP ${response.status}`), { code: "http" });
      const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get("Content-Range") || "");
      // The rest of the same file, or the whole file again (then what was kept goes).
      const resumed = response.status === 206 && range && Number(range[1]) === kept && (!facts.etag || !etag || etag === facts.etag);
      if (response.status === 206 && !resumed) {
        controller.abort();
        await storage.clear(facts.key, { keepMeta: true });
        this.controllers.delete(facts.key);
        await this.fetchInto(await this.save({ ...current, bytes: 0, etag: null }), 0);
        return;
      }
      if (!resumed && kept > 0) await storage.clear(facts.key, { keepMeta: true });
      const from = resumed ? kept : 0;
      const total = resumed ? Number(range[2]) || null : Number(response.headers.get("Content-Length")) || null;
      current = await this.save({ ...current, etag, total: total ?? facts.total, contentType: response.headers.get("Content-Type"), bytes: from });
      const bytes = await storage.write(facts.key, response, from, (at) => {
        this.live.set(facts.key, at);
        this.notify(facts.key);
      });
      const whole = !total || bytes >= total;
      await this.save({ ...current, bytes, total: total || bytes, state: whole ? "done" : "failed", error: whole ? null : "network" });
    } catch (error) {
      const bytes = await storage.keptBytes(facts.key);
      if (isAbort(error)) {
        // Paused; or removed, and then the last chunk just written goes too.
        if (this.items.has(facts.key)) await this.save({ ...this.items.get(facts.key), bytes, state: "paused" });
        else await storage.clear(facts.key);
        return;
      }
      throw error;
    } finally {
      if (this.controllers.get(facts.key) === controller) this.controllers.delete(facts.key);
      this.live.delete(facts.key);
    }
  }

  // MARK: Pause, remove

  async pause(key) {
    const facts = this.items.get(key);
    if (facts?.state !== "fetching") return;
    const controller = this.controllers.get(key);
    if (controller) {
      controller.abort(); // fetchInto writes what arrived and says "paused"
      return;
    }
    await this.save({ ...facts, state: "paused" });
    const registration = await this.registration();
    await (await registration?.backgroundFetch?.get(BACKGROUND + key))?.abort();
  }

  /** Stops fetching it and frees its storage. */
  async remove(key) {
    this.controllers.get(key)?.abort();
    const registration = await this.registration();
    await (await registration?.backgroundFetch?.get(BACKGROUND + key))?.abort().catch(() => {});
    this.items.delete(key);
    this.live.delete(key);
    await storage.clear(key);
    this.notify(key);
  }
}

export const keeper = new Keeper();
