// Settings (an admin's): the daemon-wide transfer options of /v1/config (speed limit and its
// schedule, concurrency, connections, folder, proxy), applied at once; and the listeners of
// /v1/listener-settings (beyond loopback, aria2's RPC, the sync API), which the daemon opens at
// its next start, with where they answer now and the certificate's fingerprint; and the
// doctor's report (/v1/doctor), with a button that mends what is safe to mend.

import { h, button, replace } from "../dom.js";
import { api } from "../api.js";
import { language, t } from "../i18n.js";
import { check, clearRequestError, field, integerOf, rateInput, select, showRequestError } from "../forms.js";
import { errorBox, spinner, toast, withBusy } from "../ui.js";

export function mountSettings(root) {
  const transfers = h("section", { class: "form-section", aria: { labelledby: "settings-transfers" } });
  const listeners = h("section", { class: "form-section", aria: { labelledby: "settings-listeners" } });
  const health = h("section", { class: "form-section", aria: { labelledby: "settings-health" } });
  replace(
    root,
    h("header", { class: "view-header" }, h("div", null, h("h1", { text: t("nav.settings") }), h("p", { class: "view-subtitle", text: t("settings.subtitle") }))),
    transfers,
    listeners,
    health,
  );
  replace(transfers, spinner());
  replace(listeners, spinner());
  replace(health, spinner());
  let live = true;
  const load = () => {
    api.config.get().then((options) => live && renderTransfers(transfers, options), (error) => live && replace(transfers, errorBox(error.message, { retry: load })));
    Promise.all([api.listenerSettings.get(), api.remote().catch(() => null)]).then(
      ([settings, remote]) => live && renderListeners(listeners, settings, remote),
      (error) => live && replace(listeners, errorBox(error.message, { retry: load })),
    );
    const examine = (fix) =>
      api.doctor(fix).then((report) => live && renderHealth(health, report, examine), (error) => live && replace(health, errorBox(error.message, { retry: () => examine(false) })));
    examine(false);
  };
  load();
  return {
    unmount() {
      live = false;
    },
  };
}

// MARK: Transfers (/v1/config)

