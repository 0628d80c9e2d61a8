// HParams dashboard (issue 12): a scatter of one hyperparameter against one
// metric (last, min or max of a scalar tag: the experiments' metric tags
// or any scalar tag), one point per run in its colour, clicking a point
// selects only that run; and the experiment's hyperparameters with their
// types and the values seen. The runs table with a column per
// hyperparameter is on the Runs page; run groups on the Scalars page. The
// helpers exported here (values as text, the column filters, the cached
// /data/plugin/hparams/{experiment,runs} answers) are shared with them.
import { h, clear } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { makeChart } from '../core/charts.js';
import { eng } from '../core/format.js';
import { setRunsChecked } from '../core/sidebar.js';

// A hyperparameter value as the table shows it.
export function hpText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return String(v);
}

// A column filter: '' matches all; `a..b` a closed range; `>x`, `>=x`,
// `<x`, `<=x`, `=x` compare numbers; anything else is a case-insensitive
// regex over the value's text (an invalid one matches nothing, ok false).
export function hpFilterParse(text) {
  const t = (text || '').trim();
  if (!t) return { ok: true, test: () => true };
  const numRe = '[-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?';
  let m = new RegExp('^(' + numRe + ')\\s*\\.\\.\\s*(' + numRe + ')$').exec(t);
  if (m) {
    const a = parseFloat(m[1]), b = parseFloat(m[2]);
    return { ok: true, test: (v) => typeof v === 'number' && v >= a && v <= b };
  }
  m = new RegExp('^(>=|<=|>|<|=)\\s*(' + numRe + ')$').exec(t);
  if (m) {
    const x = parseFloat(m[2]);
    const f = { '>': (v) => v > x, '>=': (v) => v >= x, '<': (v) => v < x, '<=': (v) => v <= x, '=': (v) => v === x }[m[1]];
    return { ok: true, test: (v) => typeof v === 'number' && f(v) };
  }
  try {
    const re = new RegExp(t, 'i');
    return { ok: true, test: (v) => re.test(hpText(v)) };
  } catch (e) {
    return { ok: false, test: () => false };
  }
}

// Does a row of /data/plugin/hparams/runs pass every column filter? A run
// without the hyperparameter fails a non-empty filter on it.
export function hpMatches(row, filters) {
  for (const [name, text] of Object.entries(filters || {})) {
    if (!text) continue;
    if (!row || !row.has_hparams || !(name in row.hparams)) return false;
    if (!hpFilterParse(text).test(row.hparams[name])) return false;
  }
  return true;
}

// The experiment and the runs' hparams (with metric `metric` summarised),
// one request each per data generation and metric.
const cache = new Map();
export function loadHparams(gen, metric) {
  const key = gen + '\u0000' + (metric || '');
  if (!cache.has(key)) {
    for (const k of cache.keys()) if (!k.startsWith(gen + '\u0000')) cache.delete(k);
    const empty = { experiment: { hparams: [], metrics: [], runs_with_hparams: 0 }, runs: [] };
    cache.set(key, Promise.all([
      getJSON('data/plugin/hparams/experiment'),
      getJSON('data/plugin/hparams/runs', metric ? { metric } : null),
    ]).then(([experiment, runs]) => ({ experiment, runs })).catch(() => { cache.delete(key); return empty; }));
  }
  return cache.get(key);
}

