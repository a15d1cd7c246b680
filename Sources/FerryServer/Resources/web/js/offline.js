// The app without a network: the service worker (sw.js) that keeps the app's shell and answers
// the player from what is kept on this device, and the positions saved offline, sent when the
// daemon is back. Service workers need a secure context: HTTPS, or this machine (loopback).

import { pendingPlayback } from "./playback-queue.js";

/** Registers the service worker (a failure leaves the app as it was: online only). */
export function registerServiceWorker() {
  if (!("serviceWorker" in navigator) || !isSecureContext) return;
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch((error) => console.warn("service worker not registered", error));
  // A page loaded while the worker was installing can miss its claim (it was not a client yet):
  // it asks once more, so that what is kept plays without a reload.
  navigator.serviceWorker.ready.then((registration) => {
    if (!navigator.serviceWorker.controller) registration.active?.postMessage({ type: "claim" });
  });
}

/** Sends the positions saved offline now, and each time the network comes back. */
export function sendPositionsWhenBack(player) {
  const flush = () => pendingPlayback.flush((key, playback) => player.remember(key, playback));
  addEventListener("online", flush);
  flush();
  return flush;
}
