// Chart helpers on top of Chart.js (vendored, global `Chart`).
// ScalarChart is the scalar card's chart: smoothed line over the faint raw
// line per run (the smoothed points are the server's smoothing=W answer,
// an EMA over the full history, so zooming or resampling never changes
// the curve's shape; TensorBoard smooths the downsampled points instead), step / relative / wall x axis, log y, drag-box zoom with
// double-click reset, a cross-hair tooltip listing every run at the hovered
// x sorted by value, and non-finite points drawn as markers on the chart's
// edge (▲ +Inf and ✕ NaN at the top, ▼ -Inf at the bottom) instead of being
// dropped or breaking the line.
import { h, clear } from './dom.js';
import { withAlpha, themeColor } from './colors.js';
import { eng, rel, wall, wallShort, linearTicks, logTicks, niceRange } from './format.js';

const ChartJS = window.Chart;

// A chart's legend (webui/README.md "Multi-tag charts") lists at most
// LEGEND_MAX_ITEMS entries, then "+N more" (the full list is its title and
// the card's download menu): a legend longer than that is read by nobody
// and pushed the plot out of its card (a 25-series chart). It is also cut
// to LEGEND_MAX_HEIGHT of the plot's height, for long names that wrap.
export const LEGEND_MAX_ITEMS = 8;
export const LEGEND_MAX_HEIGHT = 0.5;
// Line styles that tell a multi-tag chart's tags apart (the colour is the
// run's, as everywhere): solid, dashed, dotted, dash-dot, long dash; a
// sixth tag repeats the first style.
export const TAG_DASHES = [[], [6, 3], [2, 2], [8, 3, 2, 3], [12, 4]];

export function applyTheme() {
  if (!ChartJS) return;
  ChartJS.defaults.color = themeColor('--muted');
  ChartJS.defaults.borderColor = themeColor('--grid');
  ChartJS.defaults.font.family = getComputedStyle(document.body).fontFamily;
  ChartJS.defaults.font.size = 11;
  ChartJS.defaults.animation = false;
  ChartJS.defaults.responsive = true;
  ChartJS.defaults.maintainAspectRatio = false;
}
applyTheme();
const liveCharts = new Set();
// The chart colours again after a theme change (system or the toggle).
export function retheme() {
  applyTheme();
  for (const c of liveCharts) c.redraw();
}
window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', retheme);

// Axis tick formatters by x mode.
export function xTickFormatter(mode) {
  if (mode === 'relative') return (v) => rel(v);
  if (mode === 'wall') return (v) => wallShort(v);
  return linearTicks;
}
export function xAxisTitle(mode) {
  return mode === 'relative' ? 'Relative time' : mode === 'wall' ? 'Wall time (local)' : 'Step';
}

// Parses the scalars route's [[wall_time, step, value], ...] into columns.
// Values arrive as numbers or "NaN"/"Infinity"/"-Infinity".
export function parseScalars(rows, num) {
  const n = rows.length;
  const wallT = new Float64Array(n), step = new Float64Array(n), value = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    wallT[i] = num(r[0]);
    step[i] = num(r[1]);
    value[i] = num(r[2]);
  }
  return { wall: wallT, step, value, n };
}

function lowerBound(arr, x) {
  let lo = 0, hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid].x < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

function nearest(arr, x) {
  if (!arr.length) return -1;
  const i = lowerBound(arr, x);
  if (i <= 0) return 0;
  if (i >= arr.length) return arr.length - 1;
  return x - arr[i - 1].x <= arr[i].x - x ? i - 1 : i;
}

// The robust y range (webui/README.md "Robust y range"): over the drawn
// finite points, the p10..p90 span S; a point further than 10 S beyond
// those quantiles is an extreme outlier and does not set the range (a
// diverged run's 1e28 among losses of 0.1 to 3). Under 20 points the
// quantiles say little: there (from 3 points) a value more than 1e4 times
// the median magnitude is the extreme one (three runs' final losses 0.05,
// 2.3 and 7.7e28). A chart where no point is that far out keeps the full
// range. Returns {lo, hi, above, below} (counts of points left out) or null.
export function robustRange(vals, logy = false) {
  const v = logy ? vals.filter((x) => x > 0) : vals.slice();
  if (v.length < 3) return null;
  v.sort((a, b) => a - b);
  if (v.length < 20) {
    const mags = v.map(Math.abs).sort((a, b) => a - b);
    const med = Math.max(mags[(mags.length - 1) >> 1], 1e-300);
    let lo = Infinity, hi = -Infinity, above = 0, below = 0;
    for (const x of v) {
      if (Math.abs(x) > 1e4 * med) { if (x > 0) above++; else below++; }
      else { if (x < lo) lo = x; if (x > hi) hi = x; }
    }
    return above || below ? { lo, hi, above, below } : null;
  }
  const tr = (x) => (logy ? Math.log10(x) : x);
  const q10 = tr(percentile(v, 0.1)), q90 = tr(percentile(v, 0.9));
  const S = Math.max(q90 - q10, 1e-12 * Math.max(Math.abs(q10), Math.abs(q90)));
  const fLo = q10 - 10 * S, fHi = q90 + 10 * S;
  let lo = Infinity, hi = -Infinity, above = 0, below = 0;
  for (const x of v) {
    const t = tr(x);
    if (t > fHi) above++;
    else if (t < fLo) below++;
    else { if (x < lo) lo = x; if (x > hi) hi = x; }
  }
  if (!above && !below) return null;
  return { lo, hi, above, below };
}

