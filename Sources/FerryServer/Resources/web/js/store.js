// Every transfer the daemon knows, by id: the single source of truth that rows render from. A
// row of the search results, a podcast episode or a downloads entry only remembers which
// transfer it shows; its state (progress, paused, finished) lives here, so re-rendering or
// scrolling a list never loses it.

import { api } from "./api.js";

const ACTIVE = new Set(["queued", "running", "waiting"]);

/** How many transfers one listing reads: the newest first, more as a list scrolls. */
export const PAGE_SIZE = 100;

export class TransferStore {
  constructor() {
    this.transfers = new Map();
    this.listeners = new Set();
    this.pendingFetches = new Map();
    /** The journal position the last listing reflects. */
    this.lastEventSeq = 0;
    /**
     * How many transfers the daemon has in each state (GET /v1/status), including those no
     * listing has read yet: the store holds only the pages read so far. Null until first read.
     */
    this.counts = null;
    this.countsTimer = null;
    this.countsRunning = false;
    this.countsAgain = false;
  }

  get(id) {
    return this.transfers.get(Number(id)) || null;
  }

  all() {
    return [...this.transfers.values()];
  }

  /** Queued, running and waiting transfers: the daemon's count once read, else the store's. */
  activeCount() {
    if (this.counts) return this.count([...ACTIVE]);
    let count = 0;
    for (const t of this.transfers.values()) if (ACTIVE.has(t.state)) count += 1;
    return count;
  }

  /** The daemon's count of transfers in these states (0 before the counts are read). */
  count(states) {
    if (!this.counts) return 0;
    return states.reduce((sum, state) => sum + (Number(this.counts[state]) || 0), 0);
  }

  /** Reads the counts again soon: a burst of events causes one request. */
  refreshCounts(delay = 150) {
    if (this.countsRunning) {
      this.countsAgain = true;
      return;
    }
    if (this.countsTimer === null) this.countsTimer = setTimeout(() => this.readCounts(), delay);
  }

  async readCounts() {
    this.countsTimer = null;
    this.countsRunning = true;
    try {
      const status = await api.status();
      if (status && typeof status.counts === "object" && status.counts !== null) {
        this.counts = { ...status.counts };
        this.emit({ type: "counts" });
      }
    } catch {
      // Offline or signed out: the connection banner or the login screen says so.
    } finally {
      this.countsRunning = false;
      if (this.countsAgain) {
        this.countsAgain = false;
        this.refreshCounts();
      }
    }
  }

