// The operator page's calls: the tab's bearer token (a session from signing in, or a pasted
// token), a hook that shows the sign-in form when a call answers 401, the page's error wording,
// and uploads with progress. Why bearer tokens and not cookies: docs/access.md.
import { LABELS } from "./labels.js";
import { api, ApiError, errorFromResponse, describeError, errorNode } from "./api.js";
import { session as tabStorage } from "./session.js";

const WORDS = LABELS.account;
const TOKEN_KEY = "kb.admin";
export const operator = { token: () => tabStorage.getItem(TOKEN_KEY) || "" };
export const saveAdminToken = (token) => tabStorage.setItem(TOKEN_KEY, token.trim());
export const forgetAdminToken = () => tabStorage.removeItem(TOKEN_KEY);

let unauthorized = () => {};
/** The page registers what to do when a call says "who are you?" (401: show the sign-in form). */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/**
 * The page's wording: 401 = signed out or expired; 403 = this account may not (the server's
 * sentence underneath says what), which the page mostly avoids by hiding what the role may not do.
 */
export const ADMIN_ERRORS = {
  401: WORDS.expired,
  403: WORDS.refused,
  409: (detail) => `${WORDS.conflict}${detail}`,
  413: LABELS.admin_text.too_large,
  415: LABELS.admin_text.unsupported_type,
};
export const adminError = (err, testid) => errorNode(err, testid, ADMIN_ERRORS);
export const adminErrorText = (err) => describeError(err, ADMIN_ERRORS).text;

export async function call(path, options = {}) {
  try {
    return await api(path, { ...options, session: operator });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) unauthorized(err);
    throw err;
  }
}

/**
 * Multipart upload through XMLHttpRequest, because only XHR reports upload progress.
 * onProgress(percent) while sending; onSent() once the file is on the server (it is then
 * checked and queued; parsing and embedding run in the background). Resolves with the
 * envelope's data.
 */
export function upload(path, formData, { onProgress, onSent } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    const token = operator.token();
    if (token) xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && onProgress) onProgress(Math.round((e.loaded / e.total) * 100));
    };
    xhr.upload.onload = () => onSent && onSent();
    xhr.onerror = () => reject(new ApiError(0, "the upload connection failed"));
    xhr.onload = async () => {
      const res = new Response(xhr.responseText, { status: xhr.status || 500, statusText: xhr.statusText });
      if (xhr.status < 200 || xhr.status >= 300) {
        const err = await errorFromResponse(res);
        if (err.status === 401) unauthorized(err);
        reject(err);
        return;
      }
      try {
        const envelope = JSON.parse(xhr.responseText);
        if (envelope && envelope.code >= 400) reject(new ApiError(envelope.code, envelope.message));
        else resolve(envelope ? envelope.data : null);
      } catch {
        reject(new ApiError(xhr.status, "the server answered with something that is not JSON"));
      }
    };
    xhr.send(formData);
  });
}
