// The "审计" section, for administrators: the audit trail (GET /api/audit), filtered by who
// acted, the action (a prefix: "dataset." is every dataset action), the object's id and a time
// range, newest first and paged; the filtered set downloads as CSV (GET /api/audit/export).
// It reads the trail when it comes into view, not at page load (most visits never scroll to
// it), once per signed-in account; 查询 reads it again. docs/access.md, "The audit trail".
import { LABELS } from "./labels.js";
import { call, operator, adminError, adminErrorText } from "./admin-api.js";
import { errorFromResponse } from "./api.js";
import { can, onAccountChanged } from "./admin-me.js";
import { byTestId, clear, formatTime, h } from "./dom.js";
import { fill } from "./admin-words.js";

const WORDS = LABELS.audit;
const PAGE_SIZE = 20;
const COLUMNS = 6;
const ui = {
  section: byTestId("audit-section"),
  form: document.getElementById("audit-form"),
  actor: byTestId("audit-actor"),
  action: byTestId("audit-action"),
  actionNames: document.getElementById("audit-action-names"),
  object: byTestId("audit-object"),
  since: byTestId("audit-since"),
  until: byTestId("audit-until"),
  exportCsv: byTestId("audit-export"),
  message: byTestId("audit-message"),
  rows: byTestId("audit-rows"),
  pager: byTestId("audit-pager"),
};
let page = 1;
let searches = 0; // only the latest search may fill the table
let loaded = false; // read once for the signed-in account, when the section first shows
let visible = false; // the section is on the screen now

/** The label a map holds for a name the server sent ("" for none, "constructor" included). */
const labelIn = (map, name) => (Object.hasOwn(map, name) ? map[name] : "");

/** "dataset.delete" → "删除知识库"; "" when there is no label (the name alone is shown). */
function actionLabel(action) {
  const named = labelIn(WORDS.actions, action);
  if (named) return named;
  const [kind, verb] = String(action || "").split(".", 2);
  const object = labelIn(WORDS.objects, kind);
  const doing = labelIn(WORDS.verbs, verb);
  return object && doing ? WORDS.verb_object.replace("{verb}", doing).replace("{object}", object) : "";
}

/** A datetime-local value (the browser's zone) as RFC 3339 in UTC; "" stays "". */
function instant(value) {
  if (!value) return "";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}

/** The filters as query parameters (empty ones left out), or null when the range is backwards. */
function query() {
  const pairs = [
    ["actor", ui.actor.value.trim()],
    ["action", ui.action.value.trim()],
    ["object_id", ui.object.value.trim()],
    ["since", instant(ui.since.value)],
    ["until", instant(ui.until.value)],
  ];
  const found = Object.fromEntries(pairs);
  if (found.since && found.until && found.since >= found.until) return null;
  const params = new URLSearchParams();
  for (const [key, value] of pairs) if (value) params.set(key, value);
  return params;
}

function actorCell(event) {
  const kind = labelIn(WORDS.actor_kinds, event.actor_kind) || event.actor_kind;
  const name = event.actor ? h("span", { testid: "audit-actor-name", "data-user-content": true }, event.actor) : null;
  return h("span", { class: "audit-actor" }, name, name ? " " : null, h("span", { class: "pill" }, kind));
}

function actionCell(event) {
  const label = actionLabel(event.action);
  return h("span", { class: "audit-action" }, h("code", { testid: "audit-action-name" }, event.action), label ? h("span", { class: "muted small" }, label) : null);
}

function objectCell(event) {
  const kind = labelIn(WORDS.objects, event.object_kind) || event.object_kind;
  return h(
    "span",
    { class: "audit-object" },
    h("span", {}, kind, event.object_name ? LABELS.admin_text.colon : "", event.object_name ? h("strong", { testid: "audit-object-name", "data-user-content": true }, event.object_name) : null),
    event.object_id ? h("code", { class: "muted small", testid: "audit-object-id" }, event.object_id) : null,
  );
}

