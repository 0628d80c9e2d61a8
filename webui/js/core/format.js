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
  return (f * 100).toFixed(digits) + ' %';
}

// One formatter for every call: Number.toLocaleString builds a new one
// each time (it showed in the runs table's scrolling with 10,000 runs).
const INT = new Intl.NumberFormat('en-US');
export function int(n) {
  if (typeof n !== 'number' || !isFinite(n)) return '–';
  return INT.format(n);
}
