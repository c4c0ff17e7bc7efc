// The application form's rerank model select: "no rerank" (the default), then the
// registered rerank models. The list comes from admin-models.js (its kb:models-loaded event);
// admin-apps.js reads and sets the chosen value as model_setting.rerank_model_id.
import { RERANK_WORDS } from "./labels.js";
import { clear, h } from "./dom.js";

const select = () => document.getElementById("app-rerank-model");

function render(models) {
  const node = select();
  const chosen = node.value;
  clear(node).append(
    h("option", { value: "" }, RERANK_WORDS.none),
    ...models.filter((m) => m.purpose === "rerank").map((m) => h("option", { value: m.id }, `${m.name} (${m.model_name})`)),
  );
  node.value = chosen;
}

export function initRerankChoice() {
  document.getElementById("app-rerank-label").textContent = RERANK_WORDS.model;
  render([]);
  document.addEventListener("kb:models-loaded", (event) => render(event.detail || []));
}
