// Hit test: what a query finds in the selected knowledge base, as one search or as the
// multi-round retrieval loop the chat uses.
import { h, clear, byTestId, formatSeconds } from "./dom.js";
import { LABELS, fill } from "./labels.js";
import { call, adminError } from "./admin-api.js";
import { selectedDataset, onDatasetsChanged } from "./admin-datasets.js";
import { stopReasonLabel, yesNo } from "./labels.js";

const T = LABELS.admin_text;
import { paragraphNode, roundNode } from "./trace.js";

const ui = {
  query: byTestId("hit-query"),
  mode: byTestId("hit-mode"),
  top: byTestId("hit-top"),
  similarity: byTestId("hit-similarity"),
  multi: byTestId("hit-multi"),
  run: byTestId("hit-run"),
  results: document.getElementById("hit-results"),
};

// mode: the search mode the scores come from, which names them (相似度 only for vector search).
const hitNode = (p, mode) => paragraphNode(p, { testid: "hit-result", showDocument: true, docTestid: "hit-doc", mode });

function renderSingle(paragraphs, mode) {
  if (!paragraphs.length) return h("p", { class: "muted" }, T.no_hits);
  return h("div", { class: "hit-list" }, h("p", { class: "muted" }, fill(T.hits, { count: paragraphs.length })), paragraphs.map((p) => hitNode(p, mode)));
}

function renderRounds(result, requestedMode) {
  const mode = result.search_mode || requestedMode;
  const paragraphs = result.paragraph_list || [];
  const rounds = result.rounds || [];
  const roundNumbers = new Set(rounds.map((r) => r.round));
  const orphans = paragraphs.filter((p) => !roundNumbers.has(p.round));
  const line = (label, node) => h("p", { class: "trace-line" }, h("span", { class: "label" }, label), node);
  return h(
    "div",
    { class: "hit-rounds" },
    h(
      "div",
      { class: "hit-summary" },
      line(T.stop_reason, h("span", { testid: "hit-stop-reason" }, stopReasonLabel(result.stop_reason))),
      result.problem_text ? line(T.search_question, h("span", { "data-user-content": true }, result.problem_text)) : null,
      line(T.sufficient, h("span", {}, yesNo(result.sufficient))),
      result.missing ? line(T.gap, h("span", { "data-user-content": true }, result.missing)) : null,
      line(T.time_taken, h("span", {}, fill(T.time_line, { time: formatSeconds(result.run_time), rounds: rounds.length, count: paragraphs.length }))),
    ),
    h(
      "ol",
      { class: "rounds" },
      rounds.map((r) => {
        const found = paragraphs.filter((p) => p.round === r.round);
        return roundNode(r, {
          testid: "hit-round",
          queryTestid: "hit-round-query",
          extra: h("div", { class: "hit-list" }, found.length ? found.map((p) => hitNode(p, mode)) : h("p", { class: "muted" }, T.no_new_paragraphs)),
        });
      }),
    ),
    orphans.length ? h("div", { class: "hit-list" }, h("div", { class: "section-label" }, T.other_paragraphs), orphans.map((p) => hitNode(p, mode))) : null,
  );
}

async function run() {
  const d = selectedDataset();
  clear(ui.results);
  const fail = (content) => ui.results.appendChild(typeof content === "string" ? h("div", { class: "error", testid: "hit-error", role: "alert" }, content) : content);
  if (!d) return fail(T.pick_dataset_first);
  const query = ui.query.value.trim();
  if (!query) return fail(T.query_needed);
  const top = Number(ui.top.value);
  const similarity = Number(ui.similarity.value);
  if (!Number.isInteger(top) || top < 1 || top > 100) return fail(T.top_range_100);
  if (!Number.isFinite(similarity) || similarity < 0 || similarity > 1) return fail(T.similarity_range);

  const params = new URLSearchParams({ query_text: query, top_number: String(top), similarity: String(similarity), search_mode: ui.mode.value });
  const multi = ui.multi.checked;
  ui.run.disabled = true;
  ui.results.appendChild(h("p", { class: "muted" }, multi ? T.searching_multi : T.searching));
  try {
    const path = `/api/dataset/${encodeURIComponent(d.id)}/${multi ? "hit_test_rounds" : "hit_test"}?${params}`;
    const data = await call(path);
    clear(ui.results);
    ui.results.appendChild(multi ? renderRounds(data || {}, params.get("search_mode")) : renderSingle(data || [], params.get("search_mode")));
  } catch (err) {
    clear(ui.results);
    fail(adminError(err, "hit-error"));
  } finally {
    ui.run.disabled = false;
  }
}

export function initHitTest() {
  ui.run.addEventListener("click", run);
  ui.query.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.isComposing) {
      e.preventDefault();
      run();
    }
  });
  // Results belong to one knowledge base; clear them when another is selected.
  let shown = "";
  onDatasetsChanged((_, selected) => {
    const id = selected ? selected.id : "";
    if (id !== shown) clear(ui.results);
    shown = id;
  });
}
