// The selected knowledge base's documents: the list with each document's ingestion status and
// progress bar (polled while any job runs), cancel, delete, the file upload and web import.
// Uploads return at once with the document queued; the list then follows it to ready or failed.
import { LABELS, fill } from "./labels.js";
import { h, clear, byTestId, filled, formatTime } from "./dom.js";
import { call, upload, adminError, adminErrorText } from "./admin-api.js";
import { selectedDataset, onDatasetsChanged, loadDatasets } from "./admin-datasets.js";
import { openParagraphs, closeParagraphs, shownDocumentId } from "./admin-paragraphs.js";

const T = LABELS.admin_text;
const RUNNING = new Set(["queued", "parsing", "embedding"]);
const POLL_MS = 1000;
const STATUS_LABELS = LABELS.document_statuses || {};
const SOURCE_LABELS = LABELS.source_types || {};
const SYNC_LABELS = LABELS.sync_outcomes || {};
const SOURCE_STATE_LABELS = LABELS.source_states || {};

const ui = {
  docs: document.getElementById("document-list"),
  docsStatus: document.getElementById("document-status"),
  file: byTestId("upload-file"),
  uploadName: document.getElementById("upload-name"),
  upload: byTestId("upload"),
  progress: byTestId("upload-progress"),
  uploadStatus: byTestId("upload-status"),
  hint: document.getElementById("upload-hint"),
  splitMaxLength: byTestId("split-max-length"),
  splitOverlap: byTestId("split-overlap"),
  splitTitleLevels: byTestId("split-title-levels"),
  splitKeepTables: byTestId("split-keep-tables"),
  splitSeparators: byTestId("split-separators"),
  splitPreview: byTestId("split-preview"),
  splitStatus: byTestId("split-preview-status"),
  splitList: byTestId("split-preview-list"),
  webUrls: byTestId("web-urls"),
  webImport: byTestId("web-import"),
  webStatus: byTestId("web-status"),
};

// What an upload may be, from the gateway (GET /api/dataset/document/upload_rules).
let rules = { suffixes: [], max_mb: 0, types: "" };
let shownFor = "";
let pollTimer = 0;
let wasRunning = new Set();

const datasetPath = (d) => `/api/dataset/${encodeURIComponent(d.id)}`;
const documentPath = (d, doc) => `${datasetPath(d)}/document/${encodeURIComponent(doc.id)}`;
export const statusLabel = (status) => STATUS_LABELS[status] || status || T.unknown;

