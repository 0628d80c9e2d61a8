// The run a one-run page (GPU, gradients, pipeline) shows, and its run
// selector's options.
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
