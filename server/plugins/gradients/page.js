// Gradients dashboard: per-layer gradient L2 norms of one run as a
// layer × step heat map on a log colour scale (viridis), with the cells the
// server flagged (vanishing, exploding, non-finite) outlined, the global norm
// as a line below, and values on hover. Data: /data/plugin/gradients/norms.
import { h, clear } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { eng, logTicks, niceStep, scaleEnd, tickLabel } from '../core/format.js';
import { viridis, themeColor } from '../core/colors.js';
import { makeChart } from '../core/charts.js';
import { COLOR, sizeCanvas } from '../lib/plot.js';
import { pickRun, mountRunPage, updateRunPage, loadLatest } from '../lib/run_pick.js';
import { SCALAR_TAGS } from '../lib/catalog.js';

function gradRuns(data) {
  return data.runs.filter((r) => Object.keys(data.scalarTags[r] || {}).some((t) => t.startsWith(data.tagNames.grad_norm_prefix)));
}

const FLAG_COLOR = { vanishing: COLOR.blue, exploding: COLOR.red, nonfinite: COLOR.red };
const LABEL_W = 150;

// Columns of the heat map: at most one per 3 px; a column covering several
// steps shows the largest norm and keeps any flag, so spikes stay visible.
function columns(d, maxCols) {
  const n = d.steps.length;
  const per = Math.max(1, Math.ceil(n / maxCols));
  const cols = [];
  for (let i = 0; i < n; i += per) cols.push({ from: i, to: Math.min(n, i + per) });
  return { cols, per };
}

class HeatMap {
  constructor(wrap, d, flags) {
    this.d = d;
    this.flags = flags;
    this.canvas = h('canvas', { class: 'plain', id: 'grad-heatmap' });
    this.tip = h('div', { class: 'chart-tooltip', hidden: true });
    wrap.append(this.canvas, this.tip);
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => { this.tip.hidden = true; });
    this.draw();
  }
  draw() {
    const d = this.d;
    const L = d.layers.length;
    const rowH = Math.max(10, Math.min(22, Math.floor(420 / Math.max(1, L))));
    const { ctx, W } = sizeCanvas(this.canvas, L * rowH + 30);
    const pw = W - LABEL_W - 10;
    const { cols } = columns(d, Math.max(1, Math.floor(pw / 3)));
    const cw = pw / Math.max(1, cols.length);
    // Log colour range over every finite positive norm.
    let lo = Infinity, hi = -Infinity;
    for (const row of d.norms) for (const v of row) if (v > 0 && Number.isFinite(v)) { const l = Math.log10(v); if (l < lo) lo = l; if (l > hi) hi = l; }
    if (!(hi > lo)) { hi = (Number.isFinite(hi) ? hi : 0) + 0.5; lo = hi - 1; }
    this.range = [lo, hi];
    ctx.textBaseline = 'middle';
    const muted = themeColor('--muted');
    this.geom = { rowH, cw, cols, pw };
    for (let li = 0; li < L; li++) {
      const y = li * rowH;
      ctx.fillStyle = muted;
      ctx.textAlign = 'right';
      let name = d.layers[li];
      while (ctx.measureText(name).width > LABEL_W - 12 && name.length > 4) name = '…' + name.slice(2);
      ctx.fillText(name, LABEL_W - 8, y + rowH / 2);
      const row = d.norms[li];
      const flagRow = this.flags.get(d.layers[li]);
      for (let ci = 0; ci < cols.length; ci++) {
        const c = cols[ci];
        let best = null, nonfinite = false, flag = null;
        for (let i = c.from; i < c.to; i++) {
          const v = row[i];
          if (v === null || v === undefined) continue;
          if (!Number.isFinite(v)) nonfinite = true;
          else if (best === null || v > best) best = v;
          const f = flagRow && flagRow.get(d.steps[i]);
          if (f && (!flag || f !== 'vanishing')) flag = f;
        }
        const x = LABEL_W + ci * cw;
        if (nonfinite) ctx.fillStyle = FLAG_COLOR.nonfinite;
        else if (best === null) continue;
        else ctx.fillStyle = viridis(best > 0 ? (Math.log10(best) - lo) / (hi - lo) : 0);
        ctx.fillRect(x, y + 1, Math.ceil(cw), rowH - 2);
        if (flag) {
          ctx.strokeStyle = FLAG_COLOR[flag] || FLAG_COLOR.exploding;
          ctx.lineWidth = 2;
          ctx.strokeRect(x + 1, y + 2, Math.max(1, Math.ceil(cw) - 2), rowH - 4);
        }
      }
    }
    // Step axis.
    ctx.fillStyle = muted;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    // Round steps (0, 50, 100), each under the column that holds it.
    const ticks = Math.max(2, Math.floor(pw / 90));
    if (cols.length) {
      const s0 = d.steps[cols[0].from], sN = d.steps[cols[cols.length - 1].from];
      const st = niceStep(sN - s0, ticks);
      let ci = 0;
      for (let v = Math.ceil(s0 / st) * st; v <= sN; v += st) {
        while (ci + 1 < cols.length && d.steps[cols[ci + 1].from] <= v) ci++;
        ctx.fillText(tickLabel(v, st, sN), LABEL_W + (ci + 0.5) * cw, L * rowH + 6);
      }
    }
  }
  hover(e) {
    const g = this.geom;
    if (!g) return;
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const li = Math.floor(y / g.rowH), ci = Math.floor((x - LABEL_W) / g.cw);
    if (li < 0 || li >= this.d.layers.length || ci < 0 || ci >= g.cols.length) { this.tip.hidden = true; return; }
    const c = g.cols[ci];
    const layer = this.d.layers[li];
    clear(this.tip);
    this.tip.appendChild(h('div', null, h('b', null, layer)));
    const flagRow = this.flags.get(layer);
    for (let i = c.from; i < Math.min(c.to, c.from + 6); i++) {
      const v = this.d.norms[li][i];
      const f = flagRow && flagRow.get(this.d.steps[i]);
      this.tip.appendChild(h('div', null, 'step ' + this.d.steps[i] + ': ', h('b', null, v === null ? 'missing' : eng(v)), f ? h('span', { class: 'error-text' }, ' ' + f) : null));
    }
    if (c.to - c.from > 6) this.tip.appendChild(h('div', { class: 'muted' }, `… ${c.to - c.from} steps in this column`));
    this.tip.hidden = false;
    this.tip.style.left = Math.min(x + 14, this.canvas.clientWidth - 220) + 'px';
    this.tip.style.top = (y + 14) + 'px';
  }
}

