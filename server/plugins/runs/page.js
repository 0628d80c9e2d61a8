// Runs table (beyond TensorBoard, #3074): one row per run with its steps,
// start, duration and the last / min / max of a chosen scalar tag; sortable;
// ticking or clicking a row selects the run everywhere (the sidebar's
// checkboxes follow). Compare runs (issue 12): every hyperparameter is a
// column (sortable) with a filter in the settings; the filtered rows are
// the selected runs on every page (state.hpFilter and state.runs, both in
// the URL). Sweeps (issue 18): the parallel-coordinates brushes of the
// HParams tab (state.hpBrush) filter the rows too, and the rows are
// virtualized with precomputed sort keys (core/vlist.js), so 10,000 runs
// sort and filter without a pause.
import { h, clear, debounce } from '../core/dom.js';
import { virtualTable } from '../core/vlist.js';
import { getJSON, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { eng, rel, wall, int, si } from '../core/format.js';
import { safeRegex } from '../core/state.js';
import { setRunChecked, setRunsChecked, runStateBadge } from '../core/sidebar.js';
import { hpText, hpFilterParse, loadHparamRows, brushTags, brushActive, keptRuns } from '../lib/hparams.js';
import { SCALAR_TAGS, allScalarTags, defaultTag } from '../lib/catalog.js';

// /data/runs_info: [{name, first_wall, last_wall, max_step, tags, points,
// files, trace_files}], indexed by name once per answer.
const infoIndex = new WeakMap();
function infoFor(info, run) {
  if (!Array.isArray(info)) return null;
  let m = infoIndex.get(info);
  if (!m) {
    m = new Map();
    for (const x of info) if (x && !m.has(x.name)) m.set(x.name, x);
    infoIndex.set(info, m);
  }
  return m.get(run) || null;
}

// The one Status column: the run's state badge (running, finished,
// crashed, stalled, diverged: /data/runs_info), and beside it the hparams
// session's end status only where it says more than the state: a session
// that ended in failure (a run can look finished and still have failed),
// or any session status when the run has no state.
function sessionNote(state, session) {
  if (!session || session === 'unknown') return null;
  if (!state) return session;
  return session === 'failure' && state !== 'crashed' ? 'session failed' : null;
}

function statusCell(r) {
  const badge = runStateBadge(r.runState);
  const note = sessionNote(r.runState, r.status);
  if (!badge && !note) return '–';
  return h('span', { class: 'run-status' }, badge,
    note ? h('span', { class: 'session-status muted small', title: 'hparams session status: ' + r.status }, (badge ? ' ' : '') + note) : null);
}

const page = {
  // The first screen needs /data/runs_info (webui/README.md): the table's state column and details.
  runsInfo: true,
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { scalarTags: SCALAR_TAGS },
  mount(ctx) {
    this.ctx = ctx;
    this.gen = 0;
    this.rows = new Map();
    this.tagSelect = h('select', { id: 'runs-tag', onchange: (e) => ctx.setState({ tag: e.target.value }) });
    ctx.settings.append(h('h3', null, 'Values of tag'), this.tagSelect,
      h('p', { class: 'muted small hint' }, 'Click a row, or its checkbox, to select the run on every page.'));
    this.hpFilters = h('div', { class: 'hp-filters', id: 'hp-filters' });
    ctx.settings.append(h('h3', null, 'Hyperparameters'), this.hpFilters);
    // Run status filter (issue 23): '' = every state.
    this.stateFilter = '';
    this.stateSelect = h('select', { id: 'runs-state', onchange: (e) => { this.stateFilter = e.target.value; this.refresh(); } },
      ...['', 'running', 'finished', 'crashed', 'stalled', 'diverged'].map((v) => h('option', { value: v }, v || 'any')));
    ctx.settings.append(h('h3', null, 'Run status'), this.stateSelect);
    this.hpNames = null;
    this.tableCard = h('div', { class: 'card table-card virtual' });
    this.brushNote = h('div', { class: 'muted small', id: 'runs-brush' });
    this.head = h('div', { class: 'toolbar' });
    ctx.main.append(h('h2', { class: 'page-title' }, 'Runs'), this.head, this.brushNote, this.tableCard);
    this.buildTable([]);
    this.refresh();
  },

  // The table's columns: the run, its status (statusCell), the fixed
  // ones (Steps ... Non-finite), then one per hparam: a sweep's dozen
  // hparams used to push Start ... Max past a 1440 px window; they
  // scroll inside the card now, the run column sticky beside them.
  buildTable(hps) {
    const hpCols = hps.map((c) => ({
      key: 'hp:' + c.name, label: c.display_name || c.name, num: c.type === 'number',
      value: (r) => (r.hp && c.name in r.hp ? hpSortValue(r.hp[c.name]) : null),
      render: (r) => (r.hp && c.name in r.hp ? h('span', { class: 'hp-value' }, hpText(r.hp[c.name])) : '–'),
    }));
    if (this.table) this.table.destroy();
    this.table = virtualTable([
      { key: 'sel', label: '', value: (r) => (r.selected ? 1 : 0), render: (r) => h('input', {
        type: 'checkbox', checked: r.selected, 'aria-label': 'select ' + r.run,
        onclick: (e) => e.stopPropagation(),
        onchange: (e) => setRunChecked(this.ctx.data.runs, r.run, e.target.checked) }) },
      { key: 'run', label: 'Run', render: (r) => h('span', { class: 'run-cell' },
        h('span', { class: 'swatch', style: { background: runColor(r.run) } }), ' ', r.run) },
      { key: 'status', label: 'Status', value: (r) => (r.runState || r.status ? (r.runState || '') + ' ' + (r.status || '') : null),
        render: statusCell },
      { key: 'steps', label: 'Steps', num: true, render: (r) => (r.steps === null ? '–' : int(r.steps)) },
      { key: 'start', label: 'Start', num: true, render: (r) => wall(r.start) },
      { key: 'duration', label: 'Duration', num: true, render: (r) => duration(r.duration) },
      { key: 'points', label: 'Points', num: true, render: (r) => (r.points === null ? '–' : int(r.points)) },
      { key: 'last', label: 'Last', num: true, render: (r) => (r.metricRun ? h('span', { title: 'from run ' + r.metricRun }, eng(r.last), ' ↑') : eng(r.last)) },
      { key: 'min', label: 'Min', num: true, render: (r) => eng(r.min) },
      { key: 'max', label: 'Max', num: true, render: (r) => eng(r.max) },
      { key: 'nonfinite', label: 'Non-finite', num: true, render: (r) => (r.nonfinite ? h('span', { class: 'error-text' }, String(r.nonfinite)) : '0') },
      ...hpCols,
    ], {
      scroller: this.tableCard, rowHeight: 28,
      sortKey: 'run', sortDir: 1, className: 'runs-table',
      rowProps: (r) => ({ class: 'clickable' + (r.selected ? ' selected' : ''), dataset: { run: r.run },
        onclick: () => setRunChecked(this.ctx.data.runs, r.run, !r.selected) }),
    });
    clear(this.tableCard);
    this.tableCard.append(this.table.el);
  },

  // One filter box per hparam; typing filters the rows and selects them.
  buildFilters(hps) {
    clear(this.hpFilters);
    if (!hps.length) { this.hpFilters.append(h('p', { class: 'muted small' }, 'No run logged hyperparameters.')); return; }
    for (const c of hps) {
      const ph = c.type === 'number' ? '>0.01, 1..5, =3 or regex' : 'regex';
      const input = h('input', { type: 'search', class: 'filter hp-filter', dataset: { hparam: c.name },
        placeholder: ph, value: (this.ctx.state.hpFilter || {})[c.name] || '', 'aria-label': 'Filter ' + c.name,
        oninput: debounce((e) => this.setHpFilter(c.name, e.target.value), 150) });
      const vals = c.values.length ? c.values.map(hpText).join(', ') + (c.more_values ? ', …' : '') : '';
      this.hpFilters.append(h('label', { class: 'hp-filter-row', title: vals },
        h('span', { class: 'hp-name' }, c.display_name || c.name), input));
    }
  },

  setHpFilter(name, text) {
    const f = { ...(this.ctx.state.hpFilter || {}) };
    if (text) f[name] = text; else delete f[name];
    this.ctx.setState({ hpFilter: f });
    this.applySelection(f);
  },

  // The runs the hparam filter keeps become the selection of every page;
  // no filter left selects every run again.
  applySelection(f) {
    const all = this.ctx.data.runs;
    setRunsChecked(all, keptRuns(all, this.hpRows || new Map(), f, this.ctx.state.hpBrush, this.ctx.state.hpStat));
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
    const all = ctx.data.runs;
    const byFilter = re ? all.filter((r) => re.test(r)) : all;
    const selected = new Set(ctx.runs);
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
    // Hyperparameters of every run, and the metric from the parent run for
    // PyTorch's add_hparams sub-runs.
    const brush = ctx.state.hpBrush || {};
    const hp = await loadHparamRows(this.gen, [tag, ...brushTags(brush)]);
    if (this.token !== token) return;
    const names = hp.experiment.hparams.map((c) => c.name).join('\u0000');
    if (names !== this.hpNames) {
      this.hpNames = names;
      this.buildTable(hp.experiment.hparams);
      this.buildFilters(hp.experiment.hparams);
    }
    this.hpRows = hp.rows;
    const hpf = ctx.state.hpFilter || {};
    // New data under an active filter: runs that now match join the
    // selection (and ones that no longer match leave it).
    if (this.filterGen !== this.gen) {
      const first = this.filterGen === undefined;
      this.filterGen = this.gen;
      if (!first && (Object.values(hpf).some((v) => v) || brushActive(brush))) this.applySelection(hpf);
    }
    for (const inp of this.hpFilters.querySelectorAll('input[data-hparam]')) {
      const { ok } = hpFilterParse(hpf[inp.dataset.hparam] || '');
      inp.classList.toggle('invalid', !ok);
      if (document.activeElement !== inp) inp.value = hpf[inp.dataset.hparam] || '';
    }
    const shown = keptRuns(byFilter, this.hpRows, hpf, brush, ctx.state.hpStat);
    const shownSet = new Set(shown);
    clear(this.head);
    this.head.append(
      h('button', { class: 'link', onclick: () => setRunsChecked(all, [...new Set([...ctx.runs, ...shown])]) }, 'Select all shown'),
      h('button', { class: 'link', onclick: () => setRunsChecked(all, ctx.runs.filter((r) => !shownSet.has(r))) }, 'Select none'),
      h('span', { class: 'muted', id: 'runs-shown' }, `${shown.length} run${shown.length === 1 ? '' : 's'}; values of `, h('code', null, tag || '–')));
    clear(this.brushNote);
    if (brushActive(brush)) {
      this.brushNote.append(`Brushed in parallel coordinates (HParams): ${Object.keys(brush).map((k) => k.replace(/^(hp|metric):/, '')).join(', ')}. `,
        h('button', { class: 'link', id: 'runs-clear-brush', onclick: () => {
          ctx.setState({ hpBrush: {} });
          this.applySelection(ctx.state.hpFilter || {});
        } }, 'Clear brushes'));
    }
    const stateOf = (run) => { const i = infoFor(ctx.data.runsInfo, run); return i && i.status ? i.status.state : null; };
    const rows = shown.filter((run) => !this.stateFilter || stateOf(run) === this.stateFilter).map((run) => {
      const hr = this.hpRows.get(run);
      let sm = sums[run] || null;
      let metricRun = null;
      const pm = hr && hr.metrics && hr.metrics[tag];
      if (!sm && pm && pm.run) {
        // from the parent run: the same fields as scalars/summary
        sm = { count: pm.count, last: pm.last, min: pm.min, max: pm.max, last_step: pm.last_step, nan: pm.nonfinite, pos_inf: 0, neg_inf: 0 };
        metricRun = pm.run;
      }
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
        hp: hr && hr.has_hparams ? hr.hparams : null, status: hr ? hr.status : null, metricRun,
        runState: stateOf(run),
      };
    });
    if (this.token !== token) return;
    this.table.setRows(rows);
    window.__tfb.pages.runs = { tag, rows: rows.length > 500 ? rows.slice(0, 500).map((r) => ({ ...r })) : rows.map((r) => ({ ...r })),
      count: rows.length, hparams: hp.experiment.hparams.map((c) => c.name) };
  },
};

// A run's duration (seconds): under a minute with 3 significant digits in
// the unit that fits (a demo run of 40 ms read "0.0s"), else h m s.
function duration(sec) {
  if (typeof sec !== 'number' || !Number.isFinite(sec) || sec < 0) return '–';
  return sec < 60 ? si(sec, 's') : rel(sec);
}

// Sorting: numbers as numbers, the rest as text.
function hpSortValue(v) {
  return typeof v === 'number' ? v : v === null ? null : hpText(v);
}

export default page;
