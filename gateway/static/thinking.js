// A reasoning model's thinking, shown collapsed above its answer: a <details> the reader opens.
// Drawn live while the answer streams and again from the saved record, so a reload shows the
// same; plain text (never Markdown), since it is the model's scratch work, not the answer.
import { h } from "./dom.js";
import { LABELS } from "./labels.js";

const WORDS = LABELS.thinking;

/**
 * Show `text` as the record's thinking, created above the answer on first use; "" removes it.
 * live: the model is still thinking (no answer text yet), which the summary says.
 * An open box stays open when its text is redrawn.
 */
export function setThinking(node, text, { live = false } = {}) {
  let box = node.querySelector("[data-testid=thinking]");
  if (!text) {
    if (box) box.remove();
    return;
  }
  if (!box) {
    box = h(
      "details",
      { class: "thinking", testid: "thinking" },
      h("summary", { testid: "thinking-summary" }),
      h("div", { class: "thinking-text", testid: "thinking-text", "data-user-content": true }),
    );
    node.querySelector("[data-testid=answer]").before(box);
  }
  box.querySelector("summary").textContent = live ? WORDS.live : WORDS.summary;
  box.querySelector(".thinking-text").textContent = text;
}
