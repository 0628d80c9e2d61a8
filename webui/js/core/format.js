// Number and time formatting, one place for every page (UI.md "Numbers").

const SUP = ['', 'k', 'M', 'G', 'T', 'P'];
const SUB = ['', 'm', 'µ', 'n', 'p', 'f'];

// Engineering notation, 4 significant digits: 0.0012345 -> "1.234e-3",
// 12345 -> "12.35e3"; plain digits between 1e-3 and 1e4.
export function eng(x) {
  if (x === null || x === undefined) return '–';
  if (typeof x !== 'number') return String(x);
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e-3 && a < 9999.5) return trim(x.toPrecision(4));
  if (a < 1e-300) return '0';
  const e3 = Math.floor(Math.log10(a) / 3) * 3;
  let m = x / Math.pow(10, e3);
  let s = trim(m.toPrecision(4));
  // Rounding can carry to 1000: 999.97e3 -> 1000e3 -> 1e6.
  if (Math.abs(parseFloat(s)) >= 1000) return trim((m / 1000).toPrecision(4)) + 'e' + (e3 + 3);
  return s + 'e' + e3;
}

function trim(s) {
  if (s.includes('e')) return s;
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

// With an SI prefix and unit: si(2.5e9, 'B') -> "2.5 GB".
export function si(x, unit = '') {
  if (typeof x !== 'number' || !isFinite(x)) return eng(x) + (unit ? ' ' + unit : '');
  if (x === 0) return '0' + (unit ? ' ' + unit : '');
  const a = Math.abs(x);
  let i = 0;
  let v = x;
  if (a >= 1) {
    while (Math.abs(v) >= 1000 && i < SUP.length - 1) { v /= 1000; i++; }
    return trim(v.toPrecision(4)) + ' ' + SUP[i] + unit;
  }
  while (Math.abs(v) < 1 && i < SUB.length - 1) { v *= 1000; i++; }
  return trim(v.toPrecision(4)) + ' ' + SUB[i] + unit;
}

export function bytes(n) {
  if (typeof n !== 'number' || !isFinite(n)) return '–';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? String(n) : trim(n.toPrecision(4))) + ' ' + u[i];
}

// Durations given in nanoseconds: "12.3 ms", "840 µs", "2.1 s".
export function ns(x) {
  if (typeof x !== 'number' || !isFinite(x)) return '–';
  return si(x / 1e9, 's');
}

// Relative time in seconds as "1h 02m 03s" (UI.md); sub-minute keeps one
// decimal so short runs are readable.
export function rel(sec) {
  if (typeof sec !== 'number' || !isFinite(sec)) return '–';
  const neg = sec < 0;
  let s = Math.abs(sec);
  let out;
  if (s < 60) out = (s < 10 ? s.toFixed(1) : Math.round(s)) + 's';
  else {
    const hh = Math.floor(s / 3600);
    const mm = Math.floor((s % 3600) / 60);
    const ss = Math.floor(s % 60);
    out = (hh ? hh + 'h ' + String(mm).padStart(2, '0') + 'm ' : mm + 'm ') + String(ss).padStart(2, '0') + 's';
  }
  return (neg ? '-' : '') + out;
}