  /** listener({type: "reset" | "counts"}) or listener({type: "change" | "remove", id}); returns unsubscribe. */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(change) {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        console.error("transfer listener failed", error);
      }
    }
  }

  /**
   * Re-reads the newest transfers, one page of them, and the counts (on load and after every
   * (re)connection of the event stream). Older transfers a list has read stay: the stream
   * replays every event the page missed, which keeps them true.
   */
  async resync() {
    this.refreshCounts(0);
    const list = await api.transfers.list({ limit: PAGE_SIZE, order: "desc" });
    const listedAt = list.lastEventSeq ?? 0;
    const ids = list.transfers.map((t) => t.id);
    if (ids.length || !list.nextCursor) {
      // Within the ids the page covers, a transfer it lacks was forgotten meanwhile.
      const newest = ids.length ? Math.max(...ids) : -Infinity;
      const oldest = list.nextCursor ? Math.min(...ids) : -Infinity;
      const listed = new Set(ids);
      for (const [id, known] of this.transfers) {
        if (!listed.has(id) && id >= oldest && (id <= newest || !ids.length) && !(known.seq > listedAt)) this.transfers.delete(id);
      }
    }
    this.merge(list, { quiet: true });
    this.lastEventSeq = Math.max(this.lastEventSeq, listedAt);
    this.emit({ type: "reset" });
    return list;
  }

  /**
   * Takes the transfers of a listing (a TransferList): a transfer an event newer than the
   * listing changed keeps what the event said, and live progress never moves back.
   */
  merge(list, { quiet = false } = {}) {
    const listedAt = list.lastEventSeq ?? 0;
    for (const t of list.transfers || []) {
      const known = this.transfers.get(t.id);
      if (known && known.seq > listedAt) continue; // an event newer than the listing
      const next = known && this.isStale(t, known) ? { ...t, bytesReceived: known.bytesReceived } : { ...t };
      if (known?.seq) next.seq = known.seq;
      this.transfers.set(t.id, next);
      if (!quiet) this.emit({ type: "change", id: t.id });
    }
  }

  /** A snapshot of a running transfer read before newer live progress arrived. */
  isStale(snapshot, known) {
    return snapshot.state === known.state && ACTIVE.has(snapshot.state) && snapshot.bytesReceived < known.bytesReceived;
  }

  /**
   * Takes a transfer the API returned (after a command, or fetched). Its byte count may be the
   * journal's last checkpoint, behind the live progress already shown: progress never moves
   * backwards here (a `restarted` event, applied by `apply`, is what resets it).
   */
  upsert(transfer) {
    if (!transfer || typeof transfer.id !== "number") return;
    const known = this.transfers.get(transfer.id);
    const behind = known && transfer.state !== "cancelled" && transfer.state !== "completed" && known.state !== "cancelled" && transfer.bytesReceived < known.bytesReceived && transfer.totalBytes === known.totalBytes;
    const next = behind ? { ...transfer, bytesReceived: known.bytesReceived } : { ...transfer };
    if (known?.seq) next.seq = known.seq;
    if (next.state !== "running") {
      delete next.bytesPerSecond;
      delete next.etaSeconds;
    }
    this.transfers.set(transfer.id, next);
    this.emit({ type: "change", id: transfer.id });
  }

  /**
   * Takes a transfer embedded in another answer (a search result, an episode) unless the store
   * knows better; but whether a completed download's file is still there is the answer's to say
   * (no event tells when a file is deleted or moved).
   */
  adopt(transfer) {
    if (!transfer) return;
    const known = this.transfers.get(transfer.id);
    if (!known) this.upsert(transfer);
    else if (known.state === "completed" && transfer.state === "completed" && Boolean(known.fileMissing) !== Boolean(transfer.fileMissing)) this.upsert(transfer);
  }

  remove(id) {
    if (this.transfers.delete(Number(id))) this.emit({ type: "remove", id: Number(id) });
  }

  /** Applies one TransferEvent from the event stream. */
  apply(event) {
    const id = event.transferId;
    // Every journaled change but progress may move a transfer from one state to another.
    if (event.kind !== "progress" && event.kind !== "mirrorDropped") this.refreshCounts();
    if (event.kind === "removed") {
      this.remove(id);
      return;
    }
    const known = this.transfers.get(id);
    if (!known) {
      // A transfer this page has not seen yet (created by the CLI, auto-download...).
      this.refetch(id);
      return;
    }
    const t = { ...known };
    // A journaled event carries the bytes made durable, which lag the live progress shown (a
    // checkpoint's fsync, or a worker's last checkpoint that a slow disk delays past a pause):
    // only a resume or a restart, which start again from what is on disk, moves the count back.
    const bytes = event.bytesReceived;
    const fromDisk = event.kind === "resumed" || event.kind === "restarted" || event.totalBytes !== t.totalBytes;
    if (typeof bytes === "number" && (!(bytes < t.bytesReceived) || fromDisk)) t.bytesReceived = bytes;
    if (typeof event.totalBytes === "number") t.totalBytes = event.totalBytes;
    switch (event.kind) {
      case "progress":
        if (typeof event.connections === "number") t.connections = event.connections;
        if (Array.isArray(event.ranges)) t.ranges = event.ranges;
        if (typeof event.bytesPerSecond === "number") t.bytesPerSecond = event.bytesPerSecond;
        if (typeof event.etaSeconds === "number") t.etaSeconds = event.etaSeconds;
        else if (event.seq === undefined) delete t.etaSeconds;
        if (t.state === "queued" || t.state === "waiting") t.state = "running";
        break;
      case "created":
        t.state = "queued";
        break;
      case "started":
      case "resumed":
      case "restarted":
        t.state = "running";
        t.error = null;
        if (event.kind === "restarted") delete t.ranges;
        if (event.kind === "restarted" && typeof event.bytesReceived !== "number") t.bytesReceived = 0;
        break;
      case "paused":
        t.state = "paused";
        break;
      case "waiting":
        t.state = "waiting";
        t.error = event.error || t.error;
        t.retryAt = event.retryAt;
        t.waitReason = event.reason || t.waitReason;
        break;
      case "completed":
        t.state = "completed";
        t.path = event.path || t.path;
        t.sha256 = event.sha256 || t.sha256;
        t.completedAt = event.date;
        if (typeof t.totalBytes === "number") t.bytesReceived = t.totalBytes;
        break;
      case "failed":
        t.state = "failed";
        t.error = event.error || t.error;
        break;
      case "cancelled":
        t.state = "cancelled";
        break;
      default:
        break;
    }
    if (t.state !== "running") {
      delete t.bytesPerSecond;
      delete t.etaSeconds;
      delete t.connections;
    }
    // The newest journal event applied (not an API field): a listing older than it is not trusted.
    if (typeof event.seq === "number") t.seq = Math.max(t.seq || 0, event.seq);
    this.transfers.set(id, t);
    this.emit({ type: "change", id });
    // Journaled state changes: read the whole transfer (path, size, dates) to be exact.
    if (event.kind !== "progress") this.refetch(id);
  }

  /**
   * Reads one transfer again, soon: several events in a row cause one request, and an answer
   * that may predate an event that arrived while it was on its way is read once more.
   */
  refetch(id) {
    let entry = this.pendingFetches.get(id);
    if (!entry) {
      entry = { timer: null, running: false, again: false };
      this.pendingFetches.set(id, entry);
    }
    if (entry.running) {
      entry.again = true;
      return;
    }
    if (entry.timer === null) entry.timer = setTimeout(() => this.runFetch(id, entry), 120);
  }

  async runFetch(id, entry) {
    entry.timer = null;
    entry.running = true;
    try {
      const transfer = await api.transfers.get(id);
      if (!entry.again) this.upsert(transfer);
    } catch (error) {
      if (error.status === 404 && !entry.again) this.remove(id);
    } finally {
      entry.running = false;
      if (entry.again) {
        entry.again = false;
        entry.timer = setTimeout(() => this.runFetch(id, entry), 120);
      } else {
        this.pendingFetches.delete(id);
      }
    }
  }
}

export const store = new TransferStore();

/** Which transfer downloads each catalog track (from search results and preview downloads). */
export const trackTransfers = new Map();

/**
 * What a transfer downloads, once a view has seen it: {episodeId, podcastId, speed, playback} or
 * {trackId, playback}. The Downloads view plays through it, so the player saves where the
 * listener is there too.
 */
export const transferMedia = new Map();
