// Applications on the operator page: list, edit form, and ways in (chat link, share link, API key).
import { h, clear, byTestId, filled } from "./dom.js";
import { call, adminError } from "./admin-api.js";
import { allDatasets, onDatasetsChanged } from "./admin-datasets.js";
import { LABELS, SEARCH_MODE_LABELS, fill } from "./labels.js";
import { initRerankChoice } from "./admin-rerank.js";
import { can, onAccountChanged } from "./admin-me.js";
import { fillPageLook, initPageLook, readPageLook } from "./admin-page-look.js";
import { copyButton } from "./copy.js";

const T = LABELS.admin_text;
const $ = (id) => document.getElementById(id);
const ui = {
  list: $("app-list"),
  listStatus: $("app-list-status"),
  newApp: byTestId("new-application"),
  formTitle: $("app-form-title"),
  name: $("app-name"),
  desc: $("app-desc"),
  datasets: $("app-datasets"),
  dialogue: $("app-dialogue"),
  top: $("app-top"),
  similarity: $("app-similarity"),
  mode: $("app-mode"),
  prompt: $("app-prompt"),
  system: $("app-system"),
  chatModel: $("app-chat-model"), // its options come from admin-models.js
  rerankModel: $("app-rerank-model"), // its options come from admin-rerank.js
  save: byTestId("save-application"),
  status: byTestId("app-status"),
  access: $("app-access"),
  openChat: byTestId("open-chat"),
  accessNum: $("share-access-num"),
  createShare: byTestId("create-share-link"),
  shareOut: $("share-out"),
  createKey: byTestId("create-api-key"),
  keyOut: $("key-out"),
};

let apps = [];
let selectedId = "";
const selected = () => apps.find((a) => a.id === selectedId) || null;

function status(content) {
  clear(ui.status);
  if (content) ui.status.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

function renderList() {
  clear(ui.list);
  if (!apps.length) ui.list.appendChild(h("li", { class: "muted empty-row" }, T.no_apps));
  for (const a of apps) {
    const item = h(
      "li",
      {
        class: "item",
        testid: "application",
        role: "option",
        tabindex: "0",
        "aria-selected": String(a.id === selectedId),
        "data-id": a.id,
        onclick: () => select(a.id),
        onkeydown: (e) => {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            select(a.id);
          }
        },
      },
      h("div", { class: "item-main" }, h("div", { class: "item-name", "data-user-content": true }, a.name), h("div", { class: "item-meta muted" }, fill(T.app_meta, { datasets: (a.dataset_id_list || []).length, mode: SEARCH_MODE_LABELS[a.dataset_setting?.search_mode] || SEARCH_MODE_LABELS.hybrid }))),
    );
    ui.list.appendChild(item);
  }
}

/** Someone who may not change applications (a viewer) reads the form but cannot edit it. */
function lockForm() {
  const locked = !can("application_write");
  for (const input of document.getElementById("app-form").querySelectorAll("input, select, textarea")) input.disabled = locked;
}

/** Dataset checkboxes, keeping the ticks the operator already made. */
function renderDatasetChoices(checkedIds) {
  const checked = new Set(checkedIds ?? [...ui.datasets.querySelectorAll("input:checked")].map((i) => i.value));
  clear(ui.datasets);
  const datasets = allDatasets();
  if (!datasets.length) ui.datasets.appendChild(h("span", { class: "muted" }, T.no_datasets_yet));
  for (const d of datasets) {
    ui.datasets.appendChild(
      h("label", { class: "check" }, h("input", { type: "checkbox", value: d.id, testid: "app-dataset", checked: checked.has(d.id) }), h("span", { "data-user-content": true }, d.name)),
    );
  }
  lockForm();
}

function fillForm(app) {
  const a = app || { name: "", desc: "", dataset_id_list: [], dialogue_number: 5, dataset_setting: { top_n: 5, similarity: 0.8, search_mode: "hybrid" }, model_setting: { prompt: "", system: "" } };
  ui.formTitle.replaceChildren(...(app ? filled(T.edit_app, { name: app.name }) : [LABELS.admin_page.new_application]));
  ui.name.value = a.name || "";
  ui.desc.value = a.desc || "";
  renderDatasetChoices(a.dataset_id_list || []);
  ui.dialogue.value = a.dialogue_number ?? 5;
  ui.top.value = a.dataset_setting?.top_n ?? 5;
  ui.similarity.value = a.dataset_setting?.similarity ?? 0.8;
  ui.mode.value = a.dataset_setting?.search_mode || "hybrid";
  ui.prompt.value = a.model_setting?.prompt || "";
  ui.system.value = a.model_setting?.system || "";
  ui.chatModel.value = a.model_setting?.chat_model_id || "";
  ui.rerankModel.value = a.model_setting?.rerank_model_id || "";
  fillPageLook(app);
  renderAccess();
}

function renderAccess() {
  const app = selected();
  ui.access.hidden = !app;
  clear(ui.shareOut);
  clear(ui.keyOut);
  // The credentials section (admin-credentials.js) follows the selected application.
  document.dispatchEvent(new CustomEvent("kb:application-selected", { detail: { id: app ? app.id : "" } }));
  if (!app) return;
  ui.openChat.href = `/ui/chat/${encodeURIComponent(app.id)}`;
}

