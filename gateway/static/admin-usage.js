// The operator page's "用量" section: an application and a range of days, then one chart per
// figure (questions, outcomes, tokens, answer times, rounds, insufficient evidence, votes) and
// the stop reasons of the whole range. Data: GET …/statistics/chat_record_aggregate_trend.
import { LABELS } from "./labels.js";
import { call, adminError } from "./admin-api.js";
import { byTestId, clear, h } from "./dom.js";
import { chart, COLORS } from "./charts.js";
import { latestOnly, onFirstView } from "./admin-sections.js";

const WORDS = LABELS.usage;
const ui = {
  form: document.getElementById("usage-form"),
  app: byTestId("usage-app"),
  from: byTestId("usage-from"),
  to: byTestId("usage-to"),
  status: document.getElementById("usage-status"),
  charts: byTestId("usage-charts"),
};

const isoDay = (date) => date.toISOString().slice(0, 10);
const column = (days, key) => days.map((d) => Number(d[key]) || 0);
const percent = (n) => `${Math.round(n * 1000) / 10}%`;
const seconds = (n) => `${Math.round(n * 100) / 100}`;

function series(days, keys, format) {
  return keys.map((key, k) => ({ name: WORDS[key] || LABELS.record_statuses[key] || key, values: column(days, key), color: COLORS[k], format }));
}

function stopReasonTable(days) {
  const totals = {};
  for (const day of days) for (const [name, count] of Object.entries(day.stop_reasons || {})) totals[name] = (totals[name] || 0) + count;
  const rows = Object.entries(totals).sort((a, b) => b[1] - a[1]);
  return h(
    "figure",
    { class: "chart", testid: "usage-stop-reasons" },
    h("figcaption", {}, WORDS.stop_reasons_chart),
    rows.length
      ? h("table", { class: "compact" }, rows.map(([name, count]) => h("tr", {}, h("td", {}, LABELS.stop_reasons[name] || name), h("td", { class: "num" }, count))))
      : h("p", { class: "muted" }, WORDS.none),
  );
}

function draw(days) {
  clear(ui.charts);
  const names = days.map((d) => d.day);
  const sum = (key) => column(days, key).reduce((a, b) => a + b, 0);
  ui.status.textContent = WORDS.totals
    .replace("{days}", days.length)
    .replace("{questions}", sum("chat_record_count"))
    .replace("{answered}", sum("answered"))
    .replace("{tokens}", sum("tokens_num"));
  const charts = [
    { testid: "usage-questions", integer: true, title: WORDS.questions_chart, series: series(days, ["chat_record_count"]) },
    { testid: "usage-outcomes", integer: true, title: WORDS.outcomes_chart, series: series(days, ["answered", "failed", "stopped", "interrupted"]) },
    { testid: "usage-tokens", integer: true, title: WORDS.tokens_chart, series: series(days, ["message_tokens", "answer_tokens"]), kind: "line" },
    { testid: "usage-times", title: WORDS.times_chart, series: series(days, ["p50_run_time", "p95_run_time"], seconds), kind: "line", format: seconds },
    { testid: "usage-rounds", title: WORDS.rounds_chart, series: series(days, ["mean_rounds"]), kind: "line" },
    { testid: "usage-insufficient", title: WORDS.insufficient_chart, series: series(days, ["insufficient_rate"], percent), kind: "line", format: percent },
    { testid: "usage-votes", integer: true, title: WORDS.votes_chart, series: series(days, ["star_num", "trample_num"]) },
  ];
  for (const spec of charts) ui.charts.appendChild(chart({ days: names, ...spec }));
  ui.charts.appendChild(stopReasonTable(days));
}

const show = latestOnly(async (current) => {
  const appId = ui.app.value;
  if (!appId) return;
  const query = new URLSearchParams({ start_time: ui.from.value, end_time: ui.to.value });
  clear(ui.status).textContent = WORDS.loading;
  try {
    const days = await call(`/api/application/${encodeURIComponent(appId)}/statistics/chat_record_aggregate_trend?${query}`);
    if (current()) draw(days);
  } catch (err) {
    if (!current()) return;
    clear(ui.charts);
    clear(ui.status).appendChild(adminError(err, "usage-error"));
  }
});
let seen = () => false; // whether the section has been opened: then a new application list shows at once

/** The application list, kept in step with the applications section (it calls this after loading). */
export function setUsageApplications(apps) {
  const chosen = ui.app.value;
  clear(ui.app);
  for (const app of apps) ui.app.appendChild(h("option", { value: app.id, "data-user-content": true }, app.name));
  if (apps.some((a) => a.id === chosen)) ui.app.value = chosen;
  if (seen() && ui.app.value !== chosen) show();
}

export async function loadUsageApplications() {
  try {
    setUsageApplications((await call("/api/application")) || []);
  } catch (err) {
    clear(ui.status).appendChild(adminError(err, "usage-error"));
  }
}

export function initUsage() {
  const today = new Date();
  ui.to.value = isoDay(today);
  ui.from.value = isoDay(new Date(today.getTime() - 13 * 86400000));
  ui.form.addEventListener("submit", (e) => {
    e.preventDefault();
    show();
  });
  ui.app.addEventListener("change", () => show());
  seen = onFirstView(document.getElementById("usage"), () => show());
}
