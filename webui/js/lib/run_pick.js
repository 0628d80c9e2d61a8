// The run a one-run page (GPU, gradients, pipeline) shows, its run
// selector, and the frame, update and load the pages share.
import { h, clear } from '../core/dom.js';

// Of `runs` (the runs that have the page's data): the URL's run when it
// is one of them, else the first of them selected in the sidebar, else
// the first of them. Fills `select` with `runs`, the chosen one selected.
// Returns the run, or undefined when `runs` is empty.
export function pickRun(ctx, runs, select) {
  const sel = ctx.runs.filter((r) => runs.includes(r));
  const run = runs.includes(ctx.state.run) ? ctx.state.run : (sel[0] || runs[0]);
  clear(select);
  for (const r of runs) select.appendChild(h('option', { value: r, selected: r === run }, r));
  return run;
}

// The frame of a one-run page: the run selector (`id`; a choice goes to the
// URL state) and a hint in the settings, the title and an empty body
// (page.runSelect, page.body) in the main area.
export function mountRunPage(page, ctx, id, title, hint) {
  page.ctx = ctx;
  page.runSelect = h('select', { id, onchange: (e) => ctx.setState({ run: e.target.value }) });
  ctx.settings.append(h('h3', null, 'Run'), page.runSelect, h('p', { class: 'muted small hint' }, hint));
  page.body = h('div');
  ctx.main.append(h('h2', { class: 'page-title' }, title), page.body);
}

// A one-run page draws again (page.render) when the data, the URL's run or
// the picked runs change.
export function updateRunPage(page, ctx, changed) {
  page.ctx = ctx;
  if (changed.some((k) => ['data', 'catalog', 'run', 'runs', 'runFilter', 'runWhereHits'].includes(k))) page.render();
}

// What load() gives, for the page's latest render only: undefined once a
// later render took over, or when it failed (the body then says so).
export async function loadLatest(page, what, load) {
  const token = {};
  page.token = token;
  try {
    const v = await load();
    return page.token === token ? v : undefined;
  } catch (e) {
    if (page.token !== token) return undefined;
    clear(page.body);
    page.body.appendChild(h('div', { class: 'empty small error-text' }, `Could not load ${what}: ` + e.message));
    return undefined;
  }
}
