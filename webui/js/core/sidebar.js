// The run selector in the left sidebar: a regex filter, select all / none,
// and one row per run with its colour swatch and a checkbox. Selection is
// kept in state.runs (null = all runs), so it survives reloads and travels
// in the URL.
import { h, clear } from './dom.js';
import { runColor } from './colors.js';
import { state, setState, safeRegex } from './state.js';

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
// the filter keeps focus and caret while the user types. getState(run), if
// given, names the run's status (running, finished, crashed, stalled,
// diverged: /data/runs_info) for its badge.
export function mountRunList(container, getRuns, getState) {
  clear(container);
  const filter = h('input', {
    type: 'search', class: 'filter', placeholder: 'Filter runs (regex)',
    value: state.runFilter, 'aria-label': 'Filter runs (regex)', id: 'run-filter',
    oninput: (e) => setState({ runFilter: e.target.value }),
  });
  const count = h('span', { class: 'muted count' });
  const list = h('ul', { class: 'runs', id: 'run-list' });
  function visibleRuns() {
    const { re } = safeRegex(state.runFilter);
    return getRuns().filter((r) => !re || re.test(r));
  }
  function setVisible(on) {
    const all = getRuns();
    const cur = state.runs === null ? new Set(all) : new Set(state.runs);
    for (const r of visibleRuns()) { if (on) cur.add(r); else cur.delete(r); }
    setRunsChecked(all, [...cur]);
  }
  const buttons = h('div', { class: 'row-buttons' },
    h('button', { class: 'link', id: 'runs-all', onclick: () => setVisible(true) }, 'All'),
    h('button', { class: 'link', id: 'runs-none', onclick: () => setVisible(false) }, 'None'),
    count);
  container.append(h('h3', null, 'Runs'), filter, buttons, list);

  function refresh() {
    const all = getRuns();
    const { ok } = safeRegex(state.runFilter);
    filter.classList.toggle('invalid', !ok);
    if (document.activeElement !== filter && filter.value !== state.runFilter) filter.value = state.runFilter;
    const chosen = state.runs === null ? null : new Set(state.runs);
    const visible = visibleRuns();
    count.textContent = `${selectedRuns(all).length} / ${all.length} selected`;
    clear(list);
    for (const r of visible) {
      const on = chosen === null || chosen.has(r);
      list.appendChild(h('li', null,
        h('label', { title: r },
          h('input', { type: 'checkbox', checked: on, dataset: { run: r },
            onchange: (e) => setRunChecked(all, r, e.target.checked) }),
          h('span', { class: 'swatch', style: { background: runColor(r) } }),
          h('span', { class: 'run-name' }, r),
          runStateBadge(getState && getState(r)))));
    }
    if (!visible.length) list.appendChild(h('li', { class: 'muted' }, all.length ? 'No run matches the filter.' : 'No runs yet.'));
  }
  refresh();
  return { refresh, filter };
}
