// The daemon's Server-Sent Events (GET /v1/events: every session's transfers).
//
// EventSource reconnects by itself after a dropped connection and sends Last-Event-ID, so the
// daemon replays every journaled event the page missed (a restart of the daemon included). When
// the browser gives up (the daemon answered with an error status), this module opens a new
// stream with `?after=<last id>` after a short backoff. Every (re)opening calls `onOpen`, which
// re-reads the transfers: whatever happened while the page was away shows its true state.

export const EVENT_KINDS = ["created", "started", "progress", "paused", "resumed", "restarted", "mirrorDropped", "waiting", "completed", "failed", "cancelled", "removed"];

export class EventStream {
  /**
   * @param {object} handlers
   *   onEvent(event): a parsed TransferEvent;
   *   onOpen(): the stream is (re)connected;
   *   onResync(): events after the last one seen were pruned: re-read the state;
   *   onStatus(status): "connecting" | "open" | "reconnecting" | "stopped";
   *   probe(): resolves if the daemon answers and the session is valid (used before reopening).
   */
  constructor({ onEvent, onOpen, onResync, onStatus, probe, url = "/v1/events" }) {
    this.onEvent = onEvent;
    this.onOpen = onOpen;
    this.onResync = onResync;
    this.onStatus = onStatus;
    this.probe = probe;
    this.url = url;
    this.source = null;
    this.lastId = null;
    this.status = "stopped";
    this.everOpened = false;
    this.retryDelay = 1000;
    this.retryTimer = null;
    this.handleEvent = this.handleEvent.bind(this);
    this.wake = () => {
      if (this.status === "reconnecting" && this.retryTimer !== null) {
        clearTimeout(this.retryTimer);
        this.retryTimer = null;
        this.reopen();
      }
    };
  }

  start() {
    if (this.source) return;
    window.addEventListener("online", this.wake);
    document.addEventListener("visibilitychange", this.wake);
    this.setStatus(this.everOpened ? "reconnecting" : "connecting");
    this.open();
  }

  stop() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    window.removeEventListener("online", this.wake);
    document.removeEventListener("visibilitychange", this.wake);
    this.close();
    this.setStatus("stopped");
  }

  open() {
    const url = this.lastId !== null ? `${this.url}?after=${encodeURIComponent(this.lastId)}` : this.url;
    const source = new EventSource(url, { withCredentials: true });
    this.source = source;
    for (const kind of EVENT_KINDS) source.addEventListener(kind, this.handleEvent);
    // The daemon pruned events after our last one (a page away longer than its window): what
    // the replay lacks, the lists have.
    source.addEventListener("resync", () => {
      if (source === this.source) this.onResync?.();
    });
    source.addEventListener("open", () => {
      if (source !== this.source) return;
      this.retryDelay = 1000;
      this.everOpened = true;
      this.setStatus("open");
      this.onOpen?.();
    });
    source.addEventListener("error", () => {
      if (source !== this.source) return;
      if (source.readyState === EventSource.CONNECTING) {
        // The browser retries by itself, with Last-Event-ID.
        this.setStatus("reconnecting");
      } else {
        // CLOSED: the browser gave up (an error status); we retry with ?after=.
        this.close();
        this.setStatus("reconnecting");
        this.scheduleReopen();
      }
    });
  }

  close() {
    if (!this.source) return;
    for (const kind of EVENT_KINDS) this.source.removeEventListener(kind, this.handleEvent);
    this.source.close();
    this.source = null;
  }

  scheduleReopen() {
    clearTimeout(this.retryTimer);
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryDelay * 2, 10000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.reopen();
    }, delay);
  }

  async reopen() {
    if (this.status === "stopped" || this.source) return;
    try {
      await this.probe?.();
    } catch (error) {
      // Unauthorized: the app shows the login screen and stops us. Otherwise: try again later.
      if (this.status !== "stopped") this.scheduleReopen();
      return;
    }
    if (this.status !== "stopped" && !this.source) this.open();
  }

  handleEvent(message) {
    if (message.lastEventId) this.lastId = message.lastEventId;
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    this.onEvent?.(event);
  }

  setStatus(status) {
    if (status === this.status) return;
    this.status = status;
    this.onStatus?.(status);
  }
}
