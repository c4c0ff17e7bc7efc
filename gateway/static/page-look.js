// The chat page as the application's operator set it up (docs/pages.md, "Per application"):
// the name and logo visitors see, the accent colour, the opening message with its suggested
// questions as buttons, the input's hint, a disclaimer, and whether sources and the trace show.
// Everything is drawn as text or through the safe Markdown renderer: an opening message with
// HTML or a javascript: link shows as inert text. It is the operator's text, in whatever language
// they wrote it (chat.html marks its places data-user-content), beside the page's own words.
import { byTestId, clear, h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { LABELS } from "./labels.js";

const DEFAULT_NAME = LABELS.chat_page.title;
const COLOUR = /^#[0-9a-fA-F]{6}$/;

/** The opening message's text (its lines that are not suggested questions) and its questions. */
export function splitPrologue(prologue) {
  const text = [];
  const questions = [];
  for (const line of String(prologue || "").split(/\r?\n/)) {
    if (line.startsWith("- ") && line.slice(2).trim()) questions.push(line.slice(2).trim());
    else text.push(line);
  }
  return { text: text.join("\n").trim(), questions };
}

/** Apply ``app`` (the application as the page may read it) to the page; ``ask`` sends a question. */
export function showPage(app, ask) {
  const name = app.title || app.name || DEFAULT_NAME;
  byTestId("app-name").textContent = name;
  document.querySelector(".app-desc").textContent = app.desc || "";
  document.title = name === DEFAULT_NAME ? name : `${name} · ${DEFAULT_NAME}`;
  const logo = byTestId("app-logo");
  logo.hidden = !app.logo;
  if (app.logo && app.logo.startsWith("data:image/")) logo.src = app.logo;
  if (COLOUR.test(app.accent_color || "")) document.documentElement.style.setProperty("--accent", app.accent_color);
  if (app.placeholder) byTestId("question-input").placeholder = app.placeholder;
  const disclaimer = byTestId("disclaimer");
  disclaimer.textContent = app.disclaimer_value || "";
  disclaimer.hidden = !app.disclaimer_value;
  document.body.classList.toggle("hide-sources", app.show_source === false);
  document.body.classList.toggle("hide-trace", app.show_trace === false);
  showPrologue(app.prologue || "", ask);
}

function showPrologue(prologue, ask) {
  const { text, questions } = splitPrologue(prologue);
  const box = byTestId("prologue");
  box.hidden = !text && !questions.length;
  byTestId("prologue-text").innerHTML = renderMarkdown(text); // escaped, links limited to http(s)
  const suggestions = clear(byTestId("suggestions"));
  for (const question of questions) {
    suggestions.appendChild(h("button", { type: "button", class: "secondary suggestion", testid: "suggestion", onclick: () => ask(question) }, question));
  }
}
