// Hyperparameter helpers shared by the Runs, Scalars and HParams pages
// (issue 12): values as text, the column filters, and the cached answers of
// /data/plugin/hparams/{experiment,runs}. Not a page: js/lib/ holds modules
// that pages import.
import { getJSON, num } from '../core/api.js';
import { defineState, key, state } from '../core/state.js';
import { onSelectionLost } from '../core/selection.js';

// The view state the runs table, the HParams page and every tab's run
// selection share (URL keys; core/state.js).
const stringsObject = (v) => v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
const emptyObject = (v) => !Object.keys(v).length;
defineState({
  // runs table: {hparam name: filter text}; empty filters are left out
  hpFilter: { ...key.json({}, stringsObject, emptyObject), write: (v) => {
    const f = Object.fromEntries(Object.entries(v || {}).filter(([, x]) => x));
    return Object.keys(f).length ? JSON.stringify(f) : null;
  } },
  hpStat: key.oneOf('last', 'min', 'max'),  // a metric's value: last | min | max
  // parallel coordinates brushes: {'hp:<name>' | 'metric:<tag>': [lo, hi] |
  // {cats: [text, ...]}}; the runs they keep are the selection of every
  // tab, and the runs table shows only them
  hpBrush: key.json({}, (v) => v && typeof v === 'object' && !Array.isArray(v) &&
    Object.values(v).every((r) => (Array.isArray(r) && r.length === 2 && r.every((x) => typeof x === 'number')) ||
      (r && Array.isArray(r.cats) && r.cats.every((x) => typeof x === 'string'))), emptyObject),
  hpColor: key.str(),  // parallel coordinates: the metric tag that colours the lines
});

// A hyperparameter value as the table shows it.
export function hpText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return String(v);
}

// A column filter: '' matches all; `a..b` a closed range; `>x`, `>=x`,
// `<x`, `<=x`, `=x` compare numbers; anything else is a case-insensitive
// regex over the value's text (an invalid one matches nothing, ok false).
// Parsed filters are memoized by their text: the runs table tests 10,000
// rows against the same few filters.
const parsed = new Map();
export function hpFilterParse(text) {
  const t = (text || '').trim();
  let f = parsed.get(t);
  if (!f) {
    if (parsed.size > 200) parsed.clear();
    f = parseFilter(t);
    parsed.set(t, f);
  }
  return f;
}

function parseFilter(t) {
  if (!t) return { ok: true, test: () => true };
  const numRe = '[-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?';
  let m = new RegExp('^(' + numRe + ')\\s*\\.\\.\\s*(' + numRe + ')$').exec(t);
  if (m) {
    const a = parseFloat(m[1]), b = parseFloat(m[2]);
    return { ok: true, test: (v) => typeof v === 'number' && v >= a && v <= b };
  }
  m = new RegExp('^(>=|<=|>|<|=)\\s*(' + numRe + ')$').exec(t);
  if (m) {
    const x = parseFloat(m[2]);
    const f = { '>': (v) => v > x, '>=': (v) => v >= x, '<': (v) => v < x, '<=': (v) => v <= x, '=': (v) => v === x }[m[1]];
    return { ok: true, test: (v) => typeof v === 'number' && f(v) };
  }
  try {
    const re = new RegExp(t, 'i');
    return { ok: true, test: (v) => re.test(hpText(v)) };
  } catch (e) {
    return { ok: false, test: () => false };
  }
}

// Does a row of /data/plugin/hparams/runs pass every column filter? A run
// without the hyperparameter fails a non-empty filter on it.
export function hpMatches(row, filters) {
  for (const [name, text] of Object.entries(filters || {})) {
    if (!text) continue;
    if (!row || !row.has_hparams || !(name in row.hparams)) return false;
    if (!hpFilterParse(text).test(row.hparams[name])) return false;
  }
  return true;
}

