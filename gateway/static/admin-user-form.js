// The parts of the "用户" section that make or change an account: the role choice, the
// datasets and applications granted (checkboxes; an administrator needs none, so they hide),
// the password pair, and the "新建用户" form (POST /api/user_manage).
import { LABELS } from "./labels.js";
import { call, adminError } from "./admin-api.js";
import { clear, h } from "./dom.js";

const WORDS = LABELS.users;
const ROLES = LABELS.roles;
const ASSIGNABLE = ["admin", "editor", "viewer"];
const MIN_PASSWORD = 8;
const MAX_PASSWORD = 256;

const field = (label, input) => h("label", { class: "field" }, h("span", { class: "field-label" }, label), input);

/** A role select (管理员 / 编辑 / 查看者) set to value. */
export function roleSelect(value, testid) {
  const select = h("select", { testid }, ASSIGNABLE.map((role) => h("option", { value: role }, ROLES[role])));
  select.value = ASSIGNABLE.includes(value) ? value : "viewer";
  return select;
}

function checks(title, items, chosen, testid, empty) {
  const ticked = new Set(chosen);
  return h(
    "fieldset",
    { class: "field" },
    h("legend", { class: "field-label" }, title),
    h(
      "div",
      { class: "checks" },
      items.length
        ? items.map((item) => h("label", { class: "check" }, h("input", { type: "checkbox", value: item.id, testid, checked: ticked.has(item.id) }), h("span", { "data-user-content": true }, item.name)))
        : h("span", { class: "muted small" }, empty),
    ),
  );
}

/**
 * Checkboxes for the datasets and applications to grant, hidden while the role is 管理员.
 * → { node, read() → {datasets, applications} }
 */
export function grantsBox(choices, chosen, roleInput, prefix) {
  const datasets = checks(WORDS.datasets, choices.datasets, chosen.datasets || [], `${prefix}-dataset`, WORDS.no_datasets);
  const applications = checks(WORDS.applications, choices.applications, chosen.applications || [], `${prefix}-application`, WORDS.no_applications);
  const adminNote = h("p", { class: "muted small" }, WORDS.admin_sees_all);
  const node = h("div", { class: "stack grants" }, adminNote, datasets, applications);
  const follow = () => {
    const admin = roleInput.value === "admin";
    adminNote.hidden = !admin;
    datasets.hidden = admin;
    applications.hidden = admin;
  };
  roleInput.addEventListener("change", follow);
  follow();
  const ticked = (box) => [...box.querySelectorAll("input:checked")].map((i) => i.value);
  return { node, read: () => ({ datasets: ticked(datasets), applications: ticked(applications) }) };
}

/** The sentence saying what is wrong with a new password, or "". */
export function passwordProblem(password, repeat) {
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) return LABELS.account.password_rule;
  if (password !== repeat) return LABELS.account.password_mismatch;
  return "";
}

/** A password input and its repeat, for a new account or an administrator's reset. */
export function passwordPair(prefix, label) {
  const password = h("input", { type: "password", testid: `${prefix}-password`, autocomplete: "new-password", maxlength: MAX_PASSWORD });
  const repeat = h("input", { type: "password", testid: `${prefix}-repeat`, autocomplete: "new-password", maxlength: MAX_PASSWORD });
  return { password, repeat, nodes: [field(label, password), field(WORDS.repeat_password, repeat)] };
}

/** The "新建用户" form in `form`; onCreated(user) after the account exists (it draws the form again). */
export function renderCreateForm(form, choices, onCreated) {
  const username = h("input", { testid: "new-user-name", maxlength: 64, autocomplete: "off", autocapitalize: "off", spellcheck: "false" });
  const pair = passwordPair("new-user", WORDS.password);
  const role = roleSelect("viewer", "new-user-role");
  const grants = grantsBox(choices, {}, role, "new-user");
  const status = h("div", { class: "status", testid: "user-create-status", "aria-live": "polite" });
  const submit = h("button", { type: "submit", testid: "create-user" }, WORDS.create);
  const say = (content) => clear(status).append(typeof content === "string" ? h("span", {}, content) : content);
  clear(form).append(
    h("h3", {}, WORDS.create_title),
    field(WORDS.username, username),
    ...pair.nodes,
    field(WORDS.role, role),
    grants.node,
    h("div", { class: "row" }, submit),
    status,
  );
  form.onsubmit = async (event) => {
    event.preventDefault();
    const name = username.value.trim();
    if (!name) return say(WORDS.missing_username);
    const problem = passwordProblem(pair.password.value, pair.repeat.value);
    if (problem) return say(problem);
    const body = { username: name, password: pair.password.value, role: role.value, ...(role.value === "admin" ? {} : grants.read()) };
    submit.disabled = true;
    try {
      const user = await call("/api/user_manage", { method: "POST", body });
      form.reset();
      await onCreated({ ...user, username: user.username || name });
    } catch (err) {
      say(adminError(err, "user-create-error"));
    } finally {
      submit.disabled = false;
    }
  };
}
