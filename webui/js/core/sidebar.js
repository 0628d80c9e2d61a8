// The run selector in the left sidebar: a filter (a regex over the names,
// or an expression over the server's runs_wide table, checked as you type
// with its error shown under the box), selection by
// filter (all / none of the matching runs), and one row per run with its
// colour swatch and a checkbox, virtualized for sweeps of 10,000 runs. Selection is
// kept in state.runs (null = all runs), so it survives reloads and travels
// in the URL.
import { h, clear } from './dom.js';
import { url } from './api.js';
import { runColor } from './colors.js';
import { state, setState, safeRegex } from './state.js';
import { virtualRows } from './vlist.js';

// The runs that pages draw: checked and matching the run filter (the
// expression's last answer when the filter is one).
// The same array while nothing it depends on changed (the frame asks on
// every render; at 100,000 runs each filter took tens of ms), so pages
// may key caches by its identity.
let selMemo = null;
export function selectedRuns(allRuns) {
  const inputs = [allRuns, state.runs, state.runFilter, state.runWhere, state.runWhereHits];
  if (selMemo && selMemo.inputs.every((x, i) => x === inputs[i])) return selMemo.out;
  const { re } = safeRegex(state.runWhere ? '' : state.runFilter);
  const chosen = state.runs === null ? null : new Set(state.runs);
  const hits = state.runWhere && state.runWhereHits ? new Set(state.runWhereHits) : null;
  const out = allRuns.filter((r) => (chosen === null || chosen.has(r)) && (!re || re.test(r)) && (!hits || hits.has(r)));
  selMemo = { inputs, out };
  return out;
}

// Checks a run-filter expression with the server (GET /data/runs_filter):
// {runs} or {error, offset} (offset: the byte of the error, or -1).
export async function checkWhere(expr) {
  let res;
  try {
    res = await fetch(url('data/runs_filter', { where: expr }), { cache: 'no-store' });
  } catch (e) {
    return { error: 'server unreachable', offset: -1 };
  }
  let j = null;
  try { j = await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok || !j) return { error: (j && j.error) || res.status + ' ' + res.statusText, offset: j && Number.isInteger(j.offset) ? j.offset : -1 };
  return { runs: Array.isArray(j.runs) ? j.runs : [] };
}

// What the user typed into a column of the box: the UTF-8 byte offset the
// server names, in characters.
function charsAt(text, byteOff) {
  const bytes = new TextEncoder().encode(text);
  return new TextDecoder().decode(bytes.slice(0, Math.max(0, byteOff))).length;
}