const page = {
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { scalarTags: SCALAR_TAGS },
  mount(ctx) {
    this.chart = null;
    mountRunPage(this, ctx, 'grad-run', 'Gradient norms',
      'Colour: log10 of the gradient L2 norm. Outlined: red exploding or non-finite, blue vanishing (server thresholds).');
    this.onResize = () => { if (this.heat) this.heat.draw(); };
    window.addEventListener('resize', this.onResize);
    this.render();
  },
  unmount() { if (this.chart) this.chart.destroy(); window.removeEventListener('resize', this.onResize); },
  update(ctx, changed) { updateRunPage(this, ctx, changed); },
  async render() {
    const run = pickRun(this.ctx, gradRuns(this.ctx.data), this.runSelect);
    if (!run) return;
    const raw = await loadLatest(this, 'gradient norms', () => getJSON('data/plugin/gradients/norms', { run }));
    if (!raw) return;
    const d = {
      layers: (raw.layers || []).map(String),
      steps: (raw.steps || []).map(num),
      norms: (raw.norms || []).map((row) => row.map((v) => (v === null ? null : num(v)))),
      global: (raw.global || []).map((v) => (v === null ? null : num(v))),
    };
    const flags = new Map();
    const rawFlags = Array.isArray(raw.flags) ? raw.flags : [];
    for (const f of rawFlags) {
      if (!flags.has(f.layer)) flags.set(f.layer, new Map());
      flags.get(f.layer).set(num(f.step), f.kind);
    }
    clear(this.body);
    const counts = { vanishing: 0, exploding: 0, nonfinite: 0 };
    for (const f of rawFlags) counts[f.kind] = (counts[f.kind] || 0) + 1;
    this.body.appendChild(h('div', { class: 'toolbar' },
      h('span', null, `${d.layers.length} layers × ${d.steps.length} steps.`),
      h('span', { class: counts.exploding || counts.nonfinite ? 'error-text' : 'muted' }, `Flags: ${counts.exploding} exploding, ${counts.vanishing} vanishing, ${counts.nonfinite} non-finite.`)));
    const wrap = h('div', { class: 'heat-wrap' });
    const legend = h('div', { class: 'legend' });
    this.body.appendChild(h('div', { class: 'card', style: { marginBottom: '12px' } }, h('h3', { class: 'card-h' }, 'Per-layer norm'), wrap, legend));
    this.heat = new HeatMap(wrap, d, flags);
    const [lo, hi] = this.heat.range;
    const bar = h('span', { style: { display: 'inline-block', width: '160px', height: '10px', borderRadius: '2px',
      background: `linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map((t) => viridis(t)).join(',')})` } });
    legend.append(h('span', null, scaleEnd(Math.pow(10, lo)), bar, scaleEnd(Math.pow(10, hi))),
      h('span', null, h('span', { class: 'swatch', style: { outline: '2px solid ' + FLAG_COLOR.exploding } }), 'exploding / non-finite'),
      h('span', null, h('span', { class: 'swatch', style: { outline: '2px solid ' + FLAG_COLOR.vanishing } }), 'vanishing'));
    // Global norm line, log y; flagged steps as red points.
    const canvas = h('canvas');
    this.body.appendChild(h('div', { class: 'card' }, h('h3', { class: 'card-h' }, 'Global norm'), h('div', { class: 'chart-wrap' }, canvas)));
    const gflags = flags.get('global') || new Map();
    const pts = [], bad = [];
    d.steps.forEach((s, i) => {
      const v = d.global[i];
      if (v === null || v === undefined) return;
      if (Number.isFinite(v) && v > 0) pts.push({ x: s, y: v });
      if (gflags.has(s) && Number.isFinite(v) && v > 0) bad.push({ x: s, y: v });
    });
    if (this.chart) this.chart.destroy();
    this.chart = makeChart(canvas, {
      type: 'line',
      data: { datasets: [
        { label: 'global norm', data: pts, borderColor: COLOR.blue, borderWidth: 1.5, pointRadius: 0 },
        { label: 'flagged', data: bad, borderColor: FLAG_COLOR.exploding, backgroundColor: FLAG_COLOR.exploding, showLine: false, pointRadius: 3 },
      ] },
      options: {
        parsing: false,
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + eng(c.parsed.y), title: (it) => 'step ' + it[0].parsed.x } } },
        scales: { x: { type: 'linear', title: { display: true, text: 'Step' } }, y: { type: 'logarithmic', title: { display: true, text: 'L2 norm' }, ticks: { callback: logTicks } } },
      },
    });
    window.__tfb.pages.gradients = { run, layers: d.layers.length, steps: d.steps.length, flags: rawFlags.length, global: pts.length };
  },
};

export default page;
