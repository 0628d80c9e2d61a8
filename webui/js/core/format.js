// Number and time formatting, one place for every page (UI.md "Numbers").

// ---- the one number format (server/API.md "Numbers") ----
// Its C twin is server/core/report_fmt.c (text, Markdown and html
// reports) and the html report's webui/report/page.js; all three follow
// the cases of tests/format_cases.json, so change them together.

// Significant digits of every number.
export const FMT_DIGITS = 4;
// Plain decimals from here ("0.000151") up to FMT_PLAIN_MAX, scientific
// outside ("1.5e-6", "7.672e28", never "151e-6" or "76.72e27").
export const FMT_PLAIN_MIN = 1e-4;
export const FMT_PLAIN_MAX = 1e5;
// A change whose ratio B / A reaches this reads as the ratio: "×1.126e5",
// not "+11259885.9 %".
export const FMT_RATIO_MIN = 10;
// Below this a value reads "0" (denormals, float noise): no "-1.0e-320".
export const FMT_ZERO = 1e-300;

const SI_PREFIX = ['f', 'p', 'n', 'µ', 'm', '', 'k', 'M', 'G', 'T', 'P'];

// "2.500" -> "2.5", "3.0" -> "3"; keepOne leaves "1.0" (a mantissa).
function trimZeros(s, keepOne) {
  if (!s.includes('.')) return s;
  s = s.replace(/0+$/, '');
  if (s.endsWith('.')) return keepOne ? s + '0' : s.slice(0, -1);
  return s;
}

// |x| (finite, above FMT_ZERO) by the rule; the exponent is the one of
// the value rounded to FMT_DIGITS digits.
function fmtAbs(a) {
  const e = a.toExponential(FMT_DIGITS - 1);
  const r = parseFloat(e);
  const [mant, exs] = e.split('e');
  const ex = parseInt(exs, 10);
  if (r >= FMT_PLAIN_MIN && r < FMT_PLAIN_MAX) return trimZeros(a.toFixed(Math.max(0, FMT_DIGITS - 1 - ex)), false);
  return trimZeros(mant, true) + 'e' + ex;
}

// A number by the one rule: 4 significant digits, plain between 1e-4 and
// 1e5 (0.000151, 12.35, 12346), else "1.5e-6" / "7.672e28"; "0" without
// a sign; NaN, +Inf, -Inf by name; "–" for no value.
export function eng(x) {
  if (x === null || x === undefined) return '–';
  if (typeof x !== 'number') return String(x);
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (Math.abs(x) < FMT_ZERO) return '0';
  return (x < 0 ? '-' : '') + fmtAbs(Math.abs(x));
}

// With an SI prefix and unit: si(1.558e-4, 's') -> "155.8 µs",
// si(2500, 'W') -> "2.5 kW". Time takes no prefix above s ("3600 s").
export function si(x, unit = '') {
  if (typeof x !== 'number' || !Number.isFinite(x) || Math.abs(x) < FMT_ZERO) return eng(x) + ' ' + unit;
  const a = Math.abs(x);
  const ex = parseInt(a.toExponential(FMT_DIGITS - 1).split('e')[1], 10);
  const top = unit === 's' ? 0 : 5;
  const k = Math.max(-5, Math.min(top, Math.floor(ex / 3)));
  // 1000^|k| is exact up to 1e15: one correctly rounded operation, as in C.
  const scale = Math.pow(1000, Math.abs(k));
  const m = k < 0 ? a * scale : a / scale;
  return (x < 0 ? '-' : '') + fmtAbs(m) + ' ' + SI_PREFIX[k + 5] + unit;
}

// Bytes with binary prefixes (the project's convention): "512 B",
// "13.54 GiB"; "–" for no value.
export function bytes(n) {
  if (typeof n !== 'number' || !isFinite(n)) return '–';
  if (Math.abs(n) < FMT_ZERO) return '0 B';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let a = Math.abs(n), i = 0;
  while (a >= 1024 && i < u.length - 1) { a /= 1024; i++; }
  return (n < 0 ? '-' : '') + fmtAbs(a) + ' ' + u[i];
}

// A relative change (B - A) / |A|: "+12.3 %", "×11.5" once B / A reaches
// FMT_RATIO_MIN, "new" when A was 0, "–" when unknown.
export function change(x) {
  if (typeof x !== 'number' || Number.isNaN(x)) return '–';
  if (!Number.isFinite(x)) return x > 0 ? 'new' : '-new';
  if (1 + x >= FMT_RATIO_MIN) return '×' + eng(1 + x);
  if (Math.abs(100 * x) < 1000) {
    const t = fixed(100 * x, 1);
    return (t.startsWith('-') ? '' : '+') + t + ' %';
  }
  return eng(100 * x) + ' %';
}

// The input-pipeline verdict ("highly", ...) in words that read alone.
const VERDICT_WORDS = { highly: 'highly input-bound', moderately: 'moderately input-bound',
  potentially: 'potentially input-bound', not: 'not input-bound' };
export function verdict(v) {
  if (v === null || v === undefined) return '–';
  return VERDICT_WORDS[v] || String(v);
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
    // odd indices are the numbers: by value, then by spelling (1 before 01);
    // equal spellings skip the collator (a sweep's names share their text:
    // 100,000 run names sort in a fraction of the time)
    const c = i % 2 ? x[i][0] - y[i][0] || (x[i][1] === y[i][1] ? 0 : NATURAL.compare(x[i][1], y[i][1]))
      : x[i] === y[i] ? 0 : NATURAL.compare(x[i], y[i]);
    if (c) return c < 0 ? -1 : 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}
export function naturalCompare(a, b) {
  const c = compareNaturalKeys(naturalKey(a), naturalKey(b));
  if (c) return c;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}
// list sorted as by naturalCompare (a new array), each name's key made
// once: naturalCompare makes both keys on every comparison, seconds for
// the 1.7 M comparisons of 100,000 run names (issue 28).
// list itself when it is already in that order (each key made once: a
// server's natural order, base/natural.h, agrees but for some
// punctuation and non-ASCII text), else naturalSort(list).
export function naturalSorted(list) {
  let prev = null;
  for (let i = 0; i < list.length; i++) {
    const k = naturalKey(list[i]);
    if (prev && (compareNaturalKeys(prev, k) || (String(list[i - 1]) > String(list[i]) ? 1 : 0)) > 0) return naturalSort(list);
    prev = k;
  }
  return list;
}
export function naturalSort(list) {
  const k = list.map((x) => [naturalKey(x), String(x), x]);
  k.sort((a, b) => compareNaturalKeys(a[0], b[0]) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return k.map((x) => x[2]);
}

// The section a tag is shown in: its prefix up to the first '/'
// (TensorBoard's tag groups).
export function groupOf(tag) {
  const i = tag.indexOf('/');
  return i > 0 ? tag.slice(0, i) : tag;
}
