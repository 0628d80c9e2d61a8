// GPU page sections (imported by gpu.js): the memory view from
// /data/plugin/gpu/memory (bytes in use per device as a step line that
// zooms with the wheel and asks the server for the visible window, the
// peak, the allocations live at the peak, churn per step, the OOM
// post-mortem), and the always-on NVML metrics (gpu/<dev>/<metric>
// scalars from tfb_gpu_metrics_start), drawn for runs with or without a
// trace. Times are seconds from t0 (ns since the epoch), the same origin
// as the utilization chart so the charts line up.
import { h, debounce, sortableTable } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { bytes, int, si, pct } from '../core/format.js';
import { makeChart } from '../core/charts.js';
import { withAlpha } from '../core/colors.js';
import { devColor, filledSet, timeChartOptions } from '../lib/plot.js';


// 202 {"loading"} while the run's trace/memory events load: ask again.
async function poll(path, params) {
  for (;;) {
    const res = await getJSON(path, params);
    if (!res || res.loading !== true) return res;
    await new Promise((r) => setTimeout(r, 300));
  }
}

// ---- NVML metrics -----------------------------------------------------------

// The charts, in order: [title, metrics drawn, y axis label, value format].
const NVML_CHARTS = [
  ['SM utilization', ['sm_util', 'mem_util'], '%', (v) => v.toFixed(1) + ' %'],
  ['Memory used / total', ['mem_used_bytes', 'mem_total_bytes'], 'bytes', (v) => bytes(v)],
  ['Power', ['power_w'], 'W', (v) => v.toFixed(1) + ' W'],
  ['Temperature', ['temp_c'], '°C', (v) => v.toFixed(0) + ' °C'],
  ['SM clock', ['sm_clock_mhz'], 'MHz', (v) => v.toFixed(0) + ' MHz'],
];
const NVML_RE = /^gpu\/(\d+)\/([a-z_]+)$/;
const NVML_METRICS = new Set(NVML_CHARTS.flatMap((c) => c[1]));

// {device: Set(metric)} of a run's scalar tags.
export function nvmlTags(scalarTags) {
  const out = new Map();
  for (const tag of Object.keys(scalarTags || {})) {
    const m = NVML_RE.exec(tag);
    if (!m || !NVML_METRICS.has(m[2])) continue;
    const d = Number(m[1]);
    if (!out.has(d)) out.set(d, new Set());
    out.get(d).add(m[2]);
  }
  return out;
}

export function hasNvml(scalarTags) {
  for (const s of nvmlTags(scalarTags).values()) if (s.has('sm_util') || s.has('mem_used_bytes')) return true;
  return false;
}

// Draws the NVML charts of run into wrap; t0Sec: the x origin (seconds
// since the epoch), null = the first sample. Returns {charts, info}.
export async function renderNvml(wrap, run, scalarTags, t0Sec) {
  const tags = nvmlTags(scalarTags);
  const devs = [...tags.keys()].sort((a, b) => a - b);
  const jobs = [];
  for (const d of devs) for (const m of tags.get(d)) jobs.push([d, m]);
  const series = await Promise.all(jobs.map(([d, m]) => getJSON('data/plugin/scalars/scalars', { run, tag: `gpu/${d}/${m}`, samples: 600 })
    .then((rows) => ({ d, m, rows: Array.isArray(rows) ? rows : [] })).catch(() => ({ d, m, rows: [] }))));
  let origin = t0Sec;
  if (origin === null || origin === undefined) {
    origin = Infinity;
    for (const s of series) for (const r of s.rows) origin = Math.min(origin, num(r[0]));
    if (!Number.isFinite(origin)) origin = 0;
  }
  const charts = [];
  const grid = h('div', { class: 'cols', id: 'gpu-nvml' });
  const info = { charts: 0, points: 0, devices: devs.length };
  for (const [title, metrics, unit, fmt] of NVML_CHARTS) {
    const sets = [];
    for (const s of series) {
      const k = metrics.indexOf(s.m);
      if (k < 0 || !s.rows.length) continue;
      const data = s.rows.map((r) => ({ x: num(r[0]) - origin, y: num(r[2]) })).filter((p) => Number.isFinite(p.x));
      info.points += data.length;
      const c = devColor(s.d);
      const second = k > 0;
      sets.push({ label: `GPU ${s.d} ${s.m}`, data, borderColor: second ? withAlpha(c, 0.6) : c, backgroundColor: c,
        borderDash: second ? [5, 4] : [], borderWidth: 1.5, pointRadius: data.length > 60 ? 0 : 2 });
    }
    if (!sets.length) continue;
    const canvas = h('canvas');
    grid.appendChild(h('div', { class: 'card nvml-chart', 'data-title': title }, h('h3', { class: 'card-h' }, title), h('div', { class: 'chart-wrap short' }, canvas)));
    charts.push({ canvas, sets, unit, fmt });
    info.charts++;
  }
  if (!info.charts) return { charts: [], info };
  wrap.append(h('h3', { class: 'section-h' }, 'GPU metrics (NVML)'),
    h('p', { class: 'muted small' }, 'Sampled by tfb_gpu_metrics_start for the whole run (all processes on the device), with or without a trace.'), grid);
  const made = charts.map(({ canvas, sets, unit, fmt }) => makeChart(canvas, {
    type: 'line', data: { datasets: sets },
    options: timeChartOptions({
      xTitle: 'Time (s)', fmt, legend: { display: sets.length > 1 }, x: { bounds: 'data' },
      y: { beginAtZero: unit === '%' || unit === 'bytes', title: { display: true, text: unit },
        ticks: unit === 'bytes' ? { callback: (v) => bytes(v) } : {} },
    }),
  }));
  return { charts: made, info };
}