// How long typing pauses before an expression is checked: each check is a
// query over runs_wide on the server.
const WHERE_CHECK_MS = 250;

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
  // The filter's kind: a regex over names, or an expression (SQL) over
  // runs_wide; the URL says which (runWhere set: an expression).
  let mode = state.runWhere ? 'where' : 'regex';
  const PH = { regex: 'Filter runs (regex)', where: "lr > 0.01 AND status = 'finished'" };
  const filter = h('input', {
    type: 'search', class: 'filter', placeholder: PH[mode],
    value: mode === 'where' ? state.runWhere : state.runFilter, 'aria-label': 'Filter runs', id: 'run-filter',
    oninput: (e) => { typed = e.target.value; list.scrollTop = 0; if (mode === 'regex') { refresh(); pushFilter(); } else checkSoon(); },
  });
  const modeBtn = h('button', { class: 'link', id: 'run-filter-mode', style: { marginLeft: '6px' },
    title: 'Filter by a regex over run names, or by an expression over runs_wide (hparams, status, each tag\'s .last and .min)',
    onclick: () => setMode(mode === 'regex' ? 'where' : 'regex') });
  const whereErr = h('div', { class: 'error-text small', id: 'run-filter-error', hidden: true,
    style: { whiteSpace: 'pre-wrap', fontFamily: 'ui-monospace, Menlo, Consolas, monospace', margin: '2px 0 4px' } });
  let typed = filter.value;
  let pushTimer = null;
  const pushFilter = () => {
    clearTimeout(pushTimer);
    pushTimer = setTimeout(() => setState({ runFilter: typed }), 120);
  };
  // The expression is checked WHERE_CHECK_MS after typing stops; only the
  // latest check's answer counts. A bad one is shown under the box (the
  // server's message and a caret under the error) and the last good
  // filter stays in force.
  let checkTimer = null;
  let checkSeq = 0;
  let whereBad = false;
  const checkSoon = () => { clearTimeout(checkTimer); checkTimer = setTimeout(() => checkNow(typed), WHERE_CHECK_MS); };
  async function checkNow(expr) {
    const seq = ++checkSeq;
    if (!expr.trim()) {
      whereBad = false;
      whereErr.hidden = true;
      setState({ runWhere: '', runWhereHits: null });
      refresh();
      return;
    }
    const ans = await checkWhere(expr);
    if (seq !== checkSeq || mode !== 'where') return;
    whereBad = !!ans.error;
    if (ans.error) {
      // The expression again with the erring token marked (a caret line
      // would not stay under it once the narrow sidebar wraps the text).
      clear(whereErr);
      whereErr.append(ans.error);
      if (ans.offset >= 0) {
        const i = charsAt(expr, ans.offset);
        const tok = /^\S*/.exec(expr.slice(i))[0];
        whereErr.append('\n' + expr.slice(0, i),
          h('span', { class: 'where-at', style: { textDecoration: 'underline wavy', fontWeight: 'bold' } }, tok || '\u2038'),
          expr.slice(i + tok.length));
      }
      whereErr.hidden = false;
      refresh();
      return;
    }
    whereErr.hidden = true;
    setState({ runWhere: expr, runWhereHits: ans.runs, runFilter: '' });
  }
  function setMode(m) {
    mode = m;
    clearTimeout(checkTimer);
    checkSeq++;
    whereBad = false;
    whereErr.hidden = true;
    filter.placeholder = PH[m];
    filter.value = typed = '';
    setState({ runFilter: '', runWhere: '', runWhereHits: null });
    refresh();
    filter.focus();
  }
  const count = h('span', { class: 'muted count', id: 'runs-count' });
  const list = h('ul', { class: 'runs', id: 'run-list', role: 'list' });
  const rows = virtualRows({ scroller: list, body: list, rowHeight: ROW_H, spacer: () => h('li', { 'aria-hidden': 'true' }) });
  // The list shown: every run matching the filter as typed; memoized on
  // the run list and the filter, the two things it depends on.
  let memo = { all: null, src: null, out: [] };
  function visibleRuns() {
    const all = getRuns();
    const src = mode === 'where' ? state.runWhereHits : typed;
    if (memo.all === all && memo.src === src) return memo.out;
    let out = all;
    if (mode === 'where') {
      const hits = state.runWhere && state.runWhereHits ? new Set(state.runWhereHits) : null;
      if (hits) out = all.filter((r) => hits.has(r));
    } else {
      const { re } = safeRegex(typed);
      if (re) out = all.filter((r) => re.test(r));
    }
    memo = { all, src, out };
    return memo.out;
  }
  // Selection by filter: select the runs matching (all runs when no
  // filter), or take them out of the selection.
  function setVisible(on) {
    clearTimeout(pushTimer);
    if (mode === 'regex' && typed !== state.runFilter) setState({ runFilter: typed });
    const all = getRuns();
    const cur = state.runs === null ? new Set(all) : new Set(state.runs);
    for (const r of visibleRuns()) { if (on) cur.add(r); else cur.delete(r); }
    setRunsChecked(all, [...cur]);
  }
  const allBtn = h('button', { class: 'link', id: 'runs-all', onclick: () => setVisible(true) }, 'All');
  const noneBtn = h('button', { class: 'link', id: 'runs-none', onclick: () => setVisible(false) }, 'None');
  const buttons = h('div', { class: 'row-buttons' }, allBtn, noneBtn, count);
  const empty = h('p', { class: 'muted small', hidden: true });
  container.append(h('h3', null, 'Runs', modeBtn), filter, whereErr, buttons, list, empty);

  function refresh() {
    const all = getRuns();
    // Back/forward or a link: the URL's filter, in its kind.
    const want = state.runWhere ? 'where' : state.runFilter ? 'regex' : mode;
    if (document.activeElement !== filter && want !== mode) { mode = want; filter.placeholder = PH[mode]; typed = filter.value = ''; whereErr.hidden = true; whereBad = false; }
    const shown = mode === 'where' ? state.runWhere : state.runFilter;
    if (document.activeElement !== filter && filter.value !== shown && typed === filter.value && !whereBad) {
      filter.value = shown;
      typed = shown;
    }
    modeBtn.textContent = mode === 'where' ? 'SQL ▾' : 'regex ▾';
    modeBtn.setAttribute('aria-label', 'Filter kind: ' + (mode === 'where' ? 'expression over runs_wide' : 'regex over run names'));
    const ok = mode === 'where' ? !whereBad : safeRegex(typed).ok;
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
  // The URL's expression: its runs are asked for at once (and again when
  // the data changes: new runs, new values).
  const recheck = () => { if (mode === 'where' && state.runWhere && !whereBad) checkNow(state.runWhere); };
  recheck();
  return { refresh, filter, recheck };
}
