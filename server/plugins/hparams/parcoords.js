// Parallel coordinates on canvas (the HParams tab, issue 18): one vertical
// axis per hyperparameter and metric, one polyline per run. Two canvases:
// the lines (all runs in a few strokes: runs outside the brushes in one
// faint grey path, the rest bucketed by colour into one path per bucket, so
// 10,000 runs redraw in a frame) and above them the axes, ticks and
// brushes. A number axis is logarithmic when its values are positive, span
// more than two decades and bunch at the low end (a log-uniform sweep); a
// text axis spaces its values evenly; an axis of one value has it in the
// middle. A run without a value on an axis (an hparam it did not log, a
// metric it lacks or that is NaN/Inf) goes through the axis's "missing"
// tick below its end, so its line still reaches the metrics (issue 27).
// Axis titles are DOM labels (the full name in their title), staggered on
// two rows when one row has no room, and cut to their slot, so no two
// overlap at any width; tick labels are cut to the room beside their axis.
// Dragging along an axis brushes it (the runs whose value lies in the
// brush are kept), a click on an axis without a drag clears its brush. The
// brushes are given back through onBrush(key, range | {cats} | null); the
// page turns them into state. Not a page: lib/ holds modules pages share.
import { h } from '../core/dom.js';
import { viridis, themeColor } from '../core/colors.js';
import { niceStep, tickLabel } from '../core/format.js';
import { hpText } from './hparams.js';

const PAD = { top: 34, bottom: 26, left: 60, right: 60 };
const BUCKETS = 24;
// The "missing" tick sits MISSING_GAP px below an axis's end (room for
// its label between it and the lowest value's tick).
const MISSING_GAP = 22;
// f (position on an axis) of a run with no value there: the missing tick.
const MISSING = -1;
// Horizontal room kept free between two labels, in px.
const LABEL_GAP = 8;
const TITLE_FONT = '600 11px ', TICK_FONT = '11px ';

// Log when the positive values span more than two decades AND bunch at
// the low end of a linear axis (median under a fifth of the way up), as a
// log-uniform learning rate does; a uniform dropout in 0.0001..0.5 spans
// decades too but reads right on a linear axis.
export function wantsLog(nums) {
  if (!nums.length) return false;
  const sorted = nums.slice().sort((x, y) => x - y);
  const lo = sorted[0], hi = sorted[sorted.length - 1], med = sorted[sorted.length >> 1];
  return lo > 0 && hi / lo > 100 && med - lo < (hi - lo) * 0.2;
}

// axes: [{key, label, values: (number|string|undefined)[] per run}];
// runs: names. Builds each axis's scale from its values.
export function buildAxes(axes) {
  return axes.map((a) => {
    const nums = a.values.filter((v) => typeof v === 'number' && Number.isFinite(v));
    const texts = a.values.filter((v) => v !== undefined && v !== null && typeof v !== 'number');
    // Runs with no value here (or NaN / Inf: a diverged metric).
    const missing = a.values.length - nums.length - texts.length;
    const nonfinite = a.values.filter((v) => typeof v === 'number' && !Number.isFinite(v)).length;
    const miss = { missing, missingLabel: nonfinite === missing ? 'NaN/Inf' : nonfinite ? 'none/NaN' : 'missing' };
    if (texts.length === 0 && nums.length) {
      let lo = Math.min(...nums), hi = Math.max(...nums);
      if (lo === hi) {
        // One value: in the middle, with its one tick (not a range rounded
        // out to 0.25..1.5 with the value off-centre).
        const d = Math.abs(lo) * 0.5 || 1;
        return { ...a, ...miss, kind: 'num', log: false, single: true, lo: lo - d, hi: hi + d, ticks: [{ v: lo, label: tickLabel(lo, d, Math.abs(lo)) }] };
      }
      const log = wantsLog(nums);
      // Ends and ticks on numbers people write (0..300, not 1..300 in
      // quarters; 0.02..5 on a log axis, not 0.03 and 0.1078).
      const ints = nums.every(Number.isInteger);
      const t = log ? logAxisTicks(lo, hi) : linearAxisTicks(lo, hi, ints);
      return { ...a, ...miss, kind: 'num', log, lo: t.lo, hi: t.hi, ticks: t.ticks };
    }
    const cats = [...new Set(a.values.filter((v) => v !== undefined && v !== null && (typeof v !== 'number' || Number.isFinite(v))).map(hpText))]
      .sort((x, y) => x.localeCompare(y, undefined, { numeric: true }));
    return { ...a, ...miss, kind: 'cat', cats };
  });
}

