// Small SVG charts drawn here, with no library: bars (stacked when there are several series)
// or lines, one point per day, a y axis with round ticks, sparse x labels, a legend, and each
// point's value in a tooltip (an SVG <title>). Built with DOM calls, so labels are only text.

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 560;
const HEIGHT = 200;
const PAD = { left: 46, right: 10, top: 12, bottom: 26 };
export const COLORS = ["#2563eb", "#15803d", "#c2410c", "#7c3aed", "#0891b2", "#a16207", "#be185d", "#4b5563"];

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/** A top for the y axis that reads well: 1, 2 or 5 times a power of ten, at least the max. */
export function niceMax(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

const shortDay = (day) => day.slice(5); // MM-DD

function axes(svg, days, top, format) {
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  for (let i = 0; i <= 4; i++) {
    const value = (top * i) / 4;
    const y = PAD.top + plotH - (plotH * i) / 4;
    svg.appendChild(el("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y, y2: y, class: "chart-grid" }));
    svg.appendChild(el("text", { x: PAD.left - 6, y: y + 4, "text-anchor": "end", class: "chart-tick" }, format(value)));
  }
  const every = Math.max(1, Math.ceil(days.length / 8));
  days.forEach((day, i) => {
    const last = i === days.length - 1;
    if (!last && (i % every !== 0 || days.length - 1 - i < every)) return; // the last day's label has room
    const x = xOf(i, days.length) + slotWidth(days.length) / 2;
    svg.appendChild(el("text", { x, y: HEIGHT - 8, "text-anchor": "middle", class: "chart-tick" }, shortDay(day)));
  });
}

const slotWidth = (n) => (WIDTH - PAD.left - PAD.right) / Math.max(n, 1);
const xOf = (i, n) => PAD.left + i * slotWidth(n);

function bars(svg, days, series, top) {
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const width = Math.max(1, slotWidth(days.length) * 0.7);
  days.forEach((day, i) => {
    let base = 0;
    series.forEach((s, k) => {
      const value = s.values[i] || 0;
      if (!value) return;
      const h = (plotH * value) / top;
      const y = PAD.top + plotH - (plotH * (base + value)) / top;
      const x = xOf(i, days.length) + (slotWidth(days.length) - width) / 2;
      const rect = el("rect", { x, y, width, height: Math.max(h, 0.5), fill: s.color || COLORS[k], "data-day": day });
      rect.appendChild(el("title", {}, `${day} ${s.name}: ${s.format ? s.format(value) : value}`));
      svg.appendChild(rect);
      base += value;
    });
  });
}

function lines(svg, days, series, top) {
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  series.forEach((s, k) => {
    const color = s.color || COLORS[k];
    const points = days.map((_, i) => [xOf(i, days.length) + slotWidth(days.length) / 2, PAD.top + plotH - (plotH * (s.values[i] || 0)) / top]);
    svg.appendChild(el("polyline", { points: points.map((p) => p.join(",")).join(" "), fill: "none", stroke: color, "stroke-width": 2 }));
    points.forEach(([x, y], i) => {
      const dot = el("circle", { cx: x, cy: y, r: 3, fill: color, "data-day": days[i] });
      dot.appendChild(el("title", {}, `${days[i]} ${s.name}: ${s.format ? s.format(s.values[i] || 0) : s.values[i] || 0}`));
      svg.appendChild(dot);
    });
  });
}

/**
 * chart({title, days: ["2026-03-01", …], series: [{name, values: [..], color?, format?}],
 *        kind: "bar" | "line", integer?: counts, format?: (n) => text, testid?}) → a <figure> with an <svg>.
 */
export function chart({ title, days, series, kind = "bar", integer = false, format = (n) => String(Math.round(n * 100) / 100), testid }) {
  const figure = document.createElement("figure");
  figure.className = "chart";
  if (testid) figure.dataset.testid = testid;
  const caption = document.createElement("figcaption");
  caption.textContent = title;
  figure.appendChild(caption);
  const peak = kind === "bar"
    ? Math.max(0, ...days.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] || 0), 0)))
    : Math.max(0, ...series.flatMap((s) => s.values));
  // Counts get whole-number ticks: a top divisible by the four grid steps.
  const top = integer ? Math.ceil(niceMax(peak) / 4) * 4 : niceMax(peak);
  const svg = el("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": title, class: "chart-svg" });
  axes(svg, days, top, format);
  (kind === "bar" ? bars : lines)(svg, days, series, top);
  figure.appendChild(svg);
  const legend = document.createElement("div");
  legend.className = "chart-legend";
  series.forEach((s, k) => {
    const item = document.createElement("span");
    const swatch = document.createElement("i");
    swatch.style.background = s.color || COLORS[k];
    item.append(swatch, document.createTextNode(s.name));
    legend.appendChild(item);
  });
  figure.appendChild(legend);
  return figure;
}
