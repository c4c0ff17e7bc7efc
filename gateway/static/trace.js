// How one answer was found: the retrieval trace, context statistics and cited documents.
// Shared by the chat page (records) and the operator page (multi-round hit test).
import { h, formatSeconds } from "./dom.js";
import {
  JUDGED_ASSESSMENT,
  PART_VERDICT_LABELS,
  RERANK_WORDS,
  QUESTION_WORDS,
  SKIPPED_ASSESSMENT,
  scoreLabel,
  stopReasonLabel,
  yesNo,
} from "./labels.js";

const docName = (p) => p.document_name || p.document_id || "未命名文档";

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
      showDocument ? h("span", { class: "paragraph-doc", testid: docTestid }, docName(p)) : null,
      p.title ? h("span", { class: "paragraph-title" }, p.title) : null,
      h("span", { class: "pill", testid: "score", title: score.hint || null }, `${score.label} ${similarityText(p.similarity)}`),
      p.round ? h("span", { class: "pill" }, `第 ${p.round} 轮`) : null,
      p.rerank_score !== undefined
        ? h("span", { class: "pill", testid: "rerank-score", title: RERANK_WORDS.score_hint }, `${RERANK_WORDS.score} ${similarityText(p.rerank_score)}`)
        : null,
      p.matched_question
        ? h("span", { class: "pill", testid: "matched-question", title: QUESTION_WORDS.matched_hint }, `${QUESTION_WORDS.matched}：${p.matched_question}`)
        : null,
    ),
    h("div", { class: "paragraph-content" }, p.content || ""),
  );
}

function listOrDash(items, testid) {
  if (!items || !items.length) return h("span", { class: "muted" }, "—");
  return h("ul", { class: "inline-list" }, items.map((q) => h("li", { testid }, q)));
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
    h("div", { class: "round-head" }, `第 ${r.round ?? "?"} 轮`),
    h(
      "dl",
      { class: "facts" },
      row("查询", listOrDash(r.queries, queryTestid)),
      row("新增段落", `${(r.new_paragraph_ids || []).length} 个`),
      row("累计资料", `${r.total_evidence ?? 0} 段`),
      row("资料充分", yesNo(r.sufficient)),
      row("缺口", r.missing ? r.missing : h("span", { class: "muted" }, "—")),
      row("后续查询", listOrDash(r.next_queries, "next-query")),
      r.reranked || r.rerank_error ? row(RERANK_WORDS.row, rerankLine(r)) : [],
      r.assessment_skipped ? row("评估", h("span", { testid: "assessment-skipped" }, SKIPPED_ASSESSMENT)) : [],
      r.assessed_by ? row("评估", h("span", { testid: "assessed-by-judge" }, JUDGED_ASSESSMENT)) : [],
    ),
    extra,
  );
}

/** Whether the round's candidates were re-ordered by the application's rerank model, or why not. */
function rerankLine(r) {
  if (r.rerank_error) return h("span", { testid: "rerank-failed" }, RERANK_WORDS.failed + r.rerank_error);
  return h("span", { testid: "reranked" }, RERANK_WORDS.reranked);
}

function contextStats(record) {
  const info = record.context_info || {};
  const chat = record.chat_step || {};
  const search = record.search_step || {};
  const lines = [];
  if (info.enabled === false) lines.push("未使用会话上下文");
  else if (Object.keys(info).length) {
    lines.push(
      `历史轮次 ${info.recent_rounds ?? 0} · 已压缩轮次 ${info.compacted_rounds ?? 0} · ` +
        `估算 token ${info.estimated_tokens ?? 0} / ${info.token_budget ?? 0} · 摘要版本 ${info.revision ?? 0}`,
    );
  }
  const tokens = [`提问 token ${record.message_tokens ?? chat.message_tokens ?? 0}`, `回答 token ${record.answer_tokens ?? chat.answer_tokens ?? 0}`];
  if (search.run_time !== undefined) tokens.push(`检索用时 ${formatSeconds(search.run_time)}`);
  tokens.push(`总用时 ${formatSeconds(record.run_time ?? chat.run_time)}`);
  lines.push(tokens.join(" · "));
  if (chat.model) lines.push(`模型 ${chat.model}${chat.offline_model ? "（离线模型）" : ""}`);
  return h("div", { class: "context-stats", testid: "context-stats" }, lines.map((line) => h("div", {}, line)));
}

function citations(record) {
  const groups = groupByDocument(record.paragraph_list);
  if (!groups.size) return h("div", { class: "citations muted", testid: "citations" }, "没有引用文档。");
  return listSection(
    { class: "citations", testid: "citations" },
    "引用文档",
    "citation-list",
    [...groups].map(([name, paragraphs]) =>
      h(
        "li",
        { class: "citation-item", "data-document": name },
        h(
          "details",
          {},
          h("summary", {}, h("span", { class: "citation-name", testid: "citation" }, name), h("small", { class: "muted" }, ` · ${paragraphs.length} 段`)),
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
    "问题分项",
    "part-list",
    parts.map((p) =>
      h(
        "li",
        { class: "part", testid: "part", "data-verdict": p.verdict },
        h("span", { class: `verdict verdict-${p.verdict}`, testid: "part-verdict" }, PART_VERDICT_LABELS[p.verdict] || p.verdict),
        h("span", { class: "part-text" }, p.part),
      ),
    ),
  );
}

/** <details data-testid="trace">, collapsed; summary like "检索轨迹 · 2 轮 · 未发现新增资料". */
export function traceNode(record) {
  const rounds = record.agent_trace || [];
  const label = stopReasonLabel(record.agent_stop_reason);
  const labelled = (label, node) => h("p", { class: "trace-line" }, h("span", { class: "label" }, label), node);
  return h(
    "details",
    { class: "trace", testid: "trace" },
    h("summary", {}, `检索轨迹 · ${rounds.length} 轮 · ${label}`),
    h(
      "div",
      { class: "trace-body" },
      labelled("停止原因：", h("span", { testid: "stop-reason" }, label)),
      record.padding_problem_text
        ? labelled("检索问题：", h("span", { testid: "rewritten-question" }, record.padding_problem_text))
        : null,
      record.rewrite_error ? labelled("问题改写未完成：", h("span", { class: "muted" }, record.rewrite_error)) : null,
      rounds.length && !record.sufficient && record.missing ? labelled("仍缺资料：", h("span", {}, record.missing)) : null,
      partsNode(record),
      rounds.length
        ? h("ol", { class: "rounds" }, rounds.map((r) => roundNode(r)))
        : h("p", { class: "muted" }, "本次回答没有进行检索。"),
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
    h("span", { class: "label" }, "引用："),
    [...groups.keys()].map((name) =>
      h("button", { type: "button", class: "chip", testid: "source", title: "查看引用段落", onclick: () => onPick && onPick(name) }, name),
    ),
  );
}
