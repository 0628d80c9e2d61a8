// The Scalars card past the many-runs threshold (issue 18): instead of one
// line per run, the server's summary=bands answer of
// /data/plugin/scalars/multirun drawn as the distribution across runs per
// step (median line, p25-p75 and p5-p95 bands), the best and worst k runs
// and the highlighted runs as lines in their colours, and every run as a
// faint density grid painted under the chart (a Chart.js plugin, so
// thousands of lines cost one grid of rectangles). A click (not a drag) on
// the plot asks the page for the runs nearest the cursor (onPick); a drag
// zooms x (and y for a tall box) locally, a double-click resets. Not a
// page: lib/ holds modules pages share.
import { h, clear } from '../core/dom.js';
import { placeTip } from '../core/tooltip.js';
import { withAlpha, themeColor, runColor } from '../core/colors.js';
import { eng, linearTicks, logTicks, niceRange } from '../core/format.js';
import { num } from '../core/api.js';
import { robustRange } from '../core/charts.js';

const ChartJS = window.Chart;
const QS = ['p5', 'p25', 'p50', 'p75', 'p95'];

// Tags where a higher value is the better one: their "best" runs are the
// server's highest (its `worst`), and the other way round.
const HIGHER_IS_BETTER = /acc|auc|score|precision|recall|f1|reward|return|iou|bleu|map\b/i;
export function higherIsBetter(tag) { return HIGHER_IS_BETTER.test(tag || ''); }

// The bands answer as typed columns; non-finite strings become numbers.
// The server's best are the lowest last values; for a tag where higher is
// better the two lists swap, so "best" always means best.
export function parseBands(ans) {
  const b = ans.bands || {};
  const n = (b.step || []).length;
  // A bucket no run reaches has null quantiles: NaN here, left out when drawn.
  const col = (k) => Float64Array.from(b[k] || [], (v) => (v === null ? NaN : num(v)));
  const out = { n, step: col('step'), count: col('n') };
  for (const q of QS) out[q] = col(q);
  const series = [];
  const up = higherIsBetter(ans.tag);
  const best = new Set((up ? ans.worst : ans.best) || []), worst = new Set((up ? ans.best : ans.worst) || []);
  for (const [run, rows] of Object.entries(ans.series || {})) {
    const pts = [];
    const nonfinite = [];
    for (const r of rows) {
      const st = num(r[1]), v = num(r[2]);
      if (Number.isFinite(v)) pts.push({ x: st, y: v, step: st });
      else nonfinite.push({ x: st, kind: Number.isNaN(v) ? 'nan' : v > 0 ? 'pos_inf' : 'neg_inf' });
    }
    series.push({ run, pts, nonfinite, role: best.has(run) ? 'best' : worst.has(run) ? 'worst' : 'highlight' });
  }
  const d = ans.density || null;
  const density = d && d.nx > 0 && d.ny > 0 && Array.isArray(d.counts) && d.counts.length === d.nx * d.ny
    ? { step0: num(d.step0), step1: num(d.step1), v0: num(d.v0), v1: num(d.v1), nx: d.nx, ny: d.ny, counts: Uint32Array.from(d.counts) }
    : null;
  const nonfinite = Object.entries(ans.nonfinite || {}).map(([run, st]) => ({ run, step: num(st) }));
  return { runs: ans.runs || 0, bands: out, series, best: [...best], worst: [...worst], density, nonfinite };
}

// The density's cells as an nx x ny canvas (row iy = value bucket iy),
// each cell's alpha as the grid's rule; kept on the chart for its answer
// and colour.
function densityImage(self, d, rgb, lmax) {
  const c = self.densityGrid;
  if (c && c.d === d && c.rgb === rgb) return c.canvas;
  if (typeof document === 'undefined') return null;
  const canvas = document.createElement('canvas');
  canvas.width = d.nx;
  canvas.height = d.ny;
  const g = canvas.getContext('2d');
  const img = g.createImageData(d.nx, d.ny);
  const [r, gr, b] = rgb.split(',').map(Number);
  for (let i = 0; i < d.counts.length; i++) {
    const n = d.counts[i];
    if (!n) continue;
    img.data[i * 4] = r; img.data[i * 4 + 1] = gr; img.data[i * 4 + 2] = b;
    img.data[i * 4 + 3] = Math.round(255 * (0.06 + 0.5 * Math.log1p(n) / lmax));
  }
  g.putImageData(img, 0, 0);
  self.densityGrid = { d, rgb, canvas };
  return canvas;
}