function renderTransfers(section, original) {
  const rate = rateInput("settings-rate");
  const rateField = field(t("settings.rate"), rate.el, { hint: t("settings.rateHint") });
  rate.set(original.bytesPerSecond);
  const number = (id, value, min, max) => h("input", { type: "number", id, min, max, step: "1", inputmode: "numeric", value: value ?? "", placeholder: t("form.default") });
  const concurrent = field(t("settings.maxConcurrent"), number("settings-concurrent", original.maxConcurrent, "1", "256"), { hint: t("settings.maxConcurrentHint") });
  const connections = field(t("settings.connections"), number("settings-connections", original.connections, "1", "64"), { hint: t("settings.connectionsHint") });
  const perHost = field(t("settings.perHost"), number("settings-per-host", original.maxConnectionsPerHost, "1", "64"), { hint: t("settings.perHostHint") });
  const directory = field(t("settings.directory"), h("input", { type: "text", id: "settings-directory", value: original.directory ?? "", placeholder: "/srv/media/Downloads", spellcheck: "false", autocapitalize: "none" }), { hint: t("settings.directoryHint"), wide: true });
  const proxy = field(t("settings.proxy"), h("input", { type: "text", id: "settings-proxy", value: original.proxy ?? "", placeholder: "http://proxy.lan:3128", spellcheck: "false", autocapitalize: "none" }), { hint: t("settings.proxyHint"), wide: true });
  const direct = check(t("settings.noProxy"), { checked: Boolean(original.noProxy), id: "settings-no-proxy" });
  // Metered networks (URLSession's allowsExpensiveNetworkAccess): the daemon's own switch holds
  // every session; NetworkManager's word counts beside the interfaces named here.
  const holdMetered = check(t("settings.holdMetered"), { checked: original.allowsMeteredNetwork === false, id: "settings-hold-metered" });
  const meteredInterfaces = field(
    t("settings.meteredInterfaces"),
    h("input", { type: "text", id: "settings-metered-interfaces", value: (original.meteredInterfaces ?? []).join(", "), placeholder: "wwan0, usb0", spellcheck: "false", autocapitalize: "none" }),
    { hint: t("settings.meteredInterfacesHint"), wide: true },
  );
  const schedule = scheduleEditor(original.schedule);
  const top = h("div", { hidden: true });
  const save = button(t("action.save"), { type: "submit", kind: "primary", icon: "check" });
  const fields = [
    [/bytesPerSecond|limit/i, rateField],
    [/maxConcurrent/i, concurrent],
    [/maxConnectionsPerHost/i, perHost],
    [/connections/i, connections],
    [/directory|folder/i, directory],
    [/proxy/i, proxy],
    [/meteredInterfaces|interface/i, meteredInterfaces],
  ];

  const form = h(
    "form",
    { novalidate: true },
    h("div", { class: "fields" }, rateField.el, concurrent.el, connections.el, perHost.el, directory.el, proxy.el, h("div", { class: "field field-wide" }, direct.el)),
    h(
      "fieldset",
      { class: "field field-wide metered" },
      h("legend", { class: "field-label", text: t("settings.metered") }),
      h("p", { class: "field-hint", id: "settings-metered-hint", text: t("settings.meteredHint") }),
      holdMetered.el,
      meteredInterfaces.el,
    ),
    schedule.el,
    top,
    h("div", { class: "form-actions" }, save),
  );
  replace(section, h("h2", { id: "settings-transfers", text: t("settings.transfers") }), h("p", { class: "section-hint", text: t("settings.transfersHint") }), form);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearRequestError(top);
    const set = {};
    const clear = [];
    const change = (name, value) => {
      if (value === null || value === "") {
        if (original[name] !== undefined && original[name] !== null) clear.push(name);
      } else if (JSON.stringify(value) !== JSON.stringify(original[name])) {
        set[name] = value;
      }
    };
    change("bytesPerSecond", rate.get());
    for (const [name, f] of [["maxConcurrent", concurrent], ["connections", connections], ["maxConnectionsPerHost", perHost]]) {
      const value = integerOf(f.input);
      if (Number.isNaN(value)) {
        f.showError(t("form.wholeNumber"));
        f.input.focus();
        return;
      }
      change(name, value);
    }
    change("directory", directory.input.value.trim());
    // A proxy read back shows its password as <redacted>: unchanged, it is not sent again.
    const proxyText = proxy.input.value.trim();
    if (proxyText !== (original.proxy ?? "")) change("proxy", proxyText);
    if (direct.input.checked) set.noProxy = true;
    else if (original.noProxy) clear.push("noProxy");
    if (holdMetered.input.checked) set.allowsMeteredNetwork = false;
    else if (original.allowsMeteredNetwork !== undefined && original.allowsMeteredNetwork !== null) clear.push("allowsMeteredNetwork");
    const interfaces = meteredInterfaces.input.value.split(/[\s,]+/).filter(Boolean);
    change("meteredInterfaces", interfaces.length ? interfaces : null);
    const windows = schedule.get();
    if (windows.error) return;
    change("schedule", windows.value);
    if (!Object.keys(set).length && !clear.length) {
      toast(t("settings.nothingChanged"), { kind: "info" });
      return;
    }
    await withBusy(save, async () => {
      try {
        const options = await api.config.update(set, clear);
        toast(t("settings.saved"), { kind: "success" });
        renderTransfers(section, options);
      } catch (error) {
        showRequestError(top, error, fields);
      }
    });
  });
}

const DAYS = [1, 2, 3, 4, 5, 6, 7];

/** The weekday's short name in the page's language (1: Monday … 7: Sunday). */
function dayName(day) {
  // 2024-01-01 was a Monday.
  return new Intl.DateTimeFormat(language(), { weekday: "short", timeZone: "UTC" }).format(new Date(Date.UTC(2024, 0, day)));
}

const clock = (seconds) => `${String(Math.floor(seconds / 3600) % 24).padStart(2, "0")}:${String(Math.floor(seconds / 60) % 60).padStart(2, "0")}`;
const seconds = (text) => {
  const [hours, minutes] = text.split(":").map(Number);
  return hours * 3600 + minutes * 60;
};

