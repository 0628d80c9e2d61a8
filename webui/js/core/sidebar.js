// The run selector in the left sidebar: a regex filter, selection by
// filter (all / none of the matching runs), and one row per run with its
// colour swatch and a checkbox, virtualized for sweeps of 10,000 runs. Selection is
// kept in state.runs (null = all runs), so it survives reloads and travels
// in the URL.
import { h, clear } from './dom.js';
import { runColor } from './colors.js';
import { state, setState, safeRegex } from './state.js';
import { virtualRows } from './vlist.js';

// The runs that pages draw: checked and matching the run filter.
export function selectedRuns(allRuns) {
  const { re } = safeRegex(state.runFilter);
  const chosen = state.runs === null ? null : new Set(state.runs);
  return allRuns.filter((r) => (chosen === null || chosen.has(r)) && (!re || re.test(r)));
}

export function setRunChecked(allRuns, run, on) {
  const cur = state.runs === null ? new Set(allRuns) : new Set(state.runs);
  if (on) cur.add(run); else cur.delete(run);
  const list = allRuns.filter((r) => cur.has(r));
  setState({ runs: list.length === allRuns.length ? null : list });
}

export function setRunsChecked(allRuns, runs) {
  const set = new Set(runs);
  const list = allRuns.filter((r) => set.has(r));
  setState({ runs: list.length === allRuns.length ? null : list });
}

// The run's status as a small badge (text only); null when unknown.
export function runStateBadge(st) {
  if (!st) return null;
  return h('span', { class: 'run-state run-state-' + st, title: 'run ' + st }, st);
}

// Builds the run selector once; refresh() redraws the list part only, so
// the filter keeps focus and caret while the user types. The list is
// virtualized (core/vlist.js): with 10,000 runs only the rows in view are
// in the DOM, so filtering and scrolling stay instant. Typing filters the
// list at once; the pages follow (state.runFilter) a moment later.
const ROW_H = 22;

// getState(run), if given, names the run's status (running, finished,
// crashed, stalled, diverged: /data/runs_info) for its badge.
export function mountRunList(container, getRuns, getState) {
  clear(container);
  const filter = h('input', {
    type: 'search', class: 'filter', placeholder: 'Filter runs (regex)',
    value: state.runFilter, 'aria-label': 'Filter runs (regex)', id: 'run-filter',
    oninput: (e) => { typed = e.target.value; list.scrollTop = 0; refresh(); pushFilter(); },
  });
  let typed = state.runFilter;
  let pushTimer = null;
  const pushFilter = () => {
    clearTimeout(pushTimer);
    pushTimer = setTimeout(() => setState({ runFilter: typed }), 120);
  };
  const count = h('span', { class: 'muted count', id: 'runs-count' });
  const list = h('ul', { class: 'runs', id: 'run-list', role: 'list' });
  const rows = virtualRows({ scroller: list, body: list, rowHeight: ROW_H, spacer: () => h('li', { 'aria-hidden': 'true' }) });
  // The list shown: every run matching the filter as typed; memoized on
  // the run list and the filter, the two things it depends on.
  let memo = { all: null, src: null, out: [] };
  function visibleRuns() {
    const all = getRuns();
    if (memo.all === all && memo.src === typed) return memo.out;
    const { re } = safeRegex(typed);
    memo = { all, src: typed, out: re ? all.filter((r) => re.test(r)) : all };
    return memo.out;
  }
  // Selection by filter: select the runs matching (all runs when no
  // filter), or take them out of the selection.
  function setVisible(on) {
    clearTimeout(pushTimer);
    if (typed !== state.runFilter) setState({ runFilter: typed });
    const all = getRuns();
    const cur = state.runs === null ? new Set(all) : new Set(state.runs);
    for (const r of visibleRuns()) { if (on) cur.add(r); else cur.delete(r); }
    setRunsChecked(all, [...cur]);
  }
  const allBtn = h('button', { class: 'link', id: 'runs-all', onclick: () => setVisible(true) }, 'All');
  const noneBtn = h('button', { class: 'link', id: 'runs-none', onclick: () => setVisible(false) }, 'None');
  const buttons = h('div', { class: 'row-buttons' }, allBtn, noneBtn, count);
  const empty = h('p', { class: 'muted small', hidden: true });
  container.append(h('h3', null, 'Runs'), filter, buttons, list, empty);

  function refresh() {
    const all = getRuns();
    if (document.activeElement !== filter && filter.value !== state.runFilter && typed === filter.value) {
      filter.value = state.runFilter;
      typed = state.runFilter;
    }
    const { ok } = safeRegex(typed);
    filter.classList.toggle('invalid', !ok);
    const chosen = state.runs === null ? null : new Set(state.runs);
    const visible = visibleRuns();
    const nSel = chosen === null ? visible.length : visible.reduce((a, r) => a + (chosen.has(r) ? 1 : 0), 0);
    count.textContent = `${nSel} / ${all.length} selected`;
    allBtn.textContent = typed ? `Select the ${visible.length} matching` : 'All';
    noneBtn.textContent = typed ? 'Deselect them' : 'None';
    list.hidden = !visible.length;
    empty.hidden = visible.length > 0;
    empty.textContent = all.length ? 'No run matches the filter.' : 'No runs yet.';
    rows.set(visible.length, (i) => {
      const r = visible[i];
      const on = chosen === null || chosen.has(r);
      // Pages may draw the hovered run (the scalars band charts do).
      const hover = (run) => () => window.dispatchEvent(new CustomEvent('tfb:hover-run', { detail: run }));
      return h('li', { dataset: { run: r }, onmouseenter: hover(r), onmouseleave: hover(null) },
        h('label', { title: r },
          h('input', { type: 'checkbox', checked: on, dataset: { run: r },
            onchange: (e) => setRunChecked(all, r, e.target.checked) }),
          h('span', { class: 'swatch', style: { background: runColor(r) } }),
          h('span', { class: 'run-name' }, r),
          runStateBadge(getState && getState(r))));
    });
  }
  refresh();
  return { refresh, filter };
}
