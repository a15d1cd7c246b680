// Pure decisions: which downloads Ferry takes over, and the request headers the browser would
// have sent. No chrome.* here, so they read (and test) as plain functions.

/// The `Cookie` header for cookies from chrome.cookies.getAll({url}): longer paths first, as
/// browsers order them (RFC 6265 5.4).
export function cookieHeader(cookies) {
  return [...cookies]
    .sort((a, b) => (b.path?.length ?? 0) - (a.path?.length ?? 0))
    .map((c) => `${c.name}=${c.value}`)
    .join("; ");
}

/// The cookies the browser would send to `target` for a navigation started from `initiator` (a
/// page URL; none: typed or opened by the user): all of them on the same site, and without the
/// SameSite=Strict ones from another site (scheme and the host's last two labels stand in for
/// the registrable domain: no public suffix list here, so a.example.co.uk and b.example.co.uk
/// count as one site and keep their Strict cookies).
export function cookiesToSend(cookies, target, initiator) {
  if (!initiator || sameSite(target, initiator)) return cookies;
  return cookies.filter((c) => c.sameSite !== "strict");
}

export function sameSite(a, b) {
  let x, y;
  try {
    x = new URL(a);
    y = new URL(b);
  } catch {
    return false;
  }
  const site = (url) => {
    const host = url.hostname.toLowerCase();
    if (/^[\d.]+$/.test(host) || host.startsWith("[")) return host;
    return host.split(".").slice(-2).join(".");
  };
  return x.protocol === y.protocol && site(x) === site(y);
}

/// The Referer the browser sends from `page` to `target` under its default policy,
/// strict-origin-when-cross-origin: the whole page URL (without fragment or credentials) to the
/// same origin, its origin elsewhere, nothing from https to http. Null when there is none.
export function referrerFor(target, page) {
  let from, to;
  try {
    from = new URL(page);
    to = new URL(target);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(from.protocol)) return null;
  if (from.protocol === "https:" && to.protocol === "http:") return null;
  if (from.origin !== to.origin) return `${from.origin}/`;
  from.hash = "";
  from.username = "";
  from.password = "";
  return from.href;
}

/// `sites`: host names, one a line or separated by spaces or commas; a name covers its subdomains.
export function siteListed(url, sites) {
  let host;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return splitList(sites).some((site) => {
    const name = site.replace(/^\*\./, "").replace(/^https?:\/\//, "").replace(/\/.*$/, "");
    return host === name || host.endsWith(`.${name}`);
  });
}

export function splitList(text) {
  return String(text ?? "")
    .split(/[\s,;]+/)
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

/// True when `types` (extensions or MIME types, `video/*`) is empty or names the download's.
export function typeListed(item, types) {
  const wanted = splitList(types);
  if (wanted.length === 0) return true;
  const name = (item.filename || "").split(/[\\/]/).pop() || safePath(item.finalUrl || item.url);
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
  const mime = (item.mime || "").toLowerCase().split(";")[0].trim();
  return wanted.some((type) => {
    if (type.includes("/")) return type.endsWith("/*") ? mime.startsWith(type.slice(0, -1)) : mime === type;
    return extension !== "" && extension === type.replace(/^\*?\./, "");
  });
}

function safePath(url) {
  try {
    return decodeURIComponent(new URL(url).pathname.split("/").pop() || "");
  } catch {
    return "";
  }
}

/// Whether Ferry takes over a download the browser started.
/// - item: a chrome.downloads.DownloadItem; settings: loadSettings(); own: this extension's id;
///   bypassed: true when the user held the bypass key while clicking it.
/// - Returns { take, reason }: the reason says why not (or "take").
export function takeOverDecision(item, settings, { own, bypassed = false } = {}) {
  const rules = settings.takeOver;
  if (!rules.enabled) return { take: false, reason: "take-over is off" };
  if (item.byExtensionId && item.byExtensionId === own) return { take: false, reason: "the extension's own download" };
  if (!settings.token || settings.needsPairing) return { take: false, reason: "not paired" };
  const url = item.finalUrl || item.url;
  if (!/^https?:/i.test(url)) return { take: false, reason: "not an http(s) URL" };
  if (item.incognito) return { take: false, reason: "a private window's download" };
  if (bypassed) return { take: false, reason: "the bypass key was held" };
  if (siteListed(url, rules.bypassSites) || siteListed(item.referrer || "", rules.bypassSites)) return { take: false, reason: "a site on the bypass list" };
  if (!typeListed(item, rules.types)) return { take: false, reason: "not a listed type" };
  const size = item.totalBytes > 0 ? item.totalBytes : item.fileSize > 0 ? item.fileSize : -1;
  const minimum = Number(rules.minSizeMB) * 1_000_000;
  if (minimum > 0 && size >= 0 && size < minimum) return { take: false, reason: "smaller than the minimum size" };
  return { take: true, reason: "take" };
}
