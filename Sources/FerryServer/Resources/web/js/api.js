// The daemon's HTTP API (docs/openapi.yaml), with the session cookie. Every failure becomes an
// ApiError whose message is the daemon's own sentence (`{"error": {"code", "message"}}`), or a
// plain explanation when the daemon cannot be reached.

import { t } from "./i18n.js";

export class ApiError extends Error {
  constructor(message, { code = "error", status = 0 } = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
  }
}

export const SESSION = "web";

const unauthorizedListeners = new Set();

/** Called whenever the daemon answers 401 (no or expired session cookie). */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function isAbort(error) {
  return error?.name === "AbortError";
}

/** A search replaced by a newer one (409 `cancelled`), or a fetch we aborted ourselves. */
export function isSuperseded(error) {
  return isAbort(error) || (error instanceof ApiError && error.code === "cancelled");
}

/**
 * request("/transfers", {method: "POST", json: {...}}) → the parsed JSON, or null for 204.
 * `body` sends raw text (OPML); `signal` aborts; `keepalive` outlives the page (pagehide).
 */
export async function request(path, { method = "GET", json, body, contentType, signal, raw = false, keepalive = false } = {}) {
  const headers = { Accept: "application/json" };
  let payload = body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(json);
  } else if (body !== undefined && contentType) {
    headers["Content-Type"] = contentType;
  }
  let response;
  try {
    response = await fetch(`/v1${path}`, { method, headers, body: payload, signal, credentials: "same-origin", cache: "no-store", keepalive });
  } catch (error) {
    if (isAbort(error)) throw error;
    throw new ApiError(t("error.network"), { code: "network" });
  }
  if (response.status === 401) {
    for (const listener of unauthorizedListeners) listener();
  }
  if (!response.ok) throw await errorFrom(response);
  if (raw) return response;
  if (response.status === 204) return null;
  const type = response.headers.get("Content-Type") || "";
  return type.includes("json") ? response.json() : response.text();
}

async function errorFrom(response) {
  let info = null;
  try {
    info = (await response.json())?.error;
  } catch {
    // Not JSON: a proxy or something else answered.
  }
  if (info && typeof info.message === "string") {
    return new ApiError(info.message, { code: info.code || "error", status: response.status });
  }
  const reason = response.statusText ? ` ${response.statusText}` : "";
  return new ApiError(t("error.http", { status: `${response.status}${reason}` }), { code: "http", status: response.status });
}

const post = (path, json) => request(path, { method: "POST", json: json ?? {} });
// Percent-encoded (a space is %20): the daemon does not read "+" as a space, as forms do.
const q = (params) => {
  const pairs = Object.entries(params)
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  return pairs.length ? `?${pairs.join("&")}` : "";
};