function select(id) {
  selectedId = id;
  renderList();
  fillForm(selected());
  status(null);
}

export async function loadApplications() {
  try {
    apps = (await call("/api/application")) || [];
    clear(ui.listStatus);
  } catch (err) {
    clear(ui.listStatus).appendChild(adminError(err, "app-list-error"));
    return;
  }
  if (selectedId && !selected()) selectedId = "";
  renderList();
  renderAccess();
}

function readForm() {
  const name = ui.name.value.trim();
  const dialogue = Number(ui.dialogue.value);
  const top = Number(ui.top.value);
  const similarity = Number(ui.similarity.value);
  if (!name) return { error: T.app_name_needed };
  if (!Number.isInteger(dialogue) || dialogue < 0 || dialogue > 20) return { error: T.dialogue_range };
  if (!Number.isInteger(top) || top < 1 || top > 20) return { error: T.top_range_20 };
  if (!Number.isFinite(similarity) || similarity < 0 || similarity > 1) return { error: T.similarity_range };
  const look = readPageLook(selected());
  if (look.error) return { error: look.error };
  return {
    body: {
      name,
      desc: ui.desc.value.trim(),
      dataset_id_list: [...ui.datasets.querySelectorAll("input:checked")].map((i) => i.value),
      dialogue_number: dialogue,
      dataset_setting: { top_n: top, similarity, search_mode: ui.mode.value },
      model_setting: { prompt: ui.prompt.value, system: ui.system.value, chat_model_id: ui.chatModel.value, rerank_model_id: ui.rerankModel.value },
      ...look.body,
    },
  };
}

async function save(event) {
  event.preventDefault();
  const { body, error } = readForm();
  if (error) return status(error);
  ui.save.disabled = true;
  status(T.saving);
  try {
    const app = selectedId
      ? await call(`/api/application/${encodeURIComponent(selectedId)}`, { method: "PUT", body })
      : await call("/api/application", { method: "POST", body });
    selectedId = app.id;
    const index = apps.findIndex((a) => a.id === app.id);
    if (index >= 0) apps[index] = app;
    else apps.push(app);
    renderList();
    fillForm(app);
    status(h("span", {}, filled(T.saved_name, { name: app.name })));
    loadApplications(); // pick up anything changed elsewhere; the saved one stays selected
  } catch (err) {
    status(adminError(err, "app-error"));
  } finally {
    ui.save.disabled = false;
  }
}

async function createShareLink() {
  const app = selected();
  if (!app) return;
  const accessNum = Number(ui.accessNum.value) || 100;
  clear(ui.shareOut);
  try {
    const data = await call(`/api/application/${encodeURIComponent(app.id)}/access_token`, { method: "POST", body: { access_num: accessNum } });
    const url = `${location.origin}/ui/share/${encodeURIComponent(data.access_token)}`;
    document.dispatchEvent(new CustomEvent("kb:credentials-changed"));
    ui.shareOut.append(
      h("span", { class: "label" }, T.share_link),
      h("a", { testid: "share-link", href: url }, url),
      copyButton(url, "share-link-copy"),
      h("small", { class: "muted" }, fill(T.access_num, { count: data.access_num })),
    );
  } catch (err) {
    ui.shareOut.appendChild(adminError(err, "share-error"));
  }
}

async function createApiKey() {
  const app = selected();
  if (!app) return;
  clear(ui.keyOut);
  try {
    const data = await call(`/api/application/${encodeURIComponent(app.id)}/api_key`, { method: "POST" });
    const chatUrl = `/ui/chat/${encodeURIComponent(app.id)}#key=${encodeURIComponent(data.secret_key)}`;
    document.dispatchEvent(new CustomEvent("kb:credentials-changed"));
    ui.keyOut.append(
      h("div", {}, h("span", { class: "label" }, T.api_key), h("code", { testid: "api-key", class: "secret" }, data.secret_key), copyButton(data.secret_key, "api-key-copy")),
      h("small", { class: "muted" }, T.shown_once),
      h("div", {}, h("a", { testid: "api-key-chat", href: chatUrl }, T.chat_with_key)),
    );
  } catch (err) {
    ui.keyOut.appendChild(adminError(err, "api-key-error"));
  }
}

export function initApplications() {
  initRerankChoice();
  initPageLook();
  document.getElementById("app-form").addEventListener("submit", save);
  ui.newApp.addEventListener("click", () => {
    selectedId = "";
    renderList();
    fillForm(null);
    status(null);
    ui.name.focus();
  });
  ui.createShare.addEventListener("click", createShareLink);
  ui.createKey.addEventListener("click", createApiKey);
  onDatasetsChanged(() => renderDatasetChoices());
  onAccountChanged(lockForm);
  // A deleted dataset leaves every application that searched it: reload, and say so on the open one.
  document.addEventListener("kb:dataset-deleted", async (event) => {
    const { dataset, detached } = event.detail;
    const openOne = detached.some((a) => a.id === selectedId);
    await loadApplications();
    if (openOne && selected()) {
      fillForm(selected());
      status(h("span", { testid: "app-dataset-detached" }, filled(T.dataset_detached, { name: dataset.name })));
    }
  });
  fillForm(null);
}
