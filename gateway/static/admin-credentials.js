// The operator page's "访问凭据" section, under the selected application's ways in: its API
// keys (masked, with use count, last use, expiry and state) and its share link (caps, expiry,
// use), each revocable, re-activatable, rotatable and given an expiry. A revoked key is
// refused on its next call; a rotated link ends the visitor tokens it issued.
// Data: GET/PUT/DELETE …/api_key[/{id}], POST …/api_key/{id}/rotate, GET/PUT …/access_token.
import { LABELS } from "./labels.js";
import { call, adminError } from "./admin-api.js";
import { byTestId, clear, formatTime, h } from "./dom.js";
import { can } from "./admin-me.js";
import { copyButton, copyField } from "./copy.js";

const WORDS = LABELS.credentials;
const COLON = LABELS.admin_text.colon;
const root = () => document.getElementById("credentials");
let applicationId = "";

const base = () => `/api/application/${encodeURIComponent(applicationId)}`;
const expired = (item) => Boolean(item.expires_at) && new Date(item.expires_at) <= new Date();
const stateWord = (item) => (!item.is_active ? WORDS.revoked : expired(item) ? WORDS.expired : WORDS.is_active);

/** A snippet to copy: code, in no language (lang="zxx"), whatever the page's. */
function codeField(text, testid) {
  const row = copyField(text, testid);
  row.querySelector("input").lang = "zxx";
  return row;
}

function status(content) {
  const box = byTestId("credentials-status", root());
  if (!box) return;
  clear(box);
  if (content) box.appendChild(typeof content === "string" ? h("span", {}, content) : content);
}

/** An RFC 3339 time (UTC) from a datetime-local input, or null with a message when unusable. */
function expiryFrom(input) {
  const when = input.value ? new Date(input.value) : null;
  if (!when || Number.isNaN(when.getTime()) || when <= new Date()) {
    status(WORDS.expiry_past);
    return null;
  }
  return when.toISOString();
}

/** Run a change, then show the section again (or the error, keeping the section as it was). */
async function change(path, options, after) {
  try {
    const data = await call(path, options);
    await load(applicationId);
    status(after ? after(data) : WORDS.saved);
  } catch (err) {
    status(adminError(err, "credentials-error"));
  }
}

function expiryControls(prefix, onSet, onClear) {
  const input = h("input", { type: "datetime-local", testid: `${prefix}-expiry`, "aria-label": WORDS.expires_at });
  return h(
    "span",
    { class: "row wrap" },
    input,
    h("button", { type: "button", class: "secondary", testid: `set-${prefix}-expiry`, onclick: () => onSet(input) }, WORDS.set_expiry),
    h("button", { type: "button", class: "link", testid: `clear-${prefix}-expiry`, onclick: onClear }, WORDS.clear_expiry),
  );
}

function keyRow(key) {
  const path = `${base()}/api_key/${encodeURIComponent(key.id)}`;
  const revoke = () => window.confirm(WORDS.revoke_confirm) && change(path, { method: "DELETE" });
  const reactivate = () => change(path, { method: "PUT", body: { is_active: true } });
  const rotate = () =>
    window.confirm(WORDS.rotate_key_confirm) &&
    change(`${path}/rotate`, { method: "POST" }, (data) =>
      h("span", {}, WORDS.new_key, h("code", { class: "secret", testid: "rotated-key" }, data.secret_key)),
    );
  const setExpiry = (input) => {
    const expires_at = expiryFrom(input);
    if (expires_at) change(path, { method: "PUT", body: { expires_at } });
  };
  return h(
    "li",
    { class: "credential", testid: "credential-key", "data-id": key.id, "data-active": String(key.is_active) },
    h("div", {}, h("code", { testid: "key-masked" }, key.masked), " ", h("span", { class: "pill", testid: "key-state" }, stateWord(key))),
    h(
      "div",
      { class: "muted small" },
      `${WORDS.use_count}${COLON}`, h("span", { testid: "key-use-count" }, key.use_count),
      ` · ${WORDS.last_used_at}${COLON}${key.last_used_at ? formatTime(key.last_used_at) : WORDS.never_used}`,
      ` · ${WORDS.expires_at}${COLON}`, h("span", { testid: "key-expires" }, key.expires_at ? formatTime(key.expires_at) : WORDS.never_expires),
      ` · ${WORDS.create_time}${COLON}${formatTime(key.create_time)}`,
    ),
    h(
      "div",
      { class: "row wrap" },
      key.is_active
        ? h("button", { type: "button", class: "danger", testid: "revoke-key", onclick: revoke }, WORDS.revoke)
        : h("button", { type: "button", class: "secondary", testid: "reactivate-key", onclick: reactivate }, WORDS.reactivate),
      h("button", { type: "button", class: "secondary", testid: "rotate-key", onclick: rotate }, WORDS.rotate),
    ),
    expiryControls("key", setExpiry, () => change(path, { method: "PUT", body: { expires_at: "" } })),
  );
}

function keyTable(keys) {
  if (!keys.length) return h("p", { class: "muted", testid: "no-keys" }, WORDS.no_keys);
  return h("ul", { class: "credential-list", testid: "credential-keys" }, keys.map(keyRow));
}

