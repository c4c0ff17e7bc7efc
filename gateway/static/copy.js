// A copy button for a secret or a link shown once. The clipboard API needs a secure context
// (https or localhost); elsewhere the text is selected for the person to copy by hand.
import { LABELS } from "./labels.js";
import { h } from "./dom.js";

const WORDS = LABELS.users;

async function copyText(field) {
  try {
    await navigator.clipboard.writeText(field.value);
    return true;
  } catch {
    field.focus();
    field.select();
    return false;
  }
}

/** A read-only field holding text, and the button that copies it. testid names the field. */
export function copyField(text, testid) {
  const field = h("input", { class: "copy-text", readonly: true, testid, value: text, "aria-label": text, onfocus: (e) => e.target.select() });
  const state = h("span", { class: "muted small", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "secondary", testid: `${testid}-copy` }, WORDS.copy);
  button.addEventListener("click", async () => {
    state.textContent = (await copyText(field)) ? WORDS.copied : WORDS.copy_failed;
  });
  return h("div", { class: "copy-row" }, field, button, state);
}

/** A copy button beside text already shown (a link, a key): copies ``text``; where the
 * clipboard is refused, says so, and the text stays there to select by hand. */
export function copyButton(text, testid) {
  const state = h("span", { class: "muted small", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "link", testid }, WORDS.copy);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      state.textContent = WORDS.copied;
    } catch {
      state.textContent = WORDS.copy_failed;
    }
  });
  return h("span", { class: "copy-inline" }, button, state);
}
