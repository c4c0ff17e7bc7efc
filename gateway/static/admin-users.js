// The "用户" section, for administrators: every account (GET /api/user_manage) with its role,
// grants and state; change them (PUT …/{id}), reset a password (PUT …/{id}/re_password), make a
// one-time sign-in link (POST …/{id}/signin_link: the page shows the whole address to hand
// over), delete (DELETE …/{id}); and the "新建用户" form (admin-user-form.js).
import { LABELS } from "./labels.js";
import { call, adminError } from "./admin-api.js";
import { can, me, onAccountChanged, roleLabel } from "./admin-me.js";
import { byTestId, clear, formatTime, h } from "./dom.js";
import { fill } from "./admin-words.js";
import { copyField } from "./copy.js";
import { grantsBox, passwordPair, passwordProblem, renderCreateForm, roleSelect } from "./admin-user-form.js";

const WORDS = LABELS.users;
const ui = {
  list: byTestId("user-list"),
  status: byTestId("users-status"),
  form: document.getElementById("user-create-form"),
};
let choices = { datasets: [], applications: [] };
let loads = 0;

const userPath = (user) => `/api/user_manage/${encodeURIComponent(user.id)}`;

function status(content) {
  clear(ui.status);
  if (content) ui.status.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

/** Run a change; then the list again with `done` said, or the error said and the list as it was. */
async function change(run, done) {
  try {
    await run();
    await loadUsers();
    status(done);
    return true;
  } catch (err) {
    status(adminError(err, "users-error"));
    return false;
  }
}

function editor(user, panel) {
  const role = roleSelect(user.role, "edit-user-role");
  const active = h("input", { type: "checkbox", testid: "edit-user-active", checked: user.is_active });
  const grants = grantsBox(choices, user, role, "edit-user");
  const save = () => {
    const body = { role: role.value, is_active: active.checked, ...grants.read() };
    change(() => call(userPath(user), { method: "PUT", body }), fill(WORDS.saved, user));
  };
  return h(
    "div",
    { class: "stack user-panel", testid: "user-editor" },
    h("label", { class: "field" }, h("span", { class: "field-label" }, WORDS.role), role),
    h("label", { class: "check" }, active, WORDS.active),
    grants.node,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", testid: "save-user", onclick: save }, WORDS.save),
      h("button", { type: "button", class: "secondary", onclick: () => clear(panel) }, WORDS.cancel),
    ),
  );
}

function resetForm(user, panel) {
  const pair = passwordPair("reset-user", LABELS.account.new_password);
  const save = () => {
    const problem = passwordProblem(pair.password.value, pair.repeat.value);
    if (problem) return status(problem);
    const body = { password: pair.password.value, re_password: pair.repeat.value };
    change(() => call(`${userPath(user)}/re_password`, { method: "PUT", body }), fill(WORDS.password_reset, user));
  };
  return h(
    "div",
    { class: "stack user-panel", testid: "user-reset" },
    h("p", { class: "muted small" }, WORDS.reset_hint),
    ...pair.nodes,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", testid: "save-user-password", onclick: save }, WORDS.reset_password),
      h("button", { type: "button", class: "secondary", onclick: () => clear(panel) }, WORDS.cancel),
    ),
  );
}

async function signInLink(user, panel) {
  clear(panel);
  try {
    const link = await call(`${userPath(user)}/signin_link`, { method: "POST" });
    const url = `${location.origin}/ui/admin#signin=${encodeURIComponent(link.code)}`;
    panel.append(
      h(
        "div",
        { class: "stack user-panel", testid: "user-signin-link" },
        h("p", { class: "small" }, fill(WORDS.link_hint, { expires: formatTime(link.expires_at) })),
        copyField(url, "signin-link-url"),
      ),
    );
  } catch (err) {
    panel.append(adminError(err, "users-error"));
  }
}

function remove(user) {
  if (!window.confirm(fill(WORDS.delete_confirm, user))) return;
  change(() => call(userPath(user), { method: "DELETE" }), fill(WORDS.deleted, user));
}

function userRow(user) {
  const panel = h("div", { class: "user-panel-slot" });
  const open = (make) => () => clear(panel).append(make(user, panel));
  const grants = user.role === "admin" ? WORDS.all_grants : fill(WORDS.grants, { datasets: (user.datasets || []).length, applications: (user.applications || []).length });
  const signedIn = user.last_sign_in_time ? formatTime(user.last_sign_in_time) : WORDS.never_signed_in;
  const self = me() && me().id === user.id;
  return h(
    "li",
    { class: "item static user", testid: "user-row", "data-id": user.id, "data-username": user.username, "data-active": String(Boolean(user.is_active)) },
    h(
      "div",
      { class: "item-main grow" },
      h(
        "div",
        { class: "user-head" },
        h("strong", { class: "item-name", testid: "user-name", "data-user-content": true }, user.username),
        h("span", { class: "pill", testid: "user-role" }, roleLabel(user.role)),
        user.is_active ? null : h("span", { class: "pill warn", testid: "user-inactive" }, WORDS.inactive),
      ),
      h("div", { class: "item-meta muted" }, `${grants} · ${WORDS.last_sign_in}${signedIn}`),
      h(
        "div",
        { class: "row wrap user-actions" },
        h("button", { type: "button", class: "link", testid: "edit-user", onclick: open(editor) }, WORDS.edit),
        h("button", { type: "button", class: "link", testid: "reset-user-password", onclick: open(resetForm) }, WORDS.reset_password),
        h("button", { type: "button", class: "link", testid: "make-signin-link", onclick: () => signInLink(user, panel) }, WORDS.signin_link),
        self ? null : h("button", { type: "button", class: "link danger-text", testid: "delete-user", onclick: () => remove(user) }, WORDS.delete),
      ),
      panel,
    ),
  );
}

export async function loadUsers() {
  const load = ++loads;
  if (!can("admin")) {
    clear(ui.list);
    clear(ui.form);
    return;
  }
  let users;
  try {
    const [listed, datasets, applications] = await Promise.all([call("/api/user_manage"), call("/api/dataset"), call("/api/application")]);
    if (load !== loads) return;
    users = listed || [];
    choices = { datasets: datasets || [], applications: applications || [] };
  } catch (err) {
    status(adminError(err, "users-error"));
    return;
  }
  clear(ui.list).append(...(users.length ? users.map(userRow) : [h("li", { class: "muted empty-row" }, WORDS.none)]));
  // The form follows the current datasets and applications, unless someone is filling it in.
  const typing = ui.form.querySelector("[data-testid=new-user-name]");
  if (!typing || !typing.value) renderCreateForm(ui.form, choices, created);
}

async function created(user) {
  await loadUsers();
  status(h("span", { testid: "user-created" }, fill(WORDS.created, user)));
}

export function initUsers() {
  onAccountChanged(() => {
    clear(ui.form);
    status(null);
    loadUsers();
  });
}
