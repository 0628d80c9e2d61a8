// A virtualized list of fixed-height rows (issue 18: 10,000 runs): only the
// rows in view, plus a margin, exist in the DOM; two spacers stand for the
// rest, so the scroll bar and the scroll position are those of the full
// list. Used by the sidebar's run list and the runs table.
//
// scroller: the element that scrolls (it may hold more than the list, e.g.
// a table head above the rows); body: the rows' parent; spacer(): a new
// empty row element of the body's kind (li, tr) whose height the list sets.
// rowHeight must be the rows' real height in px (CSS fixes it). before /
// after: where the spacers go when not in body (a table keeps them in its
// thead and tfoot, so `tbody tr` are the rows only).

import { naturalKey, compareNaturalKeys } from './format.js';

export function virtualRows({ scroller, body, rowHeight, spacer, overscan = 10, before = null, after = null }) {
  const top = spacer(), bottom = spacer();
  top.classList.add('vspacer');
  bottom.classList.add('vspacer');
  let count = 0;
  let row = null;
  let shown = [-1, -1];
  let queued = false;

  function span() {
    // Where the first row would start inside the scrolled content (before
    // the first paint the spacer is not placed yet: the top of the
    // scroller, which at worst draws a few rows more).
    const off = top.isConnected ? top.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop : 0;
    // The scroller may still be growing (its rows are what give it height,
    // up to its CSS max-height): count on at least the window's height, so
    // a first paint into a short box does not leave rows out until a scroll.
    // Once it scrolls it has its height: its own, no more (the runs table's
    // box is 190 px shorter than the window: 7 rows fewer to lay out each
    // frame, issue 28).
    const grown = scroller.scrollHeight > scroller.clientHeight && scroller.clientHeight > 0;
    const H = grown ? scroller.clientHeight : Math.max(scroller.clientHeight, window.innerHeight || 0, 600);
    const y = scroller.scrollTop - off;
    const a = Math.max(0, Math.floor(y / rowHeight) - overscan);
    const b = Math.min(count, Math.ceil((y + H) / rowHeight) + overscan);
    return [Math.min(a, b), b];
  }

  function paint(force) {
    queued = false;
    if (!row) return;
    const [a, b] = span();
    if (!force && a === shown[0] && b === shown[1]) return;
    shown = [a, b];
    while (body.firstChild) body.removeChild(body.firstChild);
    top.style.height = a * rowHeight + 'px';
    bottom.style.height = (count - b) * rowHeight + 'px';
    if (before) { if (top.parentNode !== before) before.appendChild(top); } else body.appendChild(top);
    for (let i = a; i < b; i++) body.appendChild(row(i));
    if (after) { if (bottom.parentNode !== after) after.appendChild(bottom); } else body.appendChild(bottom);
  }

  const onScroll = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => paint(false));
  };
  scroller.addEventListener('scroll', onScroll, { passive: true });
  // A box that grows past the window (a resize, a taller layout) repaints.
  const resized = typeof ResizeObserver === 'function' ? new ResizeObserver(onScroll) : null;
  if (resized) resized.observe(scroller);

  return {
    // n rows; render(i) makes row i (called only for rows in view).
    set(n, render) { count = n; row = render; paint(true); },
    refresh() { paint(true); },
    destroy() { scroller.removeEventListener('scroll', onScroll); if (resized) resized.disconnect(); },
  };
}