function showStatus(target, content) {
  clear(target);
  if (content) target.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

/** The bar and its words: unknown length while queued or parsing, paragraphs embedded after. */
function progressNode(doc) {
  const { done = 0, total = 0 } = doc.progress || {};
  const counted = doc.status === "embedding" && total ? ` ${done}/${total}` : "";
  const bar = h("progress", { testid: "document-progress", max: "1" });
  if (doc.status === "ready") bar.value = 1;
  else if (doc.status === "embedding" && total) {
    bar.max = total;
    bar.value = done;
  } else if (!RUNNING.has(doc.status)) bar.value = 0;
  else bar.removeAttribute("value"); // indeterminate
  return h(
    "div",
    { class: "doc-progress" },
    doc.status === "failed" || doc.status === "cancelled" ? null : bar,
    h("span", { class: `doc-status ${doc.status}`, testid: "document-status" }, `${statusLabel(doc.status)}${counted}`),
  );
}

function documentNode(d, doc) {
  const running = RUNNING.has(doc.status);
  const source = SOURCE_LABELS[doc.source_type] || doc.source_type || "";
  const meta = [source, fill(T.paragraph_count, { count: doc.paragraph_count ?? 0 }), fill(T.char_count, { count: doc.char_length ?? 0 }), formatTime(doc.update_time || doc.create_time)];
  const canEdit = !running && (doc.paragraph_count ?? 0) > 0;
  const page = doc.meta && doc.meta.source_url;
  const checked = page && doc.source && doc.source.checked_at ? fill(T.checked_at, { time: formatTime(doc.source.checked_at) }) : "";
  const pageState = page && doc.source && doc.source.state ? SOURCE_STATE_LABELS[doc.source.state] || doc.source.state : "";
  return h(
    "li",
    { class: "item static doc", testid: "document", "data-id": doc.id, "data-status": doc.status },
    h(
      "div",
      { class: "item-main grow" },
      h("div", { class: "item-name", "data-user-content": true }, doc.name),
      h("div", { class: "item-meta muted" }, meta.filter(Boolean).join(" · ")),
      page ? h("div", { class: "item-meta muted doc-source", testid: "document-source" }, [page, checked].filter(Boolean).join(" · ")) : null,
      pageState ? h("div", { class: "error", testid: "document-source-state", title: doc.source.note || "" }, pageState) : null,
      progressNode(doc),
      doc.error ? h("div", { class: "error", testid: "document-error", role: "alert" }, doc.error) : null,
    ),
    h(
      "div",
      { class: "item-actions" },
      running ? h("button", { type: "button", class: "link", testid: "cancel-document", "data-needs": "dataset_write", onclick: () => cancelDocument(d, doc) }, T.cancel) : null,
      canEdit ? h("button", { type: "button", class: "link", testid: "open-paragraphs", onclick: () => openParagraphs(d, doc) }, T.paragraphs) : null,
      page && !running ? h("button", { type: "button", class: "link", testid: "sync-document", "data-needs": "dataset_write", title: T.sync_document_hint, onclick: () => syncDocument(d, doc) }, T.sync) : null,
      h("button", { type: "button", class: "link danger-text", testid: "delete-document", "data-needs": "dataset_write", onclick: () => removeDocument(d, doc) }, T.delete),
    ),
  );
}

function schedulePoll(running) {
  clearTimeout(pollTimer);
  pollTimer = running ? setTimeout(loadDocuments, POLL_MS) : 0;
}

export async function loadDocuments() {
  const d = selectedDataset();
  clearTimeout(pollTimer);
  if (!d) return;
  let documents;
  try {
    documents = (await call(`${datasetPath(d)}/document`)) || [];
    showStatus(ui.docsStatus, null);
  } catch (err) {
    showStatus(ui.docsStatus, adminError(err, "document-error"));
    return;
  }
  const current = selectedDataset();
  if (!current || current.id !== d.id) return; // the operator picked another one meanwhile
  clear(ui.docs);
  if (!documents.length) ui.docs.appendChild(h("li", { class: "muted empty-row" }, T.no_documents));
  for (const doc of documents) ui.docs.appendChild(documentNode(d, doc));
  const running = new Set(documents.filter((doc) => RUNNING.has(doc.status)).map((doc) => doc.id));
  const settled = [...wasRunning].some((id) => !running.has(id));
  wasRunning = running;
  schedulePoll(running.size > 0);
  if (shownDocumentId() && !documents.some((doc) => doc.id === shownDocumentId() && !RUNNING.has(doc.status))) closeParagraphs();
  if (settled) await loadDatasets(); // the counts beside the knowledge base changed
}

async function cancelDocument(d, doc) {
  try {
    await call(`${documentPath(d, doc)}/cancel_task`, { method: "PUT" });
    showStatus(ui.docsStatus, h("span", {}, filled(T.cancelled_name, { name: doc.name })));
  } catch (err) {
    showStatus(ui.docsStatus, adminError(err, "document-error"));
  }
  await loadDocuments();
}

/** Fetch a web document's page again; the list is reloaded first, then the outcome shown (a reload clears the status line). */
async function syncDocument(d, doc) {
  showStatus(ui.docsStatus, h("span", {}, filled(T.syncing_name, { name: doc.name })));
  let shown;
  try {
    const synced = await call(`${documentPath(d, doc)}/sync`, { method: "PUT" });
    const outcome = synced && synced.sync ? synced.sync.outcome : "";
    shown = h("span", { testid: "sync-outcome", "data-outcome": outcome }, h("span", { "data-user-content": true }, doc.name), T.colon, SYNC_LABELS[outcome] || outcome);
  } catch (err) {
    shown = adminError(err, "document-error");
  }
  await loadDocuments();
  showStatus(ui.docsStatus, shown);
}

async function removeDocument(d, doc) {
  if (!window.confirm(fill(T.confirm_delete_document, { name: doc.name }))) return;
  try {
    await call(documentPath(d, doc), { method: "DELETE" });
    showStatus(ui.docsStatus, h("span", {}, filled(T.deleted_name, { name: doc.name })));
    if (shownDocumentId() === doc.id) closeParagraphs();
    await loadDatasets();
  } catch (err) {
    showStatus(ui.docsStatus, adminError(err, "document-error"));
  }
}

function resetUpload() {
  ui.progress.value = 0;
  uploadMessage("");
}

function uploadMessage(text, detail) {
  ui.uploadStatus.textContent = text;
  if (detail) ui.uploadStatus.title = detail;
  else ui.uploadStatus.removeAttribute("title");
}

const suffixOf = (name) => (/\.[^./\\]+$/.exec(name) || [""])[0].toLowerCase();

/** What the page can tell before sending (the server checks the same again). */
function uploadRefusal(file) {
  if (rules.suffixes.length && !rules.suffixes.includes(suffixOf(file.name))) return fill(T.unsupported_file, { suffixes: rules.suffixes.join(T.list_separator) });
  if (rules.max_mb && file.size > rules.max_mb * 1024 * 1024) return fill(T.file_too_large, { max_mb: rules.max_mb });
  return "";
}

async function uploadFile() {
  const d = selectedDataset();
  const file = ui.file.files && ui.file.files[0];
  if (!d) return uploadMessage(T.pick_dataset_first);
  if (!file) return uploadMessage(T.pick_file_first);
  const refusal = uploadRefusal(file);
  if (refusal) return uploadMessage(refusal);
  const archive = suffixOf(file.name) === ".zip";
  const form = new FormData();
  form.append("file", file, file.name);
  if (ui.uploadName.value.trim() && !archive) form.append("name", ui.uploadName.value.trim());
  appendSplitRules(form);
  ui.upload.disabled = true;
  ui.progress.value = 0;
  uploadMessage(fill(T.uploading, { percent: 0 }));
  try {
    const answer = await upload(`${datasetPath(d)}/document`, form, {
      onProgress: (percent) => {
        ui.progress.value = percent;
        uploadMessage(fill(T.uploading, { percent }));
      },
      onSent: () => {
        ui.progress.value = 100;
        uploadMessage(T.registering);
      },
    });
    const docs = Array.isArray(answer) ? answer : [answer];
    ui.progress.value = 100;
    uploadMessage(archive ? fill(T.uploaded_archive, { name: file.name, count: docs.length }) : fill(T.uploaded, { name: docs[0]?.name ?? file.name }));
    ui.file.value = "";
    ui.uploadName.value = "";
    await loadDatasets();
  } catch (err) {
    ui.progress.value = 0;
    uploadMessage(fill(T.upload_failed, { error: adminErrorText(err) }), err.serverMessage || "");
  } finally {
    ui.upload.disabled = false;
  }
}

/** The split rules the operator set (MaxKB's field names where it has them); none set, none sent. */
function appendSplitRules(form) {
  const set = (field, value) => value !== "" && form.append(field, value);
  set("limit", ui.splitMaxLength.value.trim());
  set("overlap", ui.splitOverlap.value.trim());
  set("title_levels", ui.splitTitleLevels.value);
  if (ui.splitKeepTables.checked) form.append("keep_tables", "true");
  for (const separator of ui.splitSeparators.value.split(" ").filter(Boolean)) form.append("patterns", separator);
}

/** The paragraphs the chosen file would make under the rules set: nothing is stored. */
async function previewSplit() {
  const file = ui.file.files && ui.file.files[0];
  if (!file) return showStatus(ui.splitStatus, T.pick_preview_file);
  const refusal = uploadRefusal(file);
  if (refusal) return showStatus(ui.splitStatus, refusal);
  const form = new FormData();
  form.append("file", file, file.name);
  appendSplitRules(form);
  ui.splitPreview.disabled = true;
  clear(ui.splitList);
  showStatus(ui.splitStatus, T.parsing);
  try {
    const [preview] = (await upload("/api/dataset/document/split", form)) || [];
    for (const p of preview.content) {
      ui.splitList.appendChild(h("li", { testid: "split-paragraph" }, p.title ? h("div", { class: "muted small" }, p.title) : null, h("div", {}, p.content)));
    }
    const unused = preview.unused_separators.length ? fill(T.unused_separators, { separators: preview.unused_separators.map((s) => JSON.stringify(s)).join(T.list_separator) }) : "";
    const shown = preview.total > preview.content.length ? fill(T.showing_first, { count: preview.content.length }) : "";
    showStatus(ui.splitStatus, h("span", { testid: "split-preview-total", "data-total": String(preview.total) }, fill(T.preview_total, { total: preview.total, shown, unused })));
  } catch (err) {
    showStatus(ui.splitStatus, adminError(err, "split-error"));
  } finally {
    ui.splitPreview.disabled = false;
  }
}

async function importWeb() {
  const d = selectedDataset();
  const urls = ui.webUrls.value.split(/\s+/).map((u) => u.trim()).filter(Boolean);
  if (!d) return showStatus(ui.webStatus, T.pick_dataset_first);
  if (!urls.length) return showStatus(ui.webStatus, T.web_urls_needed);
  ui.webImport.disabled = true;
  try {
    const docs = (await call(`${datasetPath(d)}/document/web`, { method: "POST", body: { source_url_list: urls } })) || [];
    showStatus(ui.webStatus, fill(T.web_submitted, { count: docs.length }));
    ui.webUrls.value = "";
    await loadDatasets();
  } catch (err) {
    showStatus(ui.webStatus, adminError(err, "web-error"));
  } finally {
    ui.webImport.disabled = false;
  }
}

async function loadUploadRules() {
  try {
    rules = (await call("/api/dataset/document/upload_rules")) || rules;
  } catch {
    return; // the server checks anyway; the form just cannot say so in advance
  }
  ui.file.accept = rules.suffixes.join(",");
  ui.hint.replaceChildren(...filled(T.upload_rules, { suffixes: rules.suffixes.join(T.list_separator), max_mb: rules.max_mb }));
}

export function initDocuments() {
  ui.upload.addEventListener("click", uploadFile);
  ui.splitPreview.addEventListener("click", previewSplit);
  ui.file.addEventListener("change", resetUpload);
  ui.webImport.addEventListener("click", importWeb);
  onDatasetsChanged((_, selected) => {
    const id = selected ? selected.id : "";
    if (id !== shownFor) {
      shownFor = id;
      wasRunning = new Set();
      resetUpload();
      clear(ui.webStatus);
      closeParagraphs();
    }
    if (!rules.suffixes.length) loadUploadRules(); // once the list loaded, so once any token is in
    if (selected) loadDocuments();
    else schedulePoll(false);
  });
}
