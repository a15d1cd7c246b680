// Ferry's service worker: the context menu "Download with Ferry", taking over the browser's
// downloads when the options say so, and falling back to the browser when Ferry cannot take one.

import { FerryNeedsPairing, FerryUnreachable, download } from "./lib/ferry.js";
import { cookieHeader, cookiesToSend, referrerFor, takeOverDecision } from "./lib/rules.js";
import { loadSettings, saveSettings } from "./lib/settings.js";

// The token stays out of reach of content scripts (and of a compromised page's renderer).
chrome.storage.local.setAccessLevel?.({ accessLevel: "TRUSTED_CONTEXTS" }).catch((error) => console.warn("Ferry: storage access level", error));

const MENU = { link: "ferry-link", image: "ferry-image", audio: "ferry-audio", video: "ferry-video" };

chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.removeAll(() => {
    chrome.contextMenus.create({ id: MENU.link, title: "Download link with Ferry", contexts: ["link"] });
    chrome.contextMenus.create({ id: MENU.image, title: "Download image with Ferry", contexts: ["image"] });
    chrome.contextMenus.create({ id: MENU.audio, title: "Download audio with Ferry", contexts: ["audio"] });
    chrome.contextMenus.create({ id: MENU.video, title: "Download video with Ferry", contexts: ["video"] });
  });
  refreshBadge();
});
chrome.runtime.onStartup.addListener(refreshBadge);

// MARK: What the browser would have sent

/// Cookie, Referer and User-Agent for a request to `url` from `page`. Ferry keeps the Cookie
/// header as a secret: `<redacted>` in its API, events and logs, sent only to `url`'s origin.
export async function browserHeaders(url, page) {
  const headers = { "User-Agent": navigator.userAgent };
  const cookies = cookiesToSend(await chrome.cookies.getAll({ url }), url, page);
  if (cookies.length) headers.Cookie = cookieHeader(cookies);
  const referrer = page ? referrerFor(url, page) : null;
  if (referrer) headers.Referer = referrer;
  return headers;
}

// MARK: Context menu

/// What the context menu's items do (also called by the tests: a native menu cannot be clicked
/// in headless Chromium).
export async function onMenuClicked(info, tab) {
  const url = info.menuItemId === MENU.link ? info.linkUrl : info.srcUrl;
  if (!url) return { outcome: "ignored" };
  if (!/^https?:/i.test(url)) {
    // data:, blob: and the like exist only in the page: the browser saves them.
    await browserDownload(url);
    return note("browser", `Only http(s) URLs go to Ferry; the browser saved ${shorten(url)}.`);
  }
  const page = info.frameUrl || info.pageUrl || tab?.url;
  try {
    const transfer = await download(url, { headers: await browserHeaders(url, page) });
    return note("ferry", accepted(transfer, url), transfer);
  } catch (error) {
    await browserDownload(url);
    return note(outcomeOf(error), `${error.message} The browser downloaded ${shorten(url)} itself.`);
  }
}
chrome.contextMenus.onClicked.addListener((info, tab) => {
  onMenuClicked(info, tab).catch((error) => console.error("Ferry: menu", error));
});

/// The browser's own download: marked as this extension's (byExtensionId), so it is never taken over.
async function browserDownload(url) {
  try {
    await chrome.downloads.download({ url });
  } catch (error) {
    console.error("Ferry: the browser's download failed too", error);
  }
}

// MARK: Taking over the browser's downloads

// Links clicked with a modifier key held (content.js): url → until when it stays with the browser.
const modifierClicks = new Map();
let lastModifierClick = null;

chrome.runtime.onMessage.addListener((message, sender) => {
  if (message?.type !== "ferry-modifier-click" || sender.id !== chrome.runtime.id) return;
  const until = Date.now() + 10_000;
  const click = { keys: message.keys ?? {}, until };
  if (typeof message.url === "string") modifierClicks.set(message.url, click);
  lastModifierClick = click;
});

function bypassKeyHeld(item, modifier) {
  if (!modifier || modifier === "none") return false;
  const now = Date.now();
  for (const [url, click] of modifierClicks) if (click.until < now) modifierClicks.delete(url);
  const click = modifierClicks.get(item.url) ?? modifierClicks.get(item.finalUrl) ?? (lastModifierClick && lastModifierClick.until - 8_000 > now ? lastModifierClick : null);
  return Boolean(click && click.until >= now && click.keys[modifier]);
}

/// Decides about a download the browser started, before it has a file name (so before it can
/// finish): Ferry takes it (and the browser's is cancelled and erased from its list), or it stays
/// with the browser. - Returns: true when the browser keeps it.
export async function onBrowserDownload(item) {
  const settings = await loadSettings();
  const decision = takeOverDecision(item, settings, { own: chrome.runtime.id, bypassed: bypassKeyHeld(item, settings.takeOver.modifier) });
  if (!decision.take) return true;
  const url = item.finalUrl || item.url;
  const name = (item.filename || "").split(/[\\/]/).pop();
  try {
    const transfer = await download(url, { headers: await browserHeaders(url, item.referrer), filename: name || undefined });
    await chrome.downloads.cancel(item.id);
    await chrome.downloads.erase({ id: item.id }).catch(() => {});
    await note("ferry", accepted(transfer, url), transfer);
    return false;
  } catch (error) {
    await note(outcomeOf(error), `${error.message} The browser downloads ${shorten(url)} itself.`);
    return true;
  }
}

chrome.downloads.onDeterminingFilename.addListener((item, suggest) => {
  onBrowserDownload(item)
    .then((browserKeepsIt) => {
      if (browserKeepsIt) suggest();
    })
    .catch((error) => {
      console.error("Ferry: take-over", error);
      suggest();
    });
  return true; // suggest() comes later
});

// MARK: Telling the user

function outcomeOf(error) {
  if (error instanceof FerryNeedsPairing) return "needs-pairing";
  if (error instanceof FerryUnreachable) return "unreachable";
  return "refused";
}

async function note(outcome, message, transfer) {
  const result = { outcome, message, at: new Date().toISOString(), transferId: transfer?.id ?? null };
  await saveSettings({ lastResult: result });
  await refreshBadge(outcome);
  return result;
}

/// "!" on the toolbar button while the extension must pair again or Ferry did not answer.
async function refreshBadge(outcome) {
  const settings = await loadSettings();
  let text = "";
  let title = "Ferry";
  if (!settings.token || settings.needsPairing) {
    text = "!";
    title = "Ferry: pair the extension in its options (ferry extension pair)";
  } else if (outcome === "unreachable") {
    text = "!";
    title = "Ferry did not answer; the browser downloaded it itself";
  }
  await chrome.action.setBadgeText({ text });
  await chrome.action.setBadgeBackgroundColor({ color: "#c62828" });
  await chrome.action.setTitle({ title });
}

chrome.storage.onChanged.addListener((changes) => {
  if ("token" in changes || "needsPairing" in changes) refreshBadge();
});

/// Ferry answers a URL it already has (in the session) with that transfer, not a new one.
function accepted(transfer, url) {
  if (transfer.state === "completed") return `Ferry already has ${shorten(url)} (transfer ${transfer.id}): ${transfer.path ?? ""}`;
  return `Ferry downloads ${shorten(url)} (transfer ${transfer.id}).`;
}

function shorten(url) {
  return url.length > 80 ? `${url.slice(0, 77)}…` : url;
}

// For the tests, which drive the service worker through Playwright (see tests/web/test_extension.py).
globalThis.ferry = { onMenuClicked, onBrowserDownload, browserHeaders };
