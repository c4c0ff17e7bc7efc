// The up and down votes under each finished answer: the reader's own vote, shown after a reload, changed by
// clicking the other one and withdrawn by clicking the chosen one again. A down vote first opens a small
// form for an optional reason. PUT …/chat_record/{id}/vote (MaxKB's route and vote_status).
import { LABELS } from "./labels.js";
import { api, describeError } from "./api.js";
import { h, clear } from "./dom.js";
import { thumbDown, thumbUp } from "./icons.js";

const WORDS = LABELS.votes;
const UP = "0";
const DOWN = "1";
const NONE = "-1";
const VOTABLE = new Set(["answered", "stopped"]);
const MAX_REASON = 500;

// Where the page's records live and who is reading: set once by the chat page.
let where = () => ({ base: "", session: undefined });

/** locate() → {base: ".../chat/{chat_id}/chat_record", session}. */
export function configureVotes(locate) {
  where = locate;
}

function slotOf(node) {
  let slot = node.querySelector(".slot-votes");
  if (!slot) {
    slot = h("div", { class: "slot-votes" });
    // Right under the answer, before its sources and trace.
    node.querySelector(".reply").insertBefore(slot, node.querySelector(".slot-sources"));
  }
  return slot;
}

/** Draw (or redraw) the vote bar of a record node from the record as the server sent it. */
export function showVotes(node, record) {
  const slot = clear(slotOf(node));
  if (!record || !record.id || !VOTABLE.has(record.status)) return;
  slot.appendChild(voteBar(record.id, record.vote_status || NONE, record.vote_reason || ""));
}

/** What the bar says of the reader's vote: the vote, and a down vote's reason (the reader's own words). */
function stateNodes(state) {
  if (state.status === UP) return [WORDS.voted_up];
  if (state.status === DOWN && state.reason) return [WORDS.voted_down, LABELS.common.colon, h("span", { "data-user-content": true }, state.reason)];
  if (state.status === DOWN) return [WORDS.voted_down];
  return [];
}

/** The buttons say their word beside the emoji, readable where no emoji font is installed. */
function voteBar(recordId, status, reason) {
  const state = { status, reason };
  const up = h("button", { type: "button", class: "vote-button", testid: "vote-up", title: WORDS.up, "aria-label": WORDS.up }, thumbUp(), " ", WORDS.up);
  const down = h("button", { type: "button", class: "vote-button", testid: "vote-down", title: WORDS.down, "aria-label": WORDS.down }, thumbDown(), " ", WORDS.down);
  const shown = h("span", { class: "vote-state", testid: "vote-state" });
  const input = h("input", { class: "grow", testid: "vote-reason", maxlength: MAX_REASON, placeholder: WORDS.reason_placeholder, "aria-label": WORDS.reason_label });
  const cancel = h("button", { type: "button", class: "secondary", testid: "vote-reason-cancel" }, WORDS.cancel);
  const form = h("form", { class: "vote-form row", testid: "vote-reason-form", hidden: true }, input, h("button", { type: "submit", testid: "vote-reason-send" }, WORDS.send), cancel);
  const error = h("div", { class: "vote-error", testid: "vote-error", role: "alert" });
  const bar = h("div", { class: "votes", testid: "votes" }, h("div", { class: "row" }, up, down, shown), form, error);

  const draw = () => {
    bar.dataset.vote = state.status;
    up.setAttribute("aria-pressed", String(state.status === UP));
    down.setAttribute("aria-pressed", String(state.status === DOWN));
    shown.replaceChildren(...stateNodes(state));
    shown.title = state.status === NONE ? "" : WORDS.withdraw;
  };
  const send = async (voteStatus, why) => {
    const { base, session } = where();
    up.disabled = down.disabled = true;
    error.textContent = "";
    try {
      const data = await api(`${base}/${encodeURIComponent(recordId)}/vote`, { method: "PUT", body: { vote_status: voteStatus, reason: why }, session });
      state.status = data.vote_status;
      state.reason = data.vote_reason || "";
      form.hidden = true;
    } catch (err) {
      error.textContent = WORDS.failed + describeError(err).text;
    } finally {
      up.disabled = down.disabled = false;
      draw();
    }
  };
  up.addEventListener("click", () => send(state.status === UP ? NONE : UP, ""));
  down.addEventListener("click", () => {
    if (state.status === DOWN) {
      send(NONE, "");
      return;
    }
    form.hidden = !form.hidden;
    if (!form.hidden) {
      input.value = state.reason;
      input.focus();
    }
  });
  cancel.addEventListener("click", () => {
    form.hidden = true;
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    send(DOWN, input.value.trim());
  });
  draw();
  return bar;
}
