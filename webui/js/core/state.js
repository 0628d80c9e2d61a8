// View state kept in the URL fragment, so a link reproduces the view
// (UI.md): the frame's keys below (tab, selected runs, run and tag filters,
// smoothing, x axis, log y, ...) and the keys each page declares for
// itself with defineState (a page's module does it when it loads), so the
// frame names no dashboard. Defaults are left out of the URL; a key in the
// URL whose page has not loaded yet is kept as it was written.

import { INLINE_MAX, remember, knownRuns, fetchSelection } from './selection.js';

// name -> {def, parse(raw string) -> value | undefined (the default),
// write(value) -> string | null (left out)}. Declaration order is the
// URL's order.
const specs = new Map();
const listeners = [];
export const state = {};
// The URL as last read: its keys' raw values (kept for undeclared keys).
let raw = new URLSearchParams();

// Key specs for the common shapes.
export const key = {
  // A string; '' (the default) is left out.
  str: () => ({ def: '', parse: (v) => v, write: (v) => v || null }),
  // One of the listed values, the first being the default.
  oneOf: (...vals) => ({ def: vals[0], parse: (v) => (vals.includes(v) ? v : undefined), write: (v) => (v === vals[0] ? null : v) }),
  // JSON of a shape ok() accepts; empty (per empty()) is left out.
  json: (def, ok, empty) => ({
    def,
    parse: (v) => { try { const x = JSON.parse(v); return ok(x) ? x : undefined; } catch (e) { return undefined; } },
    write: (v) => (v === undefined || v === null || empty(v) ? null : JSON.stringify(v)),
  }),
};

// A copy of a default, so no two states share an object.
function fresh(v) { return v && typeof v === 'object' ? JSON.parse(JSON.stringify(v)) : v; }

// A key's value in the URL q; the default when absent or malformed.
function valueOf(name, spec, q) {
  if (!q.has(name)) return fresh(spec.def);
  let v;
  try { v = spec.parse(q.get(name), q); } catch (e) { v = undefined; }
  return v === undefined ? fresh(spec.def) : v;
}

// Declares state keys ({name: spec}); their values are read from the URL
// at once. Declaring a key again (two pages sharing it) keeps the first.
export function defineState(keys) {
  for (const [name, spec] of Object.entries(keys)) {
    if (specs.has(name)) continue;
    specs.set(name, spec);
    state[name] = valueOf(name, spec, raw);
  }
}

defineState({
  tab: key.str(),
  // null = every run selected; else an array of names. Run names may hold
  // commas or any character: stored as JSON (several `runs` keys add up).
  // A list longer than INLINE_MAX goes as `@ID`, the id of a selection the
  // server holds (core/selection.js): the URL stays short at any size.
  runs: {
    def: null,
    parse: (v, q) => {
      if (v === '') return [];
      if (v.startsWith('@')) {
        const names = knownRuns(v.slice(1));
        if (names) return names;
        pendingId = v.slice(1);   // resolved by resolveUrlSelection
        return undefined;
      }
      return q.getAll('runs').flatMap((x) => JSON.parse(x));
    },
    write: (v) => {
      if (v === null) return pendingId ? '@' + pendingId : null;
      if (!v.length) return '';
      const j = JSON.stringify(v);
      return j.length > INLINE_MAX ? '@' + remember(v) : j;
    },
  },
  runFilter: key.str(),
  // The run filter as an expression over the server's runs_wide table
  // (server/API.md "SQL"; `lr > 0.01 AND status = 'finished'`), used
  // instead of runFilter when set; runWhereHits: the runs it selected at
  // the last check (never in the URL: asked again on load).
  runWhere: key.str(),
  runWhereHits: { def: null, parse: () => undefined, write: () => null },
  tagFilter: key.str(),
  smoothing: {
    def: 0.6,
    parse: (v) => { const x = parseFloat(v); return x >= 0 && x <= 0.999 ? x : undefined; },
    write: (v) => (v === 0.6 ? null : String(v)),
  },
  x: key.oneOf('step', 'relative', 'wall'),
  logy: { def: false, parse: (v) => v === '1', write: (v) => (v ? '1' : null) },
  run: key.str(),    // the one run a single-run page shows
  tag: key.str(),    // a page's one tag (histograms runs-table tag, etc.)
  step: {            // step to focus (from the health page)
    def: null,
    parse: (v) => (/^-?\d+$/.test(v) ? parseInt(v, 10) : undefined),
    write: (v) => (v === null ? null : String(v)),
  },
  auto: { def: true, parse: (v) => v !== '0', write: (v) => (v ? null : '0') },  // auto-reload
});

function serialize() {
  const q = new URLSearchParams();
  for (const [name, spec] of specs) {
    const v = spec.write(state[name]);
    if (v !== null) q.set(name, v);
  }
  // Keys of pages not loaded yet, as the URL had them.
  for (const [name, v] of raw) if (!specs.has(name) && !q.has(name)) q.append(name, v);
  return q.toString();
}

// The id of a URL's `runs=@ID` this page does not know yet (a link opened
// afresh): every run is shown until it is resolved.
let pendingId = null;
export function pendingSelection() { return pendingId; }

export function loadFromUrl() {
  pendingId = null;
  try { raw = new URLSearchParams(location.hash.replace(/^#/, '')); } catch (e) { raw = new URLSearchParams(); }
  for (const [name, spec] of specs) state[name] = valueOf(name, spec, raw);
}

// Equal state values: arrays of strings (a selection of 10,000 runs)
// element by element, anything else through JSON.
function same(a, b) {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i] && (typeof a[i] !== 'object' || JSON.stringify(a[i]) !== JSON.stringify(b[i]))) return false;
    }
    return true;
  }
  return JSON.stringify(a) === JSON.stringify(b);
}

// Applies changes, writes the URL (replaceState: no history entry per slider
// move), and tells listeners which keys changed.
export function setState(changes) {
  const changed = [];
  for (const [k, v] of Object.entries(changes)) {
    if (k === 'runs') pendingId = null;   // a selection made replaces the link's
    if (!same(state[k], v)) { state[k] = v; changed.push(k); }
  }
  if (!changed.length) return;
  const hash = serialize();
  raw = new URLSearchParams(hash);
  const target = location.pathname + location.search + (hash ? '#' + hash : '');
  if (changed.includes('tab')) history.pushState(null, '', target);
  else history.replaceState(null, '', target);
  for (const fn of listeners) fn(changed);
}

export function onStateChange(fn) { listeners.push(fn); }

// Resolves the URL's `runs=@ID` with the server (GET /data/selection):
// true when the selection is in place (or there was none to resolve),
// false when the server no longer holds it (pendingSelection() still
// names it: the frame then asks the pages to rebuild it).
export async function resolveUrlSelection() {
  const id = pendingId;
  if (!id) return true;
  let names = null;
  try { names = await fetchSelection(id); } catch (e) { names = null; }
  if (!names || pendingId !== id) return pendingId !== id;
  setState({ runs: names });
  return true;
}

// Back/forward and edited URLs.
window.addEventListener('popstate', () => {
  const before = { ...state };
  loadFromUrl();
  const changed = Object.keys(state).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(state[k]));
  if (changed.length) for (const fn of listeners) fn(changed);
  if (pendingId) resolveUrlSelection();
});

// A regex from user input; an invalid one matches nothing and is flagged.
export function safeRegex(src) {
  if (!src) return { re: null, ok: true };
  try { return { re: new RegExp(src, 'i'), ok: true }; } catch (e) { return { re: /$^/, ok: false }; }
}
