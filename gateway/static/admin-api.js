// The operator page's calls: the admin token (if the gateway has one), a hook that asks for
// it when a call is refused, the operator's error wording, and uploads with progress.
import { api, ApiError, errorFromResponse, describeError, errorNode } from "./api.js";
import { session as tabStorage } from "./session.js";

const TOKEN_KEY = "kb.admin";
export const operator = { token: () => tabStorage.getItem(TOKEN_KEY) || "" };
export const saveAdminToken = (token) => tabStorage.setItem(TOKEN_KEY, token.trim());

let unauthorized = () => {};
/** The page registers what to do when a call says "not allowed" (show the token box). */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/** Operator wording: a refusal here means "admin token needed", not "use a share link". */
export const ADMIN_ERRORS = {
  401: "没有权限：需要管理员令牌。",
  403: "没有权限：需要管理员令牌。",
  409: (detail) => `操作冲突：${detail}`,
  413: "文件太大：超过了上传上限。",
  415: "不支持这种文件类型。",
};
export const adminError = (err, testid) => errorNode(err, testid, ADMIN_ERRORS);
export const adminErrorText = (err) => describeError(err, ADMIN_ERRORS).text;

export async function call(path, options = {}) {
  try {
    return await api(path, { ...options, session: operator });
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) unauthorized(err);
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
        if (err.status === 401 || err.status === 403) unauthorized(err);
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