// Paints the density grid under the datasets: each cell's opacity grows
// with the log of its count, so a lone diverged run stays visible next to
// a cell holding a thousand runs.
const densityPlugin = {
  id: 'tfbDensity',
  beforeDatasetsDraw(chart) {
    const self = chart.$tfbBands;
    const d = self && self.data && self.data.density;
    if (!d) return;
    const { ctx, chartArea: a, scales: { x: xs, y: ys } } = chart;
    let max = 0;
    for (const c of d.counts) if (c > max) max = c;
    if (!max) return;
    const lmax = Math.log1p(max);
    const dx = (d.step1 - d.step0) / d.nx, dv = (d.v1 - d.v0) / d.ny;
    // A grid over the whole value range (step-0 spikes of thousands) whose
    // one row is taller than the robust view says nothing about where the
    // runs are in it: it would only tint the plot grey. Left out then.
    if (!self.view.logy && dv > ys.max - ys.min) return;
    const rgb = self.densityColor;
    ctx.save();
    ctx.beginPath(); ctx.rect(a.left, a.top, a.right - a.left, a.bottom - a.top); ctx.clip();
    // The cells as one nx x ny image, made once per answer and colour and
    // drawn a row at a time, stretched over the row's steps: 16,000
    // fillRects with their own colour strings were most of a first screen's
    // script (690 ms at 10,000 runs, issue 28). The steps' axis is linear;
    // a cell narrower than a pixel still shows, as before, at 1 px.
    const grid = xs.type === 'linear' ? densityImage(self, d, rgb, lmax) : null;
    const x0 = grid ? xs.getPixelForValue(d.step0) : 0, x1 = grid ? xs.getPixelForValue(d.step1) : 0;
    if (grid) ctx.imageSmoothingEnabled = false;
    for (let iy = 0; iy < d.ny; iy++) {
      const va = d.v0 + iy * dv, vb = va + dv;
      if (self.logy && vb <= 0) continue;
      const ya = ys.getPixelForValue(self.logy ? Math.max(va, vb * 1e-3) : va), yb = ys.getPixelForValue(vb);
      const top = Math.min(ya, yb), hgt = Math.max(1, Math.abs(yb - ya));
      if (grid) {
        ctx.drawImage(grid, 0, iy, d.nx, 1, Math.min(x0, x1), top, Math.max(1, Math.abs(x1 - x0)), hgt);
        continue;
      }
      for (let ix = 0; ix < d.nx; ix++) {
        const c = d.counts[iy * d.nx + ix];
        if (!c) continue;
        const xa = xs.getPixelForValue(d.step0 + ix * dx), xb = xs.getPixelForValue(d.step0 + (ix + 1) * dx);
        ctx.fillStyle = `rgba(${rgb},${(0.06 + 0.5 * Math.log1p(c) / lmax).toFixed(3)})`;
        ctx.fillRect(Math.min(xa, xb), top, Math.max(1, Math.abs(xb - xa)), hgt);
      }
    }
    ctx.restore();
  },
  afterDatasetsDraw(chart) {
    const self = chart.$tfbBands;
    if (!self || !self.data) return;
    const { ctx, chartArea: a, scales: { x: xs, y: ys } } = chart;
    ctx.save();
    ctx.font = 'bold 11px ' + ChartJS.defaults.font.family;
    ctx.textAlign = 'center';
    // Non-finite values of any run: one ✕ per run at its first such step.
    ctx.fillStyle = themeColor('--danger');
    ctx.textBaseline = 'top';
    for (const m of self.data.nonfinite) {
      if (m.step < xs.min || m.step > xs.max) continue;
      ctx.fillText('✕', xs.getPixelForValue(m.step), a.top + 2);
    }
    for (const s of self.data.series) {
      ctx.fillStyle = runColor(s.run);
      for (const m of s.nonfinite) {
        if (m.x < xs.min || m.x > xs.max) continue;
        const px = xs.getPixelForValue(m.x);
        if (m.kind === 'neg_inf') { ctx.textBaseline = 'bottom'; ctx.fillText('▼', px, a.bottom); }
        else { ctx.textBaseline = 'top'; ctx.fillText(m.kind === 'pos_inf' ? '▲' : '✕', px, a.top + (m.kind === 'nan' ? 12 : 0)); }
      }
    }
    if (self.hoverPx !== null) {
      ctx.strokeStyle = themeColor('--muted');
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(self.hoverPx + 0.5, a.top); ctx.lineTo(self.hoverPx + 0.5, a.bottom); ctx.stroke();
    }
    if (self.pick) {
      const px = xs.getPixelForValue(self.pick.step), py = ys.getPixelForValue(self.pick.value);
      ctx.strokeStyle = themeColor('--accent');
      ctx.lineWidth = 1.5;
      ctx.beginPath(); ctx.arc(px, py, 6, 0, 2 * Math.PI); ctx.stroke();
    }
    ctx.restore();
  },
};

