// The application form's 访客页面 part: how the share page looks to visitors (name, logo,
// colour, opening message with suggested questions, input hint, disclaimer, sources and trace
// shown or not). The server checks every value again and says why it refuses one.
import { LABELS, fill } from "./labels.js";

const T = LABELS.admin_text;
const $ = (id) => document.getElementById(id);
const LOGO_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_LOGO_BYTES = 256 * 1024;
const COLOUR = /^#[0-9a-fA-F]{6}$/;

let logo = ""; // the data: URL the form will send ("" = none)
let logoError = "";

function showLogo() {
  const preview = $("app-logo-preview");
  preview.hidden = !logo;
  if (logo) preview.src = logo;
  else preview.removeAttribute("src");
}

/** The form's fields from ``app`` (null: a new application, the defaults). */
export function fillPageLook(app) {
  const a = app || {};
  $("app-title").value = a.title || "";
  $("app-accent").value = a.accent_color || "";
  $("app-prologue").value = a.prologue || "";
  $("app-placeholder").value = a.placeholder || "";
  $("app-disclaimer").value = a.disclaimer_value || "";
  $("app-show-source").checked = a.show_source !== false;
  $("app-show-trace").checked = a.show_trace !== false;
  $("app-logo").value = "";
  logo = a.logo || "";
  logoError = "";
  showLogo();
}

/** The page fields to send, or a sentence saying what to fix. ``app``: the one being edited. */
export function readPageLook(app) {
  const accent = $("app-accent").value.trim();
  if (accent && !COLOUR.test(accent)) return { error: fill(T.accent_format, { example: "#2563eb" }) };
  if (logoError) return { error: logoError };
  const body = {
    title: $("app-title").value.trim(),
    logo,
    accent_color: accent,
    prologue: $("app-prologue").value,
    placeholder: $("app-placeholder").value.trim(),
    disclaimer: Boolean($("app-disclaimer").value.trim()),
    disclaimer_value: $("app-disclaimer").value.trim(),
    show_source: $("app-show-source").checked,
    show_trace: $("app-show-trace").checked,
  };
  if (app && app.progress_mode) body.progress_mode = app.progress_mode; // sent together: kept as it is
  return { body };
}

export function initPageLook() {
  $("app-logo").addEventListener("change", (event) => {
    const file = event.target.files[0];
    logoError = "";
    if (!file) return;
    if (!LOGO_TYPES.includes(file.type)) logoError = T.logo_type;
    else if (file.size > MAX_LOGO_BYTES) logoError = T.logo_size;
    if (logoError) return;
    const reader = new FileReader();
    reader.onload = () => {
      logo = String(reader.result);
      showLogo();
    };
    reader.readAsDataURL(file);
  });
  $("app-logo-clear").addEventListener("click", () => {
    logo = "";
    logoError = "";
    $("app-logo").value = "";
    showLogo();
  });
}
