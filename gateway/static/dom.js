// Tiny DOM builder: every string child becomes a text node, so untrusted text is never parsed as HTML.
import { LABELS, PAGE_LANG, templateParts } from "./labels.js";

/**
 * h("div", {class: "x", testid: "answer", title: "…", onclick: fn}, "text", childNode, [more])
 * Keys: class, testid (→ data-testid), text (→ textContent), on* (listeners), hidden/disabled/...
 * (booleans), anything else → setAttribute.
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "testid") node.dataset.testid = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

/** The first element with this data-testid inside root (or the document). */
export function byTestId(id, root = document) {
  return root.querySelector(`[data-testid="${id}"]`);
}

/**
 * A template of the page's words with its {holes} filled, as nodes: each value in a span marked
 * data-user-content (a question, a document's name: what the page was given, in whatever
 * language it was written, not a word of the page's).
 */
export function filled(template, values = {}) {
  return templateParts(template, values).map((part) => (typeof part === "string" ? part : h("span", { "data-user-content": true }, part.value)));
}

/** Numbers and times shown to people, in the page's language. */
export function formatSeconds(value) {
  const n = Number(value);
  if (!Number.isFinite(n)) return "—";
  return LABELS.common.seconds.replace("{seconds}", n < 10 ? n.toFixed(2) : n.toFixed(1));
}

export function formatTime(value) {
  if (!value) return "";
  const date = new Date(typeof value === "number" && value < 1e12 ? value * 1000 : value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(PAGE_LANG, { hour12: false });
}