/** The speed limit by the clock: windows of days and hours with a limit, and what holds outside. */
function scheduleEditor(schedule) {
  const rows = [];
  const list = h("div", { class: "windows" });
  const outside = select([["unlimited", t("settings.outside.unlimited")], ["paused", t("settings.outside.paused")]], schedule?.outside ?? "unlimited");
  const outsideField = field(t("settings.outside"), outside);
  const error = h("p", { class: "field-error", role: "alert", hidden: true });
  const add = button(t("settings.addWindow"), { kind: "secondary", icon: "plus", onClick: () => addRow({ days: [1, 2, 3, 4, 5], start: 9 * 3600, end: 18 * 3600 }, true) });

  function addRow(window, focus = false) {
    const days = DAYS.map((day) => {
      const input = h("input", { type: "checkbox", value: String(day), checked: (window.days ?? []).includes(day) });
      return { day, input, el: h("label", { class: "day" }, input, h("span", { text: dayName(day) })) };
    });
    const start = h("input", { type: "time", value: clock(window.start), required: true });
    const end = h("input", { type: "time", value: clock(window.end), required: true });
    const rate = rateInput();
    rate.set(window.bytesPerSecond);
    const row = { days, start, end, rate };
    const remove = button(t("settings.removeWindow"), {
      icon: "trash",
      iconOnly: true,
      kind: "ghost-danger",
      onClick: () => {
        rows.splice(rows.indexOf(row), 1);
        row.el.remove();
        outsideField.el.hidden = rows.length === 0;
        add.focus();
      },
    });
    row.el = h(
      "div",
      { class: "window", role: "group", aria: { label: t("settings.window") } },
      h("div", { class: "field field-wide" }, h("span", { class: "field-label", text: t("settings.days") }), h("div", { class: "days" }, days.map((d) => d.el)), h("p", { class: "field-hint", text: t("settings.daysHint") })),
      field(t("settings.from"), start).el,
      field(t("settings.until"), end).el,
      field(t("settings.windowRate"), rate.el).el,
      remove,
    );
    rows.push(row);
    list.append(row.el);
    outsideField.el.hidden = false;
    if (focus) start.focus();
  }

  for (const window of schedule?.windows ?? []) addRow(window);
  outsideField.el.hidden = rows.length === 0;
  const el = h(
    "div",
    { class: "field field-wide schedule" },
    h("h3", { class: "field-label", text: t("settings.schedule") }),
    h("p", { class: "field-hint", text: t("settings.scheduleHint") }),
    h("p", { class: "field-hint", text: t("settings.discretionaryHint") }),
    list,
    error,
    h("div", { class: "form-actions" }, add),
    outsideField.el,
  );
  return {
    el,
    /** {value: the schedule or null} or {error: true} (said under the windows). */
    get() {
      error.hidden = true;
      if (!rows.length) return { value: null };
      const windows = [];
      for (const row of rows) {
        if (!row.start.value || !row.end.value || row.start.value === row.end.value) {
          error.textContent = t("settings.windowTimes");
          error.hidden = false;
          row.start.focus();
          return { error: true };
        }
        const window = { days: row.days.filter((d) => d.input.checked).map((d) => d.day), start: seconds(row.start.value), end: seconds(row.end.value) };
        const limit = row.rate.get();
        if (limit !== null) window.bytesPerSecond = limit;
        windows.push(window);
      }
      return { value: { windows, outside: outside.value } };
    },
  };
}

// MARK: Health (/v1/doctor)

function renderHealth(section, report, examine) {
  const again = button(t("settings.health.check"), { type: "button", kind: "secondary", icon: "refresh" });
  again.addEventListener("click", () => withBusy(again, () => examine(false)));
  const fixable = report.checks.some((check) => check.status !== "ok");
  const fix = button(t("settings.health.fix"), { type: "button", kind: "primary", icon: "check" });
  fix.addEventListener("click", () => withBusy(fix, () => examine(true)));
  const rows = report.checks.map((check) =>
    h(
      "li",
      { class: "health-check", data: { status: check.status } },
      h(
        "div",
        { class: "health-line" },
        h("span", { class: "health-status", text: t(`settings.health.${check.status}`) }),
        h("strong", { text: t(`settings.health.name.${check.name}`) }),
        h("span", { class: "health-summary", text: check.summary }),
      ),
      check.details.length ? h("ul", { class: "health-details" }, check.details.map((line) => h("li", { text: line }))) : null,
      check.mended.length ? h("ul", { class: "health-mended" }, check.mended.map((line) => h("li", { text: `${t("settings.health.mended")}: ${line}` }))) : null,
      check.advice ? h("p", { class: "section-hint", text: check.advice }) : null,
    ),
  );
  replace(
    section,
    h("h2", { id: "settings-health", text: t("settings.health") }),
    h("p", { class: "section-hint", text: t("settings.healthHint") }),
    h("ul", { class: "health-checks", aria: { live: "polite" } }, rows),
    h("div", { class: "form-actions" }, fixable && !report.fixed ? fix : null, again),
  );
}

