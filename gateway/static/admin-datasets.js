// Knowledge bases on the operator page: list, create, delete, and which one is selected (its
// documents, uploads and paragraphs are admin-documents.js and admin-paragraphs.js).
import { h, clear, byTestId, filled, formatTime } from "./dom.js";
import { LABELS, fill } from "./labels.js";
import { call, adminError } from "./admin-api.js";

const ui = {
  list: document.getElementById("dataset-list"),
  status: document.getElementById("dataset-status"),
  name: byTestId("dataset-name"),
  desc: document.getElementById("dataset-desc"),
  create: byTestId("create-dataset"),
  model: byTestId("dataset-model"),
  embedding: document.getElementById("dataset-embedding"),
  panel: document.getElementById("dataset-panel"),
  panelEmpty: document.getElementById("dataset-panel-empty"),
  title: document.getElementById("dataset-title"),
};

let datasets = [];
let selectedId = "";
let embeddingModels = []; // registered models of purpose embedding: a dataset's choice
let switchPoll = 0;
const T = LABELS.admin_text;
const DEFAULT_MODEL = T.default_model;
const SWITCH_WORDS = { queued: T.switch_queued, embedding: T.switch_embedding, ready: T.switch_ready, failed: T.switch_failed, cancelled: T.switch_cancelled };
const RUNNING_SWITCH = new Set(["queued", "embedding"]);
const listeners = [];

/** Other parts (the application form, the hit test) follow the list and the selection. */
export const onDatasetsChanged = (cb) => listeners.push(cb);
export const selectedDataset = () => datasets.find((d) => d.id === selectedId) || null;
export const allDatasets = () => datasets;
const notify = () => listeners.forEach((cb) => cb(datasets, selectedDataset()));