// The experiment and the runs' hparams (with metric `metric` summarised),
// one request each per data generation and metric.
const cache = new Map();
export function loadHparams(gen, metric) {
  const key = gen + '\u0000' + (metric || '');
  if (!cache.has(key)) {
    for (const k of cache.keys()) if (!k.startsWith(gen + '\u0000')) cache.delete(k);
    const empty = { experiment: { hparams: [], metrics: [], runs_with_hparams: 0 }, runs: [] };
    cache.set(key, Promise.all([
      getJSON('data/plugin/hparams/experiment'),
      getJSON('data/plugin/hparams/runs', metric ? { metric } : null),
    ]).then(([experiment, runs]) => ({ experiment, runs })).catch(() => { cache.delete(key); return empty; }));
  }
  return cache.get(key);
}

// Parallel-coordinates brushes (issue 18, state.hpBrush): one per axis,
// keyed 'hp:<name>' (an hparam) or 'metric:<tag>' (the metric's `stat`:
// last, min or max); a numeric range [lo, hi] or {cats: [text, ...]} for a
// text axis. A run passes when every brushed axis has a value in its brush.
export function axisValue(row, key, stat) {
  if (!row) return undefined;
  if (key.startsWith('hp:')) {
    const n = key.slice(3);
    return row.has_hparams && n in row.hparams ? row.hparams[n] : undefined;
  }
  if (key.startsWith('metric:')) {
    const m = row.metrics && row.metrics[key.slice(7)];
    return m ? num(m[stat || 'last']) : undefined;
  }
  return undefined;
}

export function brushActive(brush) { return !!brush && Object.keys(brush).length > 0; }

export function brushMatches(row, brush, stat) {
  for (const [k, r] of Object.entries(brush || {})) {
    const v = axisValue(row, k, stat);
    if (v === undefined || v === null) return false;
    if (Array.isArray(r)) { if (typeof v !== 'number' || !(v >= r[0] && v <= r[1])) return false; }
    else if (r && Array.isArray(r.cats) && !r.cats.includes(hpText(v))) return false;
  }
  return true;
}

// The metric tags the brushes read (each needs /hparams/runs?metric=).
export function brushTags(brush) {
  return Object.keys(brush || {}).filter((k) => k.startsWith('metric:')).map((k) => k.slice(7));
}

// The runs' rows with the metrics of every tag in `tags` merged: one
// cached request per tag. Returns {experiment, rows: Map run -> row}.
export async function loadHparamRows(gen, tags) {
  const list = [...new Set(tags.filter((t) => t))];
  const answers = await Promise.all((list.length ? list : ['']).map((t) => loadHparams(gen, t)));
  const rows = new Map();
  for (const ans of answers) {
    for (const r of ans.runs) {
      const have = rows.get(r.run);
      if (!have) rows.set(r.run, { ...r, metrics: { ...(r.metrics || {}) } });
      else Object.assign(have.metrics, r.metrics || {});
    }
  }
  return { experiment: answers[0].experiment, rows };
}

// The runs the Runs page's column filters and the brushes keep, in the
// order of `all`.
export function keptRuns(all, rows, hpFilter, brush, stat) {
  const hasF = Object.values(hpFilter || {}).some((v) => v);
  const hasB = brushActive(brush);
  if (!hasF && !hasB) return all;
  return all.filter((r) => {
    const row = rows.get(r);
    return (!hasF || hpMatches(row, hpFilter)) && (!hasB || brushMatches(row, brush, stat));
  });
}

// A link's run selection the server no longer holds (core/selection.js):
// when the URL has brushes or column filters, the runs they keep are that
// selection again (the URL holds the brush ranges, never the names).
onSelectionLost(async (all) => {
  const brush = state.hpBrush, filter = state.hpFilter;
  if (!brushActive(brush) && !Object.values(filter || {}).some((v) => v)) return null;
  const { rows } = await loadHparamRows('selection', brushTags(brush));
  return keptRuns(all, rows, filter, brush, state.hpStat);
});
