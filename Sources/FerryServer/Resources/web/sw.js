// Ferry's service worker (scope: the whole app). It keeps the app's shell for offline use, answers
// the player from what is kept on this device, and finishes a Background Fetch of something kept.
//
// - The shell: every file /shell.json lists (the daemon makes it from the files it serves, with a
//   version that changes when any of them does), kept in the cache "ferry-shell-<version>", only
//   one at a time. Requests for them go to the network first, as without a worker (the daemon's
//   files are always the current ones), and to the cache when the network fails. Each visit
//   online checks the version and keeps the new shell whole when it changed.
// - The API (/v1/...) is never answered or cached here.
// - "/kept/<key>" (a kept episode or song) is answered from this device's storage, with Range (keptStore
//   in js/kept-store.js): the player asks for it only once the item is all kept.

importScripts("/js/kept-store.js");

const SHELL = "ferry-shell-";
const SHELL_PATH = /^\/(?:$|index\.html$|manifest\.webmanifest$|(?:css|js|i18n|img)\/)/;
// A visit online checks the shell's version at most this often.
const CHECK_EVERY_MS = 60_000;
let checkedAt = 0;

self.addEventListener("install", (event) => {
  event.waitUntil(keepShell().then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});

// A page that started while this worker was installing asks to be claimed (js/offline.js).
self.addEventListener("message", (event) => {
  if (event.data?.type === "claim") event.waitUntil(self.clients.claim());
});

/** Keeps the shell /shell.json lists, unless that version is kept already; then drops the others. */
async function keepShell() {
  const response = await fetch("/shell.json", { cache: "no-store" });
  if (!response.ok) throw new Error(`/shell.json: ${response.status}`);
  const { version, files } = await response.json();
  const name = SHELL + version;
  if (!(await caches.has(name))) {
    const cache = await caches.open(name);
    try {
      await cache.addAll(files.map((path) => new Request(path, { cache: "no-cache" })));
    } catch (error) {
      await caches.delete(name); // half a shell is none
      throw error;
    }
  }
  for (const old of await caches.keys()) {
    if (old.startsWith(SHELL) && old !== name) await caches.delete(old);
  }
}

async function shellCache() {
  const name = (await caches.keys()).find((key) => key.startsWith(SHELL));
  return name ? caches.open(name) : null;
}

/** The network's answer; the kept copy (of `path`) when the network fails. */
async function networkFirst(request, path) {
  try {
    return await fetch(request);
  } catch (error) {
    const kept = await (await shellCache())?.match(path);
    if (kept) return kept;
    throw error;
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== location.origin || request.method !== "GET") return;
  if (url.pathname.startsWith("/kept/")) {
    event.respondWith(self.keptStore.respond(decodeURIComponent(url.pathname.slice("/kept/".length)), request));
    return;
  }
  if (request.mode === "navigate") {
    if (url.pathname !== "/" && url.pathname !== "/index.html") return; // the login link, a file
    event.respondWith(networkFirst(request, "/index.html"));
    if (navigator.onLine && Date.now() - checkedAt > CHECK_EVERY_MS) {
      checkedAt = Date.now();
      event.waitUntil(keepShell().catch(() => {}));
    }
    return;
  }
  if (SHELL_PATH.test(url.pathname)) event.respondWith(networkFirst(request, url.pathname));
});

// MARK: Background Fetch (Chromium): a kept item's bytes, fetched by the browser itself

const keyOf = (registration) => registration.id.replace(/^keep:/, "");

/** Tells the app's pages that a kept item changed. */
async function announce(key) {
  for (const client of await self.clients.matchAll({ type: "window" })) client.postMessage({ type: "kept", key });
}

async function update(key, change) {
  const facts = await self.keptStore.meta(key);
  if (facts) await self.keptStore.saveMeta({ ...facts, ...change });
  await announce(key);
}

self.addEventListener("backgroundfetchsuccess", (event) => {
  const key = keyOf(event.registration);
  event.waitUntil(
    (async () => {
      const facts = await self.keptStore.meta(key);
      const [record] = await event.registration.matchAll();
      if (!facts || !record) return;
      try {
        const response = await record.responseReady;
        // A 200 to a Range is the whole file again: it replaces what was kept.
        const from = response.status === 206 ? Number(/^bytes (\d+)-/.exec(response.headers.get("Content-Range") || "")?.[1] ?? 0) : 0;
        if (response.status !== 200 && response.status !== 206) throw Object.assign(new Error(`HTTP ${response.status}`), { code: "http" });
        if (from === 0) await self.keptStore.clear(key, { keepMeta: true });
        const total = Number(/\/(\d+)$/.exec(response.headers.get("Content-Range") || "")?.[1]) || Number(response.headers.get("Content-Length")) + from || facts.total;
        const bytes = await self.keptStore.write(key, response, from);
        const done = !total || bytes >= total;
        await update(key, { state: done ? "done" : "failed", error: done ? null : "network", bytes, total: total || bytes, contentType: response.headers.get("Content-Type") || facts.contentType });
        await event.updateUI({ title: facts.title });
      } catch (error) {
        await update(key, { state: "failed", error: error?.name === "QuotaExceededError" ? "quota" : error?.code || "network", bytes: await self.keptStore.keptBytes(key) });
      }
    })(),
  );
});

self.addEventListener("backgroundfetchfail", (event) => {
  const reason = event.registration.failureReason;
  event.waitUntil(update(keyOf(event.registration), { state: "failed", error: reason === "quota-exceeded" ? "quota" : reason === "bad-status" ? "http" : "network" }));
});

// A pause in the app, or Cancel in the system's notification: what was kept before stays, and
// the item waits to be resumed (Background Fetch hands over nothing of an aborted fetch).
self.addEventListener("backgroundfetchabort", (event) => {
  event.waitUntil(
    (async () => {
      // Resumed already (a new fetch under the same id): that one's state stands.
      if (await self.registration.backgroundFetch.get(event.registration.id)) return;
      await update(keyOf(event.registration), { state: "paused" });
    })(),
  );
});

self.addEventListener("backgroundfetchclick", (event) => {
  event.waitUntil(self.clients.openWindow("/#/device"));
});
