// The Media Session: what plays, shown by the system (lock screen, notification, media keys),
// and its buttons: play, pause, seek back and forward, previous and next (a chapter, or the
// next in Up Next when the player has one).

import { SKIP_BACK, SKIP_FORWARD } from "./player-controls.js";

export function mountMediaSession(player) {
  const session = navigator.mediaSession;
  if (!session || typeof MediaMetadata === "undefined") return;

  const handlers = {
    play: () => player.resumePlaying(),
    pause: () => player.pause(),
    seekbackward: (details) => player.skip(-(details?.seekOffset || SKIP_BACK)),
    seekforward: (details) => player.skip(details?.seekOffset || SKIP_FORWARD),
    seekto: (details) => {
      if (Number.isFinite(details?.seekTime)) player.audio.currentTime = details.seekTime;
    },
    previoustrack: () => player.previous(),
    nexttrack: () => player.next(),
  };
  for (const [action, handler] of Object.entries(handlers)) {
    try {
      session.setActionHandler(action, handler);
    } catch {
      // This browser does not know that action.
    }
  }

  player.addEventListener("itemchange", () => {
    const item = player.current;
    if (!item) {
      session.metadata = null;
      session.playbackState = "none";
      return;
    }
    const artwork = typeof item.artworkURL === "string" && /^https?:\/\//i.test(item.artworkURL) ? [{ src: item.artworkURL, sizes: "600x600" }] : [];
    session.metadata = new MediaMetadata({ title: item.title || "", artist: item.subtitle || "", album: item.album || "", artwork });
  });
  player.subscribe(() => {
    if (player.current) session.playbackState = player.isPlaying() ? "playing" : "paused";
  });
  const position = () => {
    const audio = player.audio;
    if (!player.current || !Number.isFinite(audio.duration) || audio.duration <= 0) return;
    try {
      session.setPositionState({ duration: audio.duration, playbackRate: audio.playbackRate || 1, position: Math.min(audio.currentTime, audio.duration) });
    } catch {
      // A position the browser refuses (a stream still finding its length): left as it was.
    }
  };
  for (const type of ["durationchange", "ratechange", "seeked", "play", "pause"]) player.audio.addEventListener(type, position);
}
