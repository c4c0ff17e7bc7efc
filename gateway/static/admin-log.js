// The conversation log (对话日志): every record of an application, filtered and paginated; a
// record opens with its trace (drawn by record.js, as on the chat page), where its question can
// be attached to a paragraph (admin-questions.js); the filtered set downloads as CSV or XLSX.
import { h, clear, byTestId, formatTime } from "./dom.js";
import { call, operator, adminError, adminErrorText } from "./admin-api.js";
import { errorFromResponse } from "./api.js";
import { createRecordNode, fillRecord } from "./record.js";
import { improveForm } from "./admin-knowledge.js";
import { attachFromLog } from "./admin-questions.js";
import { RECORD_STATUS_LABELS, STOP_REASON_LABELS, stopReasonLabel } from "./labels.js";
import { LABELS } from "./labels.js";
import { thumbDown, thumbUp } from "./icons.js";

const WORDS = LABELS.log;
const PAGE_SIZE = 20;
const ui = {
  app: byTestId("log-app"),
  from: byTestId("log-from"),
  to: byTestId("log-to"),
  status: byTestId("log-status"),
  stopReason: byTestId("log-stop-reason"),
  sufficient: byTestId("log-sufficient"),
  vote: byTestId("log-vote"),
  source: byTestId("log-source"),
  text: byTestId("log-text"),
  search: byTestId("log-search"),
  rows: byTestId("log-rows"),
  pager: byTestId("log-pager"),
  message: byTestId("log-message"),
  detail: byTestId("log-detail"),
  exportCsv: byTestId("log-export-csv"),
  exportXlsx: byTestId("log-export-xlsx"),
};
let page = 1;

const option = (value, label) => h("option", { value }, label);

function fillSelect(select, entries) {
  clear(select).append(option("", WORDS.all), ...entries.map(([value, label]) => option(value, label)));
}

function fillFilters() {
  fillSelect(ui.status, Object.entries(RECORD_STATUS_LABELS));
  fillSelect(ui.stopReason, [...Object.entries(STOP_REASON_LABELS), ["none", WORDS.no_stop_reason]]);
  fillSelect(ui.sufficient, Object.entries(WORDS.sufficient));
  fillSelect(ui.vote, [...Object.entries(WORDS.votes), ["none", WORDS.not_voted]]);
  fillSelect(ui.source, [...Object.entries(WORDS.sources), ["none", WORDS.unknown_source]]);
}

/** The filters as query parameters (empty ones left out). */
function query() {
  const params = new URLSearchParams();
  const pairs = [
    ["date_from", ui.from.value],
    ["date_to", ui.to.value],
    ["status", ui.status.value],
    ["stop_reason", ui.stopReason.value],
    ["sufficient", ui.sufficient.value],
    ["vote", ui.vote.value],
    ["source", ui.source.value],
    ["text", ui.text.value.trim()],
  ];
  for (const [key, value] of pairs) if (value) params.set(key, value);
  return params.toString();
}

const base = () => `/api/application/${encodeURIComponent(ui.app.value)}/chat`;

/** The record's up and down votes as icons with counts ("—" for none). */
function votesNode(entry) {
  const parts = [];
  if (entry.star_num) parts.push(h("span", { class: "vote-count", testid: "log-votes-up", "aria-label": `${WORDS.votes.up} ${entry.star_num}` }, thumbUp(), entry.star_num));
  if (entry.trample_num) parts.push(h("span", { class: "vote-count", testid: "log-votes-down", "aria-label": `${WORDS.votes.down} ${entry.trample_num}` }, thumbDown(), entry.trample_num));
  return parts.length ? parts : "—";
}

function sufficientText(entry) {
  if (!entry.agent_stop_reason) return "—";
  return WORDS.sufficient[String(entry.sufficient)];
}

/** The answer as its column shows it: without the offline model's notice, which every such
 * answer opens with and the record's model already says; opening the record shows it whole. */
function answerColumn(answer) {
  const notice = WORDS.answer_notices.find((n) => answer.startsWith(n));
  return notice ? answer.slice(notice.length).trimStart() : answer;
}

function row(entry) {
  const answer = answerColumn(entry.answer_text || "");
  const cells = [
    formatTime(entry.create_time),
    h("span", { class: "clip", title: entry.problem_text, "data-user-content": true }, entry.problem_text),
    h("span", { class: "clip", title: answer, testid: "log-answer", "data-user-content": true }, answer),
    RECORD_STATUS_LABELS[entry.status] || entry.status,
    entry.agent_stop_reason ? stopReasonLabel(entry.agent_stop_reason) : "—",
    sufficientText(entry),
    String(entry.rounds),
    WORDS.sources[entry.log_source] || WORDS.unknown_source,
    h("span", { title: entry.vote_reason || "" }, votesNode(entry)),
  ];
  const open = h("button", { type: "button", class: "link", testid: "log-open", onclick: () => openRecord(entry) }, WORDS.open);
  return h("tr", { testid: "log-row", "data-record-id": entry.id }, cells.map((c) => h("td", {}, c)), h("td", {}, open));
}

