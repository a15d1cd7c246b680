// The bytes and facts of what is kept on this device ("Keep on this device"), shared by the page
// (keep.js) and the service worker (sw.js, which answers the player from them). A classic script
// that defines `self.keptStore`: a module service worker is not in every browser, so sw.js loads
// this with importScripts and the page imports it for its side effect.
//
// Where: the origin private file system (OPFS), a folder per item under "kept/". An item's key is
// its playback key ("episodes/12", "tracks/345"); its folder holds "meta.json" (its facts) and its
// bytes in chunks of at most 2 MiB ("@<offset>"), each written once.
// Why chunks, not one file appended to: a FileSystemWritableFileStream commits only when it is
// closed and copies the whole file to reopen it (keepExistingData), so committing as bytes arrive
// would copy everything kept so far each time; a sync access handle writes in place but only in a
// dedicated worker. A chunk written once costs nothing more; a closed tab loses at most the chunk
// being filled; a pause writes what it has; resuming asks for `Range: bytes=<kept>-`.
// Why OPFS, not Cache Storage: removing a folder frees its space at once; Chromium keeps counting
// a deleted cache against the quota (measured: 3 MB still "used" after caches.delete()).
(() => {
  const CHUNK = 2 * 1024 * 1024;
  const folderName = (key) => encodeURIComponent(key);
  const chunkName = (offset) => `@${String(offset).padStart(15, "0")}`;
  const missing = (error) => error?.name === "NotFoundError";

  async function root() {
    return (await navigator.storage.getDirectory()).getDirectoryHandle("kept", { create: true });
  }

  /** An item's folder; null when there is none (and `create` is false). */
  async function folder(key, create = false) {
    try {
      return await (await root()).getDirectoryHandle(folderName(key), { create });
    } catch (error) {
      if (missing(error)) return null;
      throw error;
    }
  }

  async function writeFile(dir, name, data) {
    const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
    try {
      await writable.write(data);
      await writable.close();
    } catch (error) {
      await writable.abort().catch(() => {});
      throw error;
    }
  }

  /** The facts of one item, or null. */
  async function meta(key) {
    try {
      const dir = await folder(key);
      return dir ? JSON.parse(await (await (await dir.getFileHandle("meta.json")).getFile()).text()) : null;
    } catch (error) {
      if (missing(error) || error instanceof SyntaxError) return null;
      throw error;
    }
  }

  async function saveMeta(facts) {
    await writeFile(await folder(facts.key, true), "meta.json", JSON.stringify(facts));
    return facts;
  }

  /** Every item's facts. */
  async function all() {
    const keys = [];
    for await (const [name, handle] of (await root()).entries()) if (handle.kind === "directory") keys.push(decodeURIComponent(name));
    return (await Promise.all(keys.map(meta))).filter(Boolean);
  }

  /** An item's chunks in order: [{offset, file}]. */
  async function chunks(key) {
    const dir = await folder(key);
    if (!dir) return [];
    const found = [];
    for await (const [name, handle] of dir.entries()) {
      if (handle.kind === "file" && name.startsWith("@")) found.push({ offset: Number(name.slice(1)), file: await handle.getFile() });
    }
    return found.sort((a, b) => a.offset - b.offset);
  }

  /** How many bytes from the start are kept (the chunks follow each other). */
  async function keptBytes(key) {
    let end = 0;
    for (const chunk of await chunks(key)) {
      if (chunk.offset !== end) break;
      end += chunk.file.size;
    }
    return end;
  }

  /**
   * Writes `response`'s body as the bytes from `offset` on, chunk by chunk; `progress(bytesKept)`
   * after each piece read. When the read stops (a pause aborts it, the network fails), what
   * arrived is written before the error goes on. → the bytes kept.
   */
  async function write(key, response, offset, progress = () => {}) {
    const dir = await folder(key, true);
    const reader = response.body.getReader();
    let at = offset;
    let parts = [];
    let size = 0;
    const flush = async () => {
      const chunk = new Blob(parts);
      parts = [];
      size = 0;
      await writeFile(dir, chunkName(at), chunk);
      at += chunk.size;
    };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        size += value.byteLength;
        if (size >= CHUNK) await flush();
        progress(at + size);
      }
    } finally {
      if (size > 0) await flush();
    }
    return at;
  }

  /** Forgets an item (its folder), or with `keepMeta` only its bytes. */
  async function clear(key, { keepMeta = false } = {}) {
    try {
      if (!keepMeta) {
        await (await root()).removeEntry(folderName(key), { recursive: true });
        return;
      }
      const dir = await folder(key);
      for (const { offset } of await chunks(key)) await dir.removeEntry(chunkName(offset));
    } catch (error) {
      if (!missing(error)) throw error;
    }
  }

  /** One range of `Range: bytes=a-b | a- | -n` within `size`: {start, end}, null when it cannot be met, undefined without one. */
  function byteRange(header, size) {
    if (!header) return undefined;
    const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
    if (!match || (!match[1] && !match[2])) return null;
    if (!match[1]) {
      const suffix = Number(match[2]);
      return suffix > 0 && size > 0 ? { start: Math.max(0, size - suffix), end: size - 1 } : null;
    }
    const start = Number(match[1]);
    const end = match[2] ? Math.min(Number(match[2]), size - 1) : size - 1;
    return start < size && end >= start ? { start, end } : null;
  }

  /**
   * The answer to a request for "/kept/<key>": the whole item, one range (206) or 416; 404 until
   * it is all kept. A Blob of the chunks' Files is lazy: nothing is read until the player asks.
   */
  async function respond(key, request) {
    const facts = await meta(key);
    if (!facts || facts.state !== "done") return new Response(null, { status: 404 });
    const whole = new Blob((await chunks(key)).map(({ file }) => file), { type: facts.contentType || "application/octet-stream" });
    const headers = { "Content-Type": whole.type, "Accept-Ranges": "bytes", "Cache-Control": "no-store" };
    const range = byteRange(request.headers.get("Range"), whole.size);
    if (range === undefined) return new Response(whole, { status: 200, headers: { ...headers, "Content-Length": String(whole.size) } });
    if (range === null) return new Response(null, { status: 416, headers: { ...headers, "Content-Range": `bytes */${whole.size}` } });
    const part = whole.slice(range.start, range.end + 1, whole.type);
    return new Response(part, {
      status: 206,
      headers: { ...headers, "Content-Length": String(part.size), "Content-Range": `bytes ${range.start}-${range.end}/${whole.size}` },
    });
  }

  self.keptStore = { meta, saveMeta, all, keptBytes, write, clear, respond, byteRange };
})();
