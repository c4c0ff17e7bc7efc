// The signed-in person's password (PUT /api/user/re_password): "设置密码" after a one-time
// sign-in link (no current password yet, so it is sent as ""; the form can be skipped), and
// "修改密码" from the account strip. Other sessions of the account end when it changes.
import { LABELS } from "./labels.js";
import { api, errorNode } from "./api.js";
import { operator } from "./admin-api.js";
import { byTestId, clear, h } from "./dom.js";

const WORDS = LABELS.account;
const MIN = 8;
const MAX = 256;

const ui = {
  panel: document.getElementById("password-panel"),
  title: document.getElementById("password-title"),
  hint: document.getElementById("password-hint"),
  form: document.getElementById("password-form"),
  currentField: document.getElementById("current-password-field"),
  currentLabel: document.querySelector("#current-password-field .field-label"),
  current: byTestId("current-password"),
  password: byTestId("new-password"),
  repeat: byTestId("repeat-password"),
  save: byTestId("save-password"),
  status: byTestId("password-status"),
  close: byTestId("close-password"),
};

let firstTime = false;
let changed = () => {};

function say(content) {
  clear(ui.status);
  if (content) ui.status.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

/**
 * afterLink: signed in by a one-time link, so "设置密码" and skippable. hasPassword: GET /api/user's
 * has_password; only an account known to have none is asked for no current password ("" is sent).
 */
export function openPasswordPanel({ afterLink = false, hasPassword = true } = {}) {
  firstTime = hasPassword === false;
  ui.title.textContent = afterLink || firstTime ? WORDS.set_password : WORDS.change_password;
  ui.hint.textContent = afterLink ? WORDS.set_password_hint : "";
  ui.hint.hidden = !afterLink;
  ui.currentField.hidden = firstTime;
  // Not known whether there is one (has_password null): ask, and say that none is fine.
  const unknown = hasPassword !== true && hasPassword !== false;
  ui.currentLabel.textContent = unknown ? WORDS.current_password_optional : WORDS.current_password;
  ui.close.textContent = afterLink ? WORDS.skip : WORDS.cancel;
  ui.form.hidden = false;
  ui.form.reset();
  say(null);
  ui.panel.hidden = false;
  ui.panel.scrollIntoView({ block: "nearest" });
  (firstTime ? ui.password : ui.current).focus();
}

export function closePasswordPanel() {
  ui.form.reset();
  ui.panel.hidden = true;
}

function refusal() {
  const password = ui.password.value;
  if (password.length < MIN || password.length > MAX) return WORDS.password_rule;
  if (password !== ui.repeat.value) return WORDS.password_mismatch;
  return "";
}

async function save(event) {
  event.preventDefault();
  const problem = refusal();
  if (problem) return say(problem);
  const body = { current_password: firstTime ? "" : ui.current.value, password: ui.password.value, re_password: ui.repeat.value };
  ui.save.disabled = true;
  try {
    // api(), not call(): a wrong current password must not read as "signed out".
    await api("/api/user/re_password", { method: "PUT", body, session: operator });
    ui.form.reset();
    ui.form.hidden = true;
    ui.close.textContent = WORDS.close;
    say(h("span", { testid: "password-saved" }, WORDS.password_saved));
    changed();
  } catch (err) {
    say(errorNode(err, "password-error", { 401: WORDS.wrong_password, 403: WORDS.wrong_password, 429: WORDS.too_many }));
  } finally {
    ui.save.disabled = false;
  }
}

/** onChanged: after a password is saved (the account strip then says 修改密码, not 设置密码). */
export function initPassword(onChanged) {
  changed = onChanged;
  ui.form.addEventListener("submit", save);
  ui.close.addEventListener("click", closePasswordPanel);
}
