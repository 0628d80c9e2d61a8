// Query tab (issue 30): SQL over runs, metrics, hparams, alerts and GPU
// traces. An editor (Ctrl+Enter runs), the tables and their columns from
// /data/plugin/query/tables (a click puts a name at the caret), the
// example queries, and the answer of POST /data/query as a table or as a
// line or scatter chart of two of its columns; CSV download of the whole
// answer. The statement, the view and its two columns are kept in the URL
// (state.sql, qview, qx, qy), so a link reruns the query.
import { h, clear } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { defineState, key } from '../core/state.js';
import { makeChart } from '../core/charts.js';
import { eng } from '../core/format.js';

defineState({
  sql: key.str(),
  qview: key.oneOf('table', 'line', 'scatter'),
  qx: key.str(),
  qy: key.str(),
});

// Rows drawn in the table: a browser table of 100,000 rows takes seconds
// to lay out; the CSV download has them all.
const TABLE_ROWS_MAX = 2000;

const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

// A cell as text: numbers through the one formatter's engineering form
// only when they are not integers (ids and steps stay exact).
function cellText(v) {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : eng(v);
  return String(v);
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes
// doubled; NULL is an empty field; numbers keep every digit.
function csvField(v) {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

export function toCSV(ans) {
  const lines = [ans.columns.map(csvField).join(',')];
  for (const r of ans.rows) lines.push(r.map(csvField).join(','));
  return lines.join('\r\n') + '\r\n';
}

// Line and column (1-based) of a byte offset into the text (the server
// counts UTF-8 bytes).
function lineCol(text, off) {
  const bytes = new TextEncoder().encode(text);
  const before = new TextDecoder().decode(bytes.slice(0, Math.max(0, off)));
  const lines = before.split('\n');
  return { line: lines.length, col: lines[lines.length - 1].length + 1, chars: before.length };
}

async function postQuery(sql) {
  let res;
  try {
    res = await fetch('data/query', { method: 'POST', cache: 'no-store', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ sql }) });
  } catch (e) {
    return { error: 'server unreachable', offset: -1 };
  }
  const text = await res.text();
  let j = null;
  try { j = JSON.parse(text); } catch (e) { /* not JSON */ }
  if (!res.ok) return { error: (j && j.error) || res.status + ' ' + res.statusText, offset: j && typeof j.offset === 'number' ? j.offset : -1 };
  if (!j || !Array.isArray(j.columns) || !Array.isArray(j.rows)) return { error: 'bad answer from data/query', offset: -1 };
  return j;
}

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.answer = null;
    this.chart = null;
    this.editor = h('textarea', {
      id: 'query-sql', spellcheck: 'false', rows: 8, 'aria-label': 'SQL query',
      placeholder: 'SELECT run, tag, last FROM scalar_stats ORDER BY last LIMIT 20',
      style: { width: '100%', boxSizing: 'border-box', fontFamily: MONO, fontSize: '13px', padding: '8px', resize: 'vertical',
        background: 'var(--panel)', color: 'var(--text)', border: '1px solid var(--border)', borderRadius: '6px' },
      onkeydown: (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.run(); } },
    });
    this.editor.value = ctx.state.sql;
    this.runBtn = h('button', { id: 'query-run', class: 'btn', onclick: () => this.run(), title: 'Run (Ctrl+Enter)' }, 'Run');
    this.csvBtn = h('button', { id: 'query-csv', class: 'btn', disabled: true, onclick: () => this.download() }, 'Download CSV');
    this.viewSel = h('select', { id: 'query-view', 'aria-label': 'Show as', onchange: (e) => ctx.setState({ qview: e.target.value }) },
      ['table', 'line', 'scatter'].map((v) => h('option', { value: v, selected: ctx.state.qview === v }, v === 'table' ? 'Table' : v === 'line' ? 'Line chart' : 'Scatter chart')));
    this.xSel = h('select', { id: 'query-x', 'aria-label': 'x column', onchange: (e) => ctx.setState({ qx: e.target.value }) });
    this.ySel = h('select', { id: 'query-y', 'aria-label': 'y column', onchange: (e) => ctx.setState({ qy: e.target.value }) });
    this.axes = h('span', { class: 'small', style: { display: 'inline-flex', gap: '6px', alignItems: 'center' } }, 'x', this.xSel, 'y', this.ySel);
    this.status = h('span', { id: 'query-status', class: 'muted small', role: 'status' });
    this.error = h('pre', { id: 'query-error', class: 'error-text small', hidden: true, style: { whiteSpace: 'pre-wrap', margin: '6px 0', fontFamily: MONO } });
    this.result = h('div', { id: 'query-result', style: { marginTop: '8px', overflow: 'auto', maxHeight: '70vh' } });
    const bar = h('div', { style: { display: 'flex', gap: '8px', alignItems: 'center', flexWrap: 'wrap', margin: '6px 0' } },
      this.runBtn, this.viewSel, this.axes, this.csvBtn, this.status);
    ctx.main.append(h('div', { class: 'card wide', id: 'query-card' }, this.editor, bar, this.error, this.result));

    this.tables = h('div', { id: 'query-tables', class: 'small' }, h('span', { class: 'muted' }, 'Loading tables…'));
    this.examples = h('div', { id: 'query-examples', class: 'small' });
    ctx.settings.append(h('h3', null, 'Examples'), this.examples, h('h3', null, 'Tables'), this.tables);
    this.loadTables();
    this.syncAxes();
    if (ctx.state.sql) this.run();
  },
  unmount() {
    if (this.chart) { this.chart.destroy(); this.chart = null; }
  },
  update(ctx, changed) {
    this.ctx = ctx;
    if (!changed || changed.includes('sql')) {
      if (document.activeElement !== this.editor && this.editor.value.trim() !== ctx.state.sql) {
        this.editor.value = ctx.state.sql;
        if (ctx.state.sql) this.run();
      }
    }
    if (!changed || ['qview', 'qx', 'qy'].some((k) => changed.includes(k))) { this.viewSel.value = ctx.state.qview; this.syncAxes(); this.draw(); }
  },

  async loadTables() {
    let ans;
    try {
      ans = await getJSON('data/plugin/query/tables');
    } catch (e) {
      clear(this.tables).append(h('span', { class: 'error-text' }, e.message));
      return;
    }
    clear(this.examples);
    for (const ex of ans.examples || []) {
      this.examples.append(h('div', null, h('button', { class: 'link', style: { textAlign: 'left' }, dataset: { example: ex.title }, title: ex.sql,
        onclick: () => { this.editor.value = ex.sql; this.run(); } }, ex.title)));
    }
    clear(this.tables);
    for (const t of ans.tables || []) {
      const cols = (t.columns || []).map((c, i) => [i ? ', ' : '', h('button', { class: 'link', onclick: () => this.insert(/^[A-Za-z_][A-Za-z0-9_]*$/.test(c) ? c : '"' + c.replace(/"/g, '""') + '"') }, c)]);
      this.tables.append(h('details', { dataset: { table: t.name } },
        h('summary', null, h('code', null, t.name), h('span', { class: 'muted' }, ` (${(t.columns || []).length})`)),
        h('div', { style: { padding: '2px 0 6px 12px', lineHeight: '1.6' } }, cols)));
    }
  },

  insert(text) {
    const e = this.editor;
    const a = e.selectionStart, b = e.selectionEnd;
    e.value = e.value.slice(0, a) + text + e.value.slice(b);
    e.selectionStart = e.selectionEnd = a + text.length;
    e.focus();
  },

  async run() {
    const sql = this.editor.value.trim();
    if (!sql) return;
    if (sql !== this.ctx.state.sql) this.ctx.setState({ sql });
    const token = {};
    this.token = token;
    this.runBtn.disabled = true;
    this.status.textContent = 'Running…';
    this.error.hidden = true;
    const ans = await postQuery(sql);
    if (this.token !== token) return;
    this.runBtn.disabled = false;
    if (ans.error) {
      this.answer = null;
      this.csvBtn.disabled = true;
      this.status.textContent = '';
      let msg = ans.error;
      if (ans.offset >= 0) {
        const p = lineCol(sql, ans.offset);
        msg += `\n  at line ${p.line}, column ${p.col}`;
        this.editor.setSelectionRange(p.chars, Math.min(sql.length, p.chars + 1));
      }
      this.error.textContent = msg;
      this.error.hidden = false;
      clear(this.result);
      window.__tfb.pages.query = { error: ans.error, offset: ans.offset };
      return;
    }
    this.answer = ans;
    this.csvBtn.disabled = false;
    this.status.textContent = `${ans.rows.length} row${ans.rows.length === 1 ? '' : 's'}${ans.truncated ? ' (truncated: past the server\'s limit)' : ''} in ${eng(num(ans.elapsed_ms))} ms`;
    this.syncAxes();
    this.draw();
  },

  // The two column pickers: every column of the answer; the URL's choice
  // when the answer has it, else the first two columns.
  syncAxes() {
    const cols = this.answer ? this.answer.columns : [];
    const st = this.ctx.state;
    const pick = (sel, want, dflt) => {
      clear(sel);
      for (const c of cols) sel.append(h('option', { value: c, selected: c === want }, c));
      sel.value = cols.includes(want) ? want : dflt || '';
    };
    pick(this.xSel, st.qx, cols[0]);
    pick(this.ySel, st.qy, cols[1] || cols[0]);
    this.axes.hidden = st.qview === 'table';
  },

  draw() {
    if (this.chart) { this.chart.destroy(); this.chart = null; }
    clear(this.result);
    const ans = this.answer;
    if (!ans) return;
    const view = this.ctx.state.qview;
    window.__tfb.pages.query = { columns: ans.columns, rows: ans.rows.length, truncated: ans.truncated, view };
    if (view === 'table') { this.result.append(this.table(ans)); return; }
    const xi = ans.columns.indexOf(this.xSel.value), yi = ans.columns.indexOf(this.ySel.value);
    const pts = [];
    for (const r of ans.rows) {
      const x = num(r[xi]), y = num(r[yi]);
      if (Number.isFinite(x) && Number.isFinite(y)) pts.push({ x, y });
    }
    // Sorted by x for both views: with parsing off, Chart.js takes the x
    // range from the first and last points (unsorted, a scatter lost some).
    pts.sort((a, b) => a.x - b.x);
    window.__tfb.pages.query.points = pts.length;
    if (!pts.length) {
      this.result.append(h('p', { class: 'muted small' }, `No row has numbers in both ${this.xSel.value} and ${this.ySel.value}.`));
      return;
    }
    const canvas = h('canvas', { id: 'query-chart' });
    this.result.append(h('div', { style: { position: 'relative', height: '420px' } }, canvas));
    const accent = getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() || '#1f77b4';
    this.chart = makeChart(canvas, {
      type: view === 'line' ? 'line' : 'scatter',
      data: { datasets: [{ label: `${this.ySel.value} by ${this.xSel.value}`, data: pts, borderColor: accent, backgroundColor: accent, pointRadius: view === 'line' ? 0 : 3, showLine: view === 'line', borderWidth: 1.5 }] },
      options: {
        animation: false, maintainAspectRatio: false, parsing: false,
        scales: { x: { type: 'linear', title: { display: true, text: this.xSel.value }, ticks: { callback: (v) => eng(v) } },
          y: { title: { display: true, text: this.ySel.value }, ticks: { callback: (v) => eng(v) } } },
        plugins: { legend: { display: false } },
      },
    });
    const sx = this.chart.scales.x, sy = this.chart.scales.y;
    window.__tfb.pages.query.range = sx && sy ? { x: [sx.min, sx.max], y: [sy.min, sy.max] } : null;
  },

  table(ans) {
    const head = h('tr', null, ans.columns.map((c) => h('th', null, c)));
    const rows = ans.rows.slice(0, TABLE_ROWS_MAX).map((r) => h('tr', null, r.map((v) => h('td', {
      class: typeof v === 'number' ? 'num' : null, style: { fontFamily: typeof v === 'number' ? MONO : null, whiteSpace: 'nowrap' },
    }, cellText(v)))));
    const more = ans.rows.length > TABLE_ROWS_MAX
      ? h('p', { class: 'muted small' }, `The first ${TABLE_ROWS_MAX} of ${ans.rows.length} rows are shown; the CSV has them all.`) : null;
    return h('div', null, h('table', { class: 'table', id: 'query-table' }, h('thead', null, head), h('tbody', null, rows)), more);
  },

  download() {
    if (!this.answer) return;
    const blob = new Blob([toCSV(this.answer)], { type: 'text/csv' });
    const a = h('a', { href: URL.createObjectURL(blob), download: 'query.csv' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  },
};

export default page;