function lowerBound(arr, x) {
  let lo = 0, hi = arr.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (arr[mid] < x) lo = mid + 1; else hi = mid; }
  return lo;
}

export class BandChart {
  // wrap: the element the chart fills; opts.onPick({step, value}) for a
  // click on the plot.
  constructor(wrap, opts = {}) {
    this.wrap = wrap;
    this.opts = opts;
    this.data = null;
    this.view = { logy: false, ignoreOutliers: false };
    this.hoverPx = null;
    this.pick = null;
    this.zoomed = false;
    this.densityColor = '120,120,120';
    this.canvas = h('canvas');
    this.tooltip = h('div', { class: 'chart-tooltip', hidden: true });
    this.box = h('div', { class: 'zoom-box', hidden: true });
    wrap.append(this.canvas, this.tooltip, this.box);
    this.chart = new ChartJS(this.canvas, {
      type: 'line',
      data: { datasets: [] },
      options: {
        parsing: false, normalized: true, spanGaps: true, events: [],
        plugins: { legend: { display: false }, tooltip: { enabled: false }, decimation: { enabled: false }, filler: { propagate: false } },
        elements: { point: { radius: 0 }, line: { tension: 0 } },
        scales: {
          x: { type: 'linear', title: { display: true, text: 'Step' }, ticks: { maxRotation: 0, autoSkipPadding: 12, callback: linearTicks } },
          y: { type: 'linear', ticks: { callback: linearTicks } },
        },
      },
      plugins: [densityPlugin],
    });
    this.chart.$tfbBands = this;
    this._bindMouse();
  }

  destroy() {
    window.removeEventListener('mousemove', this._onMove);
    window.removeEventListener('mouseup', this._onUp);
    this.chart.destroy();
    clear(this.wrap);
  }

  setData(data) { this.data = data; this.redraw(); }
  setView(view) { Object.assign(this.view, view); this.redraw(); }

  redraw() {
    const d = this.data;
    if (!d) return;
    const logy = this.view.logy;
    const accent = themeColor('--accent') || '#f57c00';
    const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec((themeColor('--muted') || '').trim());
    this.densityColor = m ? [1, 2, 3].map((i) => parseInt(m[i], 16)).join(',') : '120,120,120';
    const b = d.bands;
    const col = (q) => {
      const out = [];
      for (let i = 0; i < b.n; i++) {
        const v = b[q][i];
        if (Number.isFinite(v) && (!logy || v > 0)) out.push({ x: b.step[i], y: v });
      }
      return out;
    };
    const ds = [
      { label: 'p5', data: col('p5'), borderWidth: 0, borderColor: 'transparent', order: 5 },
      { label: 'p95', data: col('p95'), borderWidth: 0, borderColor: 'transparent', backgroundColor: withAlpha(accent, 0.13), fill: '-1', order: 5 },
      { label: 'p25', data: col('p25'), borderWidth: 0, borderColor: 'transparent', order: 4 },
      { label: 'p75', data: col('p75'), borderWidth: 0, borderColor: 'transparent', backgroundColor: withAlpha(accent, 0.28), fill: '-1', order: 4 },
      { label: 'median', data: col('p50'), borderColor: accent, borderWidth: 2, order: 1 },
    ];
    for (const s of d.series) {
      const pts = logy ? s.pts.filter((p) => p.y > 0) : s.pts;
      const hl = s.role === 'highlight';
      ds.push({ label: s.run, data: pts, borderColor: runColor(s.run), borderWidth: hl ? 2.2 : 1.2,
        borderDash: s.role === 'worst' ? [5, 3] : undefined, order: hl ? 0 : 2 });
    }
    this.chart.data.datasets = ds;
    const sy = this.chart.options.scales.y, sx = this.chart.options.scales.x;
    sy.type = logy ? 'logarithmic' : 'linear';
    sy.ticks.callback = logy ? logTicks : linearTicks;
    if (!this.zoomed) {
      delete sx.min; delete sx.max; delete sy.min; delete sy.max;
      // The first view follows the median: the robust range single charts
      // use (core/charts.js robustRange) over every drawn value (quantiles
      // and lines), so step-0 spikes of a few runs (p95 at 12,000 over
      // losses of 0.1 to 3) do not flatten the median; failing that, the
      // p5-p95 envelope, so a diverged worst run does not either.
      const r = this.view.ignoreOutliers ? robustRange(this.drawnValues(ds, logy), logy) : null;
      if (r && r.lo < r.hi) {
        const pad = (r.hi - r.lo) * 0.05;
        if (logy) { sy.min = r.lo / 1.2; sy.max = r.hi * 1.2; } else [sy.min, sy.max] = niceRange(r.lo - pad, r.hi + pad, 10);
        this.outliers = { above: r.above, below: r.below };
      } else if (this.view.ignoreOutliers && b.n) {
        this.outliers = null;
        let lo = Infinity, hi = -Infinity;
        for (let i = 0; i < b.n; i++) {
          if (Number.isFinite(b.p5[i]) && (!logy || b.p5[i] > 0)) lo = Math.min(lo, b.p5[i]);
          if (Number.isFinite(b.p95[i])) hi = Math.max(hi, b.p95[i]);
        }
        if (lo < hi) {
          const pad = (hi - lo) * 0.1;
          if (logy) { sy.min = lo / 2; sy.max = hi + pad; } else [sy.min, sy.max] = niceRange(lo - pad, hi + pad, 10);
        }
      }
    }
    this.chart.update('none');
  }

