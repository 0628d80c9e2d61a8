// Run colours: derived from the run NAME (not its position in the list), so
// a run keeps its colour on every page, across reloads and when other runs
// come and go. Palette: Tableau 10 then Okabe-Ito and a few more distinct
// hues, 20 in all, so a dozen runs rarely share a colour.
const PALETTE = [
  '#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f',
  '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac',
  '#0072b2', '#d55e00', '#009e73', '#cc79a7', '#56b4e9',
  '#e69f00', '#17becf', '#bcbd22', '#7f3c8d', '#3d5a80',
];

// For palettes that must differ from the runs' (the Scalars page's groups).
export const RUN_PALETTE = Object.freeze(PALETTE.slice());

// The theme the user picked (app.js's toggle), before any colour is read.
try {
  const t = localStorage.getItem('tfb.theme');
  if (t === 'light' || t === 'dark') document.documentElement.dataset.theme = t;
} catch (e) { /* no storage (file:// in some browsers): the system's theme */ }

// FNV-1a over the UTF-16 code units, then a final avalanche so similar
// names spread over the palette: cheap, stable across browsers.
function hash(s) {
  let x = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, 0x01000193) >>> 0;
  }
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x ^= x >>> 15;
  return x >>> 0;
}

// Assigned colours. A run's slot comes from its name's hash; when two runs
// hash to the same slot, the run seen first (the server lists runs by first
// wall time, so older runs come first) keeps it and the later one takes the
// next free slot. Older runs therefore never change colour when new runs
// appear, and every page and reload agrees. Once every slot is taken a
// run's colour is its hash's slot alone, whatever came before: only the
// first runs of a batch, in name order, need the batch (runColor gives
// the rest when first asked). Sorting and hashing all of 100,000 runs at
// the first load took a quarter of a second of the first chart (issue 28).
const assigned = new Map();
const taken = new Map();   // slot -> run

// The `k` smallest names of `list` (string order, as Array#sort), sorted:
// one pass keeping a sorted window, so a batch of 100,000 runs is not
// sorted for the few dozen the slots take.
function smallest(list, k) {
  const out = [];
  for (const r of list) {
    if (out.length === k && !(r < out[k - 1])) continue;
    let lo = 0, hi = out.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (out[mid] <= r) lo = mid + 1; else hi = mid; }
    out.splice(lo, 0, r);
    if (out.length > k) out.pop();
  }
  return out;
}

function place(r) {
  let slot = hash(r) % PALETTE.length;
  if (taken.size < PALETTE.length) {
    while (taken.has(slot)) slot = (slot + 1) % PALETTE.length;
  }
  taken.set(slot, r);
  assigned.set(r, PALETTE[slot]);
}

// Names looked at before the whole batch is sorted: 20 slots are taken
// after about 70 names on average.
const FIRST_NAMES = 256;

export function assignRunColors(runs) {
  // Within one batch, in name order: the same set of runs gets the same
  // colours whatever order the server listed them in.
  if (taken.size >= PALETTE.length) return;
  const fresh = runs.filter((r) => !assigned.has(r));
  let order = fresh.length > FIRST_NAMES ? smallest(fresh, FIRST_NAMES) : fresh.sort();
  for (let pass = 0; pass < 2; pass++) {
    for (const r of order) {
      if (taken.size >= PALETTE.length) return;
      if (!assigned.has(r)) place(r);
    }
    if (order.length === fresh.length) return;
    // The first names left slots free (many collisions): the whole batch.
    order = fresh.sort();
  }
}

export function runColor(run) {
  if (!assigned.has(run)) {
    if (taken.size < PALETTE.length) assignRunColors([run]);
    else place(run);
  }
  return assigned.get(run);
}

// The colour with an alpha, for faint raw lines and fills.
export function withAlpha(hex, a) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

// Perceptual sequential scale (viridis, sampled) for heat maps; t in [0,1].
const VIRIDIS = [
  [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
];
export function viridis(t) {
  if (!(t >= 0)) t = 0;
  if (t > 1) t = 1;
  const f = t * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(f), VIRIDIS.length - 2);
  const u = f - i;
  const a = VIRIDIS[i], b = VIRIDIS[i + 1];
  return `rgb(${Math.round(a[0] + (b[0] - a[0]) * u)},${Math.round(a[1] + (b[1] - a[1]) * u)},${Math.round(a[2] + (b[2] - a[2]) * u)})`;
}

// Colours the charts read from the CSS theme (light or dark).
export function themeColor(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}