function allScalarTags(data) {
  const s = new Set();
  for (const t of Object.values(data.scalarTags)) for (const k of Object.keys(t)) s.add(k);
  return [...s].sort((a, b) => a.localeCompare(b));
}

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.gen = 0;
    this.xSel = h('select', { id: 'hp-x', onchange: (e) => ctx.setState({ hpx: e.target.value }) });
    this.ySel = h('select', { id: 'hp-y', onchange: (e) => ctx.setState({ hpy: e.target.value }) });
    this.statSel = h('select', { id: 'hp-stat', onchange: (e) => ctx.setState({ hpStat: e.target.value }) },
      ...['last', 'min', 'max'].map((v) => h('option', { value: v, selected: ctx.state.hpStat === v }, v)));
    ctx.settings.append(h('h3', null, 'Horizontal: hyperparameter'), this.xSel,
      h('h3', null, 'Vertical: metric'), this.ySel, h('h3', null, 'Value of the metric'), this.statSel,
      h('p', { class: 'muted small hint' }, 'Click a point to select only that run; the Runs page filters by every hyperparameter.'));
    this.canvas = h('canvas');
    this.info = h('div', { class: 'card-status muted' });
    this.infoTable = h('div', { class: 'card table-card' });
    ctx.main.append(h('h2', { class: 'page-title' }, 'Hyperparameters'),
      h('div', { class: 'card wide' }, h('div', { class: 'chart-wrap hp-scatter' }, this.canvas), this.info),
      h('h3', null, 'Hyperparameters of the experiment'), this.infoTable);
    this.refresh();
  },

  unmount() { if (this.chart) this.chart.destroy(); this.chart = null; },

  update(ctx, changed) {
    this.ctx = ctx;
    if (changed.includes('data')) this.gen++;
    this.refresh();
  },

  async refresh() {
    const ctx = this.ctx;
    const token = {};
    this.token = token;
    const base = await loadHparams(this.gen, '');
    if (this.token !== token) return;
    const hps = base.experiment.hparams;
    const metricTags = base.experiment.metrics.map((m) => m.tag);
    const tags = [...new Set([...metricTags, ...allScalarTags(ctx.data)])];
    const x = hps.some((c) => c.name === ctx.state.hpx) ? ctx.state.hpx : (hps[0] ? hps[0].name : '');
    const y = tags.includes(ctx.state.hpy) ? ctx.state.hpy : (metricTags[0] || tags[0] || '');
    clear(this.xSel);
    for (const c of hps) this.xSel.append(h('option', { value: c.name, selected: c.name === x }, c.display_name || c.name));
    clear(this.ySel);
    for (const t of tags) this.ySel.append(h('option', { value: t, selected: t === y }, t));
    this.statSel.value = ctx.state.hpStat;
    this.renderInfo(hps);
    const hp = y ? await loadHparams(this.gen, y) : base;
    if (this.token !== token) return;
    const col = hps.find((c) => c.name === x);
    const sel = new Set(ctx.runs);
    const pts = [];
    const categories = col && col.type !== 'number' ? col.values.map(hpText) : null;
    for (const r of hp.runs) {
      if (!r.has_hparams || !sel.has(r.run) || !col || !(x in r.hparams)) continue;
      const m = r.metrics[y];
      const v = m ? num(m[ctx.state.hpStat]) : null;
      if (v === null || !Number.isFinite(v)) continue;
      const hv = r.hparams[x];
      const xv = categories ? categories.indexOf(hpText(hv)) : num(hv);
      if (!Number.isFinite(xv)) continue;
      pts.push({ x: xv, y: v, run: r.run });
    }
    this.draw(pts, x, y, categories);
    this.info.textContent = !hps.length ? 'No run logged hyperparameters.'
      : `${pts.length} run${pts.length === 1 ? '' : 's'} with ${x} and ${ctx.state.hpStat} of ${y || '–'}`;
    window.__tfb.pages.hparams = { x, y, stat: ctx.state.hpStat, points: pts.map((p) => ({ ...p })), categories };
  },

  draw(pts, x, y, categories) {
    if (this.chart) this.chart.destroy();
    const ds = [{
      data: pts, pointRadius: 5, pointHoverRadius: 7,
      pointBackgroundColor: pts.map((p) => runColor(p.run)), pointBorderColor: pts.map((p) => runColor(p.run)),
    }];
    this.chart = makeChart(this.canvas, {
      type: 'scatter',
      data: { datasets: ds },
      options: {
        parsing: false,
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (c) => `${c.raw.run}: ${x} = ${categories ? categories[c.raw.x] : eng(c.raw.x)}, ${y} = ${eng(c.raw.y)}` } },
        },
        onClick: (e, els) => {
          if (!els.length) return;
          setRunsChecked(this.ctx.data.runs, [pts[els[0].index].run]);
        },
        scales: {
          x: {
            type: 'linear', title: { display: true, text: x }, grace: '5%',
            ...(categories ? { min: -0.5, max: categories.length - 0.5, ticks: { stepSize: 1, callback: (v) => (Number.isInteger(v) ? categories[v] ?? '' : '') } } : { ticks: { callback: (v) => eng(v) } }),
          },
          y: { title: { display: true, text: y }, grace: '5%', ticks: { callback: (v) => eng(v) } },
        },
      },
    });
  },

  renderInfo(hps) {
    clear(this.infoTable);
    if (!hps.length) return;
    const t = h('table', { class: 'table', id: 'hp-info' },
      h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, 'Type'), h('th', { class: 'num' }, 'Runs'), h('th', null, 'Values'))));
    const body = h('tbody');
    for (const c of hps) {
      const vals = c.type === 'number' && c.min !== null && c.values.length > 8
        ? `${eng(num(c.min))} … ${eng(num(c.max))} (${c.values.length}${c.more_values ? '+' : ''} values)`
        : c.values.map(hpText).join(', ') + (c.more_values ? ', …' : '');
      body.append(h('tr', null, h('td', { title: c.description || '' }, c.display_name || c.name), h('td', null, c.type),
        h('td', { class: 'num' }, String(c.runs)), h('td', null, vals + (c.interval ? `  [interval ${c.interval[0]} – ${c.interval[1]}]` : ''))));
    }
    t.append(body);
    this.infoTable.append(t);
  },
};

export default page;
