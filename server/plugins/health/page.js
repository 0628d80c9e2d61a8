// Health dashboard: every (run, tag) that ever held NaN or ±Inf, from
// /data/plugin/health/alerts, first occurrence first (where the trouble
// started). A click opens the scalar chart at that step.
import { h, sortableTable } from '../core/dom.js';
import { num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { wall, int } from '../core/format.js';
import { SCALAR_TAGS, HEALTH_ALERTS } from '../lib/catalog.js';

function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

const page = {
  catalog: { scalarTags: SCALAR_TAGS, alerts: HEALTH_ALERTS },

  // Above every tab: the selected runs' non-finite values, with a link to
  // the first one's chart and to this page.
  banner(ctx) {
    const sel = new Set(ctx.runs);
    const alerts = (ctx.data.alerts || []).filter((a) => sel.has(a.run));
    if (!alerts.length) return null;
    const first = alerts[0];
    return [h('span', { class: 'banner-icon' }, '⚠'),
      h('span', null, 'Non-finite values in ', h('b', null, String(alerts.length)),
        alerts.length === 1 ? ' series' : ' series', ' of the selected runs. First: ',
        h('code', null, first.tag), ' in run ', h('code', null, first.run), ' at step ', String(first.first_step), '. '),
      h('a', { href: '#', id: 'banner-first', onclick: (e) => {
        e.preventDefault();
        // Isolate the failing run and zoom to the step where it broke.
        ctx.setState({ tab: 'scalars', tagFilter: '^' + escapeRe(first.tag) + '$', step: Number(first.first_step), runs: [first.run] });
      } }, 'Show it'),
      ' · ',
      h('a', { href: '#tab=health', onclick: (e) => { e.preventDefault(); ctx.setState({ tab: 'health' }); } }, 'All alerts')];
  },

  // The red count on the tab (the server enables the tab whenever there
  // are runs: "no alerts" is an answer worth seeing too).
  badge(data) { return data.alerts ? data.alerts.length : 0; },

  mount(ctx) {
    this.ctx = ctx;
    this.summary = h('div', { class: 'toolbar' });
    this.table = sortableTable([
      { key: 'order', label: '#', num: true, render: (a) => String(a.order + 1) },
      { key: 'run', label: 'Run', render: (a) => h('span', { class: 'run-cell' }, h('span', { class: 'swatch', style: { background: runColor(a.run) } }), ' ', a.run) },
      { key: 'tag', label: 'Tag', render: (a) => h('span', { class: 'mono' }, a.tag) },
      { key: 'first_step', label: 'First step', num: true, render: (a) => int(a.first_step) },
      { key: 'first_wall_time', label: 'First seen', num: true, render: (a) => wall(a.first_wall_time) },
      { key: 'nan', label: 'NaN', num: true, render: (a) => int(a.nan) },
      { key: 'pos_inf', label: '+Inf', num: true, render: (a) => int(a.pos_inf) },
      { key: 'neg_inf', label: '-Inf', num: true, render: (a) => int(a.neg_inf) },
      { key: 'events', label: 'Events', num: true, render: (a) => int(a.events) },
    ], {
      sortKey: 'order', sortDir: 1, className: 'alerts-table',
      rowProps: (a) => ({ class: 'clickable', title: 'Open the chart at step ' + a.first_step, dataset: { run: a.run, tag: a.tag },
        onclick: () => this.open(a) }),
    });
    this.empty = h('div', { class: 'empty small', id: 'health-ok' });
    // What came before each run's first NaN/Inf (the server's precursors:
    // "gradient norms grew 10^4x from step 56 (fc3 first); NaN at 61").
    this.explain = h('ul', { class: 'health-explain', id: 'health-explain' });
    ctx.main.append(h('h2', { class: 'page-title' }, 'Training health'), this.summary, this.explain, this.empty,
      h('div', { class: 'card table-card' }, this.table.el));
    ctx.settings.append(h('p', { class: 'muted small' },
      'Series that held NaN or ±Inf, in any scalar, histogram or numerics check. The first row is where the trouble started. Click a row to open its chart.'));
    this.render();
  },
  unmount() {},
  update(ctx) { this.ctx = ctx; this.render(); },

  open(a) {
    const scalar = this.ctx.data.scalarTags[a.run] && a.tag in this.ctx.data.scalarTags[a.run];
    const runs = this.ctx.data.runs.includes(a.run) ? [a.run] : null;
    this.ctx.setState({
      tab: scalar ? 'scalars' : 'histograms', tagFilter: '^' + escapeRe(a.tag) + '$',
      step: Number.isFinite(num(a.first_step)) ? num(a.first_step) : null,
      runs: runs && this.ctx.data.runs.length > 1 ? runs : null, runFilter: '',
    });
  },

  render() {
    const sel = new Set(this.ctx.runs);
    const all = this.ctx.data.alerts || [];
    const rows = all.map((a, i) => ({
      ...a, order: i, first_step: num(a.first_step), first_wall_time: num(a.first_wall_time),
      nan: num(a.nan), pos_inf: num(a.pos_inf), neg_inf: num(a.neg_inf), events: num(a.events),
    })).filter((a) => sel.has(a.run));
    this.table.setRows(rows);
    this.table.el.parentNode.hidden = rows.length === 0;
    this.empty.hidden = rows.length > 0;
    this.empty.textContent = all.length
      ? `No alerts in the selected runs (${all.length} in other runs).`
      : 'No NaN or Inf found in any scalar or histogram of any run.';
    const runsHit = new Set(rows.map((a) => a.run));
    this.summary.textContent = rows.length
      ? `${rows.length} series with non-finite values in ${runsHit.size} run${runsHit.size === 1 ? '' : 's'}.`
      : '';
    const firsts = new Map();
    for (const a of rows) if (a.explain && !firsts.has(a.run)) firsts.set(a.run, a.explain);
    this.explain.replaceChildren(...[...firsts].map(([run, why]) => h('li', null,
      h('span', { class: 'run-cell' }, h('span', { class: 'swatch', style: { background: runColor(run) } }), ' ', run), ': ', why)));
    this.explain.hidden = firsts.size === 0;
    window.__tfb.pages.health = {
      explain: Object.fromEntries(firsts), rows: rows.map((a) => ({ run: a.run, tag: a.tag, first_step: a.first_step })) };
  },
};

export default page;
