import { pair } from "./lib/ferry.js";
import { loadSettings, saveSettings } from "./lib/settings.js";

const $ = (id) => document.getElementById(id);

async function show() {
  const settings = await loadSettings();
  $("daemon-url").value = settings.daemonURL;
  const state = $("pairing-state");
  if (!settings.token) state.textContent = "Not paired yet.";
  else if (settings.needsPairing) state.textContent = "Ferry no longer accepts this extension's token: pair it again.";
  else state.textContent = `Paired with ${settings.daemonURL}${settings.pairedAt ? ` since ${new Date(settings.pairedAt).toLocaleString()}` : ""}.`;
  state.dataset.state = !settings.token ? "unpaired" : settings.needsPairing ? "needs-pairing" : "paired";
  const rules = settings.takeOver;
  $("enabled").checked = rules.enabled;
  $("min-size").value = String(rules.minSizeMB);
  $("types").value = rules.types;
  $("bypass-sites").value = rules.bypassSites;
  $("modifier").value = rules.modifier;
}

$("pair").addEventListener("submit", async (event) => {
  event.preventDefault();
  const result = $("pair-result");
  result.textContent = "Pairing…";
  result.dataset.state = "";
  try {
    await pair($("daemon-url").value, $("code").value);
    $("code").value = "";
    result.textContent = "Paired: Ferry accepts this extension.";
    result.dataset.state = "ok";
  } catch (error) {
    result.textContent = error.message;
    result.dataset.state = "error";
  }
  await show();
});

$("take-over").addEventListener("submit", async (event) => {
  event.preventDefault();
  const minSizeMB = Math.max(0, Number($("min-size").value) || 0);
  await saveSettings({
    takeOver: {
      enabled: $("enabled").checked,
      minSizeMB,
      types: $("types").value.trim(),
      bypassSites: $("bypass-sites").value.trim(),
      modifier: $("modifier").value,
    },
  });
  $("saved").textContent = "Saved.";
  setTimeout(() => ($("saved").textContent = ""), 2000);
});

show();
