// The chat page: start-up (who am I, which application, which chat), loading the saved
// conversation, and asking with a live answer stream.
import { api, postStream, ApiError, errorNode } from "./api.js";
import { byTestId, clear, h } from "./dom.js";
import { LABELS, PROGRESS_START, fill, progressLine } from "./labels.js";
import { createRecordNode, fillRecord as drawRecord, setAnswer, setProgress, addStep, hideProgress, setError } from "./record.js";
import { pageMode, shareSession, keySession, chatKey, local, storageBlocked } from "./session.js";
import { configureVotes, showVotes } from "./votes.js";
import { placeRegenerate } from "./regenerate.js";
import { setThinking } from "./thinking.js";
import { showPage } from "./page-look.js";
import { initHistory, refreshHistory } from "./chat-history.js";

const WORDS = LABELS.chat_page;

const ui = {
  pageError: byTestId("page-error"),
  records: document.getElementById("records"),
  empty: document.getElementById("empty"),
  storageNotice: byTestId("storage-notice"),
  input: byTestId("question-input"),
  send: byTestId("send"),
  stop: byTestId("stop"),
  newChat: byTestId("new-chat"),
  form: document.getElementById("composer"),
};

const state = { appId: "", session: null, chatId: "", answering: false, stopRequested: false };

const recordsBase = () => `/api/application/${encodeURIComponent(state.appId)}/chat/${encodeURIComponent(state.chatId)}/chat_record`;
configureVotes(() => ({ base: recordsBase(), session: state.session }));

