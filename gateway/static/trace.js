// How one answer was found: the retrieval trace, context statistics and cited documents.
// Shared by the chat page (records) and the operator page (multi-round hit test). What came from
// the knowledge base or the question (documents' names and paragraphs, the searches, the gaps,
// the parts, the model's name) is marked data-user-content: it is shown in the language it was
// written in, beside the page's own words.
import { h, filled, formatSeconds } from "./dom.js";
import {
  JUDGED_ASSESSMENT,
  LABELS,
  PART_VERDICT_LABELS,
  RERANK_WORDS,
  QUESTION_WORDS,
  SKIPPED_ASSESSMENT,
  scoreLabel,
  stopReasonLabel,
  fill,
  yesNo,
} from "./labels.js";

const WORDS = LABELS.trace;
const COLON = LABELS.common.colon;
const docName = (p) => p.document_name || p.document_id || WORDS.untitled_document;
/** Text the page was given (not a word of its own), in an element marked as such. */
const given = (tag, props, text) => h(tag, { ...props, "data-user-content": true }, text);

/** Paragraphs grouped by document, in order of first appearance. */
export function groupByDocument(paragraphs) {
  const groups = new Map();
  for (const p of paragraphs || []) {
    const name = docName(p);
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(p);
  }
  return groups;
}

function similarityText(value) {
  const n = Number(value);
  return Number.isFinite(n) ? n.toFixed(3) : "—";
}

/** One retrieved paragraph: title, content, score, round (and document name if asked). mode:
 * the search mode the score comes from, which names it (a hybrid score is not a similarity). */
export function paragraphNode(p, { testid = "paragraph", showDocument = false, docTestid = "paragraph-doc", mode = "" } = {}) {
  // A paragraph an attached question brought in is scored by that match, whatever the mode.
  const score = p.matched_question ? { label: QUESTION_WORDS.score, hint: QUESTION_WORDS.matched_hint } : scoreLabel(mode);
  return h(
    "div",
    { class: "paragraph", testid },
    h(
      "div",
      { class: "paragraph-meta" },
      showDocument ? given("span", { class: "paragraph-doc", testid: docTestid }, docName(p)) : null,
      p.title ? given("span", { class: "paragraph-title" }, p.title) : null,
      h("span", { class: "pill", testid: "score", title: score.hint || null }, `${score.label} ${similarityText(p.similarity)}`),
      p.round ? h("span", { class: "pill" }, fill(WORDS.round, { round: p.round })) : null,
      p.rerank_score !== undefined
        ? h("span", { class: "pill", testid: "rerank-score", title: RERANK_WORDS.score_hint }, `${RERANK_WORDS.score} ${similarityText(p.rerank_score)}`)
        : null,
      p.matched_question
        ? h("span", { class: "pill", testid: "matched-question", title: QUESTION_WORDS.matched_hint }, QUESTION_WORDS.matched, COLON, given("span", {}, p.matched_question))
        : null,
    ),
    given("div", { class: "paragraph-content" }, p.content || ""),
  );
}

function listOrDash(items, testid) {
  if (!items || !items.length) return h("span", { class: "muted" }, "—");
  return h("ul", { class: "inline-list" }, items.map((q) => given("li", { testid }, q)));
}

/**
 * One round of the retrieval loop. extra: nodes appended at the end (the hit test puts
 * that round's paragraphs there).
 */
export function roundNode(round, { testid = "trace-round", queryTestid = "trace-query", extra = null } = {}) {
  const r = round || {};
  const row = (label, value) => [h("dt", {}, label), h("dd", {}, value)];
  return h(
    "li",
    { class: "round", testid },
    h("div", { class: "round-head" }, fill(WORDS.round, { round: r.round })),
    h(
      "dl",
      { class: "facts" },
      row(WORDS.queries, listOrDash(r.queries, queryTestid)),
      row(WORDS.new_paragraphs, fill(WORDS.paragraph_count, { count: (r.new_paragraph_ids || []).length })),
      row(WORDS.evidence, fill(WORDS.evidence_count, { count: r.total_evidence ?? 0 })),
      row(WORDS.sufficient, yesNo(r.sufficient)),
      row(WORDS.gap, r.missing ? given("span", {}, r.missing) : h("span", { class: "muted" }, "—")),
      row(WORDS.next_queries, listOrDash(r.next_queries, "next-query")),
      r.reranked || r.rerank_error ? row(RERANK_WORDS.row, rerankLine(r)) : [],
      r.assessment_skipped ? row(WORDS.assessment, h("span", { testid: "assessment-skipped" }, SKIPPED_ASSESSMENT)) : [],
      r.assessed_by ? row(WORDS.assessment, h("span", { testid: "assessed-by-judge" }, JUDGED_ASSESSMENT)) : [],
    ),
    extra,
  );
}

/** Whether the round's candidates were re-ordered by the application's rerank model, or why not. */
function rerankLine(r) {
  if (r.rerank_error) return h("span", { testid: "rerank-failed" }, RERANK_WORDS.failed, given("span", {}, r.rerank_error));
  return h("span", { testid: "reranked" }, RERANK_WORDS.reranked);
}

