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
  function num(x) {
    x = val(x);
    if (x === null || x === undefined) return '\u2013';
    if (typeof x !== 'number') return String(x);
    if (isNaN(x)) return 'NaN';
    if (!isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
    if (x === 0) return '0';
    var a = Math.abs(x);
    if (a >= 1e-3 && a < 1e5) return String(+x.toPrecision(4));
    return x.toExponential(3);
  }
  function pct(x) { return x === null || x === undefined ? '\u2013' : (100 * x).toFixed(1) + '%'; }
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
  return { el: el, add: add, val: val, num: num, pct: pct, table: table };
})();
