// Who is signed in (GET /api/user) and what they may do. The page hides what the role may not
// do, so nobody is shown a button that would fail: elements carry data-needs="dataset_write"
// (space-separated, all required) and style.css hides them unless <body data-can> lists each
// need. The server checks every call anyway (docs/access.md); this is only what is shown.
import { LABELS } from "./labels.js";
import { call } from "./admin-api.js";

const ROLES = LABELS.roles;
// Administrators (and the break-glass operator token) may do everything the page offers.
const EVERYTHING = ["admin", "dataset_create", "dataset_write", "dataset_read", "application_create", "application_write", "application_read", "log_read", "model_read", "signed_in"];

let current = null;
const listeners = [];

/** The signed-in account as GET /api/user answers it, or null when signed out. */
export const me = () => current;
export const roleLabel = (role) => ROLES[role] || role || "";
/** Whether the signed-in account meets a need (a kbcore.permissions Need value) with no particular object. */
export const can = (need) => Boolean(current) && needsOf(current).has(need);
/** Sections that follow the account (users, personal tokens) register here. */
export const onAccountChanged = (cb) => listeners.push(cb);

function needsOf(account) {
  const needs = new Set(account.permissions || []);
  if (account.role === "admin" || account.role === "operator") EVERYTHING.forEach((n) => needs.add(n));
  return needs;
}

function apply() {
  const body = document.body;
  body.dataset.can = current ? [...needsOf(current)].join(" ") : "";
  body.dataset.role = current ? current.role : "";
  listeners.forEach((cb) => cb(current));
}

/** Ask who the tab's token names; rejects (and the 401 hook shows sign-in) when it names nobody. */
export async function loadMe() {
  current = await call("/api/user");
  apply();
  return current;
}

export function forgetMe() {
  current = null;
  apply();
}