function contextStats(record) {
  const info = record.context_info || {};
  const chat = record.chat_step || {};
  const search = record.search_step || {};
  const lines = [];
  if (info.enabled === false) lines.push(WORDS.no_context);
  else if (Object.keys(info).length) {
    const counts = ["recent_rounds", "compacted_rounds", "estimated_tokens", "token_budget", "revision"];
    lines.push(fill(WORDS.context, Object.fromEntries(counts.map((key) => [key, info[key] ?? 0]))));
  }
  const tokens = [
    fill(WORDS.question_tokens, { count: record.message_tokens ?? chat.message_tokens ?? 0 }),
    fill(WORDS.answer_tokens, { count: record.answer_tokens ?? chat.answer_tokens ?? 0 }),
  ];
  if (search.run_time !== undefined) tokens.push(fill(WORDS.search_time, { time: formatSeconds(search.run_time) }));
  tokens.push(fill(WORDS.total_time, { time: formatSeconds(record.run_time ?? chat.run_time) }));
  lines.push(tokens.join(" · "));
  if (chat.model) lines.push([filled(WORDS.model, { model: chat.model }), chat.offline_model ? WORDS.offline_model : ""]);
  return h("div", { class: "context-stats", testid: "context-stats" }, lines.map((line) => h("div", {}, line)));
}

function citations(record) {
  const groups = groupByDocument(record.paragraph_list);
  if (!groups.size) return h("div", { class: "citations muted", testid: "citations" }, WORDS.no_citations);
  return listSection(
    { class: "citations", testid: "citations" },
    WORDS.citations,
    "citation-list",
    [...groups].map(([name, paragraphs]) =>
      h(
        "li",
        { class: "citation-item", "data-document": name },
        h(
          "details",
          {},
          h("summary", {}, given("span", { class: "citation-name", testid: "citation" }, name), h("small", { class: "muted" }, fill(WORDS.citation_count, { count: paragraphs.length }))),
          paragraphs.map((p) => paragraphNode(p, { mode: record.search_mode })),
        ),
      ),
    ),
  );
}

/** A labelled section of the trace holding one list: its label above, its items below. */
function listSection(attributes, label, listClass, items) {
  return h("div", attributes, h("div", { class: "section-label" }, label), h("ul", { class: listClass }, items));
}

/** Each part of the question with the offline model's verdict on it (the record's parts), one line each. */
function partsNode(record) {
  const parts = record.parts || [];
  if (!parts.length) return null;
  return listSection(
    { class: "parts", testid: "parts" },
    WORDS.parts,
    "part-list",
    parts.map((p) =>
      h(
        "li",
        { class: "part", testid: "part", "data-verdict": p.verdict },
        h("span", { class: `verdict verdict-${p.verdict}`, testid: "part-verdict" }, PART_VERDICT_LABELS[p.verdict] || p.verdict),
        given("span", { class: "part-text" }, p.part),
      ),
    ),
  );
}

/** <details data-testid="trace">, collapsed; summary like "Search trace · rounds: 2 · No new evidence found". */
export function traceNode(record) {
  const rounds = record.agent_trace || [];
  const label = stopReasonLabel(record.agent_stop_reason);
  const labelled = (label, node) => h("p", { class: "trace-line" }, h("span", { class: "label" }, label), node);
  return h(
    "details",
    { class: "trace", testid: "trace" },
    h("summary", {}, fill(WORDS.summary, { rounds: rounds.length, stop_reason: label })),
    h(
      "div",
      { class: "trace-body" },
      labelled(WORDS.stop_reason, h("span", { testid: "stop-reason" }, label)),
      record.padding_problem_text
        ? labelled(WORDS.rewritten_question, given("span", { testid: "rewritten-question" }, record.padding_problem_text))
        : null,
      record.rewrite_error ? labelled(WORDS.rewrite_failed, given("span", { class: "muted" }, record.rewrite_error)) : null,
      rounds.length && !record.sufficient && record.missing ? labelled(WORDS.still_missing, given("span", {}, record.missing)) : null,
      partsNode(record),
      rounds.length
        ? h("ol", { class: "rounds" }, rounds.map((r) => roundNode(r)))
        : h("p", { class: "muted" }, WORDS.no_search),
      contextStats(record),
      citations(record),
    ),
  );
}

/** Cited document names under the answer, visible even with the trace collapsed. */
export function sourcesNode(record, onPick) {
  const groups = groupByDocument(record.paragraph_list);
  if (!groups.size) return null;
  return h(
    "div",
    { class: "sources", testid: "answer-sources" },
    h("span", { class: "label" }, WORDS.sources),
    [...groups.keys()].map((name) =>
      h("button", { type: "button", class: "chip", testid: "source", title: WORDS.source_hint, "data-user-content": true, onclick: () => onPick && onPick(name) }, name),
    ),
  );
}