function percentile(sorted, q) {
  if (!sorted.length) return NaN;
  const p = (sorted.length - 1) * q;
  const i = Math.floor(p);
  return sorted[Math.min(i + 1, sorted.length - 1)] * (p - i) + sorted[i] * (1 - (p - i));
}

// Draws the non-finite markers, the focus-step line and the cross-hair.
const overlayPlugin = {
  id: 'tfbOverlay',
  afterDatasetsDraw(chart) {
    const self = chart.$tfb;
    if (!self) return;
    const { ctx, chartArea: a, scales } = chart;
    const xs = scales.x;
    ctx.save();
    // Focus step (from the health page): a dashed red rule.
    if (self.focusX !== null && self.focusX >= xs.min && self.focusX <= xs.max) {
      const px = xs.getPixelForValue(self.focusX);
      ctx.strokeStyle = themeColor('--danger');
      ctx.setLineDash([4, 3]);
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(px, a.top); ctx.lineTo(px, a.bottom); ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.font = 'bold 11px ' + ChartJS.defaults.font.family;
    ctx.textAlign = 'center';
    for (const s of self.visibleSeries()) {
      ctx.fillStyle = s.color;
      ctx.strokeStyle = s.color;
      for (const m of s.nonfinite) {
        if (m.x < xs.min || m.x > xs.max) continue;
        const px = xs.getPixelForValue(m.x);
        if (m.kind === 'neg_inf') { ctx.textBaseline = 'bottom'; ctx.fillText('▼', px, a.bottom); }
        else if (m.kind === 'pos_inf') { ctx.textBaseline = 'top'; ctx.fillText('▲', px, a.top); }
        // NaN one glyph below the top edge, so it stays readable next to
        // a +Inf at a nearby step.
        else { ctx.textBaseline = 'top'; ctx.fillText('✕', px, a.top + 12); }
      }
    }
    // Loss spikes: an orange diamond on the top edge (red when the spike
    // diverged).
    for (const s of self.visibleSeries()) {
      for (const m of s.spikes || []) {
        if (m.x < xs.min || m.x > xs.max) continue;
        ctx.fillStyle = m.state === 'diverged' ? themeColor('--danger') : '#e8590c';
        ctx.textBaseline = 'top';
        ctx.fillText('◆', xs.getPixelForValue(m.x), a.top + 1);
      }
    }
    // Cross-hair and the hovered point of each run.
    if (self.hoverPx !== null) {
      ctx.strokeStyle = themeColor('--muted');
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(self.hoverPx + 0.5, a.top); ctx.lineTo(self.hoverPx + 0.5, a.bottom); ctx.stroke();
      for (const p of self.hoverPoints) {
        if (!Number.isFinite(p.y)) continue;
        const py = (scales[p.axis] || scales.y).getPixelForValue(p.y);
        if (py < a.top || py > a.bottom) continue;
        ctx.fillStyle = p.color;
        ctx.beginPath(); ctx.arc(xs.getPixelForValue(p.x), py, 3, 0, 2 * Math.PI); ctx.fill();
      }
    }
    ctx.restore();
  },
};

export class ScalarChart {
  // wrap: an element the chart fills (sized by CSS).
  constructor(wrap, opts = {}) {
    this.wrap = wrap;
    this.opts = opts;
    // [{run, color, cols, smooth, axis, axisLabel, dash, legend}]: cols
    // (parseScalars) is the raw series, smooth the server's smoothed series
    // for view.smoothing (null when the weight is 0); axis 'y' (left, the
    // default) or 'y1' (right: a second unit on a multi-tag chart) titled
    // axisLabel; dash a line style (TAG_DASHES); legend the legend entry
    // the series belongs to (its run name when absent).
    this.series = [];
    this.view = { smoothing: 0.6, x: 'step', logy: false, ignoreOutliers: true, focusStep: null };
    this.showAll = false;      // the user asked for the full y range
    this.outliers = null;      // {above, below} left out of the y range
    this.focusZoomed = null;   // the focus step the x range was zoomed to
    this.prepared = [];
    this.hoverPx = null;
    this.hoverPos = null;      // the mouse position the tooltip is for
    this.hoverPoints = [];
    this.focusX = null;
    this.zoomed = false;
    this.canvas = h('canvas');
    this.tooltip = h('div', { class: 'chart-tooltip', hidden: true });
    this.box = h('div', { class: 'zoom-box', hidden: true });
    // "N points above": the robust range left points out; a click shows
    // all of them (and a second click goes back).
    this.outlierBtn = h('button', { class: 'outlier-marker', hidden: true, title: 'Extreme values are outside the y range. Click to show all.',
      onclick: (e) => { e.stopPropagation(); this.showAll = !this.showAll; this.redraw(); if (this.opts.onView) this.opts.onView(); } });
    wrap.append(this.canvas, this.tooltip, this.box, this.outlierBtn);
    // opts.legend: a legend row under the chart (multi-tag charts, whose
    // lines are not one per run and so not named by the sidebar).
    this.legendEl = null;
    if (opts.legend) {
      this.legendEl = h('div', { class: 'legend-row chart-legend' });
      wrap.after(this.legendEl);
    }
    this.chart = new ChartJS(this.canvas, {
      type: 'line',
      data: { datasets: [] },
      options: {
        parsing: false,
        normalized: true,
        spanGaps: true,
        events: [],            // our own mouse handling
        plugins: { legend: { display: false }, tooltip: { enabled: false }, decimation: { enabled: false } },
        elements: { point: { radius: 0 }, line: { tension: 0 } },
        scales: {
          // includeBounds false: a zoom window's edges (51.85) are not
          // labelled, only the nice ticks inside it.
          x: { type: 'linear', title: { display: true, text: 'Step' }, ticks: { maxRotation: 0, autoSkipPadding: 12, includeBounds: false } },
          y: { type: 'linear', title: { display: !!opts.yLabel, text: opts.yLabel || '' }, ticks: { callback: linearTicks, autoSkipPadding: 6, includeBounds: false, maxTicksLimit: 8 } },
          // The second unit's axis, on the right; shown only when a series
          // is on it. Its grid would cross the left axis's: not drawn.
          y1: { type: 'linear', position: 'right', display: false, title: { display: false, text: '' }, grid: { drawOnChartArea: false }, ticks: { callback: linearTicks, autoSkipPadding: 6, includeBounds: false, maxTicksLimit: 8 } },
        },
      },
      plugins: [overlayPlugin],
    });
    this.chart.$tfb = this;
    this.canvas.$scalarChart = this;
    this._bindMouse();
    liveCharts.add(this);
  }

  destroy() {
    liveCharts.delete(this);
    this.chart.destroy();
    if (this.legendEl) this.legendEl.remove();
    clear(this.wrap);
  }

  setSeries(series) { this.series = series; this._prepare(); this.redraw(); }
  // Series and the smoothing weight their smoothed columns were asked
  // with, together, so the view never claims a weight it has not drawn.
  setData(series, smoothing) {
    this.view.smoothing = smoothing;
    this.setSeries(series);
  }
  setView(view) {
    const xChanged = view.x !== undefined && view.x !== this.view.x;
    Object.assign(this.view, view);
    if (xChanged) this.resetZoom(false);
    this._prepare();
    this.redraw();
  }

  visibleSeries() { return this.prepared; }

  // Turns raw and smoothed columns into line data (finite points only) and
  // the raw series' non-finite points into markers.
  _prepare() {
    const { x, smoothing, logy } = this.view;
    this.prepared = this.series.map((s) => {
      const c = s.cols;
      const t0 = c.n ? c.wall[0] : 0;
      const line = (cols, nonfinite) => {
        const out = [];
        for (let i = 0; i < cols.n; i++) {
          const v = cols.value[i];
          const xi = x === 'step' ? cols.step[i] : x === 'relative' ? cols.wall[i] - t0 : cols.wall[i];
          if (!Number.isFinite(v)) {
            if (nonfinite) nonfinite.push({ x: xi, step: cols.step[i], kind: Number.isNaN(v) ? 'nan' : v > 0 ? 'pos_inf' : 'neg_inf' });
            continue;
          }
          if (logy && v <= 0) continue;
          out.push({ x: xi, y: v, i, step: cols.step[i] });
        }
        return out;
      };
      const nonfinite = [];
      const raw = line(c, nonfinite);
      // The server passes non-finite points through its smoothed answer
      // too; the raw series' markers already stand for them.
      const smoothCols = smoothing > 0 && s.smooth ? s.smooth : c;
      const smoothed = smoothCols === c ? raw : line(smoothCols, null);
      // Out-of-order steps (restarted runs) would draw back-and-forth lines;
      // keep file order like TensorBoard, but the tooltip's binary search
      // needs x order, so keep sorted copies for lookup.
      const byX = (a, b) => a.x - b.x;
      const sorted = smoothed.slice().sort(byX);
      const rawSorted = smoothed === raw ? sorted : raw.slice().sort(byX);
      // The raw point at each step, for the tooltip's raw value.
      const rawAt = new Map();
      for (const q of raw) rawAt.set(q.step, q);
      // Loss spikes (the alerts plugin, issue 23): at the raw point of
      // their step; a step not drawn (downsampled away) at its own x.
      const spikes = (s.spikes || []).map((sp) => {
        const q = rawAt.get(sp.step);
        const xi = q ? q.x : x === 'step' ? sp.step : null;
        return xi === null ? null : { x: xi, step: sp.step, state: sp.state };
      }).filter(Boolean);
      return { run: s.run, color: s.color, axis: s.axis === 'y1' ? 'y1' : 'y', axisLabel: s.axisLabel || '', dash: s.dash || [], legend: s.legend || s.run,
        cols: c, smoothCols, t0, raw, smoothed, sorted, rawSorted, rawAt, nonfinite, spikes };
    });
    const f = this.view.focusStep;
    this.focusX = null;
    if (f !== null && f !== undefined && x === 'step') this.focusX = f;
  }

  redraw() {
    const ch = this.chart;
    const { smoothing, x, logy } = this.view;
    const ds = [];
    // A series of one point has no line to draw: it is a marker (the
    // hparam/* scalars add_hparams writes, a metric logged once).
    const dot = (n, c) => (n <= 1 ? { pointRadius: 3.5, pointBackgroundColor: c, pointBorderColor: c } : {});
    for (const p of this.prepared) {
      const style = { yAxisID: p.axis, borderDash: p.dash };
      if (smoothing > 0 && p.raw.length > 1) {
        ds.push({ label: p.run, data: p.smoothed, borderColor: p.color, borderWidth: 1.6, order: 0, ...style, ...dot(p.smoothed.length, p.color) });
        ds.push({ label: p.run + ' (raw)', data: p.raw, borderColor: withAlpha(p.color, 0.25), borderWidth: 1, order: 1, ...style });
      } else {
        ds.push({ label: p.run, data: p.raw, borderColor: p.color, borderWidth: 1.6, order: 0, ...style, ...dot(p.raw.length, p.color) });
      }
    }
    ch.data.datasets = ds;
    const sx = ch.options.scales.x, sy = ch.options.scales.y, sy1 = ch.options.scales.y1;
    // Two units (a multi-tag chart of loss and accuracy): each its own
    // axis, titled, so neither is squeezed into a band of the other's.
    const right = this.prepared.find((p) => p.axis === 'y1');
    const left = this.prepared.find((p) => p.axis === 'y');
    sy1.display = !!right;
    sy1.title.display = !!right;
    sy1.title.text = right ? right.axisLabel : '';
    if (!this.opts.yLabel) { sy.title.display = !!(right && left); sy.title.text = right && left ? left.axisLabel : ''; }
    sx.title.text = xAxisTitle(x);
    sx.ticks.callback = xTickFormatter(x);
    for (const a of [sy, sy1]) {
      a.type = logy ? 'logarithmic' : 'linear';
      a.ticks.callback = logy ? logTicks : linearTicks;
    }
    this.outliers = null;
    // "Show it" (the health banner): zoom x once to the steps around the
    // focus step, so the step where the run broke is in the middle.
    const f = this.focusX;
    if (f !== null && x === 'step' && this.focusZoomed !== f && !this.zoomed) {
      let lo = Infinity, hi = -Infinity;
      for (const p of this.prepared) for (const q of p.raw) { if (q.x < lo) lo = q.x; if (q.x > hi) hi = q.x; }
      if (Number.isFinite(lo)) {
        const d = Math.max(5, (Math.max(hi, f) - lo) * 0.15);
        this.focusZoomed = f;
        this.zoomed = true;
        sx.min = Math.floor(Math.max(lo, f - d)); sx.max = Math.ceil(f + d);
      }
    }
    if (!this.zoomed) {
      delete sx.min; delete sx.max;
      // Every point at one x (a one-step run): half a step either side,
      // not Chart.js's -1..1 with ticks at -0.8.
      let one = null, many = false;
      for (const p of this.prepared) for (const q of p.raw) { if (one === null) one = q.x; else if (q.x !== one) { many = true; break; } }
      if (one !== null && !many) { sx.min = one - (x === 'step' ? 0.5 : 1); sx.max = one + (x === 'step' ? 0.5 : 1); }
    }
    // Steps are whole numbers: no tick at step 2.5.
    sx.ticks.precision = x === 'step' ? 0 : undefined;
    if (!this.zoomed || this.focusZoomed !== null) {
      // Each axis's range from its own series; the outlier counts add up.
      let outl = null;
      for (const [id, a] of [['y', sy], ['y1', sy1]]) {
        const o = this._yRange(id, a, sx);
        if (o) outl = outl ? { above: outl.above + o.above, below: outl.below + o.below, ...(o.shown ? { shown: true } : {}) } : o;
      }
      this.outliers = outl;
    }
    this._markOutliers();
    ch.update('none');
    this._legend();
    this._rehover();
  }

  // The y range of axis `id` (scale options a) from the raw points of its
  // series in the x window: robust (README "Robust y range") unless the
  // user asked for all. Returns the outliers it left out, or null.
  _yRange(id, a, sx) {
    const { logy, ignoreOutliers } = this.view;
    delete a.min; delete a.max;
    // The raw points in the x window decide the y range (the smoothed
    // line lies within them; counted twice, a diverged run's last points
    // would pass for a tenth of the chart).
    const x0 = sx.min ?? -Infinity, x1 = sx.max ?? Infinity;
    const vals = [];
    let lo = Infinity, hi = -Infinity;
    for (const p of this.prepared) {
      if (p.axis !== id) continue;
      for (const q of p.raw) {
        if (q.x < x0 || q.x > x1) continue;
        vals.push(q.y);
        if (q.y < lo) lo = q.y;
        if (q.y > hi) hi = q.y;
      }
    }
    let out = null;
    const r = ignoreOutliers ? robustRange(vals, logy) : null;
    if (r && !this.showAll) {
      out = { above: r.above, below: r.below };
      lo = r.lo; hi = r.hi;
    } else if (r) {
      out = { above: r.above, below: r.below, shown: true };
    }
    if (Number.isFinite(lo) && Number.isFinite(hi) && !logy) {
      // Limits on the nice step just outside the data: the air is the
      // rounding (an accuracy ending at 0.98 gets 1, not 1.1).
      [a.min, a.max] = niceRange(lo, hi, 10);
    } else if (Number.isFinite(lo) && logy && lo > 0) {
      a.min = Math.pow(10, Math.floor(Math.log10(lo)));
      a.max = Math.pow(10, Math.ceil(Math.log10(hi)));
      if (a.max <= a.min) a.max = a.min * 10;
    }
    return out;
  }

  // The legend row (opts.legend): one entry per legend name with its line
  // style, in the run's colour when all its series share one; at most
  // LEGEND_MAX_ITEMS entries and LEGEND_MAX_HEIGHT of the plot's height,
  // the rest counted in "+N more" (their names in its title).
  _legend() {
    const el = this.legendEl;
    if (!el) return;
    clear(el);
    const items = new Map();
    for (const p of this.prepared) {
      const it = items.get(p.legend);
      if (!it) items.set(p.legend, { label: p.legend, dash: p.dash, color: p.color, axis: p.axis });
      else if (it.color !== p.color) it.color = null;
    }
    const two = this.prepared.some((p) => p.axis === 'y1') && this.prepared.some((p) => p.axis === 'y');
    const list = [...items.values()];
    const nodes = list.map((it) => {
      const c = it.color || themeColor('--text');
      const sample = h('span', { class: 'line-swatch', style: { borderTop: `2px ${it.dash.length ? (it.dash[0] <= 2 ? 'dotted' : 'dashed') : 'solid'} ${c}` } });
      return h('span', { class: 'legend-item', title: it.label }, sample, it.label + (two ? (it.axis === 'y1' ? ' (right axis)' : ' (left axis)') : ''));
    });
    const more = h('span', { class: 'legend-more muted' });
    let shown = Math.min(nodes.length, LEGEND_MAX_ITEMS);
    const fill = () => {
      clear(el);
      for (let i = 0; i < shown; i++) el.appendChild(nodes[i]);
      if (shown < nodes.length) {
        more.textContent = `+${nodes.length - shown} more`;
        more.title = list.slice(shown).map((it) => it.label).join('\n');
        el.appendChild(more);
      }
    };
    fill();
    // Long names wrap: fewer entries until the legend fits its share of
    // the plot (a hidden card measures 0 and keeps the count cap).
    const maxH = (this.wrap.clientHeight || 0) * LEGEND_MAX_HEIGHT;
    while (maxH > 0 && shown > 1 && el.offsetHeight > maxH) { shown--; fill(); }
    this.legendInfo = { items: nodes.length, shown };
  }

  _markOutliers() {
    const o = this.outliers, b = this.outlierBtn;
    if (!o) { b.hidden = true; return; }
    const parts = [];
    if (o.above) parts.push(`${o.above} point${o.above === 1 ? '' : 's'} above`);
    if (o.below) parts.push(`${o.below} below`);
    b.textContent = o.shown ? 'Robust y range' : (o.above ? '▲ ' : '▼ ') + parts.join(', ') + ' · show all';
    b.hidden = false;
  }

  // New data or a new x range moves the points under a resting mouse: list
  // what is under it now rather than the points it was over before.
  _rehover() {
    if (this.hoverPos) this._hover(this.hoverPos);
  }

  resetZoom(redraw = true) {
    this.zoomed = false;
    // The focus zoom happened; a reset shows the whole run.
    if (this.focusZoomed === null && this.focusX !== null) this.focusZoomed = this.focusX;
    const { x: sx, y: sy, y1: sy1 } = this.chart.options.scales;
    delete sx.min; delete sx.max; delete sy.min; delete sy.max; delete sy1.min; delete sy1.max;
    if (redraw) this.redraw();
    if (this.opts.onZoom) this.opts.onZoom(null);
  }

  // y2: the same box on the right axis ([lo, hi]) when it is shown.
  zoomTo(x0, x1, y0, y1, y2 = null) {
    const { x: sx, y: sy, y1: sy1 } = this.chart.options.scales;
    sx.min = x0; sx.max = x1;
    if (y0 !== null) { sy.min = y0; sy.max = y1; } else { delete sy.min; delete sy.max; }
    if (y0 !== null && y2) { sy1.min = y2[0]; sy1.max = y2[1]; } else { delete sy1.min; delete sy1.max; }
    this.zoomed = true;
    this.focusZoomed = null;
    this.outliers = null;
    this._markOutliers();
    this.chart.update('none');
    this._rehover();
    if (this.opts.onZoom) this.opts.onZoom([x0, x1]);
  }

  // What the chart holds, for tests and the debug hook.
  summary() {
    const runs = {};
    for (const p of this.prepared) {
      const nf = { nan: 0, pos_inf: 0, neg_inf: 0 };
      for (const m of p.nonfinite) nf[m.kind]++;
      let min = Infinity, max = -Infinity;
      for (const q of p.raw) { if (q.y < min) min = q.y; if (q.y > max) max = q.y; }
      runs[p.run] = {
        points: p.cols.n, line: p.raw.length, nonfinite: nf, min, max,
        spikes: (p.spikes || []).map((m) => m.step),
        lastRaw: p.raw.length ? p.raw[p.raw.length - 1].y : null,
        lastSmoothed: p.smoothed.length ? p.smoothed[p.smoothed.length - 1].y : null,
        // The drawn line as [step, value] pairs (the smoothed line when
        // smoothing is on, else the raw one), for the tests.
        smoothed: p.smoothed.map((q) => [q.step, q.y]),
        axis: p.axis, dash: p.dash.slice(), color: p.color,
      };
    }
    return {
      runs,
      datasets: this.chart.data.datasets.map((d) => ({ label: d.label, n: d.data.length, pointRadius: d.pointRadius || 0 })),
      // The labels drawn on the axes (empty strings are skipped ticks).
      ticks: { x: (this.chart.scales.x.ticks || []).map((t) => t.label), y: (this.chart.scales.y.ticks || []).map((t) => t.label) },
      view: { ...this.view },
      zoomed: this.zoomed,
      outliers: this.outliers ? { ...this.outliers } : null,
      showAll: this.showAll,
      scales: { x: [this.chart.scales.x.min, this.chart.scales.x.max], y: [this.chart.scales.y.min, this.chart.scales.y.max], yType: this.chart.scales.y.type,
        y1: this.chart.options.scales.y1.display ? [this.chart.scales.y1.min, this.chart.scales.y1.max] : null,
        titles: { y: this.chart.options.scales.y.title.display ? this.chart.options.scales.y.title.text : '', y1: this.chart.options.scales.y1.title.display ? this.chart.options.scales.y1.title.text : '' } },
      legend: this.legendInfo || null,
    };
  }

  // What "Export this view" (core/export.js) needs to draw this chart again
  // offline: the datasets as drawn (the same downsampled points), the axis
  // ranges and kinds, and the non-finite markers.
  exportSpec() {
    const ch = this.chart;
    return {
      datasets: ch.data.datasets.map((d) => ({
        label: d.label, borderColor: d.borderColor, borderWidth: d.borderWidth, order: d.order,
        yAxisID: d.yAxisID || 'y', borderDash: d.borderDash || [],
        pointRadius: d.pointRadius || 0, data: d.data.map((q) => [q.x, q.y]),
      })),
      x: { mode: this.view.x, title: ch.options.scales.x.title.text, min: ch.scales.x.min, max: ch.scales.x.max },
      y: { log: !!this.view.logy, title: ch.options.scales.y.title.display ? ch.options.scales.y.title.text || '' : '', min: ch.scales.y.min, max: ch.scales.y.max },
      // The second unit's axis (a multi-tag chart), or null.
      y1: ch.options.scales.y1.display ? { title: ch.options.scales.y1.title.text || '', min: ch.scales.y1.min, max: ch.scales.y1.max } : null,
      legend: !!this.legendEl,
      outliers: this.outliers ? { ...this.outliers } : null,
      nonfinite: this.prepared.map((p) => ({ color: p.color, marks: p.nonfinite.map((m) => [m.x, m.kind]) })),
      ticks: { x: (ch.scales.x.ticks || []).map((t) => t.label), y: (ch.scales.y.ticks || []).map((t) => t.label) },
    };
  }

  _bindMouse() {
    const cv = this.canvas;
    let drag = null;
    const pos = (e) => {
      const r = cv.getBoundingClientRect();
      return { x: e.clientX - r.left, y: e.clientY - r.top };
    };
    const inArea = (p) => {
      const a = this.chart.chartArea;
      return a && p.x >= a.left && p.x <= a.right && p.y >= a.top && p.y <= a.bottom;
    };
    cv.addEventListener('mousedown', (e) => {
      if (e.button !== 0) return;
      const p = pos(e);
      if (!inArea(p)) return;
      drag = { x0: p.x, y0: p.y, x1: p.x, y1: p.y };
      e.preventDefault();
    });
    window.addEventListener('mousemove', (e) => {
      if (!drag) return;
      const a = this.chart.chartArea;
      const p = pos(e);
      drag.x1 = Math.min(Math.max(p.x, a.left), a.right);
      drag.y1 = Math.min(Math.max(p.y, a.top), a.bottom);
      Object.assign(this.box.style, {
        left: Math.min(drag.x0, drag.x1) + 'px', top: Math.min(drag.y0, drag.y1) + 'px',
        width: Math.abs(drag.x1 - drag.x0) + 'px', height: Math.abs(drag.y1 - drag.y0) + 'px',
      });
      this.box.hidden = false;
    });
    window.addEventListener('mouseup', () => {
      if (!drag) return;
      const d = drag;
      drag = null;
      this.box.hidden = true;
      const xs = this.chart.scales.x, ys = this.chart.scales.y;
      if (Math.abs(d.x1 - d.x0) < 5) return;
      const xa = xs.getValueForPixel(Math.min(d.x0, d.x1)), xb = xs.getValueForPixel(Math.max(d.x0, d.x1));
      let ya = null, yb = null, y2 = null;
      // A thin box zooms x only: the common "zoom into these steps" gesture.
      if (Math.abs(d.y1 - d.y0) >= 10) {
        ya = ys.getValueForPixel(Math.max(d.y0, d.y1));
        yb = ys.getValueForPixel(Math.min(d.y0, d.y1));
        const r = this.chart.options.scales.y1.display ? this.chart.scales.y1 : null;
        if (r) y2 = [r.getValueForPixel(Math.max(d.y0, d.y1)), r.getValueForPixel(Math.min(d.y0, d.y1))];
      }
      this.zoomTo(xa, xb, ya, yb, y2);
    });
    cv.addEventListener('dblclick', () => this.resetZoom());
    cv.addEventListener('mousemove', (e) => this._hover(pos(e)));
    cv.addEventListener('mouseleave', () => this._hover(null));
  }

  _hover(p) {
    this.hoverPos = p;
    if (!p || !this.chart.chartArea || p.x < this.chart.chartArea.left || p.x > this.chart.chartArea.right) {
      if (this.hoverPx !== null) { this.hoverPx = null; this.hoverPoints = []; this.tooltip.hidden = true; this.chart.draw(); }
      return;
    }
    const xs = this.chart.scales.x;
    const xv = xs.getValueForPixel(p.x);
    const rows = [];
    const pts = [];
    for (const s of this.prepared) {
      const k = nearest(s.sorted, xv);
      // Non-finite points near the cursor (within 4 px) are listed too.
      let nf = null;
      for (const m of s.nonfinite) {
        if (Math.abs(xs.getPixelForValue(m.x) - p.x) <= 4) { nf = m; break; }
      }
      if (k < 0 && !nf) continue;
      if (nf && (k < 0 || Math.abs(xs.getPixelForValue(nf.x) - p.x) < Math.abs(xs.getPixelForValue(s.sorted[k].x) - p.x))) {
        const raw = nf.kind === 'nan' ? NaN : nf.kind === 'pos_inf' ? Infinity : -Infinity;
        rows.push({ run: s.run, color: s.color, smoothed: raw, raw, step: nf.step, x: nf.x, sortKey: raw });
        continue;
      }
      const pt = s.sorted[k];
      // Only runs with a point near the hovered step: within 10 px, or
      // within the gap to the series' neighbouring points where it is
      // sparse. A run that ended at step 60 is not listed at step 150.
      const ppx = xs.getPixelForValue(pt.x);
      const nb = (j) => (j >= 0 && j < s.sorted.length ? Math.abs(xs.getPixelForValue(s.sorted[j].x) - ppx) : 0);
      const reach = Math.max(10, Math.max(nb(k - 1), nb(k + 1)) * 0.6);
      if (Math.abs(ppx - p.x) > reach) continue;
      // The raw value at the smoothed point's step. Downsampling keeps each
      // bucket's extremes of the series it was asked for, so the raw answer
      // may lack that step; then the raw point nearest in x stands in, and
      // the cell says which step it is from.
      let rp = s.rawAt.get(pt.step);
      if (!rp) rp = s.rawSorted[nearest(s.rawSorted, pt.x)];
      const w = s.smoothCols.wall[pt.i];
      rows.push({
        run: s.run, color: s.color, smoothed: pt.y, raw: rp.y, rawStep: rp.step, step: pt.step,
        wall: w, relSec: w - s.t0, sortKey: pt.y, x: pt.x,
      });
      pts.push({ x: pt.x, y: pt.y, color: s.color, axis: s.axis });
    }
    rows.sort((a, b) => (Number.isNaN(b.sortKey) ? -1 : Number.isNaN(a.sortKey) ? 1 : b.sortKey - a.sortKey));
    this.hoverPx = p.x;
    this.hoverPoints = pts;
    this._renderTooltip(rows, p);
    this.chart.draw();
  }

  _renderTooltip(rows, p) {
    const t = this.tooltip;
    clear(t);
    if (!rows.length) { t.hidden = true; return; }
    const smoothing = this.view.smoothing > 0;
    const table = h('table', null,
      h('thead', null, h('tr', null, h('th'), h('th', null, 'Run'),
        smoothing ? h('th', { class: 'num' }, 'Smoothed') : null, h('th', { class: 'num' }, 'Value'),
        h('th', { class: 'num' }, 'Step'), h('th', { class: 'num' }, 'Time'))));
    const body = h('tbody');
    for (const r of rows) {
      body.appendChild(h('tr', null,
        h('td', null, h('span', { class: 'swatch', style: { background: r.color } })),
        h('td', { class: 'run-name' }, r.run),
        smoothing ? h('td', { class: 'num' }, eng(r.smoothed)) : null,
        r.rawStep !== undefined && r.rawStep !== r.step
          ? h('td', { class: 'num', title: 'raw value at step ' + r.rawStep + ' (the nearest sampled raw point)' }, eng(r.raw))
          : h('td', { class: 'num' }, eng(r.raw)),
        h('td', { class: 'num' }, eng(r.step)),
        h('td', { class: 'num' }, r.wall !== undefined ? (this.view.x === 'wall' ? wall(r.wall) : rel(r.relSec)) : '')));
    }
    table.appendChild(body);
    t.appendChild(table);
    t.hidden = false;
    // Beside the cursor and below the plot area (position: fixed, so it may
    // leave the card), never over the lines being read; flipped to the
    // cursor's left at the window's right edge.
    const r = this.canvas.getBoundingClientRect();
    const a = this.chart.chartArea;
    const tw = t.offsetWidth, th = t.offsetHeight;
    const cx = r.left + p.x;
    let left = cx + 16;
    if (left + tw > window.innerWidth - 4) left = Math.max(4, cx - tw - 16);
    let top = r.top + a.bottom + 28;
    if (top + th > window.innerHeight - 4) top = Math.max(4, r.top + a.top - th - 8);
    t.style.left = left + 'px';
    t.style.top = top + 'px';
  }
}

// A plain Chart.js chart with the house options (other pages).
export function makeChart(canvas, config) {
  const c = new ChartJS(canvas, config);
  return c;
}