function openRecord(entry) {
  const question = (entry.problem_text || "").trim();
  const node = createRecordNode(entry.problem_text);
  fillRecord(node, entry);
  const trace = byTestId("trace", node);
  if (trace) trace.open = true;
  const parts = [
    h("div", { class: "card-head" }, h("h3", {}, WORDS.record_title), h("button", { type: "button", class: "link", onclick: () => clear(ui.detail) }, WORDS.close)),
    entry.vote_reason ? h("p", { class: "muted", testid: "log-vote-reason" }, WORDS.vote_reason, h("span", { "data-user-content": true }, entry.vote_reason)) : null,
    entry.error_detail ? h("p", { class: "muted", testid: "log-error-detail" }, WORDS.error_detail, h("span", { "data-user-content": true }, entry.error_detail)) : null,
    node,
    question ? attachFromLog(entry, ui.app.value) : null,
    improveForm(entry, ui.app.value),
  ];
  clear(ui.detail).append(...parts.filter(Boolean)); // append() would write a null as "null"
  ui.detail.scrollIntoView({ block: "nearest" });
}

function renderPager(total) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const go = (p) => () => search(p);
  clear(ui.pager).append(
    h("button", { type: "button", class: "secondary", disabled: page <= 1, testid: "log-prev", onclick: go(page - 1) }, WORDS.prev),
    h("span", { testid: "log-page" }, WORDS.page.replace("{page}", page).replace("{pages}", pages).replace("{total}", total)),
    h("button", { type: "button", class: "secondary", disabled: page >= pages, testid: "log-next", onclick: go(page + 1) }, WORDS.next),
  );
}

// Searches can answer out of order (the page's first load, then a choice of application): only
// the latest one may fill the table.
let searches = 0;

async function search(wanted = 1) {
  if (!ui.app.value) return;
  const asked = ++searches;
  clear(ui.message);
  try {
    const data = await call(`${base()}/${wanted}/${PAGE_SIZE}?${query()}`);
    if (asked !== searches) return;
    page = wanted;
    clear(ui.rows).append(...data.records.map(row));
    if (!data.records.length) ui.rows.append(h("tr", {}, h("td", { colspan: 10, class: "muted" }, WORDS.empty)));
    renderPager(data.total);
  } catch (err) {
    if (asked !== searches) return;
    clear(ui.rows);
    clear(ui.pager);
    ui.message.appendChild(adminError(err, "log-error"));
  }
}

async function download(format) {
  if (!ui.app.value) return;
  clear(ui.message);
  const headers = operator.token() ? { Authorization: `Bearer ${operator.token()}` } : {};
  try {
    const res = await fetch(`${base()}/export?format=${format}&${query()}`, { method: "POST", headers });
    if (!res.ok) throw await errorFromResponse(res);
    const total = Number(res.headers.get("X-Log-Total"));
    const exported = Number(res.headers.get("X-Log-Exported"));
    const link = h("a", { href: URL.createObjectURL(await res.blob()), download: `chat-log.${format}` });
    link.click();
    URL.revokeObjectURL(link.href);
    const text = exported < total ? WORDS.export_cut : WORDS.export_done;
    ui.message.append(h("span", { testid: "log-export-status" }, text.replace("{exported}", exported).replace("{total}", total)));
  } catch (err) {
    ui.message.append(h("span", { class: "error", testid: "log-error" }, adminErrorText(err)));
  }
}

export async function loadLogApplications() {
  try {
    const apps = (await call("/api/application")) || [];
    const current = ui.app.value;
    clear(ui.app).append(...apps.map((a) => h("option", { value: a.id, "data-user-content": true }, a.name)));
    if (apps.some((a) => a.id === current)) ui.app.value = current;
    await search(1);
  } catch (err) {
    clear(ui.message).appendChild(adminError(err, "log-error"));
  }
}

export function initLog() {
  fillFilters();
  ui.search.addEventListener("click", () => search(1));
  ui.text.addEventListener("keydown", (e) => {
    if (e.key === "Enter") search(1);
  });
  ui.app.addEventListener("change", () => search(1));
  ui.exportCsv.addEventListener("click", () => download("csv"));
  ui.exportXlsx.addEventListener("click", () => download("xlsx"));
}
