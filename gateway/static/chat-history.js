// A visitor's earlier chats (MaxKB's "history" routes, docs/api/http.md): newest first, titled
// by their first question unless renamed, each reopened with its records and traces, renamed or
// deleted in place. Deleting hides a chat from its visitor only; the operator's log keeps it.
import { api } from "./api.js";
import { byTestId, clear, h, formatTime } from "./dom.js";

const PAGE_SIZE = 50;
let ctx = null; // { appId, session, current(): chat id shown, open(id), deletedCurrent() }

const panel = () => byTestId("history");
const base = () => `/api/application/${encodeURIComponent(ctx.appId)}/chat/client`;

function say(text) {
  byTestId("history-status").textContent = text || "";
}

function entry(chat) {
  const current = chat.id === ctx.current();
  const open = h("button", { type: "button", class: "link history-open", testid: "history-open", "aria-current": current ? "true" : false, onclick: () => choose(chat.id) }, chat.abstract || "（无标题）");
  return h(
    "li",
    { class: current ? "history-item current" : "history-item", testid: "history-item", "data-chat-id": chat.id },
    open,
    h("span", { class: "muted small" }, `${chat.chat_record_count} 个问题 · ${formatTime(chat.update_time)}`),
    h(
      "span",
      { class: "history-actions" },
      h("button", { type: "button", class: "link", testid: "history-rename", onclick: () => rename(chat) }, "重命名"),
      h("button", { type: "button", class: "link danger-text", testid: "history-delete", onclick: () => remove(chat) }, "删除"),
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
    say(page.records && page.records.length ? "" : "还没有历史对话：提出第一个问题后，这里会列出来。");
  } catch (err) {
    say(`无法读取历史对话：${err.message || err}`);
  }
}

async function choose(chatId) {
  if (chatId !== ctx.current()) await ctx.open(chatId);
  await refreshHistory();
  if (window.matchMedia("(max-width: 720px)").matches) toggle(false);
}

/** The entry's title becomes a field; Enter or 保存 renames, Escape leaves it as it was. */
function rename(chat) {
  const row = byTestId("history-list").querySelector(`[data-chat-id="${CSS.escape(chat.id)}"]`);
  if (!row) return;
  const field = h("input", { class: "history-title", testid: "history-title-input", maxlength: "200", value: chat.abstract || "", "aria-label": "新的对话标题" });
  const save = async () => {
    try {
      await api(`${base()}/${encodeURIComponent(chat.id)}`, { method: "PUT", body: { abstract: field.value.trim() }, session: ctx.session });
      await refreshHistory();
    } catch (err) {
      say(`重命名失败：${err.message || err}`);
    }
  };
  field.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.isComposing) save();
    if (e.key === "Escape") refreshHistory();
  });
  row.replaceChildren(field, h("span", { class: "history-actions" }, h("button", { type: "button", class: "link", testid: "history-save", onclick: save }, "保存"), h("button", { type: "button", class: "link", onclick: () => refreshHistory() }, "取消")));
  field.focus();
  field.select();
}

async function remove(chat) {
  if (!window.confirm(`删除对话「${chat.abstract}」？删除后它不再出现在你的历史对话里。`)) return;
  try {
    await api(`${base()}/${encodeURIComponent(chat.id)}`, { method: "DELETE", session: ctx.session });
    if (chat.id === ctx.current()) await ctx.deletedCurrent();
    await refreshHistory();
  } catch (err) {
    say(`删除失败：${err.message || err}`);
  }
}

function toggle(open) {
  panel().hidden = !open;
  byTestId("history-toggle").setAttribute("aria-expanded", String(open));
  if (open) refreshHistory();
}

/** Wire the 历史对话 button and panel for this page's caller. */
export function initHistory(context) {
  ctx = context;
  const button = byTestId("history-toggle");
  button.hidden = false;
  button.addEventListener("click", () => toggle(panel().hidden));
  byTestId("history-close").addEventListener("click", () => toggle(false));
}
