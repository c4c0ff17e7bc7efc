// The operator page: signs in (admin-signin.js), asks who the tab's token names and what they
// may do (admin-me.js), then opens the sections. A call answered 401 anywhere leads back to the
// sign-in form; after signing in again every section loads afresh.
import { onUnauthorized, operator, forgetAdminToken } from "./admin-api.js";
import { forgetMe, loadMe } from "./admin-me.js";
import { hideSignIn, initSignIn, redeemSignInLink, showSignIn } from "./admin-signin.js";
import { initAccount, signedOutNotice } from "./admin-account.js";
import { closePasswordPanel, initPassword, openPasswordPanel } from "./admin-password.js";
import { fillWords, word } from "./admin-words.js";
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
import { initUsers } from "./admin-users.js";
import { initTokens } from "./admin-tokens.js";
import { initAudit } from "./admin-audit.js";

const workspace = document.getElementById("workspace");
const nav = document.querySelector(".topnav");

async function reloadAll() {
  await loadDatasets();
  await loadModels();
  await loadApplications();
  await loadUsageApplications();
  await loadLogApplications();
  await loadGapApplications();
}

function showWorkspace(shown) {
  workspace.hidden = !shown;
  nav.hidden = !shown;
}

/** Signed out, or the token expired or was refused: forget it and show the sign-in form. */
function signedOut(reason) {
  const hadToken = Boolean(operator.token());
  forgetAdminToken();
  forgetMe();
  showWorkspace(false);
  closePasswordPanel();
  showSignIn(reason || (hadToken ? word("account.expired") : ""));
}

/**
 * Ask who the tab's token names (with no token, a deployment that lets loopback callers act as
 * the operator still answers); open the page when someone is signed in. → whether they are.
 */
async function enter({ afterLink = false } = {}) {
  let account;
  try {
    account = await loadMe();
  } catch (err) {
    // 401 went through the onUnauthorized hook already; anything else (the network, a gateway
    // restarting) keeps the token and says what happened above the form.
    if (err.status !== 401) {
      showWorkspace(false);
      showSignIn(err);
    }
    return false;
  }
  hideSignIn();
  showWorkspace(true);
  // A link is how an account without a password signs in: offer to set one (skippable).
  if (afterLink && account.has_password !== true) openPasswordPanel({ afterLink: true, hasPassword: account.has_password });
  await reloadAll();
  return true;
}

async function start() {
  fillWords();
  onUnauthorized(() => signedOut());
  initSignIn(() => enter());
  initPassword(() => loadMe().catch(() => {}));
  initAccount();
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
  initUsers();
  initTokens();
  initAudit();
  const notice = signedOutNotice();
  const link = await redeemSignInLink();
  if (link === false) return; // the link failed: the sign-in form says why
  if (notice && !operator.token()) {
    showSignIn(notice); // just signed out: not straight back in as a loopback operator
    return;
  }
  await enter({ afterLink: link === true });
}

start();
