// The operator page's "模型" section: model endpoints registered, checked (one small
// real call, its answer in words), edited and deleted, and the application form's choice of
// chat model. API keys are typed in and never shown again: the list has only "…a1b2".
// Data: GET/POST /api/model, PUT/DELETE /api/model/{id}, POST /api/model/{id}/check.
import { LABELS } from "./labels.js";
import { call, adminError } from "./admin-api.js";
import { byTestId, clear, h } from "./dom.js";

const WORDS = LABELS.models;
const T = LABELS.admin_text;
const PROVIDERS = ["openai", "deepseek", "dashscope", "vllm", "sglang", "ollama", "generic"];
// The first-run notice names the kinds of endpoint the form takes, as people know them.
const PROVIDER_NAMES = ["DeepSeek", T.tongyi, "OpenAI", "vLLM", "SGLang", "Ollama", T.any_openai];
const ui = {
  list: byTestId("model-list"),
  status: byTestId("models-status"),
  form: document.getElementById("model-form"),
  chatChoice: byTestId("app-chat-model"),
};
let models = [];
let editing = null; // the model being edited, or null for a new one

function status(content) {
  clear(ui.status);
  if (content) ui.status.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

// Where a base URL sends requests, compared as the service compares them (scheme, host, port,
// path; case, a default port and a trailing slash do not count): a stored key is only ever sent
// to the address it was entered for, so an edit that moves the address asks for the key again.
function address(url) {
  try {
    const u = new URL(url.trim());
    return `${u.protocol}//${u.hostname.replace(/\.$/, "")}:${u.port}${u.pathname.replace(/\/+$/, "")}`;
  } catch {
    return url.trim();
  }
}

const field = (label, input) => h("label", { class: "field" }, h("span", { class: "field-label" }, label), input);
const options = (values, words = {}) => values.map((v) => h("option", { value: v }, words[v] || v));

function renderForm() {
  const m = editing || { name: "", provider: "generic", api_base: "", model_name: "", purpose: "chat" };
  const inputs = {
    name: h("input", { maxlength: 100, testid: "model-name", value: m.name }),
    provider: h("select", { testid: "model-provider" }, options(PROVIDERS)),
    api_base: h("input", { maxlength: 500, testid: "model-base-url", value: m.api_base, placeholder: "https://api.openai.com/v1", lang: "zxx" }),
    model_name: h("input", { maxlength: 200, testid: "model-id", value: m.model_name }),
    purpose: h("select", { testid: "model-purpose" }, options(Object.keys(WORDS.purposes), WORDS.purposes)),
    api_key: h("input", { type: "password", maxlength: 500, testid: "model-api-key", placeholder: editing ? WORDS.keep_key : "" }),
  };
  inputs.provider.value = m.provider;
  inputs.purpose.value = m.purpose;
  // Editing a model that has a key: moving its address needs the key for the new address.
  const moved = () => Boolean(editing && editing.key_hint) && address(inputs.api_base.value) !== address(editing.api_base);
  inputs.api_base.oninput = () => {
    inputs.api_key.placeholder = moved() ? WORDS.key_for_new_address : WORDS.keep_key;
  };
  const submit = h("button", { type: "submit", testid: "save-model" }, editing ? WORDS.save : WORDS.register);
  const cancel = editing ? h("button", { type: "button", class: "link", onclick: () => edit(null) }, WORDS.cancel) : null;
  clear(ui.form).append(
    ...["name", "provider", "api_base", "model_name", "purpose", "api_key"].map((k) => field(WORDS[k], inputs[k])),
    h("div", { class: "row" }, submit, cancel),
  );
  ui.form.onsubmit = (event) => {
    event.preventDefault();
    save(inputs, moved());
  };
}

function bodyFrom(inputs) {
  const value = (k) => inputs[k].value.trim();
  if (!value("name") || !value("api_base") || !value("model_name")) return null;
  const credential = { api_base: value("api_base") };
  // Editing: an empty key field keeps the stored key (it is never shown, so it cannot be re-sent).
  if (!editing || value("api_key")) credential.api_key = value("api_key");
  return { name: value("name"), provider: inputs.provider.value, model_name: value("model_name"), purpose: inputs.purpose.value, credential };
}

async function save(inputs, moved) {
  const body = bodyFrom(inputs);
  if (!body) return status(WORDS.missing_fields);
  if (moved && body.credential.api_key === undefined) {
    // The service refuses to keep the old key for another address: ask for the new one, or
    // save without a key when the operator says the new address needs none.
    if (!window.confirm(WORDS.no_key_confirm)) {
      inputs.api_key.focus();
      return status(WORDS.key_for_new_address);
    }
    body.credential.api_key = "";
  }
  const path = editing ? `/api/model/${encodeURIComponent(editing.id)}` : "/api/model";
  await change(() => call(path, { method: editing ? "PUT" : "POST", body }), WORDS.saved, () => (editing = null));
}

async function change(run, done, after) {
  try {
    await run();
    if (after) after();
    await loadModels();
    status(done);
  } catch (err) {
    status(adminError(err, "models-error"));
  }
}

async function check(model, out) {
  out.textContent = WORDS.checking;
  try {
    const result = await call(`/api/model/${encodeURIComponent(model.id)}/check`, { method: "POST" });
    out.textContent = (result.ok ? WORDS.check_ok : WORDS.check_failed) + result.message;
    out.className = result.ok ? "muted small" : "error small";
  } catch (err) {
    clear(out).appendChild(adminError(err, "model-check-error"));
  }
}

function edit(model) {
  editing = model;
  renderForm();
}

function row(model) {
  const out = h("div", { class: "muted small", testid: "model-check-result", "aria-live": "polite" });
  const remove = () =>
    window.confirm(WORDS.delete_confirm) &&
    change(() => call(`/api/model/${encodeURIComponent(model.id)}`, { method: "DELETE" }), WORDS.deleted);
  return h(
    "li",
    { testid: "model-row", "data-id": model.id },
    h("strong", { "data-user-content": true }, model.name),
    h("div", { class: "muted small" }, `${model.provider} · ${model.model_name} · ${WORDS.purposes[model.purpose] || model.purpose}`),
    h("div", { class: "muted small" }, h("span", { lang: "zxx" }, model.api_base), ` · ${WORDS.key_hint} `, model.key_hint ? h("span", { lang: "zxx" }, model.key_hint) : WORDS.no_key),
    model.application_ids.length ? h("div", { class: "muted small" }, `${WORDS.used_by}: ${model.application_ids.length}`) : null,
    h(
      "div",
      { class: "row wrap", "data-needs": "admin" },
      h("button", { type: "button", class: "secondary", testid: "check-model", onclick: () => check(model, out) }, WORDS.check),
      h("button", { type: "button", class: "link", testid: "edit-model", onclick: () => edit(model) }, WORDS.edit),
      h("button", { type: "button", class: "link", testid: "delete-model", onclick: remove }, WORDS.delete),
    ),
    out,
  );
}

/** The application form's chat-model select: the deployment default, then the chat models. */
function renderChoice() {
  const chosen = ui.chatChoice.value;
  clear(ui.chatChoice).append(
    h("option", { value: "" }, WORDS.default_choice),
    ...models.filter((m) => m.purpose === "chat").map((m) => h("option", { value: m.id }, `${m.name} (${m.model_name})`)),
  );
  ui.chatChoice.value = chosen;
}

export async function loadModels() {
  try {
    models = (await call("/api/model")) || [];
  } catch (err) {
    status(adminError(err, "models-error"));
    return;
  }
  clear(ui.list).append(...(models.length ? models.map(row) : [h("li", { class: "muted" }, WORDS.none)]));
  renderChoice();
  document.dispatchEvent(new CustomEvent("kb:models-loaded", { detail: models })); // admin-rerank.js
  showFirstRun();
}

/** At the top of the page while every answer comes from the offline model (the deployment has
 * no model endpoint and none is registered): what that means, and a way to register one. */
async function showFirstRun() {
  const notice = document.querySelector("[data-testid=first-run]");
  try {
    const deployment = await call("/api/model/deployment");
    notice.hidden = !(deployment.chat_offline && deployment.chat_models === 0);
  } catch {
    notice.hidden = true; // someone who may not read the models: nothing to offer them
  }
}

function registerFirstModel() {
  document.getElementById("models").scrollIntoView();
  const form = ui.form;
  form.querySelector("[data-testid=model-purpose]").value = "chat";
  form.querySelector("[data-testid=model-name]").focus();
}

export function initModels() {
  for (const node of document.querySelectorAll("[data-label^='models.']")) {
    node.textContent = node.dataset.label.split(".").slice(1).reduce((words, key) => words[key], WORDS);
  }
  renderForm();
  document.querySelector("[data-testid=first-run-text]").textContent = WORDS.first_run.replace("{providers}", PROVIDER_NAMES.join(T.list_separator));
  const register = document.querySelector("[data-testid=first-run-register]");
  register.textContent = WORDS.first_run_action;
  register.addEventListener("click", registerFirstModel);
}