// Wall time (seconds since the epoch) in the viewer's local time zone.
export function wall(sec) {
  if (typeof sec !== 'number' || !isFinite(sec)) return '–';
  const d = new Date(sec * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function wallShort(sec) {
  const d = new Date(sec * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function pct(f, digits = 1) {
  if (typeof f !== 'number' || !isFinite(f)) return '–';
  return fixed(f * 100, digits) + ' %';
}

// toFixed without "-0.0": a value that rounds to zero has no sign.
export function fixed(x, digits = 1) {
  if (typeof x !== 'number' || !isFinite(x)) return eng(x);
  const s = x.toFixed(digits);
  return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s;
}

// One formatter for every call: Number.toLocaleString builds a new one
// each time (it showed in the runs table's scrolling with 10,000 runs).
const INT = new Intl.NumberFormat('en-US');
export function int(n) {
  if (typeof n !== 'number' || !isFinite(n)) return '–';
  return INT.format(n);
}

// ---- axis numbers (webui/README.md "Numbers on axes") ----

// A "nice" step of 1, 2, 2.5 or 5 times a power of ten near span / n.
export function niceStep(span, n = 5) {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const raw = span / Math.max(1, n);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / p;
  const m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return m * p;
}

// Limits rounded out to a nice step, so an axis ends on a number people
// write (0 to 80e27, not 79.93e27; 9.2, not 9.185). lo == hi widens to one
// step around the value.
export function niceRange(lo, hi, n = 5) {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [lo, hi];
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) {
    const d = lo === 0 ? 1 : niceStep(Math.abs(lo) * 0.2, 1);
    lo -= d; hi += d;
  }
  const st = niceStep(hi - lo, n);
  let a = Math.floor(lo / st) * st, b = Math.ceil(hi / st) * st;
  // Keep a positive series off zero only when zero is far away.
  return [fixZero(a), fixZero(b)];
}

function fixZero(v) { return Object.is(v, -0) || Math.abs(v) < 1e-300 ? 0 : parseFloat(v.toPrecision(12)); }

const SI_UP = ['', 'k', 'M', 'G', 'T'];

// One tick label, given the spacing of the axis' ticks: as many decimals as
// the spacing needs and no more (so 0.1, 0.2 not 0.1000), never "-0".
// Magnitudes from 1e-3 to 1e4 are plain digits; 1e4 to 1e15 SI (10k,
// 2.5M, 1T); outside that scientific with the mantissa the spacing needs
// (1e-7, 2.5e-7, 8e28), never 4 padded significant digits.
export function tickLabel(v, spacing, maxAbs) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return eng(v);
  const sp = spacing > 0 && Number.isFinite(spacing) ? spacing : Math.abs(v) || 1;
  const top = Math.max(Math.abs(v), maxAbs || 0);
  if (Math.abs(v) < sp * 1e-6) return '0';
  if (top >= 1e-3 && top < 1e4) {
    const d = sp >= 1 && Number.isInteger(Math.round(sp * 1e6) / 1e6) ? 0 : decimalsFor(sp);
    return clean(v.toFixed(d));
  }
  if (top >= 1e4 && top < 1e15) {
    const e = Math.floor(Math.log10(top) / 3);
    const k = Math.min(e, SI_UP.length - 1);
    const div = Math.pow(1000, k);
    return clean((v / div).toFixed(decimalsFor(sp / div))) + SI_UP[k];
  }
  // Scientific: the exponent of the value itself, mantissa digits from the
  // spacing relative to it.
  const e = Math.floor(Math.log10(Math.abs(v)) + 1e-9);
  const m = v / Math.pow(10, e);
  const d = Math.min(6, decimalsFor(sp / Math.pow(10, e)));
  return clean(m.toFixed(d)) + 'e' + e;
}

function decimalsFor(sp) {
  if (!(sp > 0)) return 0;
  // 0.25 needs 2, 0.5 needs 1, 2.5 needs 1.
  for (let d = 0; d < 12; d++) {
    const s = sp * Math.pow(10, d);
    if (Math.abs(s - Math.round(s)) < 1e-6 * Math.max(1, s)) return d;
  }
  return 12;
}

function clean(s) {
  if (/^-0(\.0*)?$/.test(s)) return '0';
  if (s.includes('.') && !s.includes('e')) s = s.replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s;
}

// A Chart.js tick callback for a linear axis: labels from the spacing of
// the ticks Chart.js placed.
export function linearTicks(v, i, ticks) {
  const vals = ticks.map((t) => t.value);
  let sp = Infinity;
  for (let k = 1; k < vals.length; k++) sp = Math.min(sp, Math.abs(vals[k] - vals[k - 1]) || Infinity);
  if (!Number.isFinite(sp)) sp = Math.abs(v) || 1;
  let maxAbs = 0;
  for (const x of vals) maxAbs = Math.max(maxAbs, Math.abs(x));
  return tickLabel(v, sp, maxAbs);
}

// A Chart.js tick callback for a log axis: Chart.js puts a tick at every
// 1..9 x 10^k; label only the decades (and 2 and 5 when the axis spans
// less than two decades) so labels never overlap.
export function logTicks(v, i, ticks) {
  if (!(v > 0)) return '';
  const vals = ticks.map((t) => t.value).filter((x) => x > 0);
  const decades = vals.length ? Math.log10(Math.max(...vals) / Math.min(...vals)) : 0;
  const e = Math.floor(Math.log10(v) + 1e-9);
  const m = Math.round(v / Math.pow(10, e) * 1000) / 1000;
  const keep = m === 1 || (decades < 2 && (m === 2 || m === 5));
  if (!keep) return '';
  // Every 2nd / 3rd decade past 8 decades.
  if (m === 1 && decades > 8 && e % Math.ceil(decades / 8) !== 0) return '';
  // One style an axis: an axis that reaches past SI's range (>= 1e15, or
  // below 1e-3 while it also passes 1e4) is written 1e3, 1e9, 1e15 all
  // along, never "1000, 1G, 1e15".
  const top = vals.length ? Math.max(...vals) : v, bottom = vals.length ? Math.min(...vals) : v;
  const sci = top >= 1e15 || (bottom < 1e-3 && top >= 1e4);
  if (sci) return e === 0 ? String(m) : (m === 1 ? '1' : String(m)) + 'e' + e;
  if (e >= -3 && e < 4) return clean(v.toFixed(Math.max(0, -e)));
  if (e >= 4 && e < 15) return tickLabel(v, v, v);
  return (m === 1 ? '1' : String(m)) + 'e' + e;
}

// The ends of a colour scale (like an axis' limits, short): 3 significant
// digits, plain between 1e-3 and 1e4, else "1.71e20" (never "171.3e18").
export function scaleEnd(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return eng(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e4) return clean(String(parseFloat(v.toPrecision(3))));
  let e = Math.floor(Math.log10(a));
  let m = parseFloat((v / Math.pow(10, e)).toPrecision(3));
  if (Math.abs(m) >= 10) { m /= 10; e += 1; }
  return String(m) + 'e' + e;
}

// Natural order for names that end (or contain) numbers: run2 before
// run10, rank 3 before rank 12, and a sweep's lr0.03 before lr0.1 (a
// number with a fraction is compared by its value). One collator for
// every caller.
const NATURAL = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
const PARTS = /(\d+(?:\.\d+)?)/;
// The parts natural order compares, computed once per name (a table of
// 10,000 runs sorts on these): text, number, text, ... with the numbers'
// values.
export function naturalKey(a) {
  const p = String(a).split(PARTS);
  for (let i = 1; i < p.length; i += 2) p[i] = [Number(p[i]), p[i]];
  return p;
}
export function compareNaturalKeys(x, y) {
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    // odd indices are the numbers: by value, then by spelling (1 before 01)
    const c = i % 2 ? x[i][0] - y[i][0] || NATURAL.compare(x[i][1], y[i][1]) : NATURAL.compare(x[i], y[i]);
    if (c) return c < 0 ? -1 : 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}
export function naturalCompare(a, b) {
  const c = compareNaturalKeys(naturalKey(a), naturalKey(b));
  if (c) return c;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

// The section a tag is shown in: its prefix up to the first '/'
// (TensorBoard's tag groups).
export function groupOf(tag) {
  const i = tag.indexOf('/');
  return i > 0 ? tag.slice(0, i) : tag;
}
