// Hyperparameter helpers shared by the Runs, Scalars and HParams pages
// (issue 12): values as text, the column filters, and the cached answers of
// /data/plugin/hparams/{experiment,runs}. Not a page: js/lib/ holds modules
// that pages import.
import { getJSON } from '../core/api.js';

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
export function hpFilterParse(text) {
  const t = (text || '').trim();
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
