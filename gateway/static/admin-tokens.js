// "个人令牌": the signed-in person's own tokens for scripts and the CLI (GET/POST /api/user/token,
// DELETE /api/user/token/{id}). A token acts as its owner, with the owner's role; a new one is
// shown once (only its SHA-256 is kept), the list shows its first characters.
import { LABELS } from "./labels.js";
import { call, adminError } from "./admin-api.js";
import { me, onAccountChanged } from "./admin-me.js";
import { byTestId, clear, formatTime, h } from "./dom.js";
import { fill } from "./admin-words.js";
import { copyField } from "./copy.js";

const WORDS = LABELS.personal_tokens;
const COLON = LABELS.admin_text.colon;
const ui = {
  section: document.getElementById("tokens"),
  form: document.getElementById("token-create-form"),
  out: byTestId("new-token-out"),
  status: byTestId("tokens-status"),
  list: byTestId("token-list"),
};

const expired = (t) => Boolean(t.expires_at) && new Date(t.expires_at) <= new Date();
const stateWord = (t) => (!t.is_active ? WORDS.revoked : expired(t) ? WORDS.expired : WORDS.is_active);

function status(content) {
  clear(ui.status);
  if (content) ui.status.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

function tokenRow(token) {
  const revoke = async () => {
    if (!window.confirm(fill(WORDS.revoke_confirm, token))) return;
    try {
      await call(`/api/user/token/${encodeURIComponent(token.id)}`, { method: "DELETE" });
      await loadTokens();
      status(fill(WORDS.revoked_done, token));
    } catch (err) {
      status(adminError(err, "tokens-error"));
    }
  };
  const live = token.is_active && !expired(token);
  return h(
    "li",
    { class: "credential", testid: "token-row", "data-id": token.id, "data-active": String(live) },
    h("div", {}, h("strong", { "data-user-content": true }, token.name), " ", h("code", {}, `${token.prefix || ""}…`), " ", h("span", { class: "pill", testid: "token-state" }, stateWord(token))),
    h(
      "div",
      { class: "muted small" },
      `${WORDS.create_time}${COLON}${formatTime(token.create_time)}`,
      ` · ${WORDS.last_used}${COLON}${token.last_used_time ? formatTime(token.last_used_time) : WORDS.never_used}`,
      ` · ${WORDS.expires_at}${COLON}${token.expires_at ? formatTime(token.expires_at) : WORDS.never_expires}`,
    ),
    live ? h("div", { class: "row" }, h("button", { type: "button", class: "link danger-text", testid: "revoke-token", onclick: revoke }, WORDS.revoke)) : null,
  );
}

/** An RFC 3339 time from the optional datetime-local input: "" for none, null when in the past. */
function expiryFrom(input) {
  if (!input.value) return "";
  const when = new Date(input.value);
  return Number.isNaN(when.getTime()) || when <= new Date() ? null : when.toISOString();
}

function renderForm() {
  const name = h("input", { testid: "token-name", maxlength: 100, placeholder: WORDS.name_placeholder, "aria-label": WORDS.name, class: "grow" });
  const expiry = h("input", { type: "datetime-local", testid: "token-expiry", "aria-label": WORDS.expiry_choice, title: WORDS.expiry_choice });
  const submit = h("button", { type: "submit", testid: "create-token" }, WORDS.create);
  clear(ui.form).append(name, expiry, submit);
  ui.form.onsubmit = async (event) => {
    event.preventDefault();
    if (!name.value.trim()) return status(WORDS.missing_name);
    const expires_at = expiryFrom(expiry);
    if (expires_at === null) return status(WORDS.expiry_past);
    submit.disabled = true;
    clear(ui.out);
    try {
      const made = await call("/api/user/token", { method: "POST", body: { name: name.value.trim(), ...(expires_at ? { expires_at } : {}) } });
      ui.form.reset();
      ui.out.append(h("p", { class: "small" }, WORDS.new_token), copyField(made.token, "new-token"));
      await loadTokens();
      status(null);
    } catch (err) {
      status(adminError(err, "tokens-error"));
    } finally {
      submit.disabled = false;
    }
  };
}

export async function loadTokens() {
  try {
    const tokens = (await call("/api/user/token")) || [];
    clear(ui.list).append(...(tokens.length ? tokens.map(tokenRow) : [h("li", { class: "muted" }, WORDS.none)]));
  } catch (err) {
    status(adminError(err, "tokens-error"));
  }
}

export function initTokens() {
  renderForm();
  onAccountChanged((account) => {
    // The break-glass operator token is no person: it has no tokens of its own.
    ui.section.hidden = !account || account.role === "operator";
    document.querySelector('[data-testid="nav-tokens"]').hidden = ui.section.hidden;
    clear(ui.out);
    clear(ui.list);
    status(null);
    if (!ui.section.hidden && me()) loadTokens();
  });
}
