// Questions attached to paragraphs: under each paragraph of the paragraph panel (listed, added,
// reworded, removed), and in the conversation log, where a visitor's question is attached to a paragraph
// that answers it (one the record found, or one the operator looks up in the application's
// datasets). A visitor asking the same, or nearly the same, then gets that paragraph first.
import { h, clear } from "./dom.js";
import { call, adminError } from "./admin-api.js";
import { QUESTION_WORDS as WORDS } from "./labels.js";

const MAX_QUESTION = 256;
const LOOKUP_SIZE = 5;

const documentPath = (datasetId, documentId) =>
  `/api/dataset/${encodeURIComponent(datasetId)}/document/${encodeURIComponent(documentId)}`;
const questionsPath = (p) => `${documentPath(p.dataset_id, p.document_id)}/paragraph/${encodeURIComponent(p.id)}/problem`;

function refusal(text) {
  if (!text.trim()) return WORDS.empty;
  if (text.trim().length > MAX_QUESTION) return WORDS.too_long;
  return "";
}

/** Every question of the document, by paragraph id. */
export async function documentQuestions(datasetId, documentId) {
  const byParagraph = new Map();
  for (const q of (await call(`${documentPath(datasetId, documentId)}/problem`)) || []) {
    if (!byParagraph.has(q.paragraph_id)) byParagraph.set(q.paragraph_id, []);
    byParagraph.get(q.paragraph_id).push(q);
  }
  return byParagraph;
}

/** A paragraph's questions as a fold under it: each with a remove button, and a field to add one. */
export function questionFold(p, questions) {
  let listed = [...questions];
  const summary = h("summary", { testid: "question-count" });
  const list = h("ul", { class: "inline-list question-list" });
  const status = h("div", { class: "muted small", testid: "question-status" });
  const input = h("input", { testid: "question-input", maxlength: String(MAX_QUESTION), placeholder: WORDS.placeholder });
  const say = (content) => clear(status).append(content || "");

  function render() {
    summary.textContent = WORDS.count.replace("{count}", listed.length);
    clear(list);
    if (!listed.length) list.append(h("li", { class: "muted" }, WORDS.none));
    for (const q of listed) list.append(questionItem(q));
  }

  function questionItem(q) {
    const item = h("li", { testid: "attached-question" });
    const remove = async () => {
      try {
        await call(`${questionsPath(p)}/${encodeURIComponent(q.id)}/un_association`, { method: "PUT" });
        listed = listed.filter((x) => x.id !== q.id);
        render();
        say(WORDS.removed);
      } catch (err) {
        say(adminError(err, "question-error"));
      }
    };
    const reword = () => {
      const field = h("input", { testid: "question-edit-input", maxlength: String(MAX_QUESTION) });
      field.value = q.content;
      const save = async () => {
        const problem = refusal(field.value);
        if (problem) return say(problem);
        try {
          const saved = await call(`/api/dataset/${encodeURIComponent(p.dataset_id)}/problem/${encodeURIComponent(q.id)}`, { method: "PUT", body: { content: field.value } });
          listed = listed.map((x) => (x.id === q.id ? saved : x));
          render();
          say(WORDS.saved);
        } catch (err) {
          say(adminError(err, "question-error"));
        }
      };
      item.replaceChildren(field, h("button", { type: "button", testid: "save-question", onclick: save }, WORDS.save), h("button", { type: "button", class: "secondary", onclick: render }, WORDS.cancel));
    };
    item.append(
      h("span", { "data-user-content": true }, q.content),
      h("button", { type: "button", class: "link", testid: "edit-question", "data-needs": "dataset_write", onclick: reword }, WORDS.edit),
      h("button", { type: "button", class: "link danger-text", testid: "remove-question", "data-needs": "dataset_write", onclick: remove }, WORDS.remove),
    );
    return item;
  }

  async function add() {
    const problem = refusal(input.value);
    if (problem) return say(problem);
    try {
      const added = await call(questionsPath(p), { method: "POST", body: { content: input.value } });
      if (!listed.some((q) => q.id === added.id)) listed.push(added);
      input.value = "";
      render();
      say(WORDS.added);
    } catch (err) {
      say(adminError(err, "question-error"));
    }
  }

  render();
  return h(
    "details",
    { class: "questions", testid: "paragraph-questions" },
    summary,
    list,
    h(
      "div",
      { class: "row" },
      input,
      h("button", { type: "button", testid: "add-question", "data-needs": "dataset_write", onclick: add }, WORDS.add),
    ),
    status,
  );
}

/** One paragraph the log offers to attach the record's question to. */
function candidate(p, question, say) {
  const button = h("button", { type: "button", class: "link", testid: "attach-question", "data-needs": "dataset_write" }, WORDS.attach);
  button.addEventListener("click", async () => {
    try {
      await call(questionsPath(p), { method: "POST", body: { content: question.slice(0, MAX_QUESTION) } });
      button.textContent = WORDS.attached;
      button.disabled = true;
      say(WORDS.added);
    } catch (err) {
      say(adminError(err, "question-error"));
    }
  });
  const text = p.content.length > 120 ? `${p.content.slice(0, 120)}…` : p.content;
  return h(
    "li",
    { class: "attach-candidate", testid: "attach-candidate", "data-paragraph-id": p.id },
    h("div", { class: "muted small", "data-user-content": true }, [p.document_name, p.title].filter(Boolean).join(" · ")),
    h("div", { "data-user-content": true }, text),
    button,
  );
}

/** The log's box: the record's question attached to a paragraph it found, or to one looked up. */
export function attachFromLog(entry, appId) {
  const question = (entry.problem_text || "").trim();
  const status = h("div", { class: "muted small", testid: "attach-status" });
  const say = (content) => clear(status).append(content || "");
  const found = h("ul", { class: "plain-list", testid: "attach-found" });
  for (const p of entry.paragraph_list || []) found.append(candidate(p, question, say));
  const results = h("ul", { class: "plain-list", testid: "attach-results" });
  const lookup = h("input", { testid: "attach-lookup", placeholder: WORDS.search_placeholder });

  async function search() {
    const words = lookup.value.trim();
    if (!words) return;
    clear(results);
    try {
      const app = await call(`/api/application/${encodeURIComponent(appId)}`);
      const params = new URLSearchParams({ query_text: words, top_number: String(LOOKUP_SIZE), similarity: "0" });
      const hits = [];
      for (const datasetId of app.dataset_id_list || []) {
        hits.push(...((await call(`/api/dataset/${encodeURIComponent(datasetId)}/hit_test?${params}`)) || []));
      }
      if (!hits.length) results.append(h("li", { class: "muted" }, WORDS.nothing_found));
      for (const p of hits.slice(0, LOOKUP_SIZE * 2)) results.append(candidate(p, question, say));
    } catch (err) {
      say(adminError(err, "question-error"));
    }
  }

  lookup.addEventListener("keydown", (e) => {
    if (e.key === "Enter") search();
  });
  return h(
    "section",
    { class: "attach-question stack", testid: "attach-from-log" },
    h("h4", {}, WORDS.from_log_title),
    h("p", { class: "muted small" }, WORDS.from_log_hint),
    h("div", { class: "muted small" }, WORDS.found),
    found,
    h("div", { class: "row" }, lookup, h("button", { type: "button", class: "secondary", testid: "attach-search", onclick: search }, WORDS.search)),
    results,
    status,
  );
}
