// DOM helpers. Everything from the server is inserted with text nodes or
// textContent, never as HTML: h() has no way to set innerHTML.
import { naturalCompare } from './format.js';

// h('div', {class: 'x', onclick: fn, style: {...}, dataset: {...}}, child...)
// Children may be strings (become text nodes), nodes, arrays, null/false.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'checked' || k === 'value' || k === 'disabled' || k === 'selected') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// An SVG-free icon: a short text glyph in a span (keeps assets small).
export function icon(glyph, title) {
  return h('span', { class: 'icon', title, 'aria-hidden': 'true' }, glyph);
}

// Calls fn at most once per `ms`, with the latest arguments.
export function debounce(fn, ms) {
  let t = null;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

// A sortable table. columns: [{key, label, num, render(row) -> node|string,
// value(row) -> sortable}]. Returns {el, setRows(rows)}.
export function sortableTable(columns, opts = {}) {
  let rows = [];
  let sortKey = opts.sortKey || columns[0].key;
  let sortDir = opts.sortDir || (columns.find((c) => c.key === sortKey)?.num ? -1 : 1);
  const thead = h('thead');
  const tbody = h('tbody');
  const table = h('table', { class: 'table' + (opts.className ? ' ' + opts.className : '') }, thead, tbody);

  function val(c, r) {
    return c.value ? c.value(r) : r[c.key];
  }
  function renderHead() {
    clear(thead);
    const tr = h('tr');
    for (const c of columns) {
      const active = c.key === sortKey;
      const th = h('th', {
        class: (c.num ? 'num ' : '') + (active ? 'sorted' : ''),
        'aria-sort': active ? (sortDir > 0 ? 'ascending' : 'descending') : 'none',
        onclick: () => {
          if (sortKey === c.key) sortDir = -sortDir;
          else { sortKey = c.key; sortDir = c.num ? -1 : 1; }
          render();
        },
      }, c.label, active ? (sortDir > 0 ? '\u00a0▲' : '\u00a0▼') : '');
      tr.appendChild(th);
    }
    thead.appendChild(tr);
  }
  function render() {
    renderHead();
    clear(tbody);
    const col = columns.find((c) => c.key === sortKey) || columns[0];
    const sorted = rows.slice().sort((a, b) => {
      const x = val(col, a), y = val(col, b);
      const xn = x === null || x === undefined || (typeof x === 'number' && isNaN(x));
      const yn = y === null || y === undefined || (typeof y === 'number' && isNaN(y));
      if (xn || yn) return xn === yn ? 0 : xn ? 1 : -1; // missing values last
      if (typeof x === 'number' && typeof y === 'number') return (x - y) * sortDir;
      return naturalCompare(x, y) * sortDir;
    });
    for (const r of sorted) {
      const tr = h('tr', opts.rowProps ? opts.rowProps(r) : null);
      for (const c of columns) {
        const v = c.render ? c.render(r) : val(c, r);
        tr.appendChild(h('td', { class: c.num ? 'num' : null }, v));
      }
      tbody.appendChild(tr);
    }
    if (opts.onRender) opts.onRender(tbody);
  }
  return {
    el: table,
    setRows(r) { rows = r; render(); },
    rerender: render,
  };
}
