// A small, safe Markdown renderer for answers. All text is HTML-escaped before any markup
// is added, so the only tags in the output are the ones produced here.

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Only http(s) and relative links; anything with another scheme (javascript:, data:…) is dropped. */
function safeHref(escapedUrl) {
  // Browsers ignore tabs/newlines inside URLs, so "java\tscript:" must be judged without them.
  const compact = escapedUrl.replace(/[\u0000-\u0020\u007f]/g, "");
  if (!compact) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(compact) && !/^https?:/i.test(compact)) return null;
  return compact;
}

/** Inline markup on already-escaped text. Code spans are set aside first so nothing inside them changes. */
function inline(escaped) {
  const kept = [];
  const keep = (html) => `\u0000${kept.push(html) - 1}\u0000`;
  let s = escaped.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, __, code) => keep(`<code>${code.trim() || code}</code>`));
  s = s.replace(/\[([^\]\n]+)\]\(([^()\s]+)(?:\s+&quot;[^&]*&quot;)?\)/g, (whole, text, url) => {
    const href = safeHref(url);
    if (!href) return text;
    return keep(`<a href="${href}" target="_blank" rel="noopener noreferrer">${emphasis(text)}</a>`);
  });
  s = s.replace(/(^|[\s(（])(https?:\/\/[^\s<）)]+[^\s<）).,;:!?，。；：！？])/g, (whole, lead, url) =>
    lead + keep(`<a href="${url}" target="_blank" rel="noopener noreferrer">${url}</a>`),
  );
  s = emphasis(s);
  return s.replace(/\u0000(\d+)\u0000/g, (_, i) => kept[Number(i)]);
}

function emphasis(s) {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<strong>$2</strong>")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>")
    .replace(/(^|[^*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?!\*)/g, "$1<em>$2</em>")
    .replace(/(^|[^\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/g, "$1<em>$2</em>");
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}&gt;\s?(.*)$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function startsBlock(line, next) {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    ITEM.test(line) ||
    (line.includes("|") && next !== undefined && TABLE_SEP.test(next) && next.includes("-"))
  );
}

function renderTable(lines, i) {
  const head = splitRow(lines[i]);
  const aligns = splitRow(lines[i + 1]).map((c) =>
    c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : "",
  );
  const cell = (tag, text, col) =>
    `<${tag}${aligns[col] ? ` style="text-align:${aligns[col]}"` : ""}>${inline(text)}</${tag}>`;
  let html = `<div class="table-wrap"><table><thead><tr>${head.map((c, k) => cell("th", c, k)).join("")}</tr></thead><tbody>`;
  let j = i + 2;
  for (; j < lines.length && lines[j].trim() && lines[j].includes("|"); j++) {
    const cells = splitRow(lines[j]);
    html += `<tr>${head.map((_, k) => cell("td", cells[k] || "", k)).join("")}</tr>`;
  }
  return { html: `${html}</tbody></table></div>`, next: j };
}

/** Lists, nested by indentation; continuation lines join the item above them. */
function renderList(lines, i) {
  const items = [];
  let j = i;
  while (j < lines.length) {
    const line = lines[j];
    const m = ITEM.exec(line);
    if (m) {
      items.push({ indent: m[1].replace(/\t/g, "    ").length, ordered: /\d/.test(m[2]), start: parseInt(m[2], 10), text: [m[3]] });
      j++;
    } else if (line.trim() && items.length && /^\s+/.test(line) && !FENCE.test(line)) {
      items[items.length - 1].text.push(line.trim());
      j++;
    } else if (!line.trim() && j + 1 < lines.length && ITEM.test(lines[j + 1]) && /^\s+/.test(lines[j + 1])) {
      j++; // a blank line between nested items keeps the list going
    } else break;
  }
  let pos = 0;
  const build = (indent) => {
    const first = items[pos];
    const tag = first.ordered ? "ol" : "ul";
    let html = first.ordered && first.start !== 1 ? `<ol start="${first.start}">` : `<${tag}>`;
    while (pos < items.length && items[pos].indent >= indent) {
      const item = items[pos];
      if (item.indent > indent + 1) {
        html += build(item.indent); // deeper item without a parent: nest anyway
        continue;
      }
      pos++;
      html += `<li>${item.text.map(inline).join("<br>")}`;
      if (pos < items.length && items[pos].indent > item.indent + 1) html += build(items[pos].indent);
      html += "</li>";
      if (pos < items.length && items[pos].indent === indent && items[pos].ordered !== first.ordered) break;
    }
    return `${html}</${tag}>`;
  };
  let html = "";
  while (pos < items.length) html += build(items[pos].indent);
  return { html, next: j };
}

function renderBlocks(lines) {
  let html = "";
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1];
      const body = [];
      i++;
      // An unclosed fence (answer still streaming) runs to the end.
      while (i < lines.length && !new RegExp(`^ {0,3}${marker[0]}{${marker.length},}\\s*$`).test(lines[i])) body.push(lines[i++]);
      i++;
      const lang = fence[2] ? ` class="language-${fence[2]}"` : "";
      html += `<pre><code${lang}>${body.join("\n")}</code></pre>`;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1].length;
      html += `<h${level}>${inline(heading[2])}</h${level}>`;
      i++;
      continue;
    }
    if (RULE.test(line)) {
      html += "<hr>";
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && lines[i].trim() && (QUOTE.test(lines[i]) || !startsBlock(lines[i], lines[i + 1]))) {
        const q = QUOTE.exec(lines[i]);
        body.push(q ? q[1] : lines[i]);
        i++;
      }
      html += `<blockquote>${renderBlocks(body)}</blockquote>`;
      continue;
    }
    if (ITEM.test(line)) {
      const list = renderList(lines, i);
      html += list.html;
      i = list.next;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const table = renderTable(lines, i);
      html += table.html;
      i = table.next;
      continue;
    }
    const para = [line.trim()];
    i++;
    while (i < lines.length && lines[i].trim() && !startsBlock(lines[i], lines[i + 1])) para.push(lines[i++].trim());
    html += `<p>${para.map(inline).join("<br>")}</p>`;
  }
  return html;
}

/** Markdown text → an HTML string that is safe to assign to innerHTML. */
export function renderMarkdown(source) {
  const text = escapeHtml(String(source || "").replace(/\u0000/g, "").replace(/\r\n?/g, "\n"));
  return renderBlocks(text.split("\n"));
}
