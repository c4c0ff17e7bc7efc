// The operator page's fixed words come from gateway/labels.py, in Chinese (served as
// /ui/labels.json?lang=zh, which every operator module names: the page is Chinese for now):
// elements name theirs with data-label (text) or data-placeholder, a dotted path such as
// "account.signin". Templates use {name} placeholders.
import LABELS from "/ui/labels.json?lang=zh" with { type: "json" };

/** The label at a dotted path ("roles.admin"), or "" when there is none. */
export function word(path) {
  const found = path.split(".").reduce((words, key) => (words == null ? words : words[key]), LABELS);
  return typeof found === "string" ? found : "";
}

/** "{username} 已创建" with {username: "李雷"} → "李雷 已创建"; a missing value reads as "". */
export const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, key) => (values[key] === undefined ? "" : String(values[key])));

export function fillWords(root = document) {
  for (const node of root.querySelectorAll("[data-label]")) node.textContent = word(node.dataset.label);
  for (const node of root.querySelectorAll("[data-placeholder]")) node.placeholder = word(node.dataset.placeholder);
}
