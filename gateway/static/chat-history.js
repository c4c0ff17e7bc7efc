// A visitor's earlier chats (MaxKB's "history" routes, docs/api/http.md): newest first, titled
// by their first question unless renamed, each reopened with its records and traces, renamed or
// deleted in place. Deleting hides a chat from its visitor only; the operator's log keeps it.
// A chat's title (its first question, or the visitor's name for it) is the visitor's own text.
import { api } from "./api.js";
import { byTestId, clear, h, formatTime } from "./dom.js";
import { LABELS, fill } from "./labels.js";

const WORDS = LABELS.chat_history;

const PAGE_SIZE = 50;
let ctx = null; // { appId, session, current(): chat id shown, open(id), deletedCurrent() }

const panel = () => byTestId("history");
const base = () => `/api/application/${encodeURIComponent(ctx.appId)}/chat/client`;

function say(text) {
  byTestId("history-status").textContent = text || "";
}

function entry(chat) {
  const current = chat.id === ctx.current();
  const title = chat.abstract ? h("span", { "data-user-content": true }, chat.abstract) : WORDS.untitled;
  const open = h("button", { type: "button", class: "link history-open", testid: "history-open", "aria-current": current ? "true" : false, onclick: () => choose(chat.id) }, title);
  return h(
    "li",
    { class: current ? "history-item current" : "history-item", testid: "history-item", "data-chat-id": chat.id },
    open,
    h("span", { class: "muted small" }, fill(WORDS.meta, { count: chat.chat_record_count, time: formatTime(chat.update_time) })),
    h(
      "span",
      { class: "history-actions" },
      h("button", { type: "button", class: "link", testid: "history-rename", onclick: () => rename(chat) }, WORDS.rename),
      h("button", { type: "button", class: "link danger-text", testid: "history-delete", onclick: () => remove(chat) }, WORDS.delete),
    ),
  );
}

/** Read the list again while it is open (after an answer, a rename or a delete); opening it reads it. */
export async function refreshHistory() {
  if (!ctx || panel().hidden) return;
  try {
    const page = await api(`${base()}/1/${PAGE_SIZE}`, { session: ctx.session });
    const list = clear(byTestId("history-list"));
    for (const chat of page.records || []) list.appendChild(entry(chat));
    say(page.records && page.records.length ? "" : WORDS.empty);
  } catch (err) {
    say(fill(WORDS.read_failed, { error: err.message || err }));
  }
}

async function choose(chatId) {
  if (chatId !== ctx.current()) await ctx.open(chatId);
  await refreshHistory();
  if (window.matchMedia("(max-width: 720px)").matches) toggle(false);
}

/** The entry's title becomes a field; Enter or the save button renames, Escape leaves it as it was. */
function rename(chat) {
  const row = byTestId("history-list").querySelector(`[data-chat-id="${CSS.escape(chat.id)}"]`);
  if (!row) return;
  const field = h("input", { class: "history-title", testid: "history-title-input", maxlength: "200", value: chat.abstract || "", "aria-label": WORDS.new_title });
  const save = async () => {
    try {
      await api(`${base()}/${encodeURIComponent(chat.id)}`, { method: "PUT", body: { abstract: field.value.trim() }, session: ctx.session });
      await refreshHistory();
    } catch (err) {
      say(fill(WORDS.rename_failed, { error: err.message || err }));
    }
  };
  field.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.isComposing) save();
    if (e.key === "Escape") refreshHistory();
  });
  row.replaceChildren(field, h("span", { class: "history-actions" }, h("button", { type: "button", class: "link", testid: "history-save", onclick: save }, WORDS.save), h("button", { type: "button", class: "link", onclick: () => refreshHistory() }, WORDS.cancel)));
  field.focus();
  field.select();
}

async function remove(chat) {
  if (!window.confirm(fill(WORDS.delete_confirm, { title: chat.abstract || WORDS.untitled }))) return;
  try {
    await api(`${base()}/${encodeURIComponent(chat.id)}`, { method: "DELETE", session: ctx.session });
    if (chat.id === ctx.current()) await ctx.deletedCurrent();
    await refreshHistory();
  } catch (err) {
    say(fill(WORDS.delete_failed, { error: err.message || err }));
  }
}

function toggle(open) {
  panel().hidden = !open;
  byTestId("history-toggle").setAttribute("aria-expanded", String(open));
  if (open) refreshHistory();
}

/** Wire the chat history button and panel for this page's caller. */
export function initHistory(context) {
  ctx = context;
  const button = byTestId("history-toggle");
  button.hidden = false;
  button.addEventListener("click", () => toggle(panel().hidden));
  byTestId("history-close").addEventListener("click", () => toggle(false));
}