  resetZoom() {
    this.zoomed = false;
    this.redraw();
  }

  // The finite values of the drawn datasets (the quantiles and the lines).
  drawnValues(ds, logy) {
    const out = [];
    for (const d of ds) for (const p of d.data) if (Number.isFinite(p.y) && (!logy || p.y > 0)) out.push(p.y);
    return out;
  }

  // What the chart holds, for tests and the debug hook.
  summary() {
    const d = this.data;
    if (!d) return { mode: 'bands', runs: 0 };
    return {
      mode: 'bands', runs: d.runs, steps: d.bands.n,
      median: Array.from(d.bands.p50.slice(0, 5)),
      medianRange: (() => { const m = Array.from(d.bands.p50).filter(Number.isFinite); return m.length ? [Math.min(...m), Math.max(...m)] : null; })(),
      outliers: this.outliers || null,
      lines: d.series.map((s) => ({ run: s.run, role: s.role, points: s.pts.length })),
      best: d.best, worst: d.worst,
      density: d.density ? { nx: d.density.nx, ny: d.density.ny, total: d.density.counts.reduce((a, c) => a + c, 0) } : null,
      nonfinite: d.nonfinite.length, pick: this.pick, zoomed: this.zoomed,
      datasets: this.chart.data.datasets.map((x) => ({ label: x.label, n: x.data.length })),
      view: { ...this.view },
      scales: { x: [this.chart.scales.x.min, this.chart.scales.x.max], y: [this.chart.scales.y.min, this.chart.scales.y.max], yType: this.chart.scales.y.type },
    };
  }

