// Compare dashboard: two runs side by side, the same facts as
// `tfboard report --compare A B` from the same server code
// (/data/plugin/compare/compare): every shared scalar tag's final value and
// minimum with their change, step time and input share, GPU kernel time by
// kernel (kernels that got slower highlighted), and the hparams that differ.
// A is the baseline; changes are (B - A) / |A|. The two runs are kept in the
// URL (#cmpA=..&cmpB=..).
// Above the tables: a headline naming a divergence (from the health
// alerts: "B diverged at step 61: loss NaN"), and both runs' curves
// overlaid for every shared tag, as small multiples. A change is coloured
// by its tag's direction: lower is better but for accuracy-like tags.
import { h, clear } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { eng, pct, fixed, naturalCompare, change as fmtChange, verdict, si } from '../core/format.js';
import { runColor } from '../core/colors.js';
import { ScalarChart, parseScalars } from '../core/charts.js';
import { higherIsBetter } from '../lib/scalars_bands.js';
import { defineState, key } from '../core/state.js';
import { HEALTH_ALERTS, SCALAR_TAGS, allScalarTags, defaultTag } from '../lib/catalog.js';

// Its URL keys (core/state.js): the baseline run and the run compared.
defineState({ cmpA: key.str(), cmpB: key.str() });

const MAX_CHARTS = 24;

// A relative change by the one number format: "+12.3 %", "×1.126e5",
// "new" when A was 0, "–" when unknown.
function change(x) {
  return fmtChange(num(x));
}

// A scalar's change cell: green when B is better by the tag's direction,
// red when worse (beyond 1 %); a non-finite B (or A) says so instead of "–".
function scalarChange(tag, x, a, b) {
  const va = num(a), vb = num(b);
  if (typeof vb === 'number' && !Number.isFinite(vb)) return h('td', { class: 'num worse' }, 'B ' + eng(vb));
  if (typeof va === 'number' && !Number.isFinite(va)) return h('td', { class: 'num better' }, 'A ' + eng(va));
  const v = num(x);
  let cls = 'num';
  if (typeof v === 'number' && Number.isFinite(v) && Math.abs(v) > 0.01) {
    const better = higherIsBetter(tag) ? v > 0 : v < 0;
    cls += better ? ' better' : ' worse';
  }
  return h('td', { class: cls }, change(x));
}

// The first non-finite value of a run, from the health alerts: the
// earliest step, loss-like tags first at the same step.
function divergence(alerts, run) {
  let best = null;
  for (const a of alerts || []) {
    if (a.run !== run) continue;
    const st = num(a.first_step);
    const rank = (t) => (/loss/i.test(t) ? 0 : 1);
    if (!best || st < best.step || (st === best.step && rank(a.tag) < rank(best.tag))) {
      best = { step: st, tag: a.tag, kind: num(a.nan) > 0 ? 'NaN' : num(a.pos_inf) > 0 ? '+Inf' : '-Inf' };
    }
  }
  return best;
}

// A change of a share in percentage points, "+1.2 pts", never "-0.0".
function pts(x) {
  const t = fixed(100 * num(x), 1);
  return (t.startsWith('-') ? '' : '+') + t + ' pts';
}

// For times, where higher is worse: red when B is > 5 % slower, green when
// > 5 % faster.
function timeCell(x) {
  const v = num(x);
  const cls = typeof v === 'number' && v > 0.05 ? 'num error-text' : 'num';
  return h('td', { class: cls, style: typeof v === 'number' && v < -0.05 ? { color: '#59a14f' } : null }, change(x));
}

function ms(nsv) {
  const v = num(nsv);
  return v === null ? '–' : si(v / 1e9, 's');
}

// A time given in ms, with the prefix that shows it ("138.6 ns").
function msv(x) {
  const v = num(x);
  return v === null ? '–' : si(v / 1e3, 's');
}

function table(id, heads, rows) {
  return h('div', { class: 'card table-card', style: { marginBottom: '12px' } },
    h('table', { class: 'table', id },
      h('thead', null, h('tr', null, heads.map((x, i) => h('th', { class: i ? 'num' : null }, x)))),
      h('tbody', null, rows)));
}

function td(x) { return h('td', { class: 'num' }, x); }

function stat(label, value, sub, bad) {
  return h('div', { class: 'stat' }, h('div', { class: 'label' }, label),
    h('div', { class: 'value' + (bad ? ' error-text' : '') }, value), sub ? h('div', { class: 'sub' }, sub) : null);
}

