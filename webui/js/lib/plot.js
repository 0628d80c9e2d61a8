// The palette and chart settings of the trace pages (GPU, GPU memory,
// gradients, pipeline), kept in one place so the pages agree: named
// Tableau 10 colours (the run palette of core/colors.js), one colour per
// device, the Chart.js options of a line chart over time in seconds, a
// filled series, and the hi-DPI set-up of the canvases the pages draw by
// hand (the timeline, the heat map).
import { si } from '../core/format.js';
import { withAlpha } from '../core/colors.js';

export const COLOR = {
  blue: '#4e79a7', orange: '#f28e2b', red: '#e15759', teal: '#76b7b2', green: '#59a14f',
  yellow: '#edc948', purple: '#b07aa1', brown: '#9c755f', grey: '#bab0ac',
};

// Devices by id (or position): blue, orange, green... so GPU 0 is the same
// colour on every page. Negative ids wrap too.
const DEV_COLORS = [COLOR.blue, COLOR.orange, COLOR.green, COLOR.purple, COLOR.teal, COLOR.yellow, COLOR.red, COLOR.brown];
export function devColor(d) {
  const n = DEV_COLORS.length;
  return DEV_COLORS[((d % n) + n) % n];
}

// A line with a faint fill under it, no point marks (dense series).
export function filledSet(label, data, color, extra = {}) {
  return { label, data, borderColor: color, backgroundColor: withAlpha(color, 0.15), fill: true, borderWidth: 1.5, pointRadius: 0, ...extra };
}

// Options of a line chart whose x is seconds: the tooltip says "t = 1.2 s"
// and "<dataset>: fmt(y)"; legend and x merge over the defaults, y is the
// whole y scale.
export function timeChartOptions({ xTitle, fmt, y, x = {}, legend = {}, interaction = { mode: 'nearest', intersect: false } }) {
  return {
    parsing: false, animation: false, interaction,
    plugins: {
      legend: { align: 'end', ...legend },
      tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + fmt(c.parsed.y), title: (it) => 't = ' + si(it[0].parsed.x, 's') } },
    },
    scales: { x: { type: 'linear', title: { display: true, text: xTitle }, ticks: { callback: (v) => si(v, 's') }, ...x }, y },
  };
}

// Sizes a hand-drawn canvas to its container's width and height H (CSS
// pixels) at the device's pixel ratio, clears it and sets the page's font
// at 11px. Returns the 2D context (in CSS pixels) and the width.
export function sizeCanvas(canvas, H) {
  const W = canvas.parentNode.clientWidth || 800;
  canvas.style.height = H + 'px';
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(W * dpr);
  canvas.height = Math.round(H * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  ctx.font = '11px ' + getComputedStyle(document.body).fontFamily;
  return { ctx, W };
}
