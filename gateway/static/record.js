// One question/answer element. The same fill function draws a record loaded from the server
// and a just-streamed one after it was re-read, so a reload shows exactly what was shown live.
import { h, clear, byTestId } from "./dom.js";
import { ApiError, errorNode } from "./api.js";
import { renderMarkdown } from "./markdown.js";
import { traceNode, sourcesNode } from "./trace.js";
import { setThinking } from "./thinking.js";

/** An empty record for a question; the answer parts are filled in later. */
export function createRecordNode(question) {
  return h(
    "article",
    { class: "record", testid: "record", "data-status": "running" },
    h("div", { class: "question" }, h("div", { class: "bubble", testid: "record-question" }, question)),
    h(
      "div",
      { class: "reply" },
      h("div", { class: "progress", testid: "progress", role: "status", hidden: true }),
      h("div", { class: "answer markdown", testid: "answer" }),
      h("ol", { class: "steps", "aria-label": "检索过程" }),
      h("div", { class: "slot-error" }),
      h("div", { class: "slot-flags" }),
      h("div", { class: "slot-sources" }),
      h("div", { class: "slot-trace" }),
    ),
  );
}

const slot = (node, name) => node.querySelector(`.slot-${name}`);

export function setAnswer(node, markdownText) {
  byTestId("answer", node).innerHTML = renderMarkdown(markdownText); // renderMarkdown escapes first
}

export function setProgress(node, text) {
  const progress = byTestId("progress", node);
  progress.hidden = false;
  progress.textContent = text;
}

/** One step per distinct progress message in this stream, kept after the answer ends. */
export function addStep(node, text) {
  const steps = node.querySelector(".steps");
  const seen = [...steps.children].some((li) => li.textContent === text);
  if (!seen) steps.appendChild(h("li", { testid: "progress-step" }, text));
}

export function hideProgress(node) {
  byTestId("progress", node).hidden = true;
  node.classList.add("done");
}

export function setError(node, err) {
  clear(slot(node, "error"));
  if (err) slot(node, "error").appendChild(errorNode(err, "record-error"));
}

/** A saved record's error has no HTTP status; guess the wording from its text. */
function savedError(record) {
  const message = record.error || "";
  if (/the model failed|upstream service failed|unavailable|timeout|timed out|deadline|connect/i.test(message)) return new ApiError(503, message);
  return new ApiError(500, message || "the answer failed");
}

function openCitation(node, name) {
  const trace = byTestId("trace", node);
  if (!trace) return;
  trace.open = true;
  for (const item of trace.querySelectorAll(".citation-item")) {
    if (item.dataset.document === name) {
      item.querySelector("details").open = true;
      item.scrollIntoView({ block: "nearest", behavior: "smooth" });
    }
  }
}

/** Draw a record as the server saved it. liveError: an error seen during this page's stream. */
export function fillRecord(node, record, { liveError = null } = {}) {
  node.dataset.recordId = record.id;
  node.dataset.status = record.status || "answered";
  byTestId("record-question", node).textContent = record.problem_text || "";
  setAnswer(node, record.answer_text || "");
  setThinking(node, record.reasoning_content || "");

  const status = record.status;
  if (liveError) setError(node, liveError);
  else if (status === "failed") setError(node, savedError(record));
  else setError(node, null);

  const flags = clear(slot(node, "flags"));
  if (status === "stopped") flags.appendChild(h("span", { class: "flag", testid: "stopped-marker" }, "已停止"));
  if (status === "interrupted") flags.appendChild(h("span", { class: "flag warn" }, "已中断：服务重启时回答未完成，请重新提问。"));
  if (status === "running") flags.appendChild(h("span", { class: "flag" }, "仍在回答中…"));

  const sources = clear(slot(node, "sources"));
  const trace = clear(slot(node, "trace"));
  const hasTrace = (record.agent_trace || []).length > 0 || record.agent_stop_reason;
  if (status === "answered" || status === "stopped" || (hasTrace && status !== "running")) {
    const s = sourcesNode(record, (name) => openCitation(node, name));
    if (s) sources.appendChild(s);
    trace.appendChild(traceNode(record));
  }
}