/** A saved record drawn, with the reader's own vote under a finished answer. */
function fillRecord(node, record, options) {
  drawRecord(node, record, options);
  showVotes(node, record);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function showPageError(text, err) {
  clear(ui.pageError);
  ui.pageError.appendChild(h("span", {}, text));
  if (err) ui.pageError.appendChild(errorNode(err, "page-error-detail"));
  ui.pageError.hidden = false;
}

function setAnswering(on) {
  state.answering = on;
  ui.send.disabled = on || !state.chatId;
  ui.newChat.disabled = on || !state.chatId;
  ui.stop.hidden = !on;
  ui.stop.disabled = !on;
  placeRegenerate(ui.records, on, (node, question) => ask(question, { replace: node }));
}

function nearBottom() {
  const el = document.scrollingElement;
  return el.scrollHeight - el.scrollTop - el.clientHeight < 160;
}

function scrollToEnd(force) {
  if (force || nearBottom()) window.scrollTo({ top: document.scrollingElement.scrollHeight });
}

function updateEmpty() {
  ui.empty.hidden = ui.records.querySelector("[data-testid=record]") !== null || !byTestId("prologue").hidden;
}

async function openChat() {
  state.chatId = await api(`/api/application/${encodeURIComponent(state.appId)}/chat/open`, { session: state.session });
  local.setItem(chatKey(state.appId, state.session), state.chatId);
}

async function fetchAllRecords() {
  const all = [];
  for (let page = 1; page < 1000; page++) {
    const data = await api(`${recordsBase()}/${page}/100`, { session: state.session });
    all.push(...(data.records || []));
    if (!data.records || data.records.length < 100 || all.length >= (data.total || 0)) break;
  }
  return all;
}

/** A record saved as "running" (answered in another tab, or still finishing): look again later. */
async function watchRunning(node, recordId) {
  for (let i = 0; i < 150 && node.isConnected; i++) {
    await sleep(2000);
    try {
      const record = await api(`${recordsBase()}/${encodeURIComponent(recordId)}`, { session: state.session });
      if (record.status !== "running") {
        fillRecord(node, record);
        return;
      }
    } catch {
      return;
    }
  }
}

function renderRecords(records) {
  clear(ui.records);
  for (const record of records) {
    const node = createRecordNode(record.problem_text || "");
    fillRecord(node, record);
    ui.records.appendChild(node);
    if (record.status === "running") watchRunning(node, record.id);
  }
  updateEmpty();
  scrollToEnd(true);
}

/** Show an earlier chat of this caller (from the history list): its records and traces. */
async function openEarlierChat(chatId) {
  if (state.answering) return;
  state.chatId = chatId;
  local.setItem(chatKey(state.appId, state.session), chatId);
  try {
    renderRecords(await fetchAllRecords());
    ui.pageError.hidden = true;
  } catch (err) {
    showPageError(WORDS.cannot_open_this_chat, err);
  }
  setAnswering(false);
}

async function loadConversation() {
  const stored = local.getItem(chatKey(state.appId, state.session));
  if (stored) {
    state.chatId = stored;
    try {
      renderRecords(await fetchAllRecords());
      return;
    } catch (err) {
      // A remembered chat that is gone (or belongs to an earlier visitor sign-in): start afresh.
      if (!(err instanceof ApiError) || (err.status !== 404 && err.status !== 403)) throw err;
    }
  }
  await openChat();
  renderRecords([]);
}

/** Re-read a record after its stream; the server may still be saving it for a moment. */
async function settledRecord(recordId, question) {
  for (let attempt = 0; attempt < 12; attempt++) {
    let record = null;
    if (recordId) {
      record = await api(`${recordsBase()}/${encodeURIComponent(recordId)}`, { session: state.session });
    } else {
      // Stopped before the first answer chunk: the id never reached us, so take the newest record with this question.
      const shown = new Set([...ui.records.querySelectorAll("[data-record-id]")].map((n) => n.dataset.recordId));
      const records = await fetchAllRecords();
      record = records.reverse().find((r) => !shown.has(r.id) && r.problem_text === question) || null;
      if (!record) return null;
      recordId = record.id;
    }
    if (record.status !== "running") return record;
    await sleep(250 + attempt * 150);
  }
  return null;
}

/** replace: the last answer's node, for a regenerate (re_chat): the new answer takes its place. */
async function ask(question, { replace = null } = {}) {
  if (state.answering) return;
  const node = createRecordNode(question);
  if (replace) replace.replaceWith(node);
  else ui.records.appendChild(node);
  updateEmpty();
  setProgress(node, PROGRESS_START);
  scrollToEnd(true);
  setAnswering(true);
  state.stopRequested = false;

  let answer = "";
  let thinking = ""; // a reasoning model's, shown collapsed above the answer
  let recordId = "";
  let liveError = null;
  let pending = null;
  const draw = () => {
    pending = null;
    setThinking(node, thinking, { live: !answer });
    setAnswer(node, answer);
    scrollToEnd(false);
  };
  const controller = new AbortController();
  state.abort = controller;

  try {
    await postStream(`/api/application/chat_message/${encodeURIComponent(state.chatId)}`, { message: question, re_chat: Boolean(replace), progress: "named" }, {
      session: state.session,
      signal: controller.signal,
      onFrame: (name, payload) => {
        if (name === "agent_status") {
          const line = progressLine(payload);
          setProgress(node, line);
          if (payload.phase === "compacting" && payload.rounds) byTestId("progress", node).title = fill(WORDS.compacting_rounds, payload);
          addStep(node, line);
        } else if (name === "error") {
          liveError = new ApiError(Number(payload.code) || 500, payload.message || "");
          setError(node, liveError);
        } else {
          if (payload.chat_record_id && !recordId) {
            recordId = payload.chat_record_id;
            node.dataset.recordId = recordId;
          }
          if (payload.reasoning_content) thinking += payload.reasoning_content;
          if (payload.content) answer += payload.content;
          if ((payload.content || payload.reasoning_content) && !pending) pending = setTimeout(draw, 40); // redraw at most ~25 times a second
        }
      },
    });
  } catch (err) {
    if (err && err.name === "AbortError") {
      // We cut the connection ourselves after a stop that the server did not end.
    } else if (!recordId && err instanceof ApiError && err.status !== 0) {
      // Refused before the answer started: nothing was saved, say why right here.
      clearTimeout(pending);
      if (replace) {
        // A refused regenerate changed nothing: the answer it was to replace is still the last.
        node.replaceWith(replace);
        setError(replace, err);
        setAnswering(false);
        return;
      }
      hideProgress(node);
      node.dataset.status = "failed";
      setError(node, err);
      if (!ui.input.value) ui.input.value = question;
      setAnswering(false);
      return;
    } else {
      liveError = err instanceof ApiError ? err : new ApiError(0, String(err));
      setError(node, liveError);
    }
  } finally {
    state.abort = null;
    clearTimeout(state.stopTimer);
  }
  clearTimeout(pending);
  draw();
  hideProgress(node);

  try {
    const record = await settledRecord(recordId, question);
    if (record) fillRecord(node, record, { liveError });
    else node.dataset.status = liveError ? "failed" : state.stopRequested ? "stopped" : "answered";
  } catch (err) {
    node.dataset.status = liveError ? "failed" : state.stopRequested ? "stopped" : "answered";
    if (!liveError) setError(node, err);
  }
  setAnswering(false);
  scrollToEnd(false);
  ui.input.focus();
  refreshHistory(); // a chat's first question puts it on the list; any question moves it to the top
}

async function stop() {
  if (!state.answering) return;
  state.stopRequested = true;
  ui.stop.disabled = true;
  let reached = false;
  try {
    const reply = await api(`/api/application/chat_message/${encodeURIComponent(state.chatId)}/stop`, { method: "POST", session: state.session });
    reached = Boolean(reply && reply.stopped);
  } catch (err) {
    const last = ui.records.lastElementChild;
    if (last) setError(last, err);
  }
  // A Stop that reached the answer ends its stream within a second, in whatever phase it was
  // (the server saves it as stopped, then ends the stream): nothing to wait for here. One that
  // reached nothing (the answer is not running, or not yet) has no stream end to wait for:
  // stop listening now, and the server closes the record as stopped when we leave.
  if (!reached) state.abort && state.abort.abort();
  else state.stopTimer = setTimeout(() => state.abort && state.abort.abort(), 3000); // only if the server broke its word
}

function submit() {
  if (state.answering || !state.chatId) return;
  const question = ui.input.value.trim();
  if (!question) {
    ui.input.focus();
    return;
  }
  ui.input.value = "";
  ask(question);
}

async function newChat() {
  if (state.answering) return;
  ui.newChat.disabled = true;
  try {
    await openChat();
    renderRecords([]);
    ui.pageError.hidden = true;
  } catch (err) {
    showPageError(WORDS.cannot_start_chat, err);
  } finally {
    setAnswering(false);
    ui.input.focus();
  }
}

function wire() {
  ui.form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit();
  });
  ui.input.addEventListener("keydown", (e) => {
    // Enter sends, Shift+Enter is a new line; never send while an input method is composing.
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      submit();
    }
  });
  ui.stop.addEventListener("click", stop);
  ui.newChat.addEventListener("click", newChat);
}