// ---- memory -------------------------------------------------------------------

function allocRow(a, t0, d) {
  return { device: d, address: String(a.address), bytes: num(a.bytes), at: (num(a.t_ns) - t0) / 1e9,
    stream: a.stream === null || a.stream === undefined ? null : num(a.stream), kernel: a.kernel === null ? null : String(a.kernel),
    range: a.range === null ? null : String(a.range), live: a.live_at_end };
}

const ALLOC_COLS = [
  { key: 'device', label: 'GPU', num: true },
  { key: 'bytes', label: 'Bytes', num: true, render: (r) => bytes(r.bytes) },
  { key: 'at', label: 'Allocated at', num: true, render: (r) => si(r.at, 's') },
  { key: 'stream', label: 'Stream', num: true, render: (r) => (r.stream === null ? '–' : String(r.stream)) },
  { key: 'kernel', label: 'Kernel running', render: (r) => (r.kernel === null ? h('span', { class: 'muted' }, '–') : h('span', { class: 'mono', title: r.kernel }, r.kernel.length > 70 ? r.kernel.slice(0, 67) + '…' : r.kernel)) },
  { key: 'range', label: 'NVTX range', render: (r) => (r.range === null ? h('span', { class: 'muted' }, '–') : r.range) },
  { key: 'address', label: 'Address', render: (r) => h('span', { class: 'mono' }, r.address) },
];

// The memory section. opts: {t0 (ns, null = the first memory event),
// xTitle, onView([x0, x1] seconds), params (more route parameters: the
// page's step window, {window})}: onView is called when the user zooms,
// so the caller can align the utilization chart. load() resolves with the
// section's element (null when the run has no memory events).
export class MemoryView {
  constructor(run, opts) {
    this.run = run;
    this.opts = opts || {};
    this.token = null;
    this.charts = [];
  }