// A sortable table whose rows are virtualized (the runs table with 10,000
// runs). columns as dom.js's sortableTable: [{key, label, num, render(row),
// value(row)}]. Sorting computes each row's key once (numbers into a typed
// array, text through one Intl.Collator) and sorts row indices, so a click
// on a header with 10,000 rows takes milliseconds; missing values sort
// last in both directions. opts: {scroller (required), rowHeight, sortKey,
// sortDir, className, rowProps(row), overscan (rows drawn beyond the view
// either side, 4)}.
export function virtualTable(columns, opts) {
  let rows = [];
  let order = new Int32Array(0);
  let sortKey = opts.sortKey || columns[0].key;
  let sortDir = opts.sortDir || (columns.find((c) => c.key === sortKey)?.num ? -1 : 1);
  const thead = document.createElement('thead');
  const tbody = document.createElement('tbody');
  const table = document.createElement('table');
  table.className = 'table' + (opts.className ? ' ' + opts.className : '');
  const tfoot = document.createElement('tfoot');
  table.append(thead, tbody, tfoot);
  const spacer = () => {
    const tr = document.createElement('tr');
    const td = document.createElement('td');
    td.colSpan = columns.length;
    tr.appendChild(td);
    return tr;
  };
  // A table row is a dozen cells or more (the runs table's 57 rows were
  // 2,300 boxes laid out and 120 sticky cells painted per scroll frame, a
  // 5,000 px scroll 125 ms at 100,000 runs): 4 rows of margin either side
  // instead of 10, enough for a wheel step.
  const vr = virtualRows({ scroller: opts.scroller, body: tbody, rowHeight: opts.rowHeight || 28, spacer, before: thead, after: tfoot, overscan: opts.overscan || 4 });
  const val = (c, r) => (c.value ? c.value(r) : r[c.key]);

  let headRow = null;
  function renderHead() {
    if (headRow) headRow.remove();
    const tr = document.createElement('tr');
    headRow = tr;
    for (const c of columns) {
      const active = c.key === sortKey;
      const th = document.createElement('th');
      th.className = (c.num ? 'num ' : '') + (active ? 'sorted' : '');
      th.setAttribute('aria-sort', active ? (sortDir > 0 ? 'ascending' : 'descending') : 'none');
      th.dataset.key = c.key;
      th.textContent = c.label + (active ? (sortDir > 0 ? ' ▲' : ' ▼') : '');
      th.addEventListener('click', () => {
        if (sortKey === c.key) sortDir = -sortDir;
        else { sortKey = c.key; sortDir = c.num ? -1 : 1; }
        sort();
        render();
      });
      tr.appendChild(th);
    }
    thead.insertBefore(tr, thead.firstChild);
  }

  function sort() {
    const col = columns.find((c) => c.key === sortKey) || columns[0];
    const n = rows.length;
    const idx = Array.from({ length: n }, (_, i) => i);
    const raw = rows.map((r) => val(col, r));
    const missing = (x) => x === null || x === undefined || (typeof x === 'number' && Number.isNaN(x));
    if (raw.every((x) => missing(x) || typeof x === 'number')) {
      const k = Float64Array.from(raw, (x) => (missing(x) ? NaN : x));
      idx.sort((a, b) => {
        const x = k[a], y = k[b];
        if (x !== x || y !== y) return (x !== x) === (y !== y) ? a - b : x !== x ? 1 : -1;
        return (x - y) * sortDir || a - b;
      });
    } else {
      // Names in natural order (rank 2 before rank 10, lr0.03 before lr0.1).
      const k = raw.map((x) => (missing(x) ? null : naturalKey(x)));
      idx.sort((a, b) => {
        const x = k[a], y = k[b];
        if (x === null || y === null) return (x === null) === (y === null) ? a - b : x === null ? 1 : -1;
        return compareNaturalKeys(x, y) * sortDir || a - b;
      });
    }
    order = Int32Array.from(idx);
  }

  function makeRow(r) {
    const tr = document.createElement('tr');
    const p = opts.rowProps ? opts.rowProps(r) : null;
    if (p) {
      if (p.class) tr.className = p.class;
      if (p.dataset) Object.assign(tr.dataset, p.dataset);
      if (p.onclick) tr.addEventListener('click', p.onclick);
    }
    for (const c of columns) {
      const td = document.createElement('td');
      if (c.num) td.className = 'num';
      const v = c.render ? c.render(r) : val(c, r);
      if (v instanceof Node) td.appendChild(v);
      else if (v !== null && v !== undefined) td.textContent = String(v);
      tr.appendChild(td);
    }
    return tr;
  }

  // The first rows drawn set the column widths, then the table's layout
  // is fixed: an automatic table layout measures every cell again on each
  // scroll step (most of a frame), and its columns would jump as rows with
  // longer values scroll in.
  let fixed = false;
  function fixWidths() {
    if (fixed || !order.length || !table.isConnected || !table.offsetWidth) return;
    const ths = headRow.children;
    const cg = document.createElement('colgroup');
    for (const th of ths) {
      const col = document.createElement('col');
      col.style.width = th.getBoundingClientRect().width + 'px';
      cg.appendChild(col);
    }
    table.insertBefore(cg, table.firstChild);
    table.style.tableLayout = 'fixed';
    fixed = true;
  }

  function render() {
    renderHead();
    vr.set(order.length, (i) => makeRow(rows[order[i]]));
    if (!fixed) requestAnimationFrame(fixWidths);
  }

  return {
    el: table,
    setRows(r) { rows = r; sort(); render(); },
    rerender: render,
    // The rows in display order (for tests and the debug hook).
    sorted() { return Array.from(order, (i) => rows[i]); },
    get sortKey() { return sortKey; },
    destroy() { vr.destroy(); },
  };
}