  _bindMouse() {
    const cv = this.canvas;
    let drag = null;
    const pos = (e) => { const r = cv.getBoundingClientRect(); return { x: e.clientX - r.left, y: e.clientY - r.top }; };
    const inArea = (p) => { const a = this.chart.chartArea; return a && p.x >= a.left && p.x <= a.right && p.y >= a.top && p.y <= a.bottom; };
    cv.addEventListener('mousedown', (e) => {
      if (e.button !== 0) return;
      const p = pos(e);
      if (!inArea(p)) return;
      drag = { x0: p.x, y0: p.y, x1: p.x, y1: p.y };
      e.preventDefault();
    });
    this._onMove = (e) => {
      if (!drag) return;
      const a = this.chart.chartArea;
      const p = pos(e);
      drag.x1 = Math.min(Math.max(p.x, a.left), a.right);
      drag.y1 = Math.min(Math.max(p.y, a.top), a.bottom);
      Object.assign(this.box.style, { left: Math.min(drag.x0, drag.x1) + 'px', top: Math.min(drag.y0, drag.y1) + 'px',
        width: Math.abs(drag.x1 - drag.x0) + 'px', height: Math.abs(drag.y1 - drag.y0) + 'px' });
      this.box.hidden = Math.abs(drag.x1 - drag.x0) < 5;
    };
    this._onUp = () => {
      if (!drag) return;
      const d = drag;
      drag = null;
      this.box.hidden = true;
      const xs = this.chart.scales.x, ys = this.chart.scales.y;
      if (Math.abs(d.x1 - d.x0) < 5 && Math.abs(d.y1 - d.y0) < 5) {
        // A click: the runs nearest this (step, value).
        this.pick = { step: Math.round(xs.getValueForPixel(d.x0)), value: ys.getValueForPixel(d.y0) };
        this.chart.draw();
        if (this.opts.onPick) this.opts.onPick(this.pick);
        return;
      }
      if (Math.abs(d.x1 - d.x0) < 5) return;
      const sx = this.chart.options.scales.x, sy = this.chart.options.scales.y;
      sx.min = xs.getValueForPixel(Math.min(d.x0, d.x1)); sx.max = xs.getValueForPixel(Math.max(d.x0, d.x1));
      if (Math.abs(d.y1 - d.y0) >= 10) { sy.min = ys.getValueForPixel(Math.max(d.y0, d.y1)); sy.max = ys.getValueForPixel(Math.min(d.y0, d.y1)); }
      this.zoomed = true;
      this.chart.update('none');
    };
    window.addEventListener('mousemove', this._onMove);
    window.addEventListener('mouseup', this._onUp);
    cv.addEventListener('dblclick', () => this.resetZoom());
    cv.addEventListener('mousemove', (e) => this._hover(pos(e)));
    cv.addEventListener('mouseleave', () => this._hover(null));
  }

  // Cross-hair and a tooltip: the percentiles at the nearest step, then
  // every drawn run there, sorted by value.
  _hover(p) {
    const a = this.chart.chartArea;
    if (!p || !a || !this.data || p.x < a.left || p.x > a.right) {
      if (this.hoverPx !== null) { this.hoverPx = null; this.tooltip.hidden = true; this.chart.draw(); }
      return;
    }
    const b = this.data.bands;
    const xv = this.chart.scales.x.getValueForPixel(p.x);
    let i = Math.min(lowerBound(b.step, xv), b.n - 1);
    if (i > 0 && xv - b.step[i - 1] < b.step[i] - xv) i--;
    this.hoverPx = p.x;
    const t = this.tooltip;
    clear(t);
    if (i < 0 || !b.n) { t.hidden = true; this.chart.draw(); return; }
    const st = b.step[i];
    const body = h('tbody');
    body.append(h('tr', null, h('td', null, h('span', { class: 'swatch', style: { background: themeColor('--accent') } })),
      h('td', null, 'median'), h('td', { class: 'num' }, eng(b.p50[i])), h('td', { class: 'num muted' }, `n=${b.count[i]}`)));
    body.append(h('tr', null, h('td'), h('td', null, 'p25 – p75'), h('td', { class: 'num' }, `${eng(b.p25[i])} – ${eng(b.p75[i])}`), h('td')));
    body.append(h('tr', null, h('td'), h('td', null, 'p5 – p95'), h('td', { class: 'num' }, `${eng(b.p5[i])} – ${eng(b.p95[i])}`), h('td')));
    const rows = [];
    for (const s of this.data.series) {
      let best = null;
      for (const q of s.pts) if (best === null || Math.abs(q.x - st) < Math.abs(best.x - st)) best = q;
      if (best) rows.push({ run: s.run, role: s.role, v: best.y, step: best.step });
    }
    rows.sort((x, y) => y.v - x.v);
    for (const r of rows) {
      body.append(h('tr', null, h('td', null, h('span', { class: 'swatch', style: { background: runColor(r.run) } })),
        h('td', { class: 'run-name' }, r.run), h('td', { class: 'num' }, eng(r.v)), h('td', { class: 'num muted' }, r.role === 'highlight' ? 'picked' : r.role)));
    }
    t.append(h('div', { class: 'muted small' }, 'step ' + eng(st)), h('table', null, body));
    t.hidden = false;
    // p is in the canvas's coordinates, the tooltip is position: fixed.
    const r = this.canvas.getBoundingClientRect();
    placeTip(t, r.left + p.x, r.top + p.y);
    this.chart.draw();
  }
}

