// Words shown to people for the agent's stop reasons, statuses and live progress. The words
// themselves live in the gateway (gateway/labels.py) and arrive as /ui/labels.json, the same
// copy the CLI prints: this module only picks the right one.
import LABELS from "/ui/labels.json" with { type: "json" };

export const STOP_REASON_LABELS = LABELS.stop_reasons;
export const RECORD_STATUS_LABELS = LABELS.record_statuses;
export const SEARCH_MODE_LABELS = LABELS.search_modes;
export const PART_VERDICT_LABELS = LABELS.part_verdicts;

export function stopReasonLabel(reason) {
  return STOP_REASON_LABELS[reason] || LABELS.stop_reason_fallback;
}

export const PROGRESS_START = LABELS.progress.context;

function fill(template, status) {
  return template.replace(/\{(\w+)\}/g, (_, key) => (status[key] === undefined ? "?" : String(status[key])));
}

/** The progress line for one agent_status payload (the same choice as gateway/labels.py). */
export function progressText(status) {
  const s = status || {};
  const words = LABELS.progress;
  if (s.phase === "assessed") {
    if (s.sufficient) return words.assessed_sufficient;
    return s.missing ? fill(words.assessed_missing, s) : words.assessed_unnamed_gap;
  }
  return fill(words[s.phase] || words.generating, s);
}

export const yesNo = (value) => (value ? "是" : "否");

/** What a paragraph's score is, by the search mode that produced it: label and tooltip. */
export function scoreLabel(mode) {
  const scores = LABELS.scores;
  return { label: scores.labels[mode] || scores.fallback, hint: scores.hints[mode] || "" };
}

export const REGENERATE_WORDS = LABELS.regenerate;

export const RERANK_WORDS = LABELS.rerank;

export const QUESTION_WORDS = LABELS.questions;

export const SKIPPED_ASSESSMENT = LABELS.skipped_assessment;

export const JUDGED_ASSESSMENT = LABELS.judged_assessment;
