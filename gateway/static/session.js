// Who the chat page is talking as: a share-link visitor, an API key / admin token from the
// URL fragment, the account signed in on the operator page in this tab (its token, kept under
// kb.admin), or nobody. Tokens live in browser storage so a reload continues the same conversation.
import { api, NO_SESSION } from "./api.js";

/** Whether this page may keep anything past a reload (an embedded chat on a site whose visitor's
 * browser blocks third-party storage may not): the page says so instead of forgetting silently. */
export let storageBlocked = false;

function store(kind) {
  try {
    const s = kind === "local" ? window.localStorage : window.sessionStorage;
    s.getItem("kb.probe");
    return s;
  } catch {
    if (kind === "local") storageBlocked = true;
    // Storage can be blocked (private modes); fall back to memory for this page only.
    const memory = new Map();
    return { getItem: (k) => (memory.has(k) ? memory.get(k) : null), setItem: (k, v) => memory.set(k, String(v)), removeItem: (k) => memory.delete(k) };
  }
}
export const local = store("local");
export const session = store("session");

/** The page's mode from its address: /ui/share/{access_token} or /ui/chat/{app_id}. */
export function pageMode(pathname = location.pathname) {
  const share = /^\/ui\/share\/([^/]+)\/?$/.exec(pathname);
  if (share) return { mode: "share", accessToken: decodeURIComponent(share[1]) };
  const chat = /^\/ui\/chat\/([^/]+)\/?$/.exec(pathname);
  if (chat) return { mode: "chat", appId: decodeURIComponent(chat[1]) };
  return { mode: "unknown" };
}

/** A short, stable tag for a token, so chat ids are remembered per caller without storing the token twice. */
export function tokenTag(token) {
  if (!token) return "operator";
  let hash = 0x811c9dc5;
  for (let i = 0; i < token.length; i++) {
    hash ^= token.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** Share link: sign in as a visitor (or reuse the stored visitor token). → {appId, session} */
export async function shareSession(accessToken) {
  const tokenKey = `kb.visitor.${accessToken}`;
  const appKey = `kb.visitor.${accessToken}.app`;
  // The sign-in answers MaxKB's way, with the token alone; the application is the token's profile.
  const signIn = async () => {
    const token = await api("/api/application/authentication", { method: "POST", body: { access_token: accessToken }, session: NO_SESSION });
    const profile = await api("/api/application/profile", { session: { token: () => token } });
    local.setItem(tokenKey, token);
    local.setItem(appKey, profile.id);
  };
  if (!local.getItem(tokenKey) || !local.getItem(appKey)) await signIn();
  let reauthed = false;
  const s = {
    token: () => local.getItem(tokenKey) || "",
    // A refused stored token gets one fresh sign-in per page load, not a loop.
    reauth: async () => {
      if (reauthed) return;
      reauthed = true;
      await signIn();
    },
  };
  return { appId: local.getItem(appKey), session: s };
}

/**
 * /ui/chat/{app_id}#key=…: keep the key for this tab and take it out of the address bar. With no
 * key, the operator page's signed-in account in this tab ("以管理员身份打开对话") asks.
 */
export function keySession(appId) {
  const storageKey = `kb.key.${appId}`;
  const match = /(?:^#|&)key=([^&]+)/.exec(location.hash);
  if (match) {
    session.setItem(storageKey, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  const key = session.getItem(storageKey) || session.getItem("kb.admin") || "";
  return { appId, session: { token: () => key } };
}

export const chatKey = (appId, s) => `kb.chat.${appId}.${tokenTag(s.token())}`;