  async load() {
    const res = await poll('data/plugin/gpu/memory', { run: this.run, points: 800, top: 50, last: 30, ...this.opts.params });
    this.full = res;
    const devs = res.devices || [];
    if (!devs.length) return null;
    // The origin is the caller's (the first kernel) unless memory events
    // come before it: then the first memory event, so no time on the axis
    // reads negative ("-138.7 µs"); `shift` (seconds) takes this chart's
    // times to the caller's.
    const first = num(res.start_ns);
    this.t0 = this.opts.t0 === null || this.opts.t0 === undefined || first < this.opts.t0 ? first : this.opts.t0;
    this.shift = this.opts.t0 === null || this.opts.t0 === undefined ? 0 : (this.t0 - this.opts.t0) / 1e9;
    this.extent = [(num(res.start_ns) - this.t0) / 1e9, (num(res.end_ns) - this.t0) / 1e9];
    const el = h('div', { id: 'gpu-memory' });
    el.appendChild(h('h3', { class: 'section-h' }, 'Memory'));
    // One sentence per device.
    const lines = h('div', { class: 'mem-peaks' });
    for (const d of devs) {
      lines.appendChild(h('p', { class: 'mem-peak' }, `Peak ${bytes(num(d.peak_bytes))} on GPU ${d.device} at +${si((num(d.peak_t_ns) - num(res.start_ns)) / 1e9, 's')} from the first memory event, ` +
        `${int(num(d.live_at_peak_total))} allocation${num(d.live_at_peak_total) === 1 ? '' : 's'} live` +
        (num(d.peak_reserved) > num(d.peak_bytes) ? ` (${bytes(num(d.peak_reserved))} reserved)` : '') +
        `; ${bytes(num(d.end_bytes))} in use at the end of the trace.`));
    }
    el.appendChild(lines);
    // The step line.
    this.canvas = h('canvas', { id: 'gpu-memory-chart' });
    this.status = h('div', { class: 'card-status muted small' });
    el.appendChild(h('div', { class: 'card', style: { marginBottom: '12px' } },
      h('h3', { class: 'card-h' }, 'Bytes in use'), h('div', { class: 'chart-wrap short' }, this.canvas), this.status));
    this.chart = makeChart(this.canvas, {
      type: 'line', data: { datasets: this.datasets(res) },
      options: timeChartOptions({
        xTitle: (this.shift === 0 && this.opts.xTitle) || 'Time since first memory event (s)', fmt: bytes,
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        legend: { display: true, labels: { filter: (it) => !it.text.endsWith(' peak') } },
        x: { min: this.extent[0], max: this.extent[1] },
        y: { beginAtZero: true, title: { display: true, text: 'In use' }, ticks: { callback: (v) => bytes(v) } },
      }),
    });
    this.charts.push(this.chart);
    this.view = null;
    this.bindZoom();
    this.setStatus(res);

    // Live at the peak, largest first.
    const live = [];
    for (const d of devs) for (const a of d.live_at_peak || []) live.push(allocRow(a, this.t0, d.device));
    const lt = sortableTable(ALLOC_COLS, { sortKey: 'bytes', className: 'mem-live-table' });
    lt.setRows(live);
    el.appendChild(h('div', { class: 'card', style: { marginBottom: '12px' } },
      h('h3', { class: 'card-h' }, 'Allocations live at the peak'),
      h('p', { class: 'muted small' }, devs.map((d) => `GPU ${d.device}: ${int((d.live_at_peak || []).length)} largest of ${int(num(d.live_at_peak_total))}`).join(' · ') +
        '. Kernel: the one running on the device when the block was allocated; NVTX range: the innermost one then.'),
      h('div', { class: 'table-card', style: { maxHeight: '360px' } }, lt.el)));

    // Churn per step.
    const churn = res.churn || [];
    if (churn.length) {
      const cc = h('canvas', { id: 'gpu-churn-chart' });
      el.appendChild(h('div', { class: 'card', style: { marginBottom: '12px' } },
        h('h3', { class: 'card-h' }, 'Allocation churn per step'), h('div', { class: 'chart-wrap short' }, cc)));
      const steps = [...new Set(churn.map((c) => num(c.step)))].sort((a, b) => a - b);
      const byDev = new Map();
      for (const c of churn) {
        const d = num(c.device);
        if (!byDev.has(d)) byDev.set(d, new Map());
        byDev.get(d).set(num(c.step), c);
      }
      const sets = [];
      for (const [d, m] of [...byDev.entries()].sort((a, b) => a[0] - b[0])) {
        sets.push({ label: `GPU ${d} allocated`, data: steps.map((s) => num(m.get(s)?.alloc_bytes ?? 0)), backgroundColor: devColor(d), stack: 'd' + d });
        sets.push({ label: `GPU ${d} freed`, data: steps.map((s) => num(m.get(s)?.free_bytes ?? 0)), backgroundColor: withAlpha(devColor(d), 0.35), stack: 'f' + d });
      }
      const counts = (d, s) => byDev.get(d)?.get(s);
      this.charts.push(makeChart(cc, {
        type: 'bar', data: { labels: steps.map(String), datasets: sets },
        options: {
          animation: false,
          plugins: { legend: { align: 'end' }, tooltip: { callbacks: { label: (c) => {
            const d = Number(/GPU (-?\d+)/.exec(c.dataset.label)[1]);
            const row = counts(d, steps[c.dataIndex]);
            const n = row ? (c.dataset.label.endsWith('allocated') ? num(row.allocs) : num(row.frees)) : 0;
            return `${c.dataset.label}: ${bytes(c.parsed.y)} in ${int(n)} call${n === 1 ? '' : 's'}`;
          } } } },
          scales: { x: { title: { display: true, text: 'step' } }, y: { beginAtZero: true, ticks: { callback: (v) => bytes(v) } } },
        },
      }));
    }

    // OOM post-mortem.
    const pm = devs.filter((d) => d.post_mortem);
    if (pm.length) {
      const rows = [];
      for (const d of pm) for (const a of d.last_allocs || []) rows.push(allocRow(a, this.t0, d.device));
      const pt = sortableTable([...ALLOC_COLS, { key: 'live', label: 'Live at end', render: (r) => (r.live ? 'yes' : 'freed') }],
        { sortKey: 'at', className: 'mem-postmortem-table' });
      pt.setRows(rows);
      el.appendChild(h('div', { class: 'card alert-card', id: 'gpu-postmortem', style: { marginBottom: '12px' } },
        h('h3', { class: 'card-h' }, 'OOM post-mortem'),
        ...pm.map((d) => h('p', null, `GPU ${d.device}: the trace ends with ${bytes(num(d.end_bytes))} in use (${pct(num(d.end_bytes) / Math.max(1, num(d.peak_bytes)), 0)} of the peak) and memory still growing. The last allocations before the end, most recent first:`)),
        h('p', { class: 'muted small' }, 'Shown when ' + String(res.post_mortem_rule) + ' (as when a process dies of an out-of-memory error).'),
        h('div', { class: 'table-card', style: { maxHeight: '360px' } }, pt.el)));
    }
    this.info = { devices: devs.length, points: devs.map((d) => (d.points || []).length), live: live.length, churn: churn.length, postMortem: pm.map((d) => d.device), peaks: devs.map((d) => num(d.peak_bytes)), shift: this.shift };
    return el;
  }