function showStatus(target, content) {
  clear(target);
  if (content) target.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

function renderList() {
  clear(ui.list);
  if (!datasets.length) {
    ui.list.appendChild(h("li", { class: "muted empty-row" }, T.no_datasets));
    return;
  }
  for (const d of datasets) {
    const selected = d.id === selectedId;
    const item = h(
      "li",
      {
        class: "item",
        testid: "dataset",
        role: "option",
        tabindex: "0",
        "aria-selected": String(selected),
        "data-id": d.id,
        onclick: () => select(d.id),
        onkeydown: (e) => {
          if (e.target === item && (e.key === "Enter" || e.key === " ")) {
            e.preventDefault();
            select(d.id);
          }
        },
      },
      h("div", { class: "item-main" }, h("div", { class: "item-name", "data-user-content": true }, d.name), h("div", { class: "item-meta muted" }, fill(T.dataset_meta, { documents: d.document_count ?? 0, paragraphs: d.paragraph_count ?? 0, model: d.embedding_model_name || DEFAULT_MODEL }))),
      h("button", { type: "button", class: "link danger-text", testid: "delete-dataset", "data-needs": "dataset_write", title: T.delete_dataset, onclick: (e) => removeDataset(e, d) }, T.delete),
    );
    ui.list.appendChild(item);
  }
}

let loads = 0; // a list that arrives after a newer one (a poll crossing a change) is dropped

export async function loadDatasets() {
  const load = ++loads;
  try {
    const listed = (await call("/api/dataset")) || [];
    const models = (await call("/api/model?purpose=embedding").catch(() => [])) || [];
    if (load !== loads) return;
    datasets = listed;
    embeddingModels = models;
    showStatus(ui.status, null);
  } catch (err) {
    showStatus(ui.status, adminError(err, "dataset-error"));
    return;
  }
  if (!datasets.some((d) => d.id === selectedId)) selectedId = datasets.length ? datasets[0].id : "";
  renderModelChoices(ui.model, ui.model.value || "");
  renderList();
  renderPanel();
  notify();
  // A change of embedding model runs in the background: follow it until it has ended.
  clearTimeout(switchPoll);
  if (datasets.some((d) => RUNNING_SWITCH.has(d.embedding_switch?.status))) switchPoll = setTimeout(loadDatasets, 1000);
}

function renderModelChoices(select, current) {
  clear(select);
  select.appendChild(h("option", { value: "" }, DEFAULT_MODEL));
  for (const m of embeddingModels) select.appendChild(h("option", { value: m.id }, `${m.name} (${m.model_name})`));
  select.value = current;
}

function select(id) {
  if (id === selectedId) return;
  selectedId = id;
  renderList();
  renderPanel();
  notify();
}

async function createDataset() {
  const name = ui.name.value.trim();
  if (!name) {
    showStatus(ui.status, T.dataset_name_needed);
    ui.name.focus();
    return;
  }
  ui.create.disabled = true;
  try {
    const created = await call("/api/dataset", { method: "POST", body: { name, desc: ui.desc.value.trim(), embedding_model_id: ui.model.value } });
    ui.name.value = "";
    ui.desc.value = "";
    if (created && created.id) selectedId = created.id;
    showStatus(ui.status, h("span", {}, filled(T.created_name, { name })));
    await loadDatasets();
  } catch (err) {
    showStatus(ui.status, adminError(err, "dataset-error"));
  } finally {
    ui.create.disabled = false;
  }
}

/** "; removed from the datasets of “A”, “B”": the applications that searched the deleted dataset no longer do. */
function detachedText(detached) {
  if (!detached.length) return "";
  return filled(T.detached_from, { apps: detached.map((a) => fill(T.quoted, { name: a.name })).join(T.list_separator) });
}

async function removeDataset(event, d) {
  event.stopPropagation();
  if (!window.confirm(fill(T.confirm_delete_dataset, { name: d.name }))) return;
  try {
    const answer = await call(`/api/dataset/${encodeURIComponent(d.id)}`, { method: "DELETE" });
    const detached = (answer && answer.detached_applications) || [];
    showStatus(ui.status, h("span", { testid: "dataset-deleted" }, filled(T.deleted_name, { name: d.name }), detachedText(detached)));
    if (selectedId === d.id) selectedId = "";
    // The application section reloads and tells the open application it lost this dataset.
    document.dispatchEvent(new CustomEvent("kb:dataset-deleted", { detail: { dataset: d, detached } }));
    await loadDatasets();
  } catch (err) {
    showStatus(ui.status, adminError(err, "dataset-error"));
  }
}

function renderPanel() {
  const d = selectedDataset();
  ui.panel.hidden = !d;
  ui.panelEmpty.hidden = Boolean(d);
  if (!d) return;
  ui.title.textContent = d.name;
  renderEmbedding(d);
  renderSync(d);
}

// How often a knowledge base's web pages are fetched again (whole hours; 0 = only when asked).
const SYNC_CHOICES = [
  [0, T.sync_never],
  [1, T.sync_hourly],
  [24, T.sync_daily],
  [168, T.sync_weekly],
  [720, T.sync_30_days],
];

/** The web pages' sync: the schedule, and a button that syncs every page now. */
function renderSync(d) {
  const current = d.sync_hours || 0;
  const choice = h("select", { testid: "dataset-sync-hours", "aria-label": T.web_sync_label });
  const known = SYNC_CHOICES.some(([hours]) => hours === current) ? SYNC_CHOICES : [...SYNC_CHOICES, [current, fill(T.sync_every_hours, { hours: current })]];
  for (const [hours, label] of known) choice.appendChild(h("option", { value: String(hours), selected: hours === current }, label));
  const save = h("button", { type: "button", testid: "save-dataset-sync", onclick: () => saveSync(d, Number(choice.value)) }, T.save);
  const now = h("button", { type: "button", class: "link", testid: "sync-dataset-now", onclick: () => syncNow(d) }, T.sync_all_now);
  const due = current && d.sync_due_at ? fill(T.next_sync, { time: formatTime(d.sync_due_at) }) : T.manual_sync_only;
  ui.embedding.append(
    h("div", { class: "inline", "data-needs": "dataset_write" }, h("span", { class: "muted small" }, T.web_sync), choice, save, now),
    h("div", { class: "muted small", testid: "dataset-sync-due" }, due),
  );
}

async function saveSync(d, hours) {
  try {
    await call(`/api/dataset/${encodeURIComponent(d.id)}`, { method: "PUT", body: { sync_hours: hours } });
    await loadDatasets();
  } catch (err) {
    showStatus(ui.status, adminError(err, "dataset-error"));
  }
}

/** Every web page of the knowledge base fetched again; says how many changed. */
async function syncNow(d) {
  showStatus(ui.status, T.syncing_web);
  try {
    const synced = (await call(`/api/dataset/${encodeURIComponent(d.id)}/sync_web`, { method: "PUT", body: { sync_type: "replace" } })) || [];
    const count = (outcome) => synced.filter((doc) => doc.sync && doc.sync.outcome === outcome).length;
    const text = synced.length
      ? fill(T.synced_pages, { synced: synced.length, queued: count("queued"), unchanged: count("unchanged"), failed: count("gone") + count("failed") })
      : T.no_web_documents;
    showStatus(ui.status, h("span", { testid: "dataset-sync-outcome" }, text));
  } catch (err) {
    showStatus(ui.status, adminError(err, "dataset-error"));
  }
  notify();
}

/** The dataset's embedding model, the newest change of it, and a control to change it. */
function renderEmbedding(d) {
  // A poll re-renders the panel: a model the operator picked but has not applied yet stays picked.
  const picked = ui.embedding.dataset.id === d.id ? ui.embedding.querySelector("select")?.value : undefined;
  clear(ui.embedding);
  ui.embedding.dataset.id = d.id;
  const sw = d.embedding_switch;
  const running = sw && RUNNING_SWITCH.has(sw.status);
  const choice = h("select", { testid: "dataset-model-change", "aria-label": T.change_model_label });
  renderModelChoices(choice, running ? sw.to_model_id : picked ?? d.embedding_model_id);
  // While a change runs, the button cancels it (the current model chosen again).
  const onclick = running ? () => changeModel(d, d.embedding_model_id) : () => changeModel(d, choice.value);
  const change = h("button", { type: "button", testid: "change-dataset-model", onclick }, running ? T.cancel_change : T.change);
  ui.embedding.append(
    h("div", { class: "muted small" }, fill(T.embedding_line, { model: d.embedding_model_name || DEFAULT_MODEL, dimension: d.embedding_dimension })),
    h("div", { class: "inline", "data-needs": "dataset_write" }, choice, change),
  );
  if (sw) {
    const progress = sw.progress.total ? ` ${sw.progress.done}/${sw.progress.total}` : "";
    const text = fill(T.switch_line, { status: SWITCH_WORDS[sw.status] || sw.status, progress, error: sw.error ? fill(T.in_brackets, { text: sw.error }) : "" });
    ui.embedding.appendChild(h("div", { class: sw.status === "failed" ? "danger-text small" : "muted small", testid: "dataset-switch" }, text));
  }
}

async function changeModel(d, modelId) {
  try {
    await call(`/api/dataset/${encodeURIComponent(d.id)}`, { method: "PUT", body: { embedding_model_id: modelId } });
    await loadDatasets();
  } catch (err) {
    showStatus(ui.status, adminError(err, "dataset-error"));
  }
}

export function initDatasets() {
  ui.create.addEventListener("click", createDataset);
  ui.name.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.isComposing) {
      e.preventDefault();
      createDataset();
    }
  });
}