/** Which sites may embed the link's page (white_active, white_list): any, or only those listed. */
function sitesControls(link, put) {
  const limited = h("input", { type: "checkbox", testid: "link-sites-limited" });
  limited.checked = Boolean(link.white_active);
  const sites = h("textarea", { rows: "3", lang: "zxx", testid: "link-sites", "aria-label": WORDS.sites_limited });
  sites.value = (link.white_list || []).join("\n");
  const save = () => put({ white_active: limited.checked, white_list: sites.value.split("\n").map((s) => s.trim()).filter(Boolean) });
  return h(
    "div",
    { class: "stack" },
    h("label", { class: "inline" }, limited, " ", WORDS.sites_limited),
    h("p", { class: "muted small" }, WORDS.sites_hint),
    sites,
    h("div", {}, h("button", { type: "button", class: "secondary", testid: "save-link-sites", onclick: save }, WORDS.save_sites)),
  );
}

/** The share link as code for another site's pages: the bubble script and an inline iframe,
 * and the sites that may use them. */
function embedSnippets(link, put) {
  const token = encodeURIComponent(link.access_token);
  const bubble = `<script src="${location.origin}/ui/embed.js" data-token="${token}" async></script>`;
  const inline = `<iframe src="${location.origin}/ui/share/${token}?embed=inline" title="${WORDS.embed_title}" style="width:100%;height:640px;border:0" allow="clipboard-write"></iframe>`;
  return h(
    "details",
    { class: "embed-snippets", testid: "embed-snippets" },
    h("summary", {}, WORDS.embed),
    h("p", { class: "muted small" }, WORDS.embed_bubble),
    codeField(bubble, "embed-bubble"),
    h("p", { class: "muted small" }, WORDS.embed_inline),
    codeField(inline, "embed-inline"),
    sitesControls(link, put),
  );
}

function linkBox(link) {
  if (!link) return h("p", { class: "muted", testid: "no-share-link" }, WORDS.no_link);
  const path = `${base()}/access_token`;
  const put = (body) => change(path, { method: "PUT", body });
  const accessNum = h("input", { type: "number", min: "1", max: "100000", value: link.access_num, class: "narrow", testid: "link-access-num" });
  const dailyCap = h("input", { type: "number", min: "1", max: "10000000", value: link.daily_cap, class: "narrow", testid: "link-daily-cap" });
  const saveCaps = () => {
    const caps = { access_num: Number(accessNum.value), daily_cap: Number(dailyCap.value) };
    const ok = Number.isInteger(caps.access_num) && caps.access_num >= 1 && caps.access_num <= 100000 && Number.isInteger(caps.daily_cap) && caps.daily_cap >= 1 && caps.daily_cap <= 10000000;
    if (ok) put(caps);
    else status(WORDS.caps_invalid);
  };
  const url = `${location.origin}/ui/share/${encodeURIComponent(link.access_token)}`;
  return h(
    "div",
    { class: "stack", testid: "credential-link", "data-active": String(link.is_active) },
    h("div", { class: "copy-row" }, h("a", { href: url, testid: "credential-link-url", lang: "zxx" }, url), copyButton(url, "credential-link-copy")),
    embedSnippets(link, put),
    h(
      "div",
      { class: "muted small" },
      `${WORDS.active}${COLON}`, h("span", { testid: "link-state" }, stateWord(link)),
      ` · ${WORDS.use_count}${COLON}`, h("span", { testid: "link-use-count" }, link.use_count),
      ` · ${WORDS.last_used_at}${COLON}${link.last_used_at ? formatTime(link.last_used_at) : WORDS.never_used}`,
      ` · ${WORDS.expires_at}${COLON}`, h("span", { testid: "link-expires" }, link.expires_at ? formatTime(link.expires_at) : WORDS.never_expires),
    ),
    h(
      "div",
      { class: "row wrap" },
      h("label", { class: "inline" }, WORDS.access_num, " ", accessNum),
      h("label", { class: "inline" }, WORDS.daily_cap, " ", dailyCap),
      h("button", { type: "button", class: "secondary", testid: "save-link-caps", onclick: saveCaps }, WORDS.save_caps),
    ),
    h(
      "div",
      { class: "row wrap" },
      link.is_active
        ? h("button", { type: "button", class: "danger", testid: "revoke-link", onclick: () => window.confirm(WORDS.revoke_link_confirm) && put({ is_active: false }) }, WORDS.revoke)
        : h("button", { type: "button", class: "secondary", testid: "reactivate-link", onclick: () => put({ is_active: true }) }, WORDS.reactivate),
      h("button", { type: "button", class: "secondary", testid: "rotate-link", onclick: () => window.confirm(WORDS.rotate_link_confirm) && put({ access_token_reset: true }) }, WORDS.rotate),
      expiryControls("link", (input) => {
        const expires_at = expiryFrom(input);
        if (expires_at) put({ expires_at });
      }, () => put({ expires_at: "" })),
    ),
  );
}

/** The link, or null when the application has none yet (404). */
async function shareLink() {
  try {
    return await call(`${base()}/access_token`);
  } catch (err) {
    if (err && err.status === 404) return null;
    throw err;
  }
}

export async function load(id) {
  applicationId = id || "";
  const box = root();
  if (!box) return;
  clear(box);
  // An application's keys and link are for those who may change it (a viewer is not shown them).
  if (!applicationId || !can("application_write")) return;
  box.append(h("h3", {}, WORDS.title), h("div", { class: "status", testid: "credentials-status", "aria-live": "polite" }));
  try {
    const [keys, link] = await Promise.all([call(`${base()}/api_key`), shareLink()]);
    if (id !== applicationId) return; // another application was chosen meanwhile
    box.append(h("h4", {}, WORDS.keys), keyTable(keys || []), h("h4", {}, WORDS.link), linkBox(link));
  } catch (err) {
    status(adminError(err, "credentials-error"));
  }
}

export function initCredentials() {
  document.addEventListener("kb:application-selected", (event) => load(event.detail.id));
  document.addEventListener("kb:credentials-changed", () => load(applicationId));
}
