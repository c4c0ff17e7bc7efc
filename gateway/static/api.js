// Talking to the gateway: JSON envelopes, the answer's event stream, and error wording. Every
// call asks for the page's language (Accept-Language), so the gateway's own sentences in an
// error come in the words the page shows.
import { h } from "./dom.js";
import { LABELS, PAGE_LANG, fill } from "./labels.js";

const WORDS = LABELS.errors;

export class ApiError extends Error {
  /** status 0 = the network failed (no HTTP answer at all). */
  constructor(status, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.serverMessage = message || "";
  }
}

/**
 * A session says which bearer token to send and, for share-link visitors, how to get a
 * fresh one when the stored token is refused (401).
 * { token(): string, reauth?: async () => void }
 */
export const NO_SESSION = { token: () => "" };

function headers(session, extra = {}) {
  const out = { "Accept-Language": PAGE_LANG, ...extra };
  const token = session && session.token();
  if (token) out.Authorization = `Bearer ${token}`;
  return out;
}

/** The error message out of any error body: our envelope, or FastAPI's {detail}. */
export async function errorFromResponse(res) {
  let message = "";
  try {
    const body = await res.json();
    if (body && typeof body.message === "string") message = body.message;
    else if (body && typeof body.detail === "string") message = body.detail;
    else if (body && Array.isArray(body.detail)) message = body.detail.map((d) => d.msg || "").join("; ");
  } catch {
    message = res.statusText || "";
  }
  return new ApiError(res.status, message);
}

async function withReauth(session, send) {
  let res = await send();
  // A stored visitor token may have expired: sign in again once, then retry.
  if (res.status === 401 && session && session.reauth) {
    await session.reauth();
    res = await send();
  }
  return res;
}

async function fetchOrNetworkError(url, init) {
  try {
    return await fetch(url, init);
  } catch (err) {
    if (err && err.name === "AbortError") throw err;
    throw new ApiError(0, String((err && err.message) || err));
  }
}

/** A JSON call; resolves with the envelope's data, rejects with ApiError. */
export async function api(path, { method = "GET", body, session = NO_SESSION } = {}) {
  const send = () =>
    fetchOrNetworkError(path, {
      method,
      headers: headers(session, body === undefined ? {} : { "Content-Type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const res = await withReauth(session, send);
  if (!res.ok) throw await errorFromResponse(res);
  let envelope;
  try {
    envelope = await res.json();
  } catch {
    throw new ApiError(res.status, WORDS.not_json);
  }
  if (envelope && typeof envelope.code === "number" && envelope.code >= 400) {
    throw new ApiError(envelope.code, envelope.message);
  }
  return envelope ? envelope.data : null;
}

/**
 * POST and read a text/event-stream answer. Refusals before the stream (HTTP errors) reject
 * with ApiError; every frame afterwards goes to onFrame(eventName, payload).
 * Resolves when the stream ends. EventSource can't POST, hence fetch + a reader.
 */
export async function postStream(path, body, { session = NO_SESSION, onFrame, signal } = {}) {
  const send = () =>
    fetchOrNetworkError(path, {
      method: "POST",
      headers: headers(session, { "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify(body),
      signal,
    });
  const res = await withReauth(session, send);
  if (!res.ok) throw await errorFromResponse(res);
  if (!res.body) throw new ApiError(0, WORDS.no_stream);

  const reader = res.body.getReader();
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  const flush = (done) => {
    let text = buffer;
    let tail = "";
    // A "\r" at the very end may be the first half of "\r\n": wait for the next piece.
    if (!done && text.endsWith("\r")) {
      tail = "\r";
      text = text.slice(0, -1);
    }
    const frames = text.replace(/\r\n|\r/g, "\n").split("\n\n");
    buffer = (done ? "" : frames.pop()) + tail;
    for (const frame of frames) dispatch(frame, onFrame);
  };
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (err) {
      if (err && err.name === "AbortError") throw err;
      throw new ApiError(0, String((err && err.message) || err));
    }
    if (chunk.done) {
      buffer += decoder.decode();
      flush(true);
      return;
    }
    buffer += decoder.decode(chunk.value, { stream: true });
    flush(false);
  }
}

function dispatch(frame, onFrame) {
  let name = "message";
  const data = [];
  for (const line of frame.split("\n")) {
    if (!line || line.startsWith(":")) continue; // ": keep-alive" comments
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return;
  let payload;
  try {
    payload = JSON.parse(data.join("\n"));
  } catch {
    return; // not ours; ignore rather than break the answer
  }
  onFrame(name, payload);
}

/**
 * Plain words for an error in the page's language, plus the server's own sentence for support.
 * overrides: {status: text} for places where a code means something else (e.g. uploads).
 */
export function describeError(err, overrides = {}) {
  const status = err instanceof ApiError ? err.status : 0;
  const detail = err instanceof ApiError ? err.serverMessage : String((err && err.message) || err || "");
  let text;
  if (overrides[status] !== undefined) {
    text = typeof overrides[status] === "function" ? overrides[status](detail) : overrides[status];
  } else if (status === 0) text = WORDS.network;
  else if (status === 409) text = WORDS.busy;
  else if (status === 429) text = fill(WORDS.quota, { detail });
  else if (status === 413) text = WORDS.too_long;
  else if (status === 502 || status === 503 || status === 504) text = WORDS.unavailable;
  else if (status === 401 || status === 403) text = WORDS.refused;
  else if (status === 404) text = fill(WORDS.not_found, { detail });
  else text = detail || fill(WORDS.failed, { status });
  return { text, detail: detail && !text.includes(detail) ? detail : "" };
}

/** An in-place error block: the page's words first, the server's own sentence underneath in small text. */
export function errorNode(err, testid, overrides) {
  const { text, detail } = describeError(err, overrides);
  return h(
    "div",
    { class: "error", testid, role: "alert", title: detail || undefined },
    h("span", { class: "error-text" }, text),
    detail ? h("small", { class: "error-detail" }, detail) : null,
  );
}
