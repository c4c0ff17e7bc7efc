// What the knowledge base lacks (知识缺口): the gap report's groups, most records first, each
// with its gaps and example questions; an example opens its record, and a record can be
// improved (改进) — its corrected answer written into a dataset as a paragraph. The improve form
// is exported so the conversation log's record view offers the same action.
import { h, clear, byTestId } from "./dom.js";
import { call, operator, adminError, adminErrorText } from "./admin-api.js";
import { errorFromResponse } from "./api.js";
import { createRecordNode, fillRecord } from "./record.js";
import { LABELS } from "./labels.js";
import { latestOnly, onFirstView } from "./admin-sections.js";

const WORDS = LABELS.knowledge;
const ui = {
  app: byTestId("gap-app"),
  from: byTestId("gap-from"),
  to: byTestId("gap-to"),
  form: document.getElementById("gap-form"),
  exportCsv: byTestId("gap-export"),
  message: byTestId("gap-message"),
  groups: byTestId("gap-groups"),
  detail: byTestId("gap-detail"),
};

const recordsUrl = (appId) => `/api/application/${encodeURIComponent(appId)}/chat`;

function range() {
  const params = new URLSearchParams();
  if (ui.from.value) params.set("start_time", ui.from.value);
  if (ui.to.value) params.set("end_time", ui.to.value);
  return params.toString();
}

const reportUrl = (suffix = "") =>
  `/api/application/${encodeURIComponent(ui.app.value)}/gap_report${suffix}?${range()}`;

/**
 * The "改进" form for one record (a record as the HTTP API shows it: id, chat_id, problem_text,
 * answer_text): pick a dataset, edit the question and the corrected answer, write it.
 */
export function improveForm(record, appId) {
  const datasets = h("select", { testid: "improve-dataset" });
  const question = h("input", { testid: "improve-question", maxlength: 256, value: (record.problem_text || "").slice(0, 256) });
  const answer = h("textarea", { testid: "improve-answer", rows: 4, maxlength: 4096 });
  answer.value = record.answer_text || "";
  const status = h("div", { class: "status", testid: "improve-status", "aria-live": "polite" });
  const save = h("button", { type: "button", testid: "improve-save" }, WORDS.save);
  const form = h(
    "div",
    { class: "improve-form stack", testid: "improve-form", "data-needs": "application_write dataset_write" },
    h("h4", {}, WORDS.improve_title),
    h("label", { class: "field" }, h("span", { class: "field-label" }, WORDS.dataset), datasets),
    h("label", { class: "field" }, h("span", { class: "field-label" }, WORDS.question), question),
    h("label", { class: "field" }, h("span", { class: "field-label" }, WORDS.answer), answer),
    h("div", { class: "row" }, save),
    status,
  );
  call("/api/dataset")
    .then((list) => {
      clear(datasets).append(...(list || []).map((d) => h("option", { value: d.id, "data-user-content": true }, d.name)));
    })
    .catch((err) => clear(status).append(adminError(err, "improve-error")));
  save.addEventListener("click", () => submitImprovement(record, appId, { datasets, question, answer, status, save }));
  return form;
}

async function submitImprovement(record, appId, fields) {
  const { datasets, question, answer, status, save } = fields;
  clear(status);
  if (!datasets.value) return status.append(h("span", { class: "error" }, WORDS.no_dataset));
  if (!answer.value.trim()) return status.append(h("span", { class: "error" }, WORDS.no_answer));
  const path =
    `${recordsUrl(appId)}/${encodeURIComponent(record.chat_id)}/chat_record/${encodeURIComponent(record.id)}` +
    `/dataset/${encodeURIComponent(datasets.value)}/document_id/auto/improve`;
  save.disabled = true;
  try {
    await call(path, { method: "PUT", body: { content: answer.value, problem_text: question.value } });
    const name = datasets.selectedOptions[0] ? datasets.selectedOptions[0].textContent : "";
    status.append(h("span", { testid: "improve-saved" }, WORDS.saved.replace("{dataset}", name)));
  } catch (err) {
    status.append(adminError(err, "improve-error"));
  } finally {
    save.disabled = false;
  }
}

