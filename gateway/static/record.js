// One question/answer element. The same fill function draws a record loaded from the server
// and a just-streamed one after it was re-read, so a reload shows exactly what was shown live.
// What the reader and the model wrote (the question, the answer, the thinking) is marked
// data-user-content: it is shown in the language it was written in, whatever the page's.
import { h, clear, byTestId, filled } from "./dom.js";
import { ApiError, errorNode } from "./api.js";
import { LABELS, RECORD_STATUS_LABELS } from "./labels.js";
import { renderMarkdown } from "./markdown.js";
import { traceNode, sourcesNode } from "./trace.js";
import { setThinking } from "./thinking.js";

const WORDS = LABELS.record;

/** An empty record for a question; the answer parts are filled in later. */
export function createRecordNode(question) {
  return h(
    "article",
    { class: "record", testid: "record", "data-status": "running" },
    h("div", { class: "question" }, h("div", { class: "bubble", testid: "record-question", "data-user-content": true }, question)),
    h(
      "div",
      { class: "reply" },
      h("div", { class: "progress", testid: "progress", role: "status", hidden: true }),
      h("div", { class: "answer markdown", testid: "answer", "data-user-content": true }),
      h("ol", { class: "steps", "aria-label": WORDS.steps }),
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

/** line: {template, values} (labels.js progressLine): the phase's words, its values marked as given. */
export function setProgress(node, line) {
  const progress = byTestId("progress", node);
  progress.hidden = false;
  progress.replaceChildren(...filled(line.template, line.values));
}

/** One step per distinct progress message in this stream, kept after the answer ends. */
export function addStep(node, line) {
  const steps = node.querySelector(".steps");
  const step = h("li", { testid: "progress-step" }, filled(line.template, line.values));
  const seen = [...steps.children].some((li) => li.textContent === step.textContent);
  if (!seen) steps.appendChild(step);
}

export function hideProgress(node) {
  byTestId("progress", node).hidden = true;
  node.classList.add("done");
}

export function setError(node, err) {
  clear(slot(node, "error"));
  if (err) slot(node, "error").appendChild(errorNode(err, "record-error"));
}

/** A saved record's error has no HTTP status; guess the wording from its text, which the gateway
 * sends in the page's language (the Chinese of the same sentences), so a reload says what the
 * live stream said. */
const UNAVAILABLE = /the model failed|upstream service failed|unavailable|timeout|timed out|deadline|connect|上游服务出错|不可用|超时|连接/i;

function savedError(record) {
  const message = record.error || "";
  if (UNAVAILABLE.test(message)) return new ApiError(503, message);
  return new ApiError(500, message || RECORD_STATUS_LABELS.failed);
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
  if (status === "stopped") flags.appendChild(h("span", { class: "flag", testid: "stopped-marker" }, RECORD_STATUS_LABELS.stopped));
  if (status === "interrupted") flags.appendChild(h("span", { class: "flag warn" }, WORDS.interrupted));
  if (status === "running") flags.appendChild(h("span", { class: "flag" }, WORDS.running));

  const sources = clear(slot(node, "sources"));
  const trace = clear(slot(node, "trace"));
  const hasTrace = (record.agent_trace || []).length > 0 || record.agent_stop_reason;
  if (status === "answered" || status === "stopped" || (hasTrace && status !== "running")) {
    const s = sourcesNode(record, (name) => openCitation(node, name));
    if (s) sources.appendChild(s);
    trace.appendChild(traceNode(record));
  }
}
