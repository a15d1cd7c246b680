// Talking to Ferry's daemon with the extension's own token.

import { loadSettings, normalizeDaemonURL, saveSettings } from "./settings.js";

/// The daemon did not answer (not running, wrong address, or too slow).
export class FerryUnreachable extends Error {}
/// The daemon refused the token: revoked, or another extension paired since. Pair again.
export class FerryNeedsPairing extends Error {}
/// Any other refusal, with the daemon's code and message.
export class FerryRefused extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const TIMEOUT_MS = 4000;

async function request(base, method, path, { token, body, timeoutMs = TIMEOUT_MS } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new FerryUnreachable(`Ferry does not answer at ${base} (${error?.name === "TimeoutError" ? "no answer in time" : "not running?"}).`);
  }
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (response.ok) return json;
  const code = json?.error?.code ?? "";
  const message = json?.error?.message ?? `Ferry answered ${response.status}.`;
  throw new FerryRefused(response.status, code, message);
}

/// Trades a pairing code (`ferry extension pair`) for the extension's token, and keeps it.
export async function pair(daemonURL, code) {
  const base = normalizeDaemonURL(daemonURL);
  const trimmed = String(code ?? "").trim();
  if (!trimmed) throw new Error("Enter the code `ferry extension pair` printed.");
  const answer = await request(base, "POST", "/v1/extension/pair", { body: { code: trimmed } });
  await saveSettings({ daemonURL: base, token: answer.token, pairedAt: answer.pairedAt, needsPairing: false });
  return answer;
}

/// Calls the API with the token; a 401 marks the pairing as gone (FerryNeedsPairing).
export async function api(method, path, body) {
  const settings = await loadSettings();
  if (!settings.token) throw new FerryNeedsPairing("The extension is not paired with Ferry yet: open its options.");
  try {
    return await request(settings.daemonURL, method, path, { token: settings.token, body });
  } catch (error) {
    if (error instanceof FerryRefused && error.status === 401) {
      await saveSettings({ needsPairing: true });
      throw new FerryNeedsPairing("Ferry no longer accepts this extension's token: pair it again in the options (ferry extension pair).");
    }
    throw error;
  }
}

/// Asks Ferry to download `url` with the request headers the browser would have sent.
/// - Returns: the transfer Ferry made (or found: the same URL already asked for).
export async function download(url, { headers = {}, filename } = {}) {
  const settings = await loadSettings();
  const body = { urls: [url], session: settings.session || "browser" };
  const sent = Object.fromEntries(Object.entries(headers).filter(([, value]) => value));
  if (Object.keys(sent).length) body.options = { headers: sent };
  if (filename) body.filename = filename;
  const answer = await api("POST", "/v1/transfers", body);
  return answer.transfers[0];
}

export async function transfers(limit = 20) {
  return (await api("GET", `/v1/transfers?state=all&order=desc&limit=${limit}`)).transfers;
}
