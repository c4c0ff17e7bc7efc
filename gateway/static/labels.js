// The words the pages show, in the page's own language. The gateway keeps each word once, its
// Chinese and its English side by side (gateway/words/), and serves one language of them as
// /ui/labels.json?lang=…, the same copy the CLI prints; the page's language is the one its
// <html lang> was served in (the chat page's ?lang=, else the browser's). Every module of the
// chat page takes its words from here; this module also picks the right one and fills templates.

/** The page's language as it declares it ("zh-CN", "en"): the API calls ask for it too. */
export const PAGE_LANG = document.documentElement.lang || "zh-CN";
/** The catalogue language of this page: English for an English page, else Chinese. */
export const LANGUAGE = PAGE_LANG.toLowerCase().startsWith("en") ? "en" : "zh";

export const LABELS = (await import(`/ui/labels.json?lang=${LANGUAGE}`, { with: { type: "json" } })).default;

export const STOP_REASON_LABELS = LABELS.stop_reasons;
export const RECORD_STATUS_LABELS = LABELS.record_statuses;
export const SEARCH_MODE_LABELS = LABELS.search_modes;
export const PART_VERDICT_LABELS = LABELS.part_verdicts;

export function stopReasonLabel(reason) {
  return STOP_REASON_LABELS[reason] || LABELS.stop_reason_fallback;
}

const HOLE = /\{(\w+)\}/g;
const holeValue = (values, key) => (values[key] === undefined || values[key] === null ? "?" : String(values[key]));

/** A template with its {holes} filled from `values`; a hole without a value reads "?". */
export function fill(template, values = {}) {
  return template.replace(HOLE, (_, key) => holeValue(values, key));
}

/** A template's pieces in order: its own words as strings, each filled hole as {value} (what
 * the page was given, not a word of ours, so it can be shown as such). */
export function templateParts(template, values = {}) {
  const parts = [];
  let last = 0;
  for (const match of template.matchAll(HOLE)) {
    if (match.index > last) parts.push(template.slice(last, match.index));
    parts.push({ value: holeValue(values, match[1]) });
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push(template.slice(last));
  return parts;
}

/** The progress line for one agent_status payload (the same choice as gateway/labels.py), as its
 * template and the payload that fills it. */
export function progressLine(status) {
  const s = status || {};
  const words = LABELS.progress;
  if (s.phase === "assessed") {
    if (s.sufficient) return { template: words.assessed_sufficient, values: s };
    // "Still looking" only when another round runs (a payload without the field: as before).
    const looking = s.continues === false ? "assessed_stopped" : "assessed";
    return { template: words[s.missing ? `${looking}_missing` : `${looking}_unnamed_gap`], values: s };
  }
  if (s.phase === "retrieving" && Array.isArray(s.queries) && s.queries.length) {
    // One line per round: its queries side by side.
    return { template: words.retrieving, values: { ...s, query: s.queries.join(words.query_separator) } };
  }
  return { template: words[s.phase] || words.generating, values: s };
}

export const PROGRESS_START = progressLine({ phase: "context" });

export const yesNo = (value) => (value ? LABELS.common.yes : LABELS.common.no);

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