// MARK: Listeners (/v1/listener-settings)

const words = (text) => text.split(/[\s,]+/).filter(Boolean);

function renderListeners(section, status, remote) {
  const saved = status.saved ?? {};
  const text = (id, value, placeholder) => h("input", { type: "text", id, value: value ?? "", placeholder, spellcheck: "false", autocapitalize: "none" });

  const remoteOn = check(t("settings.remote.on"), { checked: Boolean(saved.remote), id: "settings-remote-on" });
  const listen = field(t("settings.remote.listen"), text("settings-remote-listen", saved.remote?.listen?.join(" "), "0.0.0.0:8443"), { hint: t("settings.remote.listenHint") });
  const names = field(t("settings.remote.names"), text("settings-remote-names", saved.remote?.serverNames?.join(" "), "nas.local"), { hint: t("settings.remote.namesHint") });
  const proxies = field(t("settings.remote.proxies"), text("settings-remote-proxies", saved.remote?.trustedProxies?.join(" "), "127.0.0.1"), { hint: t("settings.remote.proxiesHint") });
  const certificate = field(t("settings.certificate"), text("settings-remote-certificate", saved.remote?.certificate, "/etc/ssl/ferry/fullchain.pem"), { hint: t("settings.certificateHint") });
  const key = field(t("settings.privateKey"), text("settings-remote-key", saved.remote?.privateKey, "/etc/ssl/ferry/privkey.pem"));
  const remoteFields = h("div", { class: "fields" }, listen.el, names.el, proxies.el, certificate.el, key.el);

  const aria2On = check(t("settings.aria2.on"), { checked: saved.aria2Port !== undefined && saved.aria2Port !== null, id: "settings-aria2-on" });
  const port = field(t("settings.aria2.port"), h("input", { type: "number", id: "settings-aria2-port", min: "0", max: "65535", step: "1", inputmode: "numeric", value: saved.aria2Port ?? 6800 }), { hint: t("settings.aria2.portHint") });
  const aria2Fields = h("div", { class: "fields" }, port.el);

  const syncOn = check(t("settings.sync.on"), { checked: Boolean(saved.sync), id: "settings-sync-on" });
  const syncListen = field(t("settings.sync.listen"), text("settings-sync-listen", saved.sync?.listen, "0.0.0.0:8123"), { hint: t("settings.sync.listenHint") });
  const syncCertificate = field(t("settings.certificate"), text("settings-sync-certificate", saved.sync?.certificate, "/etc/ssl/ferry/fullchain.pem"), { hint: t("settings.sync.certificateHint") });
  const syncKey = field(t("settings.privateKey"), text("settings-sync-key", saved.sync?.privateKey, "/etc/ssl/ferry/privkey.pem"));
  const syncFields = h("div", { class: "fields" }, syncListen.el, syncCertificate.el, syncKey.el);

  const toggles = [[remoteOn, remoteFields], [aria2On, aria2Fields], [syncOn, syncFields]];
  for (const [toggle, fields] of toggles) {
    fields.hidden = !toggle.input.checked;
    toggle.input.addEventListener("change", () => {
      fields.hidden = !toggle.input.checked;
    });
  }

  const top = h("div", { hidden: true });
  const save = button(t("action.save"), { type: "submit", kind: "primary", icon: "check" });
  const restart = button(t("settings.restart"), { type: "button", kind: "secondary", icon: "refresh" });
  restart.addEventListener("click", () => withBusy(restart, () => restartDaemon(top)));
  const form = h(
    "form",
    { novalidate: true },
    h("h3", { class: "field-label", text: t("settings.remote") }),
    remoteOn.el,
    remoteFields,
    runningRemote(status, remote),
    h("h3", { class: "field-label", text: t("settings.aria2") }),
    aria2On.el,
    aria2Fields,
    facts([[t("settings.now"), status.aria2URL ? h("code", { text: status.aria2URL }) : t("settings.notRunning")], status.aria2Secret ? [t("settings.aria2.secret"), h("code", { text: status.aria2Secret })] : null]),
    h("h3", { class: "field-label", text: t("settings.sync") }),
    syncOn.el,
    syncFields,
    facts([[t("settings.now"), status.syncURL ? h("code", { text: status.syncURL }) : t("settings.notRunning")]]),
    h("p", { class: "notice", text: t("settings.nextStart") }),
    top,
    h("div", { class: "form-actions" }, save, restart),
  );
  replace(section, h("h2", { id: "settings-listeners", text: t("settings.listeners") }), h("p", { class: "section-hint", text: t("settings.listenersHint") }), form);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearRequestError(top);
    const settings = {};
    if (remoteOn.input.checked) {
      settings.remote = { listen: words(listen.input.value), serverNames: words(names.input.value), trustedProxies: words(proxies.input.value) };
      if (certificate.input.value.trim()) settings.remote.certificate = certificate.input.value.trim();
      if (key.input.value.trim()) settings.remote.privateKey = key.input.value.trim();
    }
    if (aria2On.input.checked) {
      const value = integerOf(port.input);
      if (value === null || Number.isNaN(value)) {
        port.showError(t("form.wholeNumber"));
        port.input.focus();
        return;
      }
      settings.aria2Port = value;
    }
    if (syncOn.input.checked) {
      settings.sync = { listen: syncListen.input.value.trim() };
      if (syncCertificate.input.value.trim()) settings.sync.certificate = syncCertificate.input.value.trim();
      if (syncKey.input.value.trim()) settings.sync.privateKey = syncKey.input.value.trim();
    }
    await withBusy(save, async () => {
      try {
        const next = await api.listenerSettings.save(settings);
        toast(t("settings.savedNextStart"), { kind: "success" });
        renderListeners(section, next, remote);
      } catch (error) {
        // The daemon's sentences name the CLI's options (--listen), or the file it cannot read.
        const file = [certificate, key, syncCertificate, syncKey].find((f) => f.input.value.trim() && error.message.includes(f.input.value.trim()));
        showRequestError(top, error, [
          [/--sync-listen/, syncListen],
          [/sync listener's certificate/, syncCertificate],
          [/aria2/i, port],
          [/--server-name/, names],
          [/CIDR|prefix length/, proxies],
          [/--certificate|--private-key/, certificate],
          [/--listen|plain HTTP listener/, listen],
          [/./, file],
        ].filter(([, f]) => f));
      }
    });
  });
}

