// Knowledge bases on the operator page: list, create, delete, and which one is selected (its
// documents, uploads and paragraphs are admin-documents.js and admin-paragraphs.js).
import { h, clear, byTestId, formatTime } from "./dom.js";
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
const DEFAULT_MODEL = "默认向量模型";
const SWITCH_WORDS = { queued: "排队中", embedding: "重新向量化中", ready: "已完成", failed: "失败", cancelled: "已取消" };
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
    ui.list.appendChild(h("li", { class: "muted empty-row" }, "还没有知识库，先在下面新建一个。"));
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
      h("div", { class: "item-main" }, h("div", { class: "item-name" }, d.name), h("div", { class: "item-meta muted" }, `${d.document_count ?? 0} 个文档 · ${d.paragraph_count ?? 0} 个段落 · ${d.embedding_model_name || DEFAULT_MODEL}`)),
      h("button", { type: "button", class: "link danger-text", testid: "delete-dataset", "data-needs": "dataset_write", title: `删除知识库 ${d.name}`, onclick: (e) => removeDataset(e, d) }, "删除"),
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
    showStatus(ui.status, "请填写知识库名称。");
    ui.name.focus();
    return;
  }
  ui.create.disabled = true;
  try {
    const created = await call("/api/dataset", { method: "POST", body: { name, desc: ui.desc.value.trim(), embedding_model_id: ui.model.value } });
    ui.name.value = "";
    ui.desc.value = "";
    if (created && created.id) selectedId = created.id;
    showStatus(ui.status, `已创建：${name}`);
    await loadDatasets();
  } catch (err) {
    showStatus(ui.status, adminError(err, "dataset-error"));
  } finally {
    ui.create.disabled = false;
  }
}

/** "已从应用「A」「B」中移除": the applications that searched the deleted dataset no longer do. */
function detachedText(detached) {
  if (!detached.length) return "";
  return `；已从应用${detached.map((a) => `「${a.name}」`).join("")}的关联知识库中移除`;
}

async function removeDataset(event, d) {
  event.stopPropagation();
  if (!window.confirm(`删除知识库「${d.name}」及其全部文档？使用它的应用将不再检索它。此操作无法撤销。`)) return;
  try {
    const answer = await call(`/api/dataset/${encodeURIComponent(d.id)}`, { method: "DELETE" });
    const detached = (answer && answer.detached_applications) || [];
    showStatus(ui.status, h("span", { testid: "dataset-deleted" }, `已删除：${d.name}${detachedText(detached)}`));
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
  [0, "不自动同步"],
  [1, "每小时"],
  [24, "每天"],
  [168, "每周"],
  [720, "每 30 天"],
];

/** The web pages' sync: the schedule, and a button that syncs every page now. */
function renderSync(d) {
  const current = d.sync_hours || 0;
  const choice = h("select", { testid: "dataset-sync-hours", "aria-label": "网页自动同步" });
  const known = SYNC_CHOICES.some(([hours]) => hours === current) ? SYNC_CHOICES : [...SYNC_CHOICES, [current, `每 ${current} 小时`]];
  for (const [hours, label] of known) choice.appendChild(h("option", { value: String(hours), selected: hours === current }, label));
  const save = h("button", { type: "button", testid: "save-dataset-sync", onclick: () => saveSync(d, Number(choice.value)) }, "保存");
  const now = h("button", { type: "button", class: "link", testid: "sync-dataset-now", onclick: () => syncNow(d) }, "立即同步全部网页");
  const due = current && d.sync_due_at ? `下次同步：${formatTime(d.sync_due_at)}` : "网页文档只在手动同步时更新";
  ui.embedding.append(
    h("div", { class: "inline", "data-needs": "dataset_write" }, h("span", { class: "muted small" }, "网页同步"), choice, save, now),
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
  showStatus(ui.status, "正在同步网页…");
  try {
    const synced = (await call(`/api/dataset/${encodeURIComponent(d.id)}/sync_web`, { method: "PUT", body: { sync_type: "replace" } })) || [];
    const count = (outcome) => synced.filter((doc) => doc.sync && doc.sync.outcome === outcome).length;
    const text = synced.length
      ? `已同步 ${synced.length} 个网页：${count("queued")} 个有更新，${count("unchanged")} 个未变化，${count("gone") + count("failed")} 个无法获取`
      : "这个知识库没有从网页导入的文档";
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
  const choice = h("select", { testid: "dataset-model-change", "aria-label": "更换向量模型" });
  renderModelChoices(choice, running ? sw.to_model_id : picked ?? d.embedding_model_id);
  // While a change runs, the button cancels it (the current model chosen again).
  const onclick = running ? () => changeModel(d, d.embedding_model_id) : () => changeModel(d, choice.value);
  const change = h("button", { type: "button", testid: "change-dataset-model", onclick }, running ? "取消更换" : "更换");
  ui.embedding.append(
    h("div", { class: "muted small" }, `向量模型：${d.embedding_model_name || DEFAULT_MODEL} · ${d.embedding_dimension} 维`),
    h("div", { class: "inline", "data-needs": "dataset_write" }, choice, change),
  );
  if (sw) {
    const progress = sw.progress.total ? ` ${sw.progress.done}/${sw.progress.total}` : "";
    const text = `更换向量模型：${SWITCH_WORDS[sw.status] || sw.status}${progress}${sw.error ? `（${sw.error}）` : ""}`;
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
