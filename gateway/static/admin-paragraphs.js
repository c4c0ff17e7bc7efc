// One document's paragraphs, a page at a time: edit a title or content (re-embedded), turn a
// paragraph off and on (an inactive one is never retrieved), delete one, add one by hand, and
// the questions attached to each (admin-questions.js).
import { h, clear } from "./dom.js";
import { LABELS, fill } from "./labels.js";
import { call, adminError } from "./admin-api.js";
import { documentQuestions, questionFold } from "./admin-questions.js";

const T = LABELS.admin_text;
const PAGE_SIZE = 20;
const MAX_TITLE = 256;
const MAX_CONTENT = 4096;

const ui = {
  panel: document.getElementById("paragraph-panel"),
  title: document.getElementById("paragraph-doc-name"),
  list: document.getElementById("paragraph-list"),
  pager: document.getElementById("paragraph-pager"),
  status: document.getElementById("paragraph-status"),
  close: document.getElementById("paragraph-close"),
  newTitle: document.getElementById("new-paragraph-title"),
  newContent: document.getElementById("new-paragraph-content"),
  add: document.getElementById("add-paragraph"),
};

let shown = null; // { dataset, document }
let page = 1;

export const shownDocumentId = () => (shown ? shown.document.id : "");
const basePath = () =>
  `/api/dataset/${encodeURIComponent(shown.dataset.id)}/document/${encodeURIComponent(shown.document.id)}/paragraph`;

function showStatus(content) {
  clear(ui.status);
  if (content) ui.status.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

/** The checks the server makes too, said before sending. */
function fieldsRefusal(title, content) {
  if (title.length > MAX_TITLE) return fill(T.title_too_long, { max: MAX_TITLE });
  if (!content.trim()) return T.content_empty;
  if (content.length > MAX_CONTENT) return fill(T.content_too_long, { max: MAX_CONTENT });
  return "";
}

async function send(path, options, done) {
  try {
    await call(path, options);
    showStatus(done);
    await loadPage();
  } catch (err) {
    showStatus(adminError(err, "paragraph-error"));
  }
}

function editor(p, item) {
  const title = h("input", { testid: "paragraph-title-input", maxlength: String(MAX_TITLE), placeholder: T.title_optional });
  const content = h("textarea", { testid: "paragraph-content-input", rows: "5" });
  title.value = p.title || "";
  content.value = p.content || "";
  const save = () => {
    const refusal = fieldsRefusal(title.value, content.value);
    if (refusal) return showStatus(refusal);
    send(`${basePath()}/${encodeURIComponent(p.id)}`, { method: "PUT", body: { title: title.value, content: content.value } }, T.paragraph_saved);
  };
  return h(
    "div",
    { class: "stack paragraph-editor" },
    title,
    content,
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", testid: "save-paragraph", onclick: save }, T.save),
      h("button", { type: "button", class: "secondary", onclick: () => loadPage() }, T.cancel),
    ),
  );
}

function paragraphNode(p, questions = []) {
  const item = h("li", { class: `paragraph managed${p.is_active ? "" : " inactive"}`, testid: "doc-paragraph", "data-id": p.id, "data-active": String(p.is_active) });
  const toggle = () =>
    send(`${basePath()}/${encodeURIComponent(p.id)}`, { method: "PUT", body: { is_active: !p.is_active } }, p.is_active ? T.paragraph_disabled : T.paragraph_enabled);
  const remove = () => {
    if (window.confirm(T.confirm_delete_paragraph)) send(`${basePath()}/${encodeURIComponent(p.id)}`, { method: "DELETE" }, T.paragraph_deleted);
  };
  item.append(
    h(
      "div",
      { class: "paragraph-meta" },
      h("span", { class: "pill" }, `#${p.position + 1}`),
      p.title ? h("span", { class: "paragraph-title", "data-user-content": true }, p.title) : null,
      p.is_active ? null : h("span", { class: "pill warn", testid: "paragraph-inactive" }, T.inactive),
      h("span", { class: "grow" }),
      h("button", { type: "button", class: "link", testid: "edit-paragraph", "data-needs": "dataset_write", onclick: () => item.replaceChildren(editor(p, item)) }, T.edit),
      h("button", { type: "button", class: "link", testid: "toggle-paragraph", "data-needs": "dataset_write", onclick: toggle }, p.is_active ? T.disable : T.enable),
      h("button", { type: "button", class: "link danger-text", testid: "delete-paragraph", "data-needs": "dataset_write", onclick: remove }, T.delete),
    ),
    h("div", { class: "paragraph-content", testid: "paragraph-content", "data-user-content": true }, p.content || ""),
    questionFold(p, questions),
  );
  return item;
}

function renderPager(total) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  clear(ui.pager).append(
    h("button", { type: "button", class: "secondary", testid: "paragraph-prev", disabled: page <= 1, onclick: () => goTo(page - 1) }, T.previous_page),
    h("span", { class: "muted", testid: "paragraph-page" }, fill(T.page_of, { page, pages, total })),
    h("button", { type: "button", class: "secondary", testid: "paragraph-next", disabled: page >= pages, onclick: () => goTo(page + 1) }, T.next_page),
  );
}

function goTo(target) {
  page = target;
  loadPage();
}

async function loadPage() {
  if (!shown) return;
  const asked = shown;
  let data;
  let questions;
  try {
    data = await call(`${basePath()}/${page}/${PAGE_SIZE}`);
    questions = await documentQuestions(asked.dataset.id, asked.document.id);
  } catch (err) {
    showStatus(adminError(err, "paragraph-error"));
    return;
  }
  if (shown !== asked) return;
  const records = (data && data.records) || [];
  if (!records.length && page > 1) return goTo(page - 1); // the last one on this page was deleted
  clear(ui.list);
  if (!records.length) ui.list.appendChild(h("li", { class: "muted empty-row" }, T.no_paragraphs));
  for (const p of records) ui.list.appendChild(paragraphNode(p, questions.get(p.id) || []));
  renderPager((data && data.total) || 0);
}

async function addParagraph() {
  const title = ui.newTitle.value;
  const content = ui.newContent.value;
  const refusal = fieldsRefusal(title, content);
  if (refusal) return showStatus(refusal);
  ui.add.disabled = true;
  try {
    await call(basePath(), { method: "POST", body: { title, content } });
    ui.newTitle.value = "";
    ui.newContent.value = "";
    showStatus(T.paragraph_added);
    await loadPage();
  } catch (err) {
    showStatus(adminError(err, "paragraph-error"));
  } finally {
    ui.add.disabled = false;
  }
}

export function openParagraphs(dataset, document) {
  shown = { dataset, document };
  page = 1;
  ui.panel.hidden = false;
  ui.title.textContent = document.name;
  showStatus(null);
  clear(ui.list);
  loadPage();
  ui.panel.scrollIntoView({ block: "nearest" });
}

export function closeParagraphs() {
  shown = null;
  ui.panel.hidden = true;
  clear(ui.list);
  clear(ui.pager);
  showStatus(null);
}

export function initParagraphs() {
  ui.close.addEventListener("click", closeParagraphs);
  ui.add.addEventListener("click", addParagraph);
}