async function openExample(example) {
  clear(ui.detail);
  try {
    const url = `${recordsUrl(ui.app.value)}/${encodeURIComponent(example.chat_id)}/chat_record/${encodeURIComponent(example.chat_record_id)}`;
    const record = await call(url);
    const node = createRecordNode(record.problem_text);
    fillRecord(node, record);
    ui.detail.append(
      h("div", { class: "card-head" }, h("h3", {}, WORDS.record_title), h("button", { type: "button", class: "link", onclick: () => clear(ui.detail) }, WORDS.close)),
      node,
      improveForm(record, ui.app.value),
    );
    ui.detail.scrollIntoView({ block: "nearest" });
  } catch (err) {
    ui.detail.append(adminError(err, "gap-error"));
  }
}

function groupNode(group, rank) {
  const examples = group.examples.map((e) =>
    h("li", {}, h("button", { type: "button", class: "link", testid: "gap-example", "data-record-id": e.chat_record_id, onclick: () => openExample(e), "data-user-content": true }, e.problem_text)),
  );
  return h(
    "li",
    { class: "gap-group", testid: "gap-group" },
    h("div", { class: "card-head" }, h("strong", { testid: "gap-label" }, `${rank}. `, h("span", { "data-user-content": true }, group.label)), h("span", { class: "muted", testid: "gap-count" }, WORDS.count.replace("{count}", group.count))),
    group.gaps.length ? h("div", { class: "small" }, h("span", { class: "muted" }, WORDS.gaps), h("ul", { testid: "gap-gaps" }, group.gaps.map((g) => h("li", { "data-user-content": true }, g)))) : null,
    h("div", { class: "small" }, h("span", { class: "muted" }, WORDS.examples), h("ul", { testid: "gap-examples" }, examples)),
  );
}

const showReport = latestOnly(async (current) => {
  if (!ui.app.value) return;
  clear(ui.message);
  clear(ui.groups);
  try {
    const data = await call(reportUrl());
    if (!current()) return; // a later report was asked for meanwhile: it draws
    if (!data.groups.length) return ui.message.append(h("span", { testid: "gap-empty" }, WORDS.empty));
    ui.message.append(h("span", { testid: "gap-summary" }, WORDS.summary.replace("{records}", data.records).replace("{groups}", data.groups.length)));
    ui.groups.append(...data.groups.map((g, i) => groupNode(g, i + 1)));
  } catch (err) {
    if (current()) ui.message.append(adminError(err, "gap-error"));
  }
});
let seen = () => false; // whether the section has been opened: then a new application list shows at once

async function download() {
  if (!ui.app.value) return;
  clear(ui.message);
  const headers = operator.token() ? { Authorization: `Bearer ${operator.token()}` } : {};
  try {
    const res = await fetch(reportUrl("/export"), { headers });
    if (!res.ok) throw await errorFromResponse(res);
    const link = h("a", { href: URL.createObjectURL(await res.blob()), download: "gap-report.csv" });
    link.click();
    URL.revokeObjectURL(link.href);
  } catch (err) {
    ui.message.append(h("span", { class: "error", testid: "gap-error" }, adminErrorText(err)));
  }
}

export async function loadGapApplications() {
  try {
    const apps = (await call("/api/application")) || [];
    const current = ui.app.value;
    clear(ui.app).append(...apps.map((a) => h("option", { value: a.id, "data-user-content": true }, a.name)));
    if (apps.some((a) => a.id === current)) ui.app.value = current;
    if (seen() && ui.app.value !== current) showReport();
  } catch (err) {
    clear(ui.message).appendChild(adminError(err, "gap-error"));
  }
}

export function initGaps() {
  ui.form.addEventListener("submit", (e) => {
    e.preventDefault();
    showReport();
  });
  ui.exportCsv.addEventListener("click", download);
  ui.app.addEventListener("change", () => showReport());
  seen = onFirstView(document.getElementById("gaps"), () => showReport());
}
