// Distributions dashboard: for each (tag, run), percentile bands over steps
// computed from the histogram buckets, at TensorBoard's basis points
// (min, ~2σ, ~1σ, ~0.5σ, median and their mirrors, max): nested shaded
// bands with the median as a line.
import { h, debounce } from '../core/dom.js';
import { runColor, withAlpha } from '../core/colors.js';
import { eng, linearTicks } from '../core/format.js';
import { makeChart, xTickFormatter, xAxisTitle } from '../core/charts.js';
import { fetchHist, histTagsOf, renderCards, updateCards } from '../lib/histogram_cards.js';
import { HIST_TAGS } from '../lib/catalog.js';

export const BASIS_POINTS = [0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000];

// Value below which bp/10000 of the count lies, interpolating linearly in
// the bucket where the cumulative count crosses the target.
export function percentiles(buckets) {
  const bs = buckets.filter((b) => b[2] > 0 && Number.isFinite(b[0]) && Number.isFinite(b[1]));
  const total = bs.reduce((a, b) => a + b[2], 0);
  if (!(total > 0)) return null;
  return BASIS_POINTS.map((bp) => {
    if (bp === 0) return bs[0][0];
    if (bp === 10000) return bs[bs.length - 1][1];
    const target = (bp / 10000) * total;
    let cum = 0;
    for (const [l, r, c] of bs) {
      if (cum + c >= target) return l + (r - l) * ((target - cum) / c);
      cum += c;
    }
    return bs[bs.length - 1][1];
  });
}

class DistCard {
  constructor(pg, run, tag) {
    this.pg = pg; this.run = run; this.tag = tag; this.key = '';
    this.canvas = h('canvas');
    this.info = h('div', { class: 'card-status muted' });
    this.el = h('div', { class: 'card', dataset: { tag, run } },
      h('div', { class: 'card-head' }, h('div', { class: 'card-title', title: tag }, tag)),
      h('div', { class: 'card-sub' }, h('span', { class: 'swatch', style: { background: runColor(run) } }), ' ', run),
      h('div', { class: 'chart-wrap' }, this.canvas), this.info);
    this.chart = null;
  }
  async load() {
    const key = this.pg.gen + '|' + this.pg.ctx.state.x;
    if (key === this.key) return;
    this.key = key;
    try {
      const hists = await fetchHist(this.run, this.tag, this.pg.gen);
      const mode = this.pg.ctx.state.x;
      const t0 = hists.length ? hists[0].wall : 0;
      const lines = BASIS_POINTS.map(() => []);
      for (const hst of hists) {
        const p = percentiles(hst.buckets);
        if (!p) continue;
        const x = mode === 'step' ? hst.step : mode === 'relative' ? hst.wall - t0 : hst.wall;
        for (let i = 0; i < p.length; i++) lines[i].push({ x, y: p[i] });
      }
      // One step: a band has no width to fill; draw it as a narrow column
      // at that step (x ± 0.4) on an axis a few steps wide, not an empty
      // chart.
      let xr = null;
      if (lines[4].length === 1) {
        const x0 = lines[4][0].x;
        for (const l of lines) { const y = l[0].y; l.splice(0, 1, { x: x0 - 0.4, y }, { x: x0 + 0.4, y }); }
        // On a step axis: the step in the middle, whole steps either side
        // and no negative step labelled.
        const fmt = xTickFormatter(mode);
        xr = mode === 'step'
          ? { min: x0 - 1, max: x0 + 1, ticks: { stepSize: 1, maxRotation: 0, callback: (v, i, t) => (v < 0 ? '' : fmt(v, i, t)) } }
          : { min: x0 - 2, max: x0 + 2 };
      }
      const color = runColor(this.run);
      const n = BASIS_POINTS.length;
      // Dataset i (i < 4) fills to its mirror n-1-i: the outer bands are
      // the faintest, as in TensorBoard.
      const ds = lines.map((data, i) => ({
        label: 'p' + BASIS_POINTS[i] / 100,
        data,
        borderColor: i === 4 ? color : (xr ? withAlpha(color, 0.5) : 'transparent'),
        borderWidth: i === 4 ? 1.6 : (xr ? 1 : 0),
        pointRadius: 0,
        fill: i < 4 ? { target: n - 1 - i } : false,
        backgroundColor: withAlpha(color, 0.14 + 0.1 * i),
      }));
      if (this.chart) this.chart.destroy();
      this.chart = makeChart(this.canvas, {
        type: 'line',
        data: { datasets: ds },
        options: {
          parsing: false,
          plugins: {
            legend: { display: false },
            tooltip: { mode: 'index', intersect: false, callbacks: { label: (c) => c.dataset.label + ': ' + eng(c.parsed.y), title: (items) => items.length ? xAxisTitle(mode) + ' ' + xTickFormatter(mode)(items[0].parsed.x) : '' } },
            filler: { propagate: false },
          },
          interaction: { mode: 'index', intersect: false },
          scales: {
            x: { type: 'linear', title: { display: true, text: xAxisTitle(mode) }, ticks: { callback: xTickFormatter(mode), maxRotation: 0 }, ...(xr || {}) },
            y: { ticks: { callback: linearTicks } },
          },
        },
      });
      const nSteps = xr ? 1 : lines[4].length;
      this.info.textContent = `${nSteps} step${nSteps === 1 ? '' : 's'}; bands: min–max, 7–93 %, 16–84 %, 31–69 %; line: median`;
      window.__tfb.charts['distributions:' + this.run + ':' + this.tag] = { steps: nSteps, datasets: ds.length, median: xr ? [lines[4][0].y] : lines[4].map((p) => p.y), drawnPoints: lines[4].length };
    } catch (e) {
      this.key = '';
      this.info.textContent = 'Could not load: ' + e.message;
    }
  }
  destroy() { if (this.chart) this.chart.destroy(); }
}

const page = {
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { histTags: HIST_TAGS },
  mount(ctx) {
    this.ctx = ctx;
    this.gen = 0;
    this.cards = [];
    this.tagFilter = h('input', { type: 'search', id: 'tag-filter', class: 'filter', placeholder: 'Filter tags (regex)  /', value: ctx.state.tagFilter,
      oninput: debounce((e) => ctx.setState({ tagFilter: e.target.value }), 150) });
    const radio = (val, label) => h('label', { class: 'radio' },
      h('input', { type: 'radio', name: 'xaxis', value: val, checked: ctx.state.x === val, onchange: () => ctx.setState({ x: val }) }), label);
    ctx.settings.append(h('h3', null, 'Tags'), this.tagFilter,
      h('h3', null, 'Horizontal axis'), h('div', { class: 'radios' }, radio('step', 'Step'), radio('relative', 'Relative'), radio('wall', 'Wall')));
    this.body = h('div', { class: 'sections' });
    ctx.main.append(this.body);
    this.observer = new IntersectionObserver((es) => { for (const e of es) if (e.isIntersecting && e.target.$card) e.target.$card.load(); }, { rootMargin: '300px' });
    this.layout();
  },
  unmount() { this.observer.disconnect(); for (const c of this.cards) c.destroy(); },
  update(ctx, changed) { updateCards(this, ctx, changed); },
  layout() {
    for (const c of this.cards) c.destroy();
    const items = histTagsOf(this.ctx.data, this.ctx.runs, this.ctx.state.tagFilter);
    renderCards(this, items, DistCard);
    window.__tfb.pages.distributions = { cards: items.length };
  },
};

export default page;