function row(event) {
  const cells = [
    formatTime(event.time),
    actorCell(event),
    event.client_address || "—",
    actionCell(event),
    objectCell(event),
    h("span", { class: "clip", title: event.detail, "data-user-content": true }, event.detail || "—"),
  ];
  return h("tr", { testid: "audit-row", "data-id": event.id, "data-action": event.action }, cells.map((c) => h("td", {}, c)));
}

function renderPager(total) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const go = (p) => () => search(p);
  clear(ui.pager).append(
    h("button", { type: "button", class: "secondary", disabled: page <= 1, testid: "audit-prev", onclick: go(page - 1) }, WORDS.prev),
    h("span", { testid: "audit-page" }, fill(WORDS.page, { page, pages, total })),
    h("button", { type: "button", class: "secondary", disabled: page >= pages, testid: "audit-next", onclick: go(page + 1) }, WORDS.next),
  );
}

function say(content) {
  clear(ui.message);
  if (content) ui.message.append(typeof content === "string" ? h("span", { class: "error", testid: "audit-error" }, content) : content);
}

async function search(wanted = 1) {
  if (!can("admin")) return;
  const params = query();
  if (!params) return say(WORDS.bad_range);
  const asked = ++searches;
  loaded = true;
  say(null);
  params.set("current_page", String(wanted));
  params.set("page_size", String(PAGE_SIZE));
  try {
    const data = await call(`/api/audit?${params}`);
    if (asked !== searches) return;
    page = wanted;
    clear(ui.rows).append(...data.records.map(row));
    if (!data.records.length) ui.rows.append(h("tr", {}, h("td", { colspan: COLUMNS, class: "muted", testid: "audit-empty" }, WORDS.empty)));
    renderPager(data.total);
  } catch (err) {
    if (asked !== searches) return;
    clear(ui.rows);
    clear(ui.pager);
    say(adminError(err, "audit-error"));
  }
}

async function download() {
  const params = query();
  if (!params) return say(WORDS.bad_range);
  say(null);
  const headers = operator.token() ? { Authorization: `Bearer ${operator.token()}` } : {};
  try {
    const res = await fetch(`/api/audit/export?${params}`, { headers });
    if (!res.ok) throw await errorFromResponse(res);
    const total = Number(res.headers.get("X-Audit-Total"));
    const exported = Number(res.headers.get("X-Audit-Exported"));
    const name = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") || "");
    const link = h("a", { href: URL.createObjectURL(await res.blob()), download: name ? name[1] : "audit.csv" });
    link.click();
    URL.revokeObjectURL(link.href);
    const text = exported < total ? WORDS.export_cut : WORDS.export_done;
    ui.message.append(h("span", { testid: "audit-export-status" }, fill(text, { exported, total })));
  } catch (err) {
    say(adminErrorText(err));
  }
}

/** Suggestions for the action filter: each object kind's prefix ("dataset.") with its label. */
function fillActionNames() {
  const options = Object.entries(WORDS.objects).map(([kind, label]) => h("option", { value: `${kind}.` }, label));
  clear(ui.actionNames).append(...options);
}

function reset() {
  loaded = false;
  searches++; // an answer still on its way belongs to the account before
  page = 1;
  clear(ui.rows);
  clear(ui.pager);
  say(null);
  if (visible) search(1); // the account changed in front of the section (a new password)
}

export function initAudit() {
  fillActionNames();
  ui.form.addEventListener("submit", (e) => {
    e.preventDefault();
    search(1);
  });
  ui.exportCsv.addEventListener("click", download);
  onAccountChanged(reset);
  // Hidden (signed out, or not an administrator: data-needs="admin") it never intersects.
  const shown = new IntersectionObserver((entries) => {
    visible = entries[entries.length - 1].isIntersecting;
    if (visible && !loaded) search(1);
  });
  shown.observe(ui.section);
}
