// The header strip: who is signed in and as what role (GET /api/user), 修改密码 (设置密码 for an
// account that has none yet) and 退出登录 (POST /api/user/logout ends the session on the
// server; the tab forgets its token and starts again at the sign-in form).
import { LABELS } from "./labels.js";
import { api } from "./api.js";
import { operator, forgetAdminToken } from "./admin-api.js";
import { onAccountChanged, roleLabel } from "./admin-me.js";
import { session as tabStorage } from "./session.js";
import { openPasswordPanel } from "./admin-password.js";
import { byTestId } from "./dom.js";

const WORDS = LABELS.account;
const SIGNED_OUT_KEY = "kb.admin.signed_out";
const ui = {
  strip: byTestId("account"),
  name: byTestId("account-name"),
  role: byTestId("account-role"),
  password: byTestId("change-password"),
  signOut: byTestId("sign-out"),
};
let account = null;

function render(current) {
  account = current;
  ui.strip.hidden = !current;
  if (!current) return;
  ui.name.textContent = current.username;
  ui.role.textContent = roleLabel(current.role);
  // The break-glass token names no person: it has no password and no session to end.
  ui.password.hidden = current.role === "operator";
  // has_password: true, false, or null when the service does not say (then: 修改密码).
  ui.password.textContent = current.has_password === false ? WORDS.set_password : WORDS.change_password;
}

async function signOut() {
  ui.signOut.disabled = true;
  try {
    if (account && account.role !== "operator") await api("/api/user/logout", { method: "POST", session: operator });
  } catch {
    // Ended or refused already: either way this tab forgets the token below.
  }
  forgetAdminToken();
  tabStorage.setItem(SIGNED_OUT_KEY, "1");
  // A fresh page: nothing the previous account saw stays on screen for the next one.
  location.replace(location.pathname + location.search);
}

/** Once after a sign-out's reload: "已退出登录。" for the sign-in form, else "". */
export function signedOutNotice() {
  const was = tabStorage.getItem(SIGNED_OUT_KEY);
  tabStorage.removeItem(SIGNED_OUT_KEY);
  return was ? WORDS.signed_out : "";
}

export function initAccount() {
  onAccountChanged(render);
  ui.password.addEventListener("click", () => openPasswordPanel({ hasPassword: account ? account.has_password : true }));
  ui.signOut.addEventListener("click", signOut);
}
