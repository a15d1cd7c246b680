// Tells the service worker when a link is clicked with a modifier key held, so a download that
// click starts can stay with the browser (the downloads API does not say which keys were held).
// Nothing else: no page content is read or sent.
"use strict";
(() => {
  const report = (event) => {
    // Only the user's own clicks: a page's synthetic ones do not decide where its downloads go.
    if (!event.isTrusted || !(event.altKey || event.shiftKey || event.ctrlKey || event.metaKey)) return;
    const link = event.target instanceof Element ? event.target.closest("a[href], area[href]") : null;
    try {
      chrome.runtime.sendMessage({
        type: "ferry-modifier-click",
        url: link ? link.href : null,
        keys: { alt: event.altKey, shift: event.shiftKey, ctrl: event.ctrlKey, meta: event.metaKey },
      });
    } catch {
      // The extension was reloaded: this page's script is orphaned; nothing to do.
    }
  };
  addEventListener("click", report, true);
  addEventListener("auxclick", report, true);
})();