/** The page itself, first-party (no embed=…), in the language it is read in. */
function ownTabAddress() {
  const own = new URL(location.pathname, location.origin);
  const lang = new URLSearchParams(location.search).get("lang");
  if (lang) own.searchParams.set("lang", lang);
  return own.href;
}

async function start() {
  wire();
  setAnswering(false);
  // Opened by another site's embed code (gateway/static/embed.js): a compact page in its panel.
  if (new URLSearchParams(location.search).has("embed")) document.body.classList.add("embedded");
  ui.storageNotice.hidden = !storageBlocked;
  ui.storageNotice.querySelector("a").href = ownTabAddress();
  const where = pageMode();
  try {
    if (where.mode === "share") {
      try {
        Object.assign(state, await shareSession(where.accessToken));
      } catch (err) {
        showPageError(WORDS.bad_share_link, err);
        return;
      }
    } else if (where.mode === "chat") {
      Object.assign(state, keySession(where.appId));
    } else {
      showPageError(WORDS.bad_address);
      return;
    }
    const app = await api(`/api/application/${encodeURIComponent(state.appId)}`, { session: state.session });
    showPage(app, (question) => {
      if (!state.answering && state.chatId) ask(question);
    });
    await loadConversation();
    // A share-link visitor's own chats (the list is theirs alone: keys and operators have the log).
    if (where.mode === "share") initHistory({ appId: state.appId, session: state.session, current: () => state.chatId, open: openEarlierChat, deletedCurrent: newChat });
    setAnswering(false);
    ui.input.disabled = false;
    ui.input.focus();
  } catch (err) {
    showPageError(WORDS.cannot_open, err);
  }
}

start();
