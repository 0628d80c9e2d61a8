// Compare dashboard: two runs side by side, the same facts as
// `tfboard report --compare A B` from the same server code
// (/data/plugin/compare/compare): every shared scalar tag's final value and
// minimum with their change, step time and input share, GPU kernel time by
// kernel (kernels that got slower highlighted), and the hparams that differ.
// A is the baseline; changes are (B - A) / |A|. The two runs are kept in the
// URL (#cmpA=..&cmpB=..).
import { h, clear } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { eng, pct } from '../core/format.js';
import { runColor } from '../core/colors.js';

// A relative change: "+12.3 %", "new" when A was 0, "–" when unknown.
function change(x) {
  const v = num(x);
  if (v === null || Number.isNaN(v)) return '–';
  if (!Number.isFinite(v)) return v > 0 ? 'new' : '-new';
  return (v >= 0 ? '+' : '') + (100 * v).toFixed(1) + ' %';
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
  return v === null ? '–' : eng(v / 1e6) + ' ms';
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

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.selA = h('select', { id: 'compare-a', onchange: (e) => ctx.setState({ cmpA: e.target.value }) });
    this.selB = h('select', { id: 'compare-b', onchange: (e) => ctx.setState({ cmpB: e.target.value }) });
    this.swap = h('button', { id: 'compare-swap', class: 'link', onclick: () => {
      const [a, b] = this.pair();
      ctx.setState({ cmpA: b, cmpB: a });
    } }, 'Swap A and B');
    ctx.settings.append(h('h3', null, 'A (baseline)'), this.selA, h('h3', null, 'B'), this.selB,
      h('div', { style: { marginTop: '8px' } }, this.swap),
      h('p', { class: 'muted small hint' }, 'Changes are (B − A) / |A|. The same comparison as `tfboard report --compare A B`.'));
    this.body = h('div', { id: 'compare-body' });
    ctx.main.append(h('h2', { class: 'page-title' }, 'Compare two runs'), this.body);
    this.render();
  },
  unmount() { clearTimeout(this.retry); this.token = null; },
  update(ctx, changed) {
    this.ctx = ctx;
    if (changed.some((k) => ['data', 'cmpA', 'cmpB'].includes(k))) this.render();
  },
  // The chosen pair: from the URL when those runs exist, else the first two
  // selected runs, else the first two runs.
  pair() {
    const runs = this.ctx.data.runs;
    const pref = this.ctx.runs.concat(runs.filter((r) => !this.ctx.runs.includes(r)));
    let a = runs.includes(this.ctx.state.cmpA) ? this.ctx.state.cmpA : pref[0];
    let b = runs.includes(this.ctx.state.cmpB) ? this.ctx.state.cmpB : pref.find((r) => r !== a);
    return [a || '', b || ''];
  },
  async render() {
    const runs = this.ctx.data.runs;
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
    clear(this.body);
    const p = c.pipeline, g = c.gpu;
    const slower = g.kernels.filter((k) => k.slower);
    const stepCh = num(p.step_ms_change);
    this.body.append(
      h('p', { id: 'compare-runs' }, 'A (baseline): ', runLabel(c.a), ' — B: ', runLabel(c.b)),
      h('div', { class: 'stats' },
        stat('Shared scalar tags', String(c.scalars.length), `${c.scalars_only_a} only in A, ${c.scalars_only_b} only in B`),
        stat('Step time', change(p.step_ms_change), p.steps_a && p.steps_b ? `${eng(num(p.step_ms_a))} → ${eng(num(p.step_ms_b))} ms` : 'no step timings in both', stepCh !== null && stepCh > 0.05),
        stat('Input share', p.input_share_change === null ? '–' : ((num(p.input_share_change) >= 0 ? '+' : '') + (100 * num(p.input_share_change)).toFixed(1) + ' pts'),
          p.steps_a && p.steps_b ? `${pct(num(p.input_share_a))} → ${pct(num(p.input_share_b))}` : null),
        stat('GPU kernel time', change(g.kernel_change), g.traced_a || g.traced_b ? `${ms(g.kernel_ns_a)} → ${ms(g.kernel_ns_b)}` : 'not traced', num(g.kernel_change) > 0.05),
        stat('Slower kernels', String(slower.length), `of ${g.kernels.length}`, slower.length > 0),
        stat('Hparams that differ', String(c.hparams.differ.length), `A logged ${c.hparams.count_a}, B ${c.hparams.count_b}`)));

    this.body.appendChild(h('h3', { class: 'card-h' }, 'Scalars (final value and minimum)'));
    if (!c.scalars.length) this.body.appendChild(h('div', { class: 'empty small' }, 'No scalar tag is in both runs.'));
    else this.body.appendChild(table('compare-scalars', ['Tag', 'Final A', 'Final B', 'Change', 'Min A', 'Min B', 'Change'],
      c.scalars.map((s) => h('tr', { dataset: { tag: s.tag } }, h('td', null, s.tag), td(eng(num(s.last_a))), td(eng(num(s.last_b))),
        td(change(s.last_change)), td(eng(num(s.min_a))), td(eng(num(s.min_b))), td(change(s.min_change))))));

    this.body.appendChild(h('h3', { class: 'card-h' }, 'Input pipeline'));
    if (!p.steps_a && !p.steps_b) this.body.appendChild(h('div', { class: 'empty small' }, 'Neither run has pipeline/step_ms and pipeline/input_ms scalars.'));
    else this.body.appendChild(table('compare-pipeline', ['Figure', 'A', 'B', 'Change'], [
      h('tr', null, h('td', null, 'Mean step time'), td(eng(num(p.step_ms_a)) + ' ms'), td(eng(num(p.step_ms_b)) + ' ms'), timeCell(p.step_ms_change)),
      h('tr', null, h('td', null, 'Mean input wait'), td(eng(num(p.input_ms_a)) + ' ms'), td(eng(num(p.input_ms_b)) + ' ms'), timeCell(p.input_ms_change)),
      h('tr', null, h('td', null, 'Input share'), td(pct(num(p.input_share_a))), td(pct(num(p.input_share_b))),
        td(p.input_share_change === null ? '–' : ((num(p.input_share_change) >= 0 ? '+' : '') + (100 * num(p.input_share_change)).toFixed(1) + ' pts'))),
      h('tr', null, h('td', null, 'Verdict'), td(p.verdict_a || '–'), td(p.verdict_b || '–'), td('')),
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

    this.body.appendChild(h('h3', { class: 'card-h' }, 'Hparams that differ'));
    if (!c.hparams.differ.length) this.body.appendChild(h('div', { class: 'empty small' }, c.hparams.count_a || c.hparams.count_b ? 'The runs logged the same hparams.' : 'Neither run logged hparams.'));
    else this.body.appendChild(table('compare-hparams', ['Hparam', 'A', 'B'],
      c.hparams.differ.map((x) => h('tr', null, h('td', null, x.name), td(x.a === null ? '(not set)' : x.a), td(x.b === null ? '(not set)' : x.b)))));
    if (window.__tfb && window.__tfb.pages) window.__tfb.pages.compare = { a: c.a, b: c.b, scalars: c.scalars.length, slower: slower.map((k) => k.name), hparams: c.hparams.differ.length };
  },
};

export default page;
