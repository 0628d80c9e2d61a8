/* Helpers of the html report pages (report.js, compare.js), inlined into
 * the same <script> element ahead of the page's own script. Everything
 * from event files goes in through textContent only. */
var tfbPage = (function () {
  'use strict';
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  /* The JSON writer spells non-finite numbers as strings. */
  function val(x) {
    if (x === 'NaN') return NaN;
    if (x === 'Infinity') return Infinity;
    if (x === '-Infinity') return -Infinity;
    return x;
  }
  /* The one number format (server/API.md "Numbers"): the same rule as
   * webui/js/core/format.js and server/core/report_fmt.c, checked against
   * tests/format_cases.json (this page is a classic script inlined into
   * the report, so it cannot import the module). */
  var DIGITS = 4, PLAIN_MIN = 1e-4, PLAIN_MAX = 1e5, RATIO_MIN = 10, ZERO = 1e-300;
  var SI_PREFIX = ['f', 'p', 'n', '\u00b5', 'm', '', 'k', 'M', 'G', 'T', 'P'];
  function trimZeros(s, keepOne) {
    if (s.indexOf('.') < 0) return s;
    s = s.replace(/0+$/, '');
    if (s.charAt(s.length - 1) === '.') return keepOne ? s + '0' : s.slice(0, -1);
    return s;
  }
  function fmtAbs(a) {
    var e = a.toExponential(DIGITS - 1), r = parseFloat(e);
    var parts = e.split('e'), ex = parseInt(parts[1], 10);
    if (r >= PLAIN_MIN && r < PLAIN_MAX) return trimZeros(a.toFixed(Math.max(0, DIGITS - 1 - ex)), false);
    return trimZeros(parts[0], true) + 'e' + ex;
  }
  function num(x) {
    x = val(x);
    if (x === null || x === undefined) return '\u2013';
    if (typeof x !== 'number') return String(x);
    if (isNaN(x)) return 'NaN';
    if (!isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
    if (Math.abs(x) < ZERO) return '0';
    return (x < 0 ? '-' : '') + fmtAbs(Math.abs(x));
  }
  /* With an SI prefix and unit: si(1.558e-4, 's') -> "155.8 µs". */
  function si(x, unit) {
    x = val(x);
    if (x === null || x === undefined) return '\u2013';
    if (typeof x !== 'number' || !isFinite(x) || Math.abs(x) < ZERO) return num(x) + ' ' + unit;
    var a = Math.abs(x);
    var ex = parseInt(a.toExponential(DIGITS - 1).split('e')[1], 10);
    var k = Math.max(-5, Math.min(unit === 's' ? 0 : 5, Math.floor(ex / 3)));
    var scale = Math.pow(1000, Math.abs(k));
    return (x < 0 ? '-' : '') + fmtAbs(k < 0 ? a * scale : a / scale) + ' ' + SI_PREFIX[k + 5] + unit;
  }
  function bytes(n) {
    n = val(n);
    if (typeof n !== 'number' || !isFinite(n)) return '\u2013';
    if (Math.abs(n) < ZERO) return '0 B';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], a = Math.abs(n), i = 0;
    while (a >= 1024 && i < u.length - 1) { a /= 1024; i++; }
    return (n < 0 ? '-' : '') + fmtAbs(a) + ' ' + u[i];
  }
  /* A relative change: "+12.3 %", "\u00d71.126e5", "new" when A was 0. */
  function change(x) {
    x = val(x);
    if (typeof x !== 'number' || isNaN(x)) return '\u2013';
    if (!isFinite(x)) return x > 0 ? 'new' : '-new';
    if (1 + x >= RATIO_MIN) return '\u00d7' + num(1 + x);
    if (Math.abs(100 * x) < 1000) {
      var t = (100 * x).toFixed(1);
      if (t === '-0.0') t = '0.0';
      return (t.charAt(0) === '-' ? '' : '+') + t + ' %';
    }
    return num(100 * x) + ' %';
  }
  var VERDICT_WORDS = { highly: 'highly input-bound', moderately: 'moderately input-bound',
    potentially: 'potentially input-bound', not: 'not input-bound' };
  function verdict(v) {
    if (v === null || v === undefined) return '\u2013';
    return VERDICT_WORDS[v] || String(v);
  }
  function pct(x) { return x === null || x === undefined ? '\u2013' : (100 * x).toFixed(1) + ' %'; }
  /* rows: arrays of cells; a cell is text or {t: text, cls: class};
   * rowCls(i), when given, names row i's class. */
  function table(parent, heads, rows, rowCls) {
    var t = add(parent, el('table'));
    var tr = add(add(t, el('thead')), el('tr'));
    heads.forEach(function (h) { add(tr, el('th', null, h)); });
    var tb = add(t, el('tbody'));
    rows.forEach(function (r, i) {
      var row = add(tb, el('tr', rowCls ? rowCls(i) : null));
      r.forEach(function (x) {
        if (x && typeof x === 'object') add(row, el('td', x.cls, x.t));
        else add(row, el('td', null, x));
      });
    });
    return t;
  }
  return { el: el, add: add, val: val, num: num, si: si, bytes: bytes, change: change, verdict: verdict,
    pct: pct, table: table };
})();
