// Hit test: what a query finds in the selected knowledge base, as one search or as the
// multi-round retrieval loop the chat uses.
import { h, clear, byTestId, formatSeconds } from "./dom.js";
import { call, adminError } from "./admin-api.js";
import { selectedDataset, onDatasetsChanged } from "./admin-datasets.js";
import { stopReasonLabel, yesNo } from "./labels.js";
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
  if (!paragraphs.length) return h("p", { class: "muted" }, "没有命中的段落：可以降低相似度阈值或换个说法。");
  return h("div", { class: "hit-list" }, h("p", { class: "muted" }, `命中 ${paragraphs.length} 个段落`), paragraphs.map((p) => hitNode(p, mode)));
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
      line("停止原因：", h("span", { testid: "hit-stop-reason" }, stopReasonLabel(result.stop_reason))),
      result.problem_text ? line("检索问题：", h("span", {}, result.problem_text)) : null,
      line("资料充分：", h("span", {}, yesNo(result.sufficient))),
      result.missing ? line("缺口：", h("span", {}, result.missing)) : null,
      line("用时：", h("span", {}, `${formatSeconds(result.run_time)} · ${rounds.length} 轮 · ${paragraphs.length} 个段落`)),
    ),
    h(
      "ol",
      { class: "rounds" },
      rounds.map((r) => {
        const found = paragraphs.filter((p) => p.round === r.round);
        return roundNode(r, {
          testid: "hit-round",
          queryTestid: "hit-round-query",
          extra: h("div", { class: "hit-list" }, found.length ? found.map((p) => hitNode(p, mode)) : h("p", { class: "muted" }, "本轮没有新增段落。")),
        });
      }),
    ),
    orphans.length ? h("div", { class: "hit-list" }, h("div", { class: "section-label" }, "其他段落"), orphans.map((p) => hitNode(p, mode))) : null,
  );
}

async function run() {
  const d = selectedDataset();
  clear(ui.results);
  const fail = (content) => ui.results.appendChild(typeof content === "string" ? h("div", { class: "error", testid: "hit-error", role: "alert" }, content) : content);
  if (!d) return fail("请先选择一个知识库。");
  const query = ui.query.value.trim();
  if (!query) return fail("请输入查询内容。");
  const top = Number(ui.top.value);
  const similarity = Number(ui.similarity.value);
  if (!Number.isInteger(top) || top < 1 || top > 100) return fail("返回段落数需在 1 到 100 之间。");
  if (!Number.isFinite(similarity) || similarity < 0 || similarity > 1) return fail("相似度阈值需在 0 到 1 之间。");

  const params = new URLSearchParams({ query_text: query, top_number: String(top), similarity: String(similarity), search_mode: ui.mode.value });
  const multi = ui.multi.checked;
  ui.run.disabled = true;
  ui.results.appendChild(h("p", { class: "muted" }, multi ? "正在多轮检索…" : "正在检索…"));
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