// A linear axis rounded out to a nice step (whole numbers for an axis of
// whole numbers), with its ticks and their labels.
function linearAxisTicks(lo, hi, ints) {
  let st = niceStep(hi - lo, 4);
  if (ints) st = Math.max(1, Math.round(st));
  const a = Math.floor(lo / st) * st, b = Math.ceil(hi / st) * st;
  const ticks = [];
  for (let k = 0, v = a; v <= b + st * 1e-9 && k < 50; k++, v = a + k * st) {
    const x = parseFloat(v.toPrecision(12));
    ticks.push({ v: x, label: tickLabel(x, st, Math.max(Math.abs(a), Math.abs(b))) });
  }
  return { lo: a, hi: b, ticks };
}

// A log axis from the 1, 2 or 5 x 10^k at or below lo to the one at or
// above hi; ticks on those values, only the decades when there are many.
function logAxisTicks(lo, hi) {
  const steps = [1, 2, 5];
  const down = (v) => { const p = Math.pow(10, Math.floor(Math.log10(v) + 1e-9)); const m = steps.filter((s) => s * p <= v * (1 + 1e-9)); return m[m.length - 1] * p; };
  const up = (v) => { const p = Math.pow(10, Math.floor(Math.log10(v) - 1e-9)); const m = steps.concat([10]).find((s) => s * p >= v * (1 - 1e-9)); return m * p; };
  const a = down(lo), b = up(hi);
  let vals = [];
  for (let e = Math.floor(Math.log10(a) + 1e-9); e <= Math.ceil(Math.log10(b) - 1e-9); e++) {
    for (const s of steps) {
      const v = parseFloat((s * Math.pow(10, e)).toPrecision(12));
      if (v >= a * (1 - 1e-9) && v <= b * (1 + 1e-9)) vals.push(v);
    }
  }
  if (vals.length > 7) vals = vals.filter((v) => Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9 || v === a || v === b);
  const ticks = vals.map((v) => ({ v, label: tickLabel(v, Math.pow(10, Math.floor(Math.log10(v) + 1e-9)), v) }));
  return { lo: a, hi: b, ticks };
}

