// The chat bubble another site puts on its pages (docs/pages.md, "On another site"):
//   <script src="https://kb.example.com/ui/embed.js" data-token="<share link's access token>" async></script>
// It adds a round button to the host page; the button opens the share page in an iframe of the
// gateway's own origin. Everything of the chat (the visitor's token, the conversation, its DOM)
// lives inside that iframe, where the host page's scripts cannot reach: this script, which runs
// in the host page, only ever knows the share link's public access token. The visitor is kept
// across the host's page loads by the iframe's own storage. The script sets styles through the
// DOM (never a <style> element or a style attribute) and builds its icon with DOM calls, so it
// works under a host's strict content security policy (script-src and frame-src allowing the
// gateway are all it needs) and under Trusted Types.
//
// Its words come in both languages, written in by the gateway as it serves this file (the chat
// page's catalogue, gateway/words/): in another site's page only the script can choose one. It
// takes the snippet's data-lang, else the visitor's browser languages, else Chinese; a data-lang
// also opens the chat in that language.
(() => {
  "use strict";
  const script = document.currentScript;
  if (!script || !script.src) return;
  const source = new URL(script.src);
  const WORDS = /*{{words}}*/ null;
  const known = (tag) => {
    const primary = String(tag || "").toLowerCase().split(/[-_]/)[0];
    return primary === "zh" || primary === "en" ? primary : "";
  };
  const chosen = known(script.dataset.lang);
  const language = chosen || [...(navigator.languages || []), navigator.language].map(known).find(Boolean) || "zh";
  const words = (WORDS && WORDS[language]) || { title: "", missing_token: "" };
  const token = script.dataset.token || source.searchParams.get("token") || "";
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(token)) {
    console.warn(words.missing_token);
    return;
  }
  const title = (script.dataset.title || words.title).slice(0, 64);
  const colour = /^#[0-9A-Fa-f]{3}([0-9A-Fa-f]{3})?$/.test(script.dataset.color || "") ? script.dataset.color : "#2563eb";
  const frameUrl = `${source.origin}/ui/share/${encodeURIComponent(token)}?embed=bubble${chosen ? `&lang=${chosen}` : ""}`;
  const SVG = "http://www.w3.org/2000/svg";

  function styled(element, styles) {
    for (const [name, value] of Object.entries(styles)) element.style.setProperty(name, value);
    return element;
  }

  function icon(open) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("width", "26");
    svg.setAttribute("height", "26");
    svg.setAttribute("aria-hidden", "true");
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("fill", "none");
    path.setAttribute("stroke", "#ffffff");
    path.setAttribute("stroke-width", "2");
    path.setAttribute("stroke-linecap", "round");
    path.setAttribute("stroke-linejoin", "round");
    // A speech balloon; a cross while the panel is open.
    path.setAttribute("d", open ? "M6 6l12 12M18 6L6 18" : "M4 5h16v11H9l-5 4z");
    svg.appendChild(path);
    return svg;
  }

  const button = styled(document.createElement("button"), {
    position: "fixed", right: "20px", bottom: "20px", width: "56px", height: "56px", "border-radius": "50%",
    border: "0", padding: "0", margin: "0", background: colour, cursor: "pointer", "z-index": "2147483646",
    display: "flex", "align-items": "center", "justify-content": "center", "box-shadow": "0 4px 14px rgba(0,0,0,.25)",
  });
  button.type = "button";
  button.dataset.kbEmbed = "button";
  button.setAttribute("aria-label", title);
  button.setAttribute("aria-expanded", "false");
  button.title = title;
  button.appendChild(icon(false));

  const panel = styled(document.createElement("div"), {
    position: "fixed", right: "20px", bottom: "88px", width: "min(400px, calc(100vw - 24px))",
    height: "min(640px, calc(100vh - 112px))", "border-radius": "12px", overflow: "hidden", background: "#ffffff",
    "box-shadow": "0 8px 30px rgba(0,0,0,.25)", "z-index": "2147483646", display: "none",
  });
  panel.dataset.kbEmbed = "panel";
  let frame = null;

  function toggle() {
    const opening = panel.style.display === "none";
    if (opening && !frame) {
      // Made on the first open: a page whose visitor never opens the chat never loads it.
      frame = styled(document.createElement("iframe"), { width: "100%", height: "100%", border: "0", display: "block" });
      frame.title = title;
      frame.src = frameUrl;
      frame.referrerPolicy = "no-referrer";
      frame.setAttribute("allow", "clipboard-write");
      panel.appendChild(frame);
    }
    panel.style.display = opening ? "block" : "none";
    button.setAttribute("aria-expanded", String(opening));
    button.replaceChildren(icon(opening));
  }

  button.addEventListener("click", toggle);
  const place = () => document.body.append(panel, button);
  if (document.body) place();
  else document.addEventListener("DOMContentLoaded", place, { once: true });
})();
