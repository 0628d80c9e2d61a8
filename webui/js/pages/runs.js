// Runs table (beyond TensorBoard, #3074): one row per run with its steps,
// start, duration and the last / min / max of a chosen scalar tag; sortable;
// ticking or clicking a row selects the run everywhere (the sidebar's
// checkboxes follow).
import { h, clear, sortableTable } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { eng, rel, wall, int } from '../core/format.js';
import { safeRegex } from '../core/state.js';
import { setRunChecked, setRunsChecked } from '../core/sidebar.js';

function allScalarTags(data) {
  const s = new Set();
  for (const t of Object.values(data.scalarTags)) for (const k of Object.keys(t)) s.add(k);
  return [...s].sort((a, b) => a.localeCompare(b));
}

function defaultTag(tags) {
  return tags.find((t) => /(^|\/)loss$/i.test(t)) || tags.find((t) => /loss/i.test(t)) || tags[0] || '';
}

// /data/runs_info: [{name, first_wall, last_wall, max_step, tags, points,
// files, trace_files}].
function infoFor(info, run) {
  return Array.isArray(info) ? info.find((x) => x && x.name === run) || null : null;
}

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.gen = 0;
    this.rows = new Map();
    this.tagSelect = h('select', { id: 'runs-tag', onchange: (e) => ctx.setState({ tag: e.target.value }) });
    ctx.settings.append(h('h3', null, 'Values of tag'), this.tagSelect,
      h('p', { class: 'muted small hint' }, 'Click a row, or its checkbox, to select the run on every page.'));
    this.table = sortableTable([
      { key: 'sel', label: '', value: (r) => (r.selected ? 1 : 0), render: (r) => h('input', {
        type: 'checkbox', checked: r.selected, 'aria-label': 'select ' + r.run,
        onclick: (e) => e.stopPropagation(),
        onchange: (e) => setRunChecked(this.ctx.data.runs, r.run, e.target.checked) }) },
      { key: 'run', label: 'Run', render: (r) => h('span', { class: 'run-cell' },
        h('span', { class: 'swatch', style: { background: runColor(r.run) } }), ' ', r.run) },
      { key: 'steps', label: 'Steps', num: true, render: (r) => (r.steps === null ? '–' : int(r.steps)) },
      { key: 'start', label: 'Start', num: true, render: (r) => wall(r.start) },
      { key: 'duration', label: 'Duration', num: true, render: (r) => rel(r.duration) },
      { key: 'points', label: 'Points', num: true, render: (r) => (r.points === null ? '–' : int(r.points)) },
      { key: 'last', label: 'Last', num: true, render: (r) => eng(r.last) },
      { key: 'min', label: 'Min', num: true, render: (r) => eng(r.min) },
      { key: 'max', label: 'Max', num: true, render: (r) => eng(r.max) },
      { key: 'nonfinite', label: 'Non-finite', num: true, render: (r) => (r.nonfinite ? h('span', { class: 'error-text' }, String(r.nonfinite)) : '0') },
    ], {
      sortKey: 'start', sortDir: 1, className: 'runs-table',
      rowProps: (r) => ({ class: 'clickable' + (r.selected ? ' selected' : ''), dataset: { run: r.run },
        onclick: () => setRunChecked(this.ctx.data.runs, r.run, !r.selected) }),
    });
    this.head = h('div', { class: 'toolbar' });
    ctx.main.append(h('h2', { class: 'page-title' }, 'Runs'), this.head, h('div', { class: 'card table-card' }, this.table.el));
    this.refresh();
  },

  unmount() {},

  update(ctx, changed) {
    this.ctx = ctx;
    if (changed.includes('data')) this.gen++;
    this.refresh();
  },

  async refresh() {
    const ctx = this.ctx;
    const tags = allScalarTags(ctx.data);
    const tag = tags.includes(ctx.state.tag) ? ctx.state.tag : defaultTag(tags);
    clear(this.tagSelect);
    for (const t of tags) this.tagSelect.appendChild(h('option', { value: t, selected: t === tag }, t));
    if (!tags.length) this.tagSelect.appendChild(h('option', { value: '' }, '(no scalar tags)'));
    const { re } = safeRegex(ctx.state.runFilter);
    const shown = ctx.data.runs.filter((r) => !re || re.test(r));
    const selected = new Set(ctx.runs);
    clear(this.head);
    this.head.append(
      h('button', { class: 'link', onclick: () => setRunsChecked(ctx.data.runs, [...new Set([...ctx.runs, ...shown])]) }, 'Select all shown'),
      h('button', { class: 'link', onclick: () => setRunsChecked(ctx.data.runs, ctx.runs.filter((r) => !shown.includes(r))) }, 'Select none'),
      h('span', { class: 'muted' }, `${shown.length} run${shown.length === 1 ? '' : 's'}; values of `, h('code', null, tag || '–')));
    const token = {};
    this.token = token;
    // One request for every run: the server's per-tag summary (exact
    // count, first/last, min/max and non-finite counts).
    let sums = {};
    if (tag) {
      const key = this.gen + '|' + tag;
      if (this.sumKey !== key) { this.sumKey = key; this.sumPromise = getJSON('data/plugin/scalars/summary', { tag }).catch(() => ({})); }
      sums = (await this.sumPromise) || {};
    }
    const rows = shown.map((run) => {
      const sm = sums[run] || null;
      const info = infoFor(ctx.data.runsInfo, run);
      const start = sm ? num(sm.first_wall) : info ? num(info.first_wall) : null;
      const end = sm ? num(sm.last_wall) : info ? num(info.last_wall) : null;
      return {
        run, selected: selected.has(run), start,
        steps: info && info.max_step !== undefined ? num(info.max_step) : sm ? num(sm.last_step) : null,
        points: sm ? num(sm.count) : null,
        duration: start !== null && end !== null ? end - start : null,
        last: sm ? num(sm.last) : null, min: sm ? num(sm.min) : null, max: sm ? num(sm.max) : null,
        nonfinite: sm ? num(sm.nan) + num(sm.pos_inf) + num(sm.neg_inf) : 0,
      };
    });
    if (this.token !== token) return;
    this.table.setRows(rows);
    window.__tfb.pages.runs = { tag, rows: rows.map((r) => ({ ...r })) };
  },
};

export default page;
