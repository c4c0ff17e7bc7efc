// Knowledge bases on the operator page: list, create, delete, and the selected one's documents and uploads.
import { h, clear, byTestId, formatTime } from "./dom.js";
import { call, upload, adminError, adminErrorText } from "./admin-api.js";

const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
const UPLOAD_TYPES = /\.(md|markdown|txt)$/i;

const ui = {
  list: document.getElementById("dataset-list"),
  status: document.getElementById("dataset-status"),
  name: byTestId("dataset-name"),
  desc: document.getElementById("dataset-desc"),
  create: byTestId("create-dataset"),
  panel: document.getElementById("dataset-panel"),
  panelEmpty: document.getElementById("dataset-panel-empty"),
  title: document.getElementById("dataset-title"),
  docs: document.getElementById("document-list"),
  docsStatus: document.getElementById("document-status"),
  file: byTestId("upload-file"),
  uploadName: document.getElementById("upload-name"),
  upload: byTestId("upload"),
  progress: byTestId("upload-progress"),
  uploadStatus: byTestId("upload-status"),
};

let datasets = [];
let selectedId = "";
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
      h("div", { class: "item-main" }, h("div", { class: "item-name" }, d.name), h("div", { class: "item-meta muted" }, `${d.document_count ?? 0} 个文档 · ${d.paragraph_count ?? 0} 个段落`)),
      h("button", { type: "button", class: "link danger-text", testid: "delete-dataset", title: `删除知识库 ${d.name}`, onclick: (e) => removeDataset(e, d) }, "删除"),
    );
    ui.list.appendChild(item);
  }
}

export async function loadDatasets() {
  try {
    datasets = (await call("/api/dataset")) || [];
    showStatus(ui.status, null);
  } catch (err) {
    showStatus(ui.status, adminError(err, "dataset-error"));
    return;
  }
  if (!datasets.some((d) => d.id === selectedId)) selectedId = datasets.length ? datasets[0].id : "";
  renderList();
  renderPanel();
  notify();
}

function select(id) {
  if (id === selectedId) return;
  selectedId = id;
  renderList();
  renderPanel();
  resetUpload();
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
    const created = await call("/api/dataset", { method: "POST", body: { name, desc: ui.desc.value.trim() } });
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

async function removeDataset(event, d) {
  event.stopPropagation();
  if (!window.confirm(`删除知识库「${d.name}」及其全部文档？此操作无法撤销。`)) return;
  try {
    await call(`/api/dataset/${encodeURIComponent(d.id)}`, { method: "DELETE" });
    showStatus(ui.status, `已删除：${d.name}`);
    if (selectedId === d.id) selectedId = "";
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
  loadDocuments();
}

async function loadDocuments() {
  const d = selectedDataset();
  if (!d) return;
  let documents;
  try {
    documents = (await call(`/api/dataset/${encodeURIComponent(d.id)}/document`)) || [];
    showStatus(ui.docsStatus, null);
  } catch (err) {
    showStatus(ui.docsStatus, adminError(err, "document-error"));
    return;
  }
  if (d.id !== selectedId) return; // the operator picked another one meanwhile
  clear(ui.docs);
  if (!documents.length) ui.docs.appendChild(h("li", { class: "muted empty-row" }, "还没有文档：上传 .md 或 .txt 文件。"));
  for (const doc of documents) {
    ui.docs.appendChild(
      h(
        "li",
        { class: "item static", testid: "document", "data-id": doc.id },
        h(
          "div",
          { class: "item-main" },
          h("div", { class: "item-name" }, doc.name),
          h("div", { class: "item-meta muted" }, `${doc.paragraph_count ?? 0} 个段落 · ${doc.char_length ?? 0} 字 · ${formatTime(doc.create_time)}`),
        ),
        h("button", { type: "button", class: "link danger-text", testid: "delete-document", onclick: () => removeDocument(d, doc) }, "删除"),
      ),
    );
  }
}

async function removeDocument(d, doc) {
  if (!window.confirm(`删除文档「${doc.name}」？`)) return;
  try {
    await call(`/api/dataset/${encodeURIComponent(d.id)}/document/${encodeURIComponent(doc.id)}`, { method: "DELETE" });
    showStatus(ui.docsStatus, `已删除：${doc.name}`);
    await loadDatasets();
  } catch (err) {
    showStatus(ui.docsStatus, adminError(err, "document-error"));
  }
}

function resetUpload() {
  ui.progress.value = 0;
  ui.uploadStatus.textContent = "";
  ui.uploadStatus.removeAttribute("title");
}

function uploadMessage(text, detail) {
  ui.uploadStatus.textContent = text;
  if (detail) ui.uploadStatus.title = detail;
  else ui.uploadStatus.removeAttribute("title");
}

async function uploadFile() {
  const d = selectedDataset();
  const file = ui.file.files && ui.file.files[0];
  if (!d) return uploadMessage("请先选择一个知识库。");
  if (!file) return uploadMessage("请先选择要上传的文件。");
  if (!UPLOAD_TYPES.test(file.name)) return uploadMessage("只支持 .md、.markdown、.txt 文件。");
  if (file.size > MAX_UPLOAD_BYTES) return uploadMessage("文件太大：上限 20 MiB。");

  const form = new FormData();
  form.append("file", file, file.name);
  if (ui.uploadName.value.trim()) form.append("name", ui.uploadName.value.trim());
  ui.upload.disabled = true;
  ui.progress.value = 0;
  uploadMessage("上传中 0%");
  try {
    const doc = await upload(`/api/dataset/${encodeURIComponent(d.id)}/document`, form, {
      onProgress: (percent) => {
        ui.progress.value = percent;
        uploadMessage(`上传中 ${percent}%`);
      },
      // The file has arrived; the server is now splitting and embedding it.
      onSent: () => {
        ui.progress.value = 100;
        uploadMessage("正在向量化…");
      },
    });
    ui.progress.value = 100;
    uploadMessage(`已导入：${doc.name}，${doc.paragraph_count ?? 0} 个段落`);
    ui.file.value = "";
    ui.uploadName.value = "";
    await loadDatasets();
  } catch (err) {
    ui.progress.value = 0;
    uploadMessage(`上传失败：${adminErrorText(err)}`, err.serverMessage || "");
  } finally {
    ui.upload.disabled = false;
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
  ui.upload.addEventListener("click", uploadFile);
  ui.file.addEventListener("change", resetUpload);
}
