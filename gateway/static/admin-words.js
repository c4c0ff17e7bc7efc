// The operator page's fixed words come from gateway/labels.py in the page's own language (its
// <html lang>, through labels.js): admin.html arrives with most of them written in; elements
// the scripts fill name theirs with data-label (text) or data-placeholder, a dotted path such
// as "account.signin". Templates use {name} placeholders.
import { LABELS } from "./labels.js";

/** The label at a dotted path ("roles.admin"), or "" when there is none. */
export function word(path) {
  const found = path.split(".").reduce((words, key) => (words == null ? words : words[key]), LABELS);
  return typeof found === "string" ? found : "";
}

/** "{username} created" with {username: "Li Lei"} → "Li Lei created"; a missing value reads as "". */
export const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, key) => (values[key] === undefined ? "" : String(values[key])));

export function fillWords(root = document) {
  for (const node of root.querySelectorAll("[data-label]")) node.textContent = word(node.dataset.label);
  for (const node of root.querySelectorAll("[data-placeholder]")) node.placeholder = word(node.dataset.placeholder);
}
