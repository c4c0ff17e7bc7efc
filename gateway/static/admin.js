// The operator page: wires the sections together and asks for the admin token when needed.
import { byTestId, clear, h } from "./dom.js";
import { onUnauthorized, saveAdminToken, operator } from "./admin-api.js";
import { describeError } from "./api.js";
import { initDatasets, loadDatasets } from "./admin-datasets.js";
import { initDocuments } from "./admin-documents.js";
import { initParagraphs } from "./admin-paragraphs.js";
import { initHitTest } from "./admin-hit.js";
import { initApplications, loadApplications } from "./admin-apps.js";
import { initCredentials } from "./admin-credentials.js";
import { initUsage, loadUsageApplications } from "./admin-usage.js";
import { initLog, loadLogApplications } from "./admin-log.js";
import { initGaps, loadGapApplications } from "./admin-knowledge.js";
import { initModels, loadModels } from "./admin-models.js";

const auth = {
  panel: document.getElementById("auth-panel"),
  reason: document.getElementById("auth-reason"),
  input: byTestId("admin-token"),
};

function askForToken(err) {
  auth.panel.hidden = false;
  const { detail } = describeError(err);
  clear(auth.reason).append(
    h("span", {}, operator.token() ? "这个管理员令牌没有被接受，请检查后重新输入。" : "网关设置了管理员令牌：请输入令牌后继续。"),
    detail ? h("small", { class: "error-detail" }, detail) : null,
  );
}

async function reloadAll() {
  await loadDatasets();
  await loadModels();
  await loadApplications();
  await loadUsageApplications();
  await loadLogApplications();
  await loadGapApplications();
}

function saveToken() {
  const token = auth.input.value.trim();
  if (!token) {
    auth.input.focus();
    return;
  }
  saveAdminToken(token);
  auth.input.value = "";
  auth.panel.hidden = true;
  reloadAll();
}

onUnauthorized(askForToken);
document.getElementById("auth-form").addEventListener("submit", (e) => {
  e.preventDefault();
  saveToken();
});
initDatasets();
initDocuments();
initParagraphs();
initHitTest();
initCredentials();
initApplications();
initUsage();
initLog();
initGaps();
initModels();
reloadAll();