  datasets(res) {
    const sets = [];
    for (const d of res.devices || []) {
      const c = devColor(d.device);
      const data = (d.points || []).map((p) => ({ x: (num(p[0]) - this.t0) / 1e9, y: num(p[1]) }));
      sets.push(filledSet(`GPU ${d.device}`, data, c, { stepped: 'before' }));
      sets.push({ label: `GPU ${d.device} peak`, type: 'scatter', data: [{ x: (num(d.peak_t_ns) - this.t0) / 1e9, y: num(d.peak_bytes) }],
        pointStyle: 'triangle', pointRadius: 7, borderColor: c, backgroundColor: c });
    }
    return sets;
  }

  setStatus(res) {
    const w = this.view ? this.view : this.extent;
    const changes = (res.devices || []).reduce((a, d) => a + num(d.changes), 0);
    this.status.textContent = `${int(num(res.events))} memory events in ${int(num(res.files))} file${num(res.files) === 1 ? '' : 's'}; ${int(changes)} changes in the ${si(Math.max(0, w[1] - w[0]), 's')} window` +
      ' (triangles: the peak). Wheel: zoom · drag: pan · double-click: reset.';
  }

  setView(v) {
    this.view = v;
    const x = this.chart.options.scales.x;
    [x.min, x.max] = v || this.extent;
    this.chart.update('none');
    if (this.opts.onView) { const w = v || this.extent; this.opts.onView([w[0] + this.shift, w[1] + this.shift]); }
    this.fetchSoon();
  }

  async fetchWindow() {
    const token = {};
    this.token = token;
    const q = { run: this.run, points: 800, top: 1, last: 1, ...this.opts.params };
    if (this.view) { q.start_ns = Math.floor(this.t0 + this.view[0] * 1e9); q.end_ns = Math.ceil(this.t0 + this.view[1] * 1e9); }
    try {
      const res = await poll('data/plugin/gpu/memory', q);
      if (this.token !== token) return;
      this.chart.data.datasets = this.datasets(res);
      this.chart.update('none');
      this.setStatus(res);
      window.__tfb.pages.gpuMemoryWindow = { view: this.view ? this.view.slice() : null, points: (res.devices || []).map((d) => (d.points || []).length), fetches: (window.__tfb.pages.gpuMemoryWindow?.fetches || 0) + 1 };
    } catch (e) {
      this.status.textContent = 'Could not load the memory window: ' + e.message;
    }
  }

  bindZoom() {
    this.fetchSoon = debounce(() => this.fetchWindow(), 150);
    const cv = this.canvas;
    const area = () => this.chart.chartArea;
    cv.addEventListener('wheel', (e) => {
      e.preventDefault();
      const full = this.extent;
      const span0 = Math.max(1e-9, full[1] - full[0]);
      const a = area();
      const r = cv.getBoundingClientRect();
      const fx = Math.min(1, Math.max(0, (e.clientX - r.left - a.left) / Math.max(1, a.right - a.left)));
      const [x0, x1] = this.view || full;
      const span = Math.max(1e-6 * span0, Math.min(span0, (x1 - x0) * (e.deltaY > 0 ? 1.25 : 0.8)));
      let n0 = x0 + fx * (x1 - x0) - fx * span;
      n0 = Math.max(full[0], Math.min(n0, full[1] - span));
      this.setView(span >= span0 ? null : [n0, n0 + span]);
    }, { passive: false });
    let drag = null;
    cv.addEventListener('mousedown', (e) => { drag = { x: e.clientX, view: (this.view || this.extent).slice() }; });
    window.addEventListener('mouseup', () => { drag = null; });
    cv.addEventListener('mousemove', (e) => {
      if (!drag || !this.view) return;
      const a = area();
      const full = this.extent;
      const span = drag.view[1] - drag.view[0];
      let n0 = drag.view[0] - ((e.clientX - drag.x) / Math.max(1, a.right - a.left)) * span;
      n0 = Math.max(full[0], Math.min(n0, full[1] - span));
      this.setView([n0, n0 + span]);
    });
    cv.addEventListener('dblclick', () => this.setView(null));
  }

  destroy() { for (const c of this.charts) c.destroy(); this.charts = []; this.token = null; }
}

