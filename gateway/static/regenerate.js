// The regenerate button under the last answer (MaxKB's re_chat): the same question asked
// again, its new answer drawn in place of the last one. The server keeps the old record in the
// conversation log and takes it out of the history the next questions see.
import { h, byTestId } from "./dom.js";
import { REGENERATE_WORDS } from "./labels.js";

/**
 * Put the button under the last record of `list`, and nowhere else; none while answering, and
 * none under a question that was refused before it was saved (no record id): re_chat replaces
 * the chat's last saved answer, which would then be another one.
 * onRegenerate(node, question) asks again.
 */
export function placeRegenerate(list, answering, onRegenerate) {
  for (const old of list.querySelectorAll("[data-testid=regenerate]")) old.remove();
  const last = [...list.querySelectorAll("[data-testid=record]")].pop();
  if (answering || !last || !last.dataset.recordId || last.dataset.status === "running") return;
  const question = byTestId("record-question", last).textContent;
  if (!question) return;
  const button = h(
    "button",
    { type: "button", class: "regenerate", testid: "regenerate", title: REGENERATE_WORDS.hint, onclick: () => onRegenerate(last, question) },
    REGENERATE_WORDS.button,
  );
  last.querySelector(".reply").appendChild(button);
}