/** Restarts the daemon (it opens the saved listeners) and reloads the page once it is back:
 * the same process starts again, so a start time that changes says it is back. */
async function restartDaemon(top) {
  clearRequestError(top);
  try {
    const before = (await api.status()).startedAt;
    await api.restart();
    toast(t("settings.restarting"));
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = await api.status().catch(() => null);
      if (now && now.startedAt !== before) return location.reload();
    }
    toast(t("settings.restartSlow"), { kind: "error" });
  } catch (error) {
    showRequestError(top, error, []);
  }
}

/** Where the listeners beyond loopback answer now, and the fingerprints a device checks. */
function runningRemote(status, remote) {
  const urls = remote?.urls ?? status.remoteURLs ?? [];
  return facts([
    [t("settings.now"), urls.length ? h("div", null, urls.map((url) => h("div", null, h("a", { href: url, text: url })))) : t("settings.notRunning")],
    remote?.certificateFingerprint ? [t("settings.fingerprint"), h("code", { text: remote.certificateFingerprint })] : null,
    remote?.caFingerprint ? [t("settings.caFingerprint"), h("span", null, h("code", { text: remote.caFingerprint }), " ", h("a", { href: "/ca.pem", download: "ferry-ca.crt", text: t("settings.caDownload") }))] : null,
  ]);
}

function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(Boolean).map(([term, value]) => h("div", { class: "fact" }, h("dt", { text: term }), h("dd", null, value))));
}
