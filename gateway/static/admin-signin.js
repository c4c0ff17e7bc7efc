// The operator page's sign-in: username and password (POST /api/user/login), a pasted token
// for automation ("使用令牌"), and a one-time sign-in link (#signin=<code>, POST
// /api/user/signin_link). Each leaves a bearer token in the tab's storage, as admin-api.js sends
// it; the page then asks who it names (admin.js). Why tokens and not cookies: docs/access.md.
import { LABELS } from "./labels.js";
import { api, NO_SESSION, errorNode } from "./api.js";
import { saveAdminToken, forgetAdminToken } from "./admin-api.js";
import { byTestId, clear, h } from "./dom.js";

const WORDS = LABELS.account;
// The sign-in routes answer 401 for a wrong name or password, 429 past the failure limit.
const SIGNIN_ERRORS = { 401: WORDS.bad_credentials, 403: WORDS.bad_credentials, 429: WORDS.too_many };
const LINK_ERRORS = { 400: WORDS.link_failed, 401: WORDS.link_failed, 403: WORDS.link_failed, 404: WORDS.link_failed, 410: WORDS.link_failed, 429: WORDS.too_many };

const ui = {
  panel: document.getElementById("signin-panel"),
  reason: byTestId("signin-reason"),
  form: document.getElementById("signin-form"),
  username: byTestId("signin-username"),
  password: byTestId("signin-password"),
  submit: byTestId("signin-submit"),
  tokenForm: document.getElementById("auth-form"),
  token: byTestId("admin-token"),
  switchMode: byTestId("use-token"),
};

let enter = async () => false; // admin.js: ask who the stored token names; true when signed in

/** The sign-in form, with why it is shown: a sentence, an error (ApiError), or nothing. */
export function showSignIn(reason) {
  ui.panel.hidden = false;
  say(reason);
  (ui.tokenForm.hidden ? ui.username : ui.token).focus();
}

export function hideSignIn() {
  ui.panel.hidden = true;
  say(null);
}

function say(reason, overrides = SIGNIN_ERRORS) {
  clear(ui.reason);
  if (!reason) return;
  if (typeof reason === "string") ui.reason.appendChild(h("p", { class: "notice-text", testid: "signin-message" }, reason));
  else ui.reason.appendChild(errorNode(reason, "signin-error", overrides));
}

async function signIn(event) {
  event.preventDefault();
  const username = ui.username.value.trim();
  const password = ui.password.value;
  if (!username || !password) {
    say(WORDS.missing_fields);
    (username ? ui.password : ui.username).focus();
    return;
  }
  ui.submit.disabled = true;
  say(WORDS.signing_in);
  try {
    const token = await api("/api/user/login", { method: "POST", body: { username, password }, session: NO_SESSION });
    saveAdminToken(String(token));
    ui.password.value = "";
    await enter();
  } catch (err) {
    say(err);
    ui.password.select();
  } finally {
    ui.submit.disabled = false;
  }
}

async function useToken(event) {
  event.preventDefault();
  const token = ui.token.value.trim();
  if (!token) {
    say(WORDS.missing_token);
    ui.token.focus();
    return;
  }
  saveAdminToken(token);
  ui.token.value = "";
  if (!(await enter())) say(WORDS.token_refused);
}

function toggleMode() {
  const toToken = ui.tokenForm.hidden;
  ui.tokenForm.hidden = !toToken;
  ui.form.hidden = toToken;
  ui.switchMode.textContent = toToken ? WORDS.use_password : WORDS.use_token;
  (toToken ? ui.token : ui.username).focus();
}

/**
 * #signin=<code>: redeem the one-time link for a session and take the code out of the address
 * (and the history) at once. Resolves null when the address holds no link, true when it
 * signed in, false when it did not (the tab then holds no token and the sign-in form says why).
 */
export async function redeemSignInLink() {
  const match = /^#signin=([^&]+)/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, "", location.pathname + location.search);
  try {
    const token = await api("/api/user/signin_link", { method: "POST", body: { code: decodeURIComponent(match[1]) }, session: NO_SESSION });
    saveAdminToken(String(token));
    return true;
  } catch (err) {
    forgetAdminToken();
    showSignIn();
    say(err, LINK_ERRORS);
    return false;
  }
}

/** onEnter: what signing in leads to (admin.js asks GET /api/user and opens the page). */
export function initSignIn(onEnter) {
  enter = onEnter;
  ui.form.addEventListener("submit", signIn);
  ui.tokenForm.addEventListener("submit", useToken);
  ui.switchMode.addEventListener("click", toggleMode);
}
