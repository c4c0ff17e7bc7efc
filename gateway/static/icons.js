// Small line icons drawn as SVG, so they show on any system: an emoji needs a colour-emoji font,
// and without one it renders as an empty box.
const SVG = "http://www.w3.org/2000/svg";
const THUMB = ["M7 10v10H3V10z", "M7 10l4-7c1.5 0 2.5 1 2.2 2.6L12.6 9H19a2 2 0 0 1 2 2.3l-1.2 7A2 2 0 0 1 17.8 20H7"];

function icon(paths, transform = "") {
  const svg = document.createElementNS(SVG, "svg");
  for (const [name, value] of Object.entries({ viewBox: "0 0 24 24", width: "1em", height: "1em", class: "icon", "aria-hidden": "true" })) svg.setAttribute(name, value);
  const group = document.createElementNS(SVG, "g");
  for (const [name, value] of Object.entries({ fill: "none", stroke: "currentColor", "stroke-width": "2", "stroke-linejoin": "round", "stroke-linecap": "round" })) group.setAttribute(name, value);
  if (transform) group.setAttribute("transform", transform);
  for (const d of paths) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    group.appendChild(path);
  }
  svg.appendChild(group);
  return svg;
}

export const thumbUp = () => icon(THUMB);
export const thumbDown = () => icon(THUMB, "rotate(180 12 12)");