// Where a value sits on an axis, 0 (bottom) to 1 (top); NaN when it has none.
function frac(ax, v) {
  if (v === undefined || v === null) return NaN;
  if (ax.kind === 'num') {
    if (typeof v !== 'number' || !Number.isFinite(v)) return NaN;
    if (ax.log) return v > 0 ? (Math.log(v) - Math.log(ax.lo)) / (Math.log(ax.hi) - Math.log(ax.lo)) : NaN;
    return (v - ax.lo) / (ax.hi - ax.lo);
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return NaN;
  const i = ax.cats.indexOf(hpText(v));
  if (i < 0) return NaN;
  return ax.cats.length === 1 ? 0.5 : i / (ax.cats.length - 1);
}

function fromFrac(ax, f) {
  if (ax.log) return Math.exp(Math.log(ax.lo) + f * (Math.log(ax.hi) - Math.log(ax.lo)));
  return ax.lo + f * (ax.hi - ax.lo);
}

export class ParCoords {
  // wrap: a positioned element with a height (CSS .pc-wrap).
  constructor(wrap, opts = {}) {
    this.wrap = wrap;
    this.opts = opts;
    this.lines = h('canvas', { class: 'pc-lines' });
    this.over = h('canvas', { class: 'pc-over' });
    // The axis titles (DOM: truncated with the full name as their title).
    this.titles = h('div', { class: 'pc-titles' });
    wrap.append(this.lines, this.over, this.titles);
    this.axes = [];
    this.runs = [];
    this.color = null;       // per run: t in [0, 1] or NaN
    this.brush = {};
    this.drag = null;
    this._bind();
    this.ro = new ResizeObserver(() => this.draw());
    this.ro.observe(wrap);
  }

  destroy() { this.ro.disconnect(); window.removeEventListener('mousemove', this._move); window.removeEventListener('mouseup', this._up); }

  // axes from buildAxes; runs: names in the order of each axis's values;
  // color: per run a number (the colour metric) or undefined; brush: the
  // state's brushes.
  setData(axes, runs, color, brush) {
    this.axes = axes;
    this.runs = runs;
    // Colour by rank, not by value: a few diverged runs would otherwise
    // squeeze every other run into one end of the scale. The lowest value
    // (the best loss) gets the bright end.
    const idx = [];
    color.forEach((v, i) => { if (typeof v === 'number' && Number.isFinite(v)) idx.push(i); });
    idx.sort((x, y) => color[x] - color[y]);
    this.color = new Float64Array(color.length).fill(NaN);
    idx.forEach((i, r) => { this.color[i] = idx.length > 1 ? 1 - r / (idx.length - 1) : 0.5; });
    this.brush = { ...brush };
    // Positions once: f[a][i] for axis a, run i.
    // No value: the axis's missing tick (MISSING).
    this.f = axes.map((ax) => Float32Array.from(ax.values, (v) => { const f = frac(ax, v); return Number.isFinite(f) ? f : MISSING; }));
    this.version = (this.version || 0) + 1;
    // Typed columns for the brush tests: numbers (NaN: none or text) and
    // category indices (-1: none).
    this.num = axes.map((ax) => Float64Array.from(ax.values, (v) => (typeof v === 'number' ? v : NaN)));
    this.cat = axes.map((ax) => (ax.cats ? Int32Array.from(ax.values, (v) => (v === undefined || v === null ? -1 : ax.cats.indexOf(hpText(v)))) : null));
    this.draw();
  }

  setBrush(brush) { this.brush = { ...brush }; this.draw(); }

  // Does run i pass every brush (drawn in colour)? The same rule as
  // lib/hparams.js's brushMatches, on typed columns: a number brush tests
  // the value, a text brush the value's category index.
  kept(i) {
    for (const t of this.tests()) {
      if (t.set) { if (!t.set.has(this.cat[t.a][i])) return false; }
      else { const v = this.num[t.a][i]; if (!(v >= t.lo && v <= t.hi)) return false; }
    }
    return true;
  }

  tests() {
    if (this.testsFor === this.brush) return this.testList;
    const list = [];
    this.axes.forEach((ax, a) => {
      const b = this.brush[ax.key];
      if (!b) return;
      if (Array.isArray(b)) list.push({ a, lo: b[0], hi: b[1] });
      else list.push({ a, set: new Set(b.cats.map((c) => (ax.cats ? ax.cats.indexOf(c) : -2)).filter((k) => k >= 0)) });
    });
    this.testsFor = this.brush;
    this.testList = list;
    return list;
  }

  geometry() {
    const W = this.wrap.clientWidth, H = this.wrap.clientHeight;
    const n = this.axes.length;
    const xs = this.axes.map((_, a) => (n === 1 ? W / 2 : PAD.left + (a * (W - PAD.left - PAD.right)) / (n - 1)));
    // Room for the missing ticks below the axes when an axis has one.
    const gap = this.axes.some((ax) => ax.missing > 0) ? MISSING_GAP : 0;
    return { W, H, xs, top: PAD.top, bottom: H - PAD.bottom - gap, missingY: H - PAD.bottom };
  }

  draw() {
    const t0 = performance.now();
    const dpr = window.devicePixelRatio || 1;
    const g = this.geometry();
    for (const c of [this.lines, this.over]) {
      if (c.width !== Math.round(g.W * dpr) || c.height !== Math.round(g.H * dpr)) { c.width = Math.round(g.W * dpr); c.height = Math.round(g.H * dpr); }
    }
    this.drawLines(g, dpr);
    const t1 = performance.now();
    this.drawAxes(g, dpr);
    this.timing = { lines: Math.round(t1 - t0), total: Math.round(performance.now() - t0) };
  }

  // Every run as a grey line, drawn once per data and size into an
  // offscreen canvas: while a brush moves only the kept runs are stroked
  // again, over this bitmap.
  greyLayer(g, dpr) {
    const key = [g.W, g.H, dpr, this.version].join('x');
    if (this.grey && this.grey.key === key) return this.grey.canvas;
    const c = document.createElement('canvas');
    c.width = Math.round(g.W * dpr); c.height = Math.round(g.H * dpr);
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const p = new Path2D();
    for (let i = 0; i < this.runs.length; i++) this.trace(p, i, g);
    ctx.lineWidth = this.runs.length > 2000 ? 0.6 : 1;
    ctx.globalAlpha = 0.35;
    ctx.strokeStyle = themeColor('--border') || '#ccc';
    ctx.stroke(p);
    this.grey = { key, canvas: c };
    return c;
  }

  // Run i's polyline into path p, through the missing tick of an axis it
  // has no value on.
  trace(p, i, g) {
    for (let a = 0; a < this.axes.length; a++) {
      const [x, y] = this.point(a, i, g);
      if (a) p.lineTo(x, y); else p.moveTo(x, y);
    }
  }

  // Where run i crosses axis a, in px.
  point(a, i, g) {
    const f = this.f[a][i];
    return [g.xs[a], f === MISSING ? g.missingY : g.bottom - f * (g.bottom - g.top)];
  }

  drawLines(g, dpr) {
    const ctx = this.lines.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, g.W, g.H);
    const n = this.runs.length, A = this.axes.length;
    if (!n || !A) return;
    const paths = Array.from({ length: BUCKETS + 1 }, () => new Path2D());
    const brushed = Object.keys(this.brush).length > 0;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      if (brushed && !this.kept(i)) continue;
      kept++;
      const t = this.color[i];
      this.trace(Number.isFinite(t) ? paths[Math.min(BUCKETS - 1, Math.floor(t * BUCKETS))] : paths[BUCKETS], i, g);
    }
    this.keptCount = kept;
    if (brushed) {
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.drawImage(this.greyLayer(g, dpr), 0, 0);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    // Thinner and fainter as runs grow, so 10,000 lines read as a density.
    ctx.lineWidth = n > 2000 ? 0.6 : 1;
    ctx.globalAlpha = Math.max(0.08, Math.min(0.8, 30 / Math.sqrt(Math.max(1, kept))));
    for (let b = 0; b < BUCKETS; b++) { ctx.strokeStyle = viridis((b + 0.5) / BUCKETS); ctx.stroke(paths[b]); }
    ctx.strokeStyle = themeColor('--muted') || '#888';
    ctx.stroke(paths[BUCKETS]);
    ctx.globalAlpha = 1;
  }

  drawAxes(g, dpr) {
    const ctx = this.over.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, g.W, g.H);
    const ink = themeColor('--text') || '#222', muted = themeColor('--muted') || '#666';
    const family = getComputedStyle(document.body).fontFamily;
    // Tick labels sit on the lines: a halo of the card's colour keeps them
    // readable in both themes.
    const halo = themeColor('--panel') || '#fff';
    const boxes = [];
    // A tick label cut to maxW px (an ellipsis), drawn with its halo; its
    // box is kept for the tests.
    const label = (text, x, y, align, maxW) => {
      let t = text;
      if (ctx.measureText(t).width > maxW) {
        while (t.length > 1 && ctx.measureText(t + '…').width > maxW) t = t.slice(0, -1);
        t += '…';
      }
      ctx.save();
      ctx.lineWidth = 3; ctx.lineJoin = 'round'; ctx.strokeStyle = halo;
      ctx.strokeText(t, x, y);
      ctx.restore();
      ctx.fillText(t, x, y);
      const w = ctx.measureText(t).width;
      boxes.push({ text: t, x0: align === 'left' ? x : x - w, x1: align === 'left' ? x + w : x, y0: y - 5.5, y1: y + 5.5 });
    };
    ctx.font = TICK_FONT + family;
    const n = this.axes.length;
    this.axes.forEach((ax, a) => {
      const x = g.xs[a];
      ctx.strokeStyle = ink;
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x + 0.5, g.top); ctx.lineTo(x + 0.5, g.bottom); ctx.stroke();
      ctx.fillStyle = muted;
      // Tick labels left of the axis (right of the last one), as wide as
      // the room up to the next axis or the edge.
      const last = a === n - 1 && n > 1;
      const align = last ? 'left' : 'right';
      ctx.textAlign = align;
      ctx.textBaseline = 'middle';
      const tx = last ? x + 5 : x - 5;
      const room = (last ? g.W - x : a === 0 ? x : x - g.xs[a - 1]) - 5 - LABEL_GAP;
      const yOf = (f) => g.bottom - f * (g.bottom - g.top);
      if (ax.kind === 'num') {
        for (const t of ax.ticks) {
          const f = frac(ax, t.v);
          label(t.label, tx, yOf(f), align, room);
          ctx.beginPath(); ctx.moveTo(x - 3, yOf(f) + 0.5); ctx.lineTo(x + 3, yOf(f) + 0.5); ctx.strokeStyle = muted; ctx.stroke();
        }
      } else {
        const step = Math.max(1, Math.ceil(ax.cats.length / 12));
        ax.cats.forEach((c, i) => {
          if (i % step) return;
          const f = ax.cats.length === 1 ? 0.5 : i / (ax.cats.length - 1);
          label(c, tx, yOf(f), align, room);
        });
      }
      // The missing tick: a dotted stretch below the axis's end to a tick
      // the runs without a value go through.
      if (ax.missing > 0) {
        ctx.save();
        ctx.strokeStyle = muted;
        ctx.setLineDash([2, 3]);
        ctx.beginPath(); ctx.moveTo(x + 0.5, g.bottom); ctx.lineTo(x + 0.5, g.missingY); ctx.stroke();
        ctx.setLineDash([]);
        ctx.beginPath(); ctx.moveTo(x - 4, g.missingY + 0.5); ctx.lineTo(x + 4, g.missingY + 0.5); ctx.stroke();
        ctx.restore();
        ctx.font = 'italic ' + TICK_FONT + family;
        label(ax.missingLabel, tx, g.missingY, align, room);
        ctx.font = TICK_FONT + family;
      }
      // The brush: a translucent bar over the axis.
      const b = this.drag && this.drag.a === a ? this.drag.range : this.brushPixels(ax, g);
      if (b) {
        ctx.fillStyle = 'rgba(245,124,0,0.25)';
        ctx.strokeStyle = themeColor('--accent') || '#f57c00';
        ctx.fillRect(x - 8, b[0], 16, b[1] - b[0]);
        ctx.strokeRect(x - 8 + 0.5, b[0] + 0.5, 16, b[1] - b[0]);
      }
    });
    this.tickBoxes = boxes;
    ctx.font = TITLE_FONT + family;
    this.placeTitles(g, (t) => ctx.measureText(t).width);
  }

  // The axis titles as DOM labels: one row when every title fits between
  // its neighbours, else two staggered rows (every other axis one row
  // down, so a title may use the room of two axes). Each title gets the
  // slot from the midpoint with its same-row neighbour on either side
  // (the card's edge at the ends), less LABEL_GAP, and is cut to it with
  // an ellipsis: slots do not overlap, so titles cannot.
  placeTitles(g, measure) {
    const n = this.axes.length;
    const texts = this.axes.map((ax) => ax.label + (ax.log ? ' (log)' : ''));
    const slots = (rows) => this.axes.map((_, a) => {
      const prev = a - rows, next = a + rows;
      const left = prev >= 0 ? (g.xs[prev] + g.xs[a]) / 2 : 0;
      const right = next < n ? (g.xs[a] + g.xs[next]) / 2 : g.W;
      return [left + LABEL_GAP / 2, right - LABEL_GAP / 2];
    });
    let rows = 1;
    let sl = slots(1);
    const fits = (sl2) => texts.every((t, a) => sl2[a][1] - sl2[a][0] >= measure(t));
    if (n > 1 && !fits(sl)) { rows = 2; sl = slots(2); }
    this.titleRows = rows;
    const nodes = this.titles.children;
    while (nodes.length > n) this.titles.lastChild.remove();
    while (nodes.length < n) this.titles.append(h('div', { class: 'pc-title' }));
    this.axes.forEach((ax, a) => {
      const el = nodes[a];
      const [l, r] = sl[a];
      const w = Math.max(8, Math.min(Math.ceil(measure(texts[a])) + 2, r - l));
      // Centred on the axis, moved inside its slot at the ends.
      const left = Math.max(l, Math.min(r - w, g.xs[a] - w / 2));
      el.textContent = texts[a];
      el.title = ax.label;
      el.style.left = left + 'px';
      el.style.width = w + 'px';
      el.style.top = (rows === 2 && a % 2 ? 15 : 2) + 'px';
    });
  }

  // The brush of an axis in pixels [top, bottom], or null.
  brushPixels(ax, g) {
    const b = this.brush[ax.key];
    if (!b) return null;
    const yOf = (f) => g.bottom - f * (g.bottom - g.top);
    if (Array.isArray(b)) {
      const f0 = Math.max(0, Math.min(1, frac(ax, b[0]))), f1 = Math.max(0, Math.min(1, frac(ax, b[1])));
      if (!Number.isFinite(f0) || !Number.isFinite(f1)) return null;
      return [yOf(f1), yOf(f0)];
    }
    const fs = b.cats.map((c) => frac(ax, c)).filter(Number.isFinite);
    if (!fs.length) return null;
    const pad = ax.cats.length > 1 ? 0.5 / (ax.cats.length - 1) : 0.5;
    return [yOf(Math.min(1, Math.max(...fs) + pad)), yOf(Math.max(0, Math.min(...fs) - pad))];
  }

  // A pixel range on axis a as a brush in data terms.
  rangeToBrush(ax, y0, y1, g) {
    const f = (y) => Math.max(0, Math.min(1, (g.bottom - y) / (g.bottom - g.top)));
    const fa = f(Math.max(y0, y1)), fb = f(Math.min(y0, y1));
    if (ax.kind === 'num') return [fromFrac(ax, fa), fromFrac(ax, fb)];
    const cats = ax.cats.filter((c, i) => { const p = ax.cats.length === 1 ? 0.5 : i / (ax.cats.length - 1); return p >= fa && p <= fb; });
    return { cats };
  }

  _bind() {
    const pos = (e) => { const r = this.over.getBoundingClientRect(); return { x: e.clientX - r.left, y: e.clientY - r.top }; };
    this.over.addEventListener('mousedown', (e) => {
      if (e.button !== 0) return;
      const p = pos(e);
      const g = this.geometry();
      let best = -1, dist = 14;
      g.xs.forEach((x, a) => { if (Math.abs(p.x - x) < dist) { dist = Math.abs(p.x - x); best = a; } });
      if (best < 0 || p.y < g.top - 6 || p.y > g.bottom + 6) return;
      const y = Math.max(g.top, Math.min(g.bottom, p.y));
      this.drag = { a: best, y0: y, range: [y, y] };
      e.preventDefault();
    });
    this._move = (e) => {
      if (!this.drag) return;
      const g = this.geometry();
      const y = Math.max(g.top, Math.min(g.bottom, pos(e).y));
      this.drag.range = [Math.min(this.drag.y0, y), Math.max(this.drag.y0, y)];
      // Live: the lines follow the brush while it is dragged.
      const ax = this.axes[this.drag.a];
      if (this.drag.range[1] - this.drag.range[0] >= 3) this.brush = { ...this.brush, [ax.key]: this.rangeToBrush(ax, this.drag.range[0], this.drag.range[1], g) };
      if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = null; this.draw(); });
    };
    this._up = () => {
      if (!this.drag) return;
      const d = this.drag;
      this.drag = null;
      const ax = this.axes[d.a];
      const g = this.geometry();
      const b = d.range[1] - d.range[0] < 3 ? null : this.rangeToBrush(ax, d.range[0], d.range[1], g);
      this.brush = { ...this.brush };
      if (b) this.brush[ax.key] = b; else delete this.brush[ax.key];
      this.draw();
      if (this.opts.onBrush) this.opts.onBrush(ax.key, b);
    };
    window.addEventListener('mousemove', this._move);
    window.addEventListener('mouseup', this._up);
  }

  // For tests and the debug hook: the axes with their pixel positions.
  summary() {
    const g = this.geometry();
    return {
      runs: this.runs.length, kept: this.keptCount,
      axes: this.axes.map((ax, a) => ({ key: ax.key, label: ax.label, kind: ax.kind, log: !!ax.log, lo: ax.lo, hi: ax.hi, cats: ax.cats, x: g.xs[a], top: g.top, bottom: g.bottom,
        single: !!ax.single, missing: ax.missing || 0, missingY: ax.missing > 0 ? g.missingY : null,
        ticks: ax.kind === 'num' ? ax.ticks.map((t) => ({ label: t.label, y: g.bottom - frac(ax, t.v) * (g.bottom - g.top) })) : null })),
      // The runs with no value on some axis: their polylines in px.
      routes: Object.fromEntries(this.runs.map((r, i) => [r, i]).filter(([, i]) => (this.f || []).some((col) => col[i] === MISSING))
        .slice(0, 50).map(([r, i]) => [r, this.axes.map((_, a) => this.point(a, i, g))])),
      tickBoxes: (this.tickBoxes || []).map((b) => ({ ...b })), titleRows: this.titleRows || 1,
      brush: { ...this.brush }, drawMs: this.timing || null,
    };
  }
}
