// What pages ask the frame to fetch on every reload (their `catalog`,
// webui/README.md "Pages"): the tag listings and the health alerts several
// pages read from `data`. Each route is fetched once per reload, whichever
// pages ask, with the run list. And what the scalar tags listing gives the
// pages that pick one tag of it (Runs, HParams).
import { naturalCompare } from '../core/format.js';

// Tag listings come as {run: {tag: {...}}} (scalars, histograms) or
// {run: [tag, ...]} (text, as TensorBoard's text plugin); pages see the
// first form.
export function tagMap(v) {
  const out = {};
  if (!v || typeof v !== 'object') return out;
  for (const [run, tags] of Object.entries(v)) {
    out[run] = {};
    if (Array.isArray(tags)) for (const t of tags) out[run][String(t)] = {};
    else if (tags && typeof tags === 'object') for (const t of Object.keys(tags)) out[run][t] = tags[t];
  }
  return out;
}

// The scalar tags as {runs: {run: i}, tag_sets: [[tag, ...], ...]}
// (format=sets, each distinct set once: a sweep's 100,000 runs share one,
// 2 MB of JSON instead of 20 MB, server/plugins/scalars/API.md). The
// pages see tagMap's form; runs with the same set share one object (read
// it, never change it).
export function tagSetsMap(v) {
  if (!v || typeof v !== 'object' || !v.runs || !Array.isArray(v.tag_sets)) return tagMap(v);
  const sets = v.tag_sets.map((tags) => {
    const o = {};
    if (Array.isArray(tags)) for (const t of tags) o[String(t)] = {};
    return Object.freeze(o);
  });
  // In place: the answer's own object already has every run's key
  // (building a second one of 100,000 keys took half a second).
  const out = v.runs;
  for (const run of Object.keys(out)) {
    const set = sets[out[run]] || {};
    // a run named __proto__ (JSON.parse made it an own key) stays a key
    if (run === '__proto__') Object.defineProperty(out, run, { value: set, enumerable: true, writable: true, configurable: true });
    else out[run] = set;
  }
  return out;
}

export const SCALAR_TAGS = { route: 'data/plugin/scalars/tags?format=sets', take: tagSetsMap };
// Every run's scalar tags in one sorted list, and the one a page shows
// first: a loss (".../loss" before any "loss" in the name), else the first.
export function allScalarTags(data) {
  const s = new Set();
  for (const t of Object.values(data.scalarTags)) for (const k of Object.keys(t)) s.add(k);
  return [...s].sort(naturalCompare);
}
export function defaultTag(tags) {
  return tags.find((t) => /(^|\/)loss$/i.test(t)) || tags.find((t) => /loss/i.test(t)) || tags[0] || '';
}
export const HIST_TAGS = { route: 'data/plugin/histograms/tags', take: tagMap };
export const TEXT_TAGS = { route: 'data/plugin/text/tags', take: tagMap };
// The health dashboard's NaN/Inf alerts, or null when it does not answer.
export const HEALTH_ALERTS = {
  route: 'data/plugin/health/alerts',
  take: (a) => (a && Array.isArray(a.alerts) ? a.alerts : null),
};