export const api = {
  status: () => request("/status"),

  transfers: {
    /** {limit, cursor, order: "desc", state: "completed" | "queued,running" | "all", session} → {transfers, lastEventSeq, nextCursor?} */
    list: (params = {}) => request(`/transfers${q(params)}`),
    get: (id) => request(`/transfers/${id}`),
    create: (urls, extra = {}) => post("/transfers", { urls, session: SESSION, ...extra }),
    pause: (id) => post(`/transfers/${id}/pause`),
    resume: (id) => post(`/transfers/${id}/resume`),
    cancel: (id) => post(`/transfers/${id}/cancel`),
    /** {priority: "high" | "normal" | "low"} or {position: "first" | "last"} → the transfer. */
    move: (id, change) => request(`/transfers/${id}`, { method: "PATCH", json: change }),
    pauseAll: () => post("/transfers/pause-all"),
    resumeAll: () => post("/transfers/resume-all"),
    /** Forgets every completed and cancelled transfer (their files stay) → {ids}. */
    clearFinished: () => request("/transfers?finished=true", { method: "DELETE" }),
    remove: (id, deleteFile = false) => request(`/transfers/${id}${deleteFile ? "?deleteFile=true" : ""}`, { method: "DELETE" }),
    fileURL: (id, download = false) => `/v1/transfers/${id}/file${download ? "?download=1" : ""}`,
  },

  catalog: {
    search: (term, { media = "music", limit = 50, client, signal } = {}) =>
      request(`/catalog/search${q({ term, media, limit, client })}`, { signal }),
    preview: (trackId) => post("/catalog/previews", { trackId, session: SESSION }),
  },

  transcripts: {
    search: (words, { podcast, limit, signal } = {}) => request(`/transcripts/search${q({ q: words, podcast, limit })}`, { signal }),
  },
  bookmarks: {
    list: () => request("/bookmarks"),
    ofEpisode: (id) => request(`/episodes/${id}/bookmarks`),
    addToEpisode: (id, bookmark) => post(`/episodes/${id}/bookmarks`, bookmark),
    addToTrack: (id, bookmark) => post(`/tracks/${id}/bookmarks`, bookmark),
    setNote: (id, note) => request(`/bookmarks/${id}`, { method: "PATCH", json: { note } }),
    remove: (id) => request(`/bookmarks/${id}`, { method: "DELETE" }),
  },
  podcasts: {
    list: () => request("/podcasts"),
    get: (id, signal) => request(`/podcasts/${id}`, { signal }),
    subscribe: (what) => post("/podcasts", what),
    update: (id, settings) => request(`/podcasts/${id}`, { method: "PATCH", json: settings }),
    unsubscribe: (id) => request(`/podcasts/${id}`, { method: "DELETE" }),
    refresh: (id) => post(`/podcasts/${id}/refresh`),
    refreshAll: () => post("/podcasts/refresh"),
    seen: (id) => post(`/podcasts/${id}/seen`),
    /** Marks every episode played → the podcast's detail. */
    played: (id) => post(`/podcasts/${id}/played`),
    import: (opml) => request("/podcasts/import", { method: "POST", body: opml, contentType: "text/x-opml" }),
    exportURL: "/v1/podcasts/export",
  },

  episodes: {
    download: (id) => post(`/episodes/${id}/download`, { session: SESSION }),
    /** The episode's downloaded file (with or without a transfer), with Range. */
    fileURL: (id) => `/v1/episodes/${id}/file`,
    /** Deletes the downloaded file (its transfer forgotten) → the episode, not downloaded. */
    deleteFile: (id) => request(`/episodes/${id}/file`, { method: "DELETE" }),
    /** The episode from its host through the daemon, before or while it downloads. */
    streamURL: (id) => `/v1/episodes/${id}/stream`,
    /** → {chapters: [{startSeconds, title, imageURL?, url?}]}; 422 when the file is bad. */
    chapters: (id, signal) => request(`/episodes/${id}/chapters`, { signal }),
    /** → {cues: [{startSeconds, endSeconds, speaker?, text}]}; 422 when the file is bad. */
    transcript: (id, signal) => request(`/episodes/${id}/transcript`, { signal }),
  },

  /**
   * Where the listener is: `key` is "episodes/ID" or "tracks/TRACKID"; `update` is
   * {positionSeconds, durationSeconds} and/or {played} → {positionSeconds, played, updatedAt}.
   */
  playback: {
    save: (key, update, { keepalive = false } = {}) => request(`/${key}/playback`, { method: "PUT", json: update, keepalive }),
    /** → the playback, or null when none was saved. */
    get: (key) => request(`/${key}/playback`),
  },

  /** Up Next: {items: [{kind, id, title, subtitle, artworkURL, durationSeconds, playURL, playback}]}. */
  upNext: {
    get: () => request("/up-next"),
    /** Replaces the whole list with `items` ([{kind: "episode" | "track", id}], in order) → the list. */
    set: (items) => request("/up-next", { method: "PUT", json: { items } }),
  },

  /**
   * Playlists, named queues beside Up Next: list → {playlists: [{id, name, count, durationSeconds}]};
   * one → {id, name, items: [as Up Next's]}. A place is a playlist's id or "up-next".
   */
  playlists: {
    list: () => request("/playlists"),
    get: (id) => request(`/playlists/${id}`),
    create: (name, items = []) => post("/playlists", { name, items }),
    rename: (id, name) => request(`/playlists/${id}`, { method: "PATCH", json: { name } }),
    remove: (id) => request(`/playlists/${id}`, { method: "DELETE" }),
    /** Replaces the items ([{kind, id}], in order) → the playlist. */
    set: (id, items) => request(`/playlists/${id}/items`, { method: "PUT", json: { items } }),
    /** Puts {kind, id} at the end → the playlist. */
    add: (id, entry) => post(`/playlists/${id}/items`, entry),
    /** Takes {kind, id} out of `from` and puts it at the end of `to`, in one step. */
    move: (entry, from, to) => post("/playlists/move", { ...entry, from, to }),
  },

  /** Who is signed in: {user?, role: "admin" | "member", via}. */
  me: () => request("/me"),

  /** The daemon-wide transfer options (an admin's): read redacted, changed with {set, clear}. */
  config: {
    get: () => request("/config"),
    update: (set, clear = []) => request("/config", { method: "PATCH", json: { set, clear } }),
  },

  /** The listeners the next start opens ({remote?, aria2Port?, sync?}) and where they answer now. */
  listenerSettings: {
    get: () => request("/listener-settings"),
    save: (settings) => request("/listener-settings", { method: "PUT", json: settings }),
  },

  /** What is wrong with this Ferry ({checks: [{name, status, summary, details, advice?, mended}], fixed}); `fix` mends what is safe (an admin's). */
  doctor: (fix = false) => request("/doctor", { method: fix ? "POST" : "GET" }),

  /** Stops the daemon and starts it again at once, with its settings read anew (an admin's). */
  restart: () => request("/restart", { method: "POST" }),

  /** The running listeners beyond loopback: {urls, certificateFingerprint?, caFingerprint?}; 404 without. */
  remote: () => request("/remote"),

  /** Accounts (an admin's): users with their sessions and tokens. */
  users: {
    list: () => request("/users"),
    add: (name, password, role) => post("/users", { name, password, role }),
    /** {password} and/or {role} → the account. */
    update: (name, change) => request(`/users/${encodeURIComponent(name)}`, { method: "PATCH", json: change }),
    remove: (name) => request(`/users/${encodeURIComponent(name)}`, { method: "DELETE" }),
    /** kind: "sessions" or "tokens" → {credentials: [{id, createdAt, lastUsedAt?, label?, address?, current?}]}. */
    credentials: (name, kind) => request(`/users/${encodeURIComponent(name)}/${kind}`),
    /** Ends one (id) or, without an id, every one but the caller's own. */
    end: (name, kind, id) => request(`/users/${encodeURIComponent(name)}/${kind}${id ? `/${encodeURIComponent(id)}` : ""}`, { method: "DELETE" }),
    makeToken: (name, label) => post(`/users/${encodeURIComponent(name)}/tokens`, { label }),
  },

  /** A user's password login; the daemon sets the session cookie. */
  logIn: (name, password) => request("/session", { method: "POST", json: { name, password } }),

  /** Ends the session on the server (a user's) and clears this machine's login cookie. */
  logout: async () => {
    await fetch("/v1/session", { method: "DELETE", credentials: "same-origin" }).catch(() => {});
    return fetch("/logout", { method: "POST", credentials: "same-origin" });
  },
};