function runLabel(run) {
  return h('span', { class: 'run-cell' }, h('span', { class: 'swatch', style: { background: runColor(run) } }), ' ', run);
}

// The last pair the user picked, for the next visit (the URL keys cmpA
// and cmpB win when they name two runs).
const PAIR_KEY = 'tfb.compare.pair';
function keepPair(a, b) { try { localStorage.setItem(PAIR_KEY, JSON.stringify([a, b])); } catch (e) { /* private mode */ } }
function keptPair() {
  try {
    const p = JSON.parse(localStorage.getItem(PAIR_KEY) || 'null');
    return Array.isArray(p) && p.length === 2 ? p.map(String) : null;
  } catch (e) { return null; }
}

// The pair a first visit opens on: B the run with the most alerts (its
// non-finite series from the health alerts, plus one for a diverged or
// crashed status), A the best run like it (among the runs without alerts
// that share the most scalar tags with B - the same kind of training, not
// a DDP rank's stand-in loss - the one whose loss tag's last value is
// lowest, or highest where higher is better). With no alerts at all, A
// is the best run and B the worst by the same value. Among the selected
// runs when at least two are, else all. null when there are not two runs
// with the value.
async function openingPair(data, selected) {
  const pool = selected.length >= 2 ? selected : data.runs;
  if (pool.length < 2 || !data.scalarTags) return null;
  const tag = defaultTag(allScalarTags(data));
  if (!tag) return null;
  const sums = (await getJSON('data/plugin/scalars/summary', { tag }).catch(() => null)) || {};
  const alerts = new Map();
  for (const a of data.alerts || []) alerts.set(a.run, (alerts.get(a.run) || 0) + 1);
  for (const x of Array.isArray(data.runsInfo) ? data.runsInfo : []) {
    const st = x && x.status && x.status.state;
    if (st === 'diverged' || st === 'crashed') alerts.set(x.name, (alerts.get(x.name) || 0) + 1);
  }
  const up = higherIsBetter(tag);
  const val = (r) => { const v = sums[r] ? num(sums[r].last) : NaN; return Number.isFinite(v) ? (up ? -v : v) : Infinity; };
  const byVal = (x, y) => val(x) - val(y) || naturalCompare(x, y);
  const clean = pool.filter((r) => !alerts.get(r) && val(r) !== Infinity);
  const most = pool.reduce((m, r) => Math.max(m, alerts.get(r) || 0), 0);
  if (most === 0) {
    const ranked = clean.sort(byVal);
    return ranked.length >= 2 ? [ranked[0], ranked[ranked.length - 1]] : null;
  }
  const worst = pool.filter((r) => (alerts.get(r) || 0) === most).sort(naturalCompare)[0];
  const tagsOf = (r) => Object.keys((data.scalarTags || {})[r] || {});
  const wt = new Set(tagsOf(worst));
  const shared = (r) => tagsOf(r).filter((t) => wt.has(t)).length;
  const best = clean.filter((r) => r !== worst).sort((x, y) => shared(y) - shared(x) || byVal(x, y))[0];
  return best ? [best, worst] : null;
}

