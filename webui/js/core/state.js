// View state kept in the URL fragment, so a link reproduces the view
// (UI.md): tab, selected runs, run and tag filters, smoothing, x axis, log y
// and the page-specific keys. Defaults are left out of the URL.

const DEFAULTS = {
  tab: '',
  runs: null,        // null = every run selected; else an array of names
  runFilter: '',
  tagFilter: '',
  smoothing: 0.6,
  x: 'step',         // step | relative | wall
  logy: false,
  run: '',           // the one run a single-run page shows
  tag: '',           // histograms runs-table tag, etc.
  step: null,        // step to focus (from the health page)
  auto: true,        // auto-reload
  // Compare runs (issue 12):
  hpFilter: {},      // runs table: {hparam name: filter text}
  group: '',         // scalars: '' | 'hparam:<name>' | 'regex:<ERE>'
  band: 'minmax',    // scalars groups: minmax | std
  multi: [],         // scalars: multi-tag charts, one tag regex each
  hpx: '',           // hparams scatter: x hparam
  hpy: '',           // hparams scatter: y metric tag
  hpStat: 'last',    // hparams scatter: last | min | max
  cmpA: '',          // the compare page's baseline run
  cmpB: '',          // and the run compared with it
  // Sweeps (issue 18):
  hpBrush: {},       // parallel coordinates brushes: {'hp:<name>' | 'metric:<tag>': [lo, hi] | {cats: [text, ...]}};
                     // the runs they keep are the selection of every tab, and the runs table shows only them
  hpColor: '',       // parallel coordinates: the metric tag that colours the lines
};

// A JSON value from the URL, or the default when it is not of its shape.
function jsonKey(q, key, ok) {
  try { const v = JSON.parse(q.get(key)); return ok(v) ? v : DEFAULTS[key]; } catch (e) { return DEFAULTS[key]; }
}

const listeners = [];
export const state = { ...DEFAULTS };

function parse(hash) {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  const s = { ...DEFAULTS };
  if (q.has('tab')) s.tab = q.get('tab');
  if (q.has('runs')) s.runs = q.get('runs') === '' ? [] : q.getAll('runs').flatMap((v) => JSON.parse(v));
  if (q.has('runFilter')) s.runFilter = q.get('runFilter');
  if (q.has('tagFilter')) s.tagFilter = q.get('tagFilter');
  if (q.has('smoothing')) {
    const v = parseFloat(q.get('smoothing'));
    if (v >= 0 && v <= 0.999) s.smoothing = v;
  }
  if (['step', 'relative', 'wall'].includes(q.get('x'))) s.x = q.get('x');
  if (q.has('logy')) s.logy = q.get('logy') === '1';
  if (q.has('run')) s.run = q.get('run');
  if (q.has('tag')) s.tag = q.get('tag');
  if (q.has('step') && /^-?\d+$/.test(q.get('step'))) s.step = parseInt(q.get('step'), 10);
  if (q.has('auto')) s.auto = q.get('auto') !== '0';
  if (q.has('hpFilter')) {
    s.hpFilter = jsonKey(q, 'hpFilter', (v) => v && typeof v === 'object' && !Array.isArray(v) &&
      Object.values(v).every((x) => typeof x === 'string'));
  }
  if (q.has('group')) s.group = q.get('group');
  if (['minmax', 'std'].includes(q.get('band'))) s.band = q.get('band');
  if (q.has('multi')) s.multi = jsonKey(q, 'multi', (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'));
  if (q.has('hpx')) s.hpx = q.get('hpx');
  if (q.has('hpy')) s.hpy = q.get('hpy');
  if (['last', 'min', 'max'].includes(q.get('hpStat'))) s.hpStat = q.get('hpStat');
  if (q.has('cmpA')) s.cmpA = q.get('cmpA');
  if (q.has('cmpB')) s.cmpB = q.get('cmpB');
  if (q.has('hpBrush')) {
    s.hpBrush = jsonKey(q, 'hpBrush', (v) => v && typeof v === 'object' && !Array.isArray(v) &&
      Object.values(v).every((r) => (Array.isArray(r) && r.length === 2 && r.every((x) => typeof x === 'number')) ||
        (r && Array.isArray(r.cats) && r.cats.every((x) => typeof x === 'string'))));
  }
  if (q.has('hpColor')) s.hpColor = q.get('hpColor');
  return s;
}

function serialize(s) {
  const q = new URLSearchParams();
  if (s.tab) q.set('tab', s.tab);
  // Run names may hold commas or any character: store them as JSON.
  if (s.runs !== null) q.set('runs', s.runs.length ? JSON.stringify(s.runs) : '');
  if (s.runFilter) q.set('runFilter', s.runFilter);
  if (s.tagFilter) q.set('tagFilter', s.tagFilter);
  if (s.smoothing !== DEFAULTS.smoothing) q.set('smoothing', String(s.smoothing));
  if (s.x !== DEFAULTS.x) q.set('x', s.x);
  if (s.logy) q.set('logy', '1');
  if (s.run) q.set('run', s.run);
  if (s.tag) q.set('tag', s.tag);
  if (s.step !== null) q.set('step', String(s.step));
  if (!s.auto) q.set('auto', '0');
  const hpf = Object.fromEntries(Object.entries(s.hpFilter || {}).filter(([, v]) => v));
  if (Object.keys(hpf).length) q.set('hpFilter', JSON.stringify(hpf));
  if (s.group) q.set('group', s.group);
  if (s.band !== DEFAULTS.band) q.set('band', s.band);
  if (s.multi && s.multi.length) q.set('multi', JSON.stringify(s.multi));
  if (s.hpx) q.set('hpx', s.hpx);
  if (s.hpy) q.set('hpy', s.hpy);
  if (s.hpStat !== DEFAULTS.hpStat) q.set('hpStat', s.hpStat);
  if (s.cmpA) q.set('cmpA', s.cmpA);
  if (s.cmpB) q.set('cmpB', s.cmpB);
  if (s.hpBrush && Object.keys(s.hpBrush).length) q.set('hpBrush', JSON.stringify(s.hpBrush));
  if (s.hpColor) q.set('hpColor', s.hpColor);
  return q.toString();
}

export function loadFromUrl() {
  let s;
  try { s = parse(location.hash); } catch (e) { s = { ...DEFAULTS }; }
  Object.assign(state, s);
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
    if (!same(state[k], v)) { state[k] = v; changed.push(k); }
  }
  if (!changed.length) return;
  const hash = serialize(state);
  const target = location.pathname + location.search + (hash ? '#' + hash : '');
  if (changed.includes('tab')) history.pushState(null, '', target);
  else history.replaceState(null, '', target);
  for (const fn of listeners) fn(changed);
}

export function onStateChange(fn) { listeners.push(fn); }

// Back/forward and edited URLs.
window.addEventListener('popstate', () => {
  const before = { ...state };
  loadFromUrl();
  const changed = Object.keys(state).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(state[k]));
  if (changed.length) for (const fn of listeners) fn(changed);
});

// A regex from user input; an invalid one matches nothing and is flagged.
export function safeRegex(src) {
  if (!src) return { re: null, ok: true };
  try { return { re: new RegExp(src, 'i'), ok: true }; } catch (e) { return { re: /$^/, ok: false }; }
}