const page = {
  // The first screen needs /data/runs_info (webui/README.md): the opening pair leaves out diverged and crashed runs (their status).
  runsInfo: true,
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { alerts: HEALTH_ALERTS, scalarTags: SCALAR_TAGS },
  mount(ctx) {
    this.ctx = ctx;
    // The user's pick is kept (PAIR_KEY) for the next visit.
    const pick = (a, b) => { keepPair(a, b); ctx.setState({ cmpA: a, cmpB: b }); };
    this.selA = h('select', { id: 'compare-a', onchange: (e) => pick(e.target.value, this.pair()[1]) });
    this.selB = h('select', { id: 'compare-b', onchange: (e) => pick(this.pair()[0], e.target.value) });
    this.swap = h('button', { id: 'compare-swap', class: 'link', onclick: () => {
      const [a, b] = this.pair();
      pick(b, a);
    } }, 'Swap A and B');
    ctx.settings.append(h('h3', null, 'A (baseline)'), this.selA, h('h3', null, 'B'), this.selB,
      h('div', { style: { marginTop: '8px' } }, this.swap),
      h('p', { class: 'muted small hint' }, 'Changes are (B − A) / |A|. The same comparison as `tfboard report --compare A B`.'));
    this.body = h('div', { id: 'compare-body' });
    ctx.main.append(h('h2', { class: 'page-title' }, 'Compare two runs'), this.body);
    this.render();
  },
  // What it published goes with it: a test (or a reader of the hook) that
  // waits for the next visit's pair must not find the last one's.
  unmount() { clearTimeout(this.retry); this.token = null; this.destroyCharts(); window.__tfb.pages.compare = null; },
  destroyCharts() { for (const c of this.charts || []) c.destroy(); this.charts = []; },
  update(ctx, changed) {
    this.ctx = ctx;
    if (changed.some((k) => ['data', 'catalog', 'cmpA', 'cmpB'].includes(k))) this.render();
  },
  // The chosen pair: from the URL when those runs exist, else the last two
  // the user picked (PAIR_KEY), else the opening pair (openingPair: the
  // best run against the one with the most alerts), else the first two
  // selected runs, else the first two runs.
  pair() {
    const runs = this.ctx.data.runs;
    const has = (r) => typeof r === 'string' && runs.includes(r);
    if (has(this.ctx.state.cmpA) && has(this.ctx.state.cmpB)) return [this.ctx.state.cmpA, this.ctx.state.cmpB];
    const kept = keptPair();
    if (kept && has(kept[0]) && has(kept[1]) && kept[0] !== kept[1]) return kept;
    if (this.opening && has(this.opening[0]) && has(this.opening[1])) return this.opening;
    const pref = this.ctx.runs.concat(runs.filter((r) => !this.ctx.runs.includes(r)));
    let a = has(this.ctx.state.cmpA) ? this.ctx.state.cmpA : pref[0];
    let b = has(this.ctx.state.cmpB) ? this.ctx.state.cmpB : pref.find((r) => r !== a);
    return [a || '', b || ''];
  },
  async render() {
    const runs = this.ctx.data.runs;
    if (!this.opening || this.openingRuns !== runs) {
      this.openingRuns = runs;
      this.opening = await openingPair(this.ctx.data, this.ctx.runs).catch(() => null);
      if (this.openingRuns !== runs) return;
    }
    const [a, b] = this.pair();
    for (const [sel, cur] of [[this.selA, a], [this.selB, b]]) {
      clear(sel);
      for (const r of runs) sel.appendChild(h('option', { value: r, selected: r === cur }, r));
    }
    if (!a || !b) {
      clear(this.body);
      this.body.appendChild(h('div', { class: 'empty small' }, 'Comparing needs two runs.'));
      return;
    }
    const token = {};
    this.token = token;
    let c;
    try {
      c = await getJSON('data/plugin/compare/compare', { a, b });
    } catch (e) {
      if (this.token !== token) return;
      clear(this.body);
      this.body.appendChild(h('div', { class: 'empty small error-text' }, 'Could not compare the runs: ' + e.message));
      return;
    }
    if (this.token !== token) return;
    this.draw(c);
  },
  draw(c) {
    this.destroyCharts();
    clear(this.body);
    const p = c.pipeline, g = c.gpu;
    const heads = [];
    for (const [side, run] of [['A', c.a], ['B', c.b]]) {
      const d = divergence(this.ctx.data.alerts, run);
      if (d) heads.push(`${side} diverged at step ${d.step}: ${d.tag} ${d.kind}`);
    }
    if (heads.length) {
      this.body.appendChild(h('div', { class: 'verdict highly', id: 'compare-headline' },
        h('h2', null, heads.join('; ')),
        h('div', { class: 'muted small' }, 'From the health alerts: the first non-finite value of each run.')));
    }
    const slower = g.kernels.filter((k) => k.slower);
    const stepCh = num(p.step_ms_change);
    this.body.append(
      h('p', { id: 'compare-runs' }, 'A (baseline): ', runLabel(c.a), ' — B: ', runLabel(c.b)),
      h('div', { class: 'stats' },
        stat('Shared scalar tags', String(c.scalars.length), `${c.scalars_only_a} only in A, ${c.scalars_only_b} only in B`),
        stat('Step time', change(p.step_ms_change), p.steps_a && p.steps_b ? `${msv(p.step_ms_a)} → ${msv(p.step_ms_b)}` : 'no step timings in both', stepCh !== null && stepCh > 0.05),
        stat('Input share', p.input_share_change === null ? '–' : pts(p.input_share_change),
          p.steps_a && p.steps_b ? `${pct(num(p.input_share_a))} → ${pct(num(p.input_share_b))}` : null),
        stat('GPU kernel time', change(g.kernel_change), g.traced_a || g.traced_b ? `${ms(g.kernel_ns_a)} → ${ms(g.kernel_ns_b)}` : 'not traced', num(g.kernel_change) > 0.05),
        stat('Slower kernels', String(slower.length), `of ${g.kernels.length}`, slower.length > 0),
        stat('Hparams that differ', String(c.hparams.differ.length), `A logged ${c.hparams.count_a}, B ${c.hparams.count_b}`)));

    // Small multiples: both runs on every shared tag.
    if (c.scalars.length) {
      const tags = c.scalars.map((x) => x.tag).sort(naturalCompare).slice(0, MAX_CHARTS);
      this.body.appendChild(h('h3', { class: 'card-h' }, `Curves (${tags.length}${c.scalars.length > tags.length ? ' of ' + c.scalars.length : ''} shared tags)`));
      const grid = h('div', { class: 'compare-grid', id: 'compare-charts' });
      this.body.appendChild(grid);
      this.drawCurves(grid, c.a, c.b, tags);
    }

    this.body.appendChild(h('h3', { class: 'card-h' }, 'Scalars (final value and minimum)'));
    if (!c.scalars.length) this.body.appendChild(h('div', { class: 'empty small' }, 'No scalar tag is in both runs.'));
    else this.body.appendChild(table('compare-scalars', ['Tag', 'Final A', 'Final B', 'Change', 'Min A', 'Min B', 'Change'],
      c.scalars.map((s) => h('tr', { dataset: { tag: s.tag } }, h('td', null, s.tag), td(eng(num(s.last_a))), td(eng(num(s.last_b))),
        scalarChange(s.tag, s.last_change, s.last_a, s.last_b), td(eng(num(s.min_a))), td(eng(num(s.min_b))),
        scalarChange(s.tag, s.min_change, s.min_a, s.min_b)))));

    this.body.appendChild(h('h3', { class: 'card-h' }, 'Input pipeline'));
    if (!p.steps_a && !p.steps_b) this.body.appendChild(h('div', { class: 'empty small' }, 'Neither run has pipeline/step_ms and pipeline/input_ms scalars.'));
    else this.body.appendChild(table('compare-pipeline', ['Figure', 'A', 'B', 'Change'], [
      h('tr', null, h('td', null, 'Mean step time'), td(msv(p.step_ms_a)), td(msv(p.step_ms_b)), timeCell(p.step_ms_change)),
      h('tr', null, h('td', null, 'Mean input wait'), td(msv(p.input_ms_a)), td(msv(p.input_ms_b)), timeCell(p.input_ms_change)),
      h('tr', null, h('td', null, 'Input share'), td(pct(num(p.input_share_a))), td(pct(num(p.input_share_b))),
        td(p.input_share_change === null ? '–' : pts(p.input_share_change))),
      h('tr', null, h('td', null, 'Verdict'), td(verdict(p.verdict_a)), td(verdict(p.verdict_b)), td('')),
    ]));

    this.body.appendChild(h('h3', { class: 'card-h' }, 'GPU kernel time by kernel'));
    for (const [side, err] of [['A', g.error_a], ['B', g.error_b]]) {
      if (err) this.body.appendChild(h('div', { class: 'empty small error-text' }, `Run ${side}'s trace could not be read: ${err}`));
    }
    const loading = g.loading_a || g.loading_b;
    if (loading) {
      // The server reads traces in the background: ask again shortly.
      this.body.appendChild(h('div', { class: 'empty small', id: 'compare-gpu-loading' }, 'Reading the GPU trace' + (g.loading_a && g.loading_b ? 's' : ' of run ' + (g.loading_a ? 'A' : 'B')) + '…'));
      const token = this.token;
      clearTimeout(this.retry);
      this.retry = setTimeout(() => { if (this.token === token) this.render(); }, 500);
    } else if (!g.traced_a && !g.traced_b) this.body.appendChild(h('div', { class: 'empty small' }, 'Neither run was traced.'));
    else this.body.appendChild(table('compare-kernels', ['Kernel', 'Count A', 'Count B', 'Total A', 'Total B', 'Change', ''],
      g.kernels.map((k) => h('tr', { class: k.slower ? 'slower' : null, dataset: { kernel: k.name } },
        h('td', { class: 'mono' + (k.slower ? ' error-text' : '') }, k.name), td(String(k.count_a)), td(String(k.count_b)),
        td(ms(k.total_ns_a)), td(ms(k.total_ns_b)), h('td', { class: 'num' + (k.slower ? ' error-text' : '') }, change(k.change)),
        h('td', { class: k.slower ? 'error-text' : null, style: { fontWeight: '600' } }, k.slower ? 'slower' : '')))));

    // HTA's TraceDiff: kernels and CPU ops added, deleted, and changed in
    // count and total time (server/analysis/trace_diff.h).
    const d = c.trace_diff;
    this.body.appendChild(h('h3', { class: 'card-h' }, 'Trace diff (kernels and CPU ops)'));
    if (!d) this.body.appendChild(h('div', { class: 'empty small', id: 'compare-diff-none' }, loading ? 'Waiting for the traces…' : 'Needs a trace in both runs.'));
    else {
      const kinds = (x) => `${x.added} added, ${x.deleted} deleted, ${x.increased} more often, ${x.decreased} less often, ${x.unchanged} same count`;
      this.body.appendChild(h('div', { class: 'muted', id: 'compare-diff-summary' }, `Kernels: ${kinds(d.kernels)}. CPU ops: ${kinds(d.ops)}.`));
      const moved = d.rows.filter((r) => r.diff_count !== 0 || r.diff_ns !== 0);
      if (!moved.length) this.body.appendChild(h('div', { class: 'empty small' }, 'No kernel or op changed in count or time.'));
      else this.body.appendChild(table('compare-diff', ['Name', 'On', 'Change', 'Count A', 'Count B', 'Total A', 'Total B', 'B − A'],
        moved.map((r) => h('tr', { dataset: { name: r.name, change: r.change } },
          h('td', { class: 'mono' }, r.name), td(r.device.toUpperCase()), td(r.change), td(String(r.count_a)), td(String(r.count_b)),
          td(ms(r.total_ns_a)), td(ms(r.total_ns_b)), td((r.diff_ns > 0 ? '+' : '') + ms(r.diff_ns))))));
    }

    this.body.appendChild(h('h3', { class: 'card-h' }, 'Hparams that differ'));
    if (!c.hparams.differ.length) this.body.appendChild(h('div', { class: 'empty small' }, c.hparams.count_a || c.hparams.count_b ? 'The runs logged the same hparams.' : 'Neither run logged hparams.'));
    else this.body.appendChild(table('compare-hparams', ['Hparam', 'A', 'B'],
      c.hparams.differ.map((x) => h('tr', null, h('td', null, x.name), td(x.a === null ? '(not set)' : x.a), td(x.b === null ? '(not set)' : x.b)))));
    if (window.__tfb && window.__tfb.pages) {
      window.__tfb.pages.compare = { a: c.a, b: c.b, scalars: c.scalars.length, diff: d ? d.rows.length : null, slower: slower.map((k) => k.name), hparams: c.hparams.differ.length,
        headline: heads.join('; '), charts: Math.min(c.scalars.length, MAX_CHARTS), drawn: 0 };
    }
  },
  // One card per tag, the two runs' raw series (unsmoothed, 400 samples)
  // overlaid, with the robust y range of every scalar chart.
  async drawCurves(grid, a, b, tags) {
    const token = this.token;
    const samples = 400;
    await Promise.all(tags.map(async (tag) => {
      const wrap = h('div', { class: 'chart-wrap short' });
      grid.appendChild(h('div', { class: 'card compare-card', dataset: { tag } }, h('div', { class: 'card-title', title: tag }, tag), wrap));
      try {
        const series = await Promise.all([a, b].map(async (run) => {
          const rows = await getJSON('data/plugin/scalars/scalars', { run, tag, samples });
          return { run, color: runColor(run), cols: parseScalars(rows, num), smooth: null };
        }));
        if (this.token !== token) return;
        const ch = new ScalarChart(wrap, { legend: true });
        this.charts.push(ch);
        ch.view.smoothing = 0;
        ch.setData(series, 0);
        const pg = window.__tfb.pages.compare;
        if (pg) { pg.drawn++; window.__tfb.charts['compare:' + tag] = ch.summary(); }
      } catch (e) {
        if (this.token !== token) return;
        wrap.appendChild(h('div', { class: 'muted small' }, 'Could not load: ' + e.message));
      }
    }));
  },
};

export default page;
