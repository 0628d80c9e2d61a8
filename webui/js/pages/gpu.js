// GPU dashboard (from the trace store / nsys export / Kineto JSON a run
// holds): utilization per device over time, the kernel table (sortable,
// searchable), the memcpy breakdown, the idle-time breakdown, and a timeline
// with one lane per stream, drawn on a canvas, that zooms like a map (wheel
// to zoom, drag to pan, double-click to reset) and asks the server again for
// the visible window.
import { h, clear, debounce, sortableTable } from '../core/dom.js';
import { getJSON, num, url } from '../core/api.js';
import { eng, ns, pct, bytes, int, si } from '../core/format.js';
import { makeChart, } from '../core/charts.js';
import { themeColor, withAlpha } from '../core/colors.js';
import { COLOR, devColor, filledSet, timeChartOptions, sizeCanvas } from '../lib/plot.js';
import { MemoryView, renderNvml, hasNvml } from './gpu_memory.js';
import { pickRun } from '../lib/run_pick.js';

const gpuRunsCache = { list: [], traced: new Set() };

// A run's trace loads in the background on the server: until it is read,
// the GPU routes answer 202 {"loading": true, "progress": 0..1}. Poll
// until the answer is there, telling onProgress how far the load is.
async function gpuJSON(path, params, onProgress) {
  for (;;) {
    const res = await getJSON(path, params);
    if (!res || res.loading !== true) return res;
    if (onProgress) onProgress(num(res.progress));
    await new Promise((r) => setTimeout(r, 300));
  }
}

const IDLE_PARTS = [
  ['host_wait_ns', 'Host wait', COLOR.red],
  ['kernel_wait_ns', 'Kernel wait', COLOR.yellow],
  ['other_ns', 'Other', COLOR.grey],
];

function hashColor(name) {
  let x = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) { x ^= name.charCodeAt(i); x = Math.imul(x, 0x01000193) >>> 0; }
  return `hsl(${x % 360}, 55%, ${52 + ((x >> 9) % 12)}%)`;
}

// /data/plugin/gpu/timeline: {start_ns, end_ns, total, merged,
// resolution_ns, truncated, lanes: [{id, kind, device, stream, label}],
// spans: [{lane, kind, name|null, start_ns, end_ns, count, busy_ns, ...}]}.
function normSpan(s, laneLabel) {
  const kind = String(s.kind ?? 'kernel');
  const count = num(s.count ?? 1);
  return {
    start: num(s.start_ns), end: num(s.end_ns), kind,
    name: s.name === null || s.name === undefined ? (count > 1 ? `${count} ${kind} spans` : kind) : String(s.name),
    lane: laneLabel.get(s.lane) ?? String(s.lane), count, busy: num(s.busy_ns ?? 0),
  };
}

class Timeline {
  // The first answer (no window) gives the trace's full extent.
  constructor(wrap, run) {
    this.run = run;
    this.full = null;         // [start_ns, end_ns]
    this.view = null;
    this.spans = [];
    this.canvas = h('canvas', { class: 'plain', id: 'gpu-timeline' });
    this.tip = h('div', { class: 'chart-tooltip', hidden: true });
    this.info = h('div', { class: 'card-status muted' });
    // trace.json of the visible window (Perfetto, chrome://tracing); the
    // server caps it at max_events and says so in otherData.truncated.
    this.download = h('a', { class: 'small', id: 'gpu-download', download: `${run}.trace.json`, style: { marginLeft: 'auto' }, title: 'Chrome trace JSON of the visible window, for Perfetto' }, 'Download this window (trace.json)');
    wrap.append(this.canvas, this.tip, h('div', { class: 'toolbar' }, this.info, this.download));
    this.fetchSoon = debounce(() => this.fetch(), 150);
    this.bind();
    this.fetch();
  }
  async fetch() {
    const token = {};
    this.token = token;
    try {
      const q = { run: this.run, max: 3000 };
      if (this.view) { q.start_ns = Math.floor(this.view[0]); q.end_ns = Math.ceil(this.view[1]); }
      const res = await gpuJSON('data/plugin/gpu/timeline', q);
      if (this.token !== token) return;
      if (!this.full) {
        this.full = [num(res.start_ns), Math.max(num(res.end_ns), num(res.start_ns) + 1000)];
        this.view = this.full.slice();
      }
      const laneLabel = new Map((res.lanes || []).map((l) => [l.id, String(l.label)]));
      this.laneOrder = (res.lanes || []).map((l) => String(l.label));
      this.spans = (res.spans || []).map((q) => normSpan(q, laneLabel)).filter((q) => Number.isFinite(q.start) && Number.isFinite(q.end));
      this.merged = !!res.merged;
      this.total = num(res.total);
      this.draw();
      window.__tfb.pages.gpuTimeline = { spans: this.spans.length, total: this.total, merged: this.merged, lanes: this.lanes.slice(), view: this.view.slice(), download: this.download.getAttribute('href'), fetches: (window.__tfb.pages.gpuTimeline?.fetches || 0) + 1 };
    } catch (e) {
      this.info.textContent = 'Could not load the timeline: ' + e.message;
    }
  }
  draw() {
    // Lanes in the server's order (host lanes, then GPU streams), plus any
    // a span names that the list missed.
    const lanes = (this.laneOrder || []).slice();
    for (const q of this.spans) if (!lanes.includes(q.lane)) lanes.push(q.lane);
    this.lanes = lanes;
    const laneH = 22, top = 4, axisH = 22, labelW = 150;
    const H = top + Math.max(1, lanes.length) * laneH + axisH;
    const { ctx, W } = sizeCanvas(this.canvas, H);
    const pw = W - labelW - 8;
    const [a, b] = this.view;
    const xOf = (t) => labelW + ((t - a) / (b - a)) * pw;
    this.geom = { laneH, top, labelW, pw, xOf };
    const muted = themeColor('--muted');
    lanes.forEach((l, i) => {
      const y = top + i * laneH;
      ctx.fillStyle = i % 2 ? themeColor('--bg') : 'transparent';
      ctx.fillRect(labelW, y, pw, laneH);
      ctx.fillStyle = muted;
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      ctx.fillText(l, labelW - 8, y + laneH / 2);
    });
    const laneIdx = new Map(lanes.map((l, i) => [l, i]));
    for (const s of this.spans) {
      const i = laneIdx.get(s.lane);
      const x0 = Math.max(labelW, xOf(s.start)), x1 = Math.min(labelW + pw, xOf(s.end));
      if (x1 < labelW || x0 > labelW + pw) continue;
      const y = top + i * laneH + 3;
      ctx.fillStyle = s.kind === 'input' ? COLOR.red : s.kind === 'step' ? withAlpha(COLOR.blue, 0.35)
        : s.kind === 'memcpy' ? COLOR.orange : s.kind === 'memset' ? COLOR.brown : s.kind === 'mixed' ? '#888' : hashColor(s.name);
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), laneH - 6);
      if (x1 - x0 > 40) {
        ctx.save();
        ctx.beginPath(); ctx.rect(x0, y, x1 - x0, laneH - 6); ctx.clip();
        ctx.fillStyle = '#fff';
        ctx.textAlign = 'left';
        ctx.fillText(s.name, x0 + 3, y + (laneH - 6) / 2);
        ctx.restore();
      }
    }
    // Time axis relative to the trace start.
    ctx.fillStyle = muted;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const yAxis = top + lanes.length * laneH + 4;
    const n = Math.max(2, Math.floor(pw / 110));
    for (let k = 0; k <= n; k++) {
      const t = a + ((b - a) * k) / n;
      ctx.fillText(si((t - this.full[0]) / 1e9, 's'), labelW + (pw * k) / n, yAxis);
    }
    this.download.href = url('data/plugin/gpu/trace.json', { run: this.run, start_ns: Math.floor(a), end_ns: Math.ceil(b) });
    this.info.textContent = `${int(this.total ?? this.spans.length)} spans in a ${ns(b - a)} window` +
      (this.merged ? `, neighbours merged into ${int(this.spans.length)} marks` : '') + '. Wheel: zoom · drag: pan · double-click: reset.';
  }
  bind() {
    const cv = this.canvas;
    cv.addEventListener('wheel', (e) => {
      e.preventDefault();
      const g = this.geom;
      if (!g) return;
      const r = cv.getBoundingClientRect();
      const fx = Math.min(1, Math.max(0, (e.clientX - r.left - g.labelW) / g.pw));
      const [a, b] = this.view;
      const span = b - a;
      const k = e.deltaY > 0 ? 1.25 : 0.8;
      const ns2 = Math.max(1000, Math.min(this.full[1] - this.full[0], span * k));
      const c = a + fx * span;
      let na = c - fx * ns2;
      na = Math.max(this.full[0], Math.min(na, this.full[1] - ns2));
      this.view = [na, na + ns2];
      this.draw();
      this.fetchSoon();
    }, { passive: false });
    let drag = null;
    cv.addEventListener('mousedown', (e) => { if (!this.view) return; drag = { x: e.clientX, view: this.view.slice() }; cv.classList.add('dragging'); });
    window.addEventListener('mouseup', () => { if (drag) { drag = null; cv.classList.remove('dragging'); } });
    window.addEventListener('mousemove', (e) => {
      if (!drag || !this.geom) return;
      const dx = e.clientX - drag.x;
      const span = drag.view[1] - drag.view[0];
      let na = drag.view[0] - (dx / this.geom.pw) * span;
      na = Math.max(this.full[0], Math.min(na, this.full[1] - span));
      this.view = [na, na + span];
      this.draw();
      this.fetchSoon();
    });
    cv.addEventListener('dblclick', () => { if (!this.full) return; this.view = this.full.slice(); this.draw(); this.fetch(); });
    cv.addEventListener('mousemove', (e) => this.hover(e));
    cv.addEventListener('mouseleave', () => { this.tip.hidden = true; });
  }
  hover(e) {
    const g = this.geom;
    if (!g) return;
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const li = Math.floor((y - g.top) / g.laneH);
    const lane = this.lanes[li];
    const t = this.view[0] + ((x - g.labelW) / g.pw) * (this.view[1] - this.view[0]);
    const tol = ((this.view[1] - this.view[0]) / g.pw) * 2;
    const s = lane && this.spans.find((q) => q.lane === lane && q.start - tol <= t && q.end + tol >= t);
    if (!s) { this.tip.hidden = true; return; }
    clear(this.tip);
    this.tip.append(h('div', null, h('b', null, s.name)),
      h('div', null, `${s.kind}, ${ns(s.end - s.start)}` + (s.count > 1 ? `, ${s.count} merged` : '')),
      h('div', { class: 'muted' }, `at +${si((s.start - this.full[0]) / 1e9, 's')}`));
    this.tip.hidden = false;
    this.tip.style.left = Math.min(x + 12, this.canvas.clientWidth - 240) + 'px';
    this.tip.style.top = (y + 12) + 'px';
  }
}

const page = {
  // Runs with GPU traces for the run selector: runs_info lists each run's
  // trace files.
  probe(data) {
    const info = Array.isArray(data.runsInfo) ? data.runsInfo : [];
    const withTrace = new Set(info.filter((x) => x && Array.isArray(x.trace_files) && x.trace_files.length).map((x) => x.name));
    // Runs with the always-on NVML metrics (gpu/<dev>/sm_util, ...) too.
    gpuRunsCache.traced = withTrace;
    gpuRunsCache.list = data.runs.filter((r) => withTrace.has(r) || hasNvml((data.scalarTags || {})[r]));
    return Promise.resolve();
  },
  mount(ctx) {
    this.ctx = ctx;
    this.charts = [];
    this.runSelect = h('select', { id: 'gpu-run', onchange: (e) => ctx.setState({ run: e.target.value }) });
    ctx.settings.append(h('h3', null, 'Run'), this.runSelect,
      h('p', { class: 'muted small hint' }, 'From CUPTI traces (tfb_gpu_trace_start), nsys SQLite exports or PyTorch profiler JSON in the run directory.'));
    this.body = h('div');
    ctx.main.append(h('h2', { class: 'page-title' }, 'GPU'), this.body);
    this.render();
  },
  unmount() { for (const c of this.charts) c.destroy(); this.charts = []; if (this.mem) this.mem.destroy(); this.mem = null; },
  update(ctx, changed) {
    this.ctx = ctx;
    if (changed.some((k) => ['data', 'run', 'runs', 'runFilter'].includes(k))) this.render();
  },
  async render() {
    const run = pickRun(this.ctx, gpuRunsCache.list, this.runSelect);
    if (!run) return;
    const token = {};
    this.token = token;
    if (this.mem) { this.mem.destroy(); this.mem = null; }
    if (!gpuRunsCache.traced.has(run)) {
      // No trace: the NVML metrics only.
      for (const c of this.charts) c.destroy();
      this.charts = [];
      clear(this.body);
      this.body.appendChild(h('p', { class: 'muted small', id: 'gpu-no-trace' }, `${run} has no GPU trace; these are the GPU metrics sampled while it ran.`));
      const nv = await renderNvml(this.body, run, this.ctx.data.scalarTags[run], null);
      if (this.token !== token) { for (const c of nv.charts) c.destroy(); return; }
      this.charts.push(...nv.charts);
      window.__tfb.pages.gpu = { run, traced: false, devices: 0, nvml: nv.info };
      return;
    }
    let summary, kernels;
    const progress = (p) => {
      if (this.token !== token) return;
      clear(this.body);
      this.body.appendChild(h('div', { class: 'empty small', id: 'gpu-loading' }, `Reading the GPU trace of ${run}… ${Math.round(100 * p)} %`));
      window.__tfb.pages.gpuLoading = { run, progress: p };
    };
    try {
      [summary, kernels] = await Promise.all([
        gpuJSON('data/plugin/gpu/summary', { run }, progress),
        gpuJSON('data/plugin/gpu/kernels', { run, limit: 500 }),
      ]);
    } catch (e) {
      if (this.token !== token) return;
      clear(this.body);
      this.body.appendChild(h('div', { class: 'empty small error-text', id: 'gpu-error' }, 'Could not load the GPU analysis: ' + e.message));
      window.__tfb.pages.gpu = { run, error: e.message };
      return;
    }
    const devices = summary.devices || [];
    const utils = await Promise.all(devices.map((d) => gpuJSON('data/plugin/gpu/utilization', { run, device: d.id, buckets: 300 }).catch(() => null)));
    if (this.token !== token) return;
    for (const c of this.charts) c.destroy();
    this.charts = [];
    clear(this.body);

    // Device cards: headline numbers and the idle breakdown bar.
    const devRow = h('div', { class: 'cols', id: 'gpu-devices' });
    devices.forEach((d, i) => {
      const idle = d.idle || {};
      const idleTotal = IDLE_PARTS.reduce((a, [k]) => a + (num(idle[k]) || 0), 0);
      devRow.appendChild(h('div', { class: 'card' },
        h('h3', { class: 'card-h' }, h('span', { class: 'swatch', style: { background: devColor(i) } }), ` GPU ${d.id}` + (d.name && d.name !== 'GPU ' + d.id ? ': ' + d.name : '')),
        h('div', { class: 'stats' },
          h('div', { class: 'stat' }, h('div', { class: 'label' }, 'Busy'), h('div', { class: 'value' }, pct(num(d.busy_fraction))), h('div', { class: 'sub' }, ns(num(d.busy_ns)) + ' of ' + ns(num(d.span_ns)))),
          h('div', { class: 'stat' }, h('div', { class: 'label' }, 'Kernels'), h('div', { class: 'value' }, int(num(d.kernels))), h('div', { class: 'sub' }, ns(num(d.kernel_ns)) + ' total'))),
        h('div', { class: 'small muted' }, 'Idle time: ' + ns(idleTotal)),
        h('div', { class: 'hbar', title: 'Idle breakdown' }, IDLE_PARTS.map(([k, label, color]) => {
          const v = num(idle[k]) || 0;
          return idleTotal > 0 && v > 0 ? h('div', { style: { width: (100 * v / idleTotal) + '%', background: color }, title: `${label}: ${ns(v)}` }) : null;
        })),
        h('div', { class: 'legend' }, IDLE_PARTS.map(([k, label, color]) => h('span', null, h('span', { class: 'swatch', style: { background: color } }),
          `${label} ${idleTotal > 0 ? pct((num(idle[k]) || 0) / idleTotal, 0) : '–'}`)))));
    });
    this.body.appendChild(devRow);

    // Utilization over time, one line per device.
    const ucanvas = h('canvas', { id: 'gpu-util-chart' });
    this.body.appendChild(h('div', { class: 'card', style: { marginBottom: '12px' } }, h('h3', { class: 'card-h' }, 'Utilization'), h('div', { class: 'chart-wrap short' }, ucanvas)));
    let t0 = Infinity;
    for (const u of utils) if (u) t0 = Math.min(t0, num(u.start_ns));
    const uds = devices.map((d, i) => {
      const u = utils[i];
      const pts = u ? (u.busy || []).map((f, k) => ({ x: (num(u.start_ns) + (k + 0.5) * num(u.bucket_ns) - t0) / 1e9, y: 100 * num(f) })) : [];
      return filledSet('GPU ' + d.id, pts, devColor(i), { stepped: 'middle' });
    });
    this.charts.push(makeChart(ucanvas, {
      type: 'line', data: { datasets: uds },
      options: timeChartOptions({
        xTitle: 'Time since first kernel (s)', fmt: (v) => v.toFixed(1) + ' %',
        legend: { display: devices.length > 1 }, interaction: { mode: 'index', intersect: false },
        y: { min: 0, max: 100, title: { display: true, text: 'Busy (%)' } },
      }),
    }));

    // Memory and NVML metrics: filled below, without holding up the rest.
    const memWrap = h('div', { id: 'gpu-memory-wrap' });
    const nvmlWrap = h('div', { id: 'gpu-nvml-wrap' });
    this.body.append(memWrap, nvmlWrap);
    this.utilChart = this.charts[this.charts.length - 1];

    // Memcpy breakdown.
    const mrows = [];
    for (const d of devices) for (const [kind, m] of Object.entries(d.memcpy || {})) {
      const b = num(m.bytes), t = num(m.ns);
      mrows.push({ device: d.id, kind, count: num(m.count), bytes: b, ns: t, bw: t > 0 ? b / (t / 1e9) : null });
    }
    for (const d of devices) {
      const m = d.memset;
      if (m && num(m.count) > 0) mrows.push({ device: d.id, kind: 'memset', count: num(m.count), bytes: num(m.bytes), ns: num(m.ns), bw: num(m.ns) > 0 ? num(m.bytes) / (num(m.ns) / 1e9) : null });
    }
    const mtable = sortableTable([
      { key: 'device', label: 'GPU', num: true },
      { key: 'kind', label: 'Kind' },
      { key: 'count', label: 'Copies', num: true, render: (r) => int(r.count) },
      { key: 'bytes', label: 'Bytes', num: true, render: (r) => bytes(r.bytes) },
      { key: 'ns', label: 'Time', num: true, render: (r) => ns(r.ns) },
      { key: 'bw', label: 'Bandwidth', num: true, render: (r) => (r.bw === null ? '–' : si(r.bw, 'B/s')) },
    ], { sortKey: 'ns', className: 'memcpy-table' });
    mtable.setRows(mrows);

    // Kernel table with search.
    const krows = (kernels.kernels || []).map((k) => ({
      name: String(k.name), count: num(k.count), total_ns: num(k.total_ns), mean_ns: num(k.mean_ns), min_ns: num(k.min_ns),
      max_ns: num(k.max_ns), std_ns: num(k.std_ns), share: num(k.share),
      grid: Array.isArray(k.grid) ? k.grid.join('×') : String(k.grid ?? ''), block: Array.isArray(k.block) ? k.block.join('×') : String(k.block ?? ''),
      registers: num(k.registers), shared_mem: num(k.shared_mem),
    }));
    const ktable = sortableTable([
      { key: 'name', label: 'Kernel', render: (r) => h('span', { class: 'mono', title: r.name }, r.name.length > 90 ? r.name.slice(0, 87) + '…' : r.name) },
      { key: 'count', label: 'Calls', num: true, render: (r) => int(r.count) },
      { key: 'total_ns', label: 'Total', num: true, render: (r) => ns(r.total_ns) },
      { key: 'share', label: 'Share', num: true, render: (r) => pct(r.share) },
      { key: 'mean_ns', label: 'Mean', num: true, render: (r) => ns(r.mean_ns) },
      { key: 'min_ns', label: 'Min', num: true, render: (r) => ns(r.min_ns) },
      { key: 'max_ns', label: 'Max', num: true, render: (r) => ns(r.max_ns) },
      { key: 'std_ns', label: 'Std', num: true, render: (r) => ns(r.std_ns) },
      { key: 'grid', label: 'Grid' },
      { key: 'block', label: 'Block' },
      { key: 'registers', label: 'Regs', num: true, render: (r) => eng(r.registers) },
      { key: 'shared_mem', label: 'Shared mem', num: true, render: (r) => bytes(r.shared_mem) },
    ], { sortKey: 'total_ns', className: 'kernel-table' });
    const search = h('input', { type: 'search', id: 'kernel-search', placeholder: 'Search kernels', 'aria-label': 'Search kernels',
      oninput: () => {
        const q = search.value.toLowerCase();
        const rows = q ? krows.filter((r) => r.name.toLowerCase().includes(q)) : krows;
        ktable.setRows(rows);
        window.__tfb.pages.gpu.kernelsShown = rows.length;
      } });
    ktable.setRows(krows);
    this.body.append(
      h('div', { class: 'card', style: { marginBottom: '12px' } }, h('h3', { class: 'card-h' }, 'Timeline'), h('div', { class: 'timeline-wrap', id: 'timeline-wrap' })),
      h('div', { class: 'card', style: { marginBottom: '12px' } }, h('div', { class: 'toolbar' }, h('h3', { class: 'card-h' }, 'Kernels'), search,
        h('span', { class: 'muted' }, `${krows.length} distinct kernels`)), h('div', { class: 'table-card', style: { maxHeight: '420px' } }, ktable.el)),
      h('div', { class: 'card' }, h('h3', { class: 'card-h' }, 'Memory copies and sets'), mrows.length ? mtable.el : h('div', { class: 'muted' }, 'No memory copies recorded.')));

    this.timeline = new Timeline(document.getElementById('timeline-wrap'), run);
    window.__tfb.pages.gpu = { run, traced: true, devices: devices.length, kernels: krows.length, kernelsShown: krows.length, memcpy: mrows.length, utilPoints: uds.map((d) => d.data.length) };
    this.renderExtras(run, token, Number.isFinite(t0) ? t0 : null, memWrap, nvmlWrap);
  },
  // The memory view and the NVML charts, on the utilization chart's time
  // origin (the first kernel); zooming the memory chart zooms it too.
  async renderExtras(run, token, t0, memWrap, nvmlWrap) {
    const util = this.utilChart;
    const alignUtil = (v) => {
      if (!util || !v) return;
      util.options.scales.x.min = v[0];
      util.options.scales.x.max = v[1];
      util.update('none');
    };
    const mem = new MemoryView(run, { t0, xTitle: t0 === null ? null : 'Time since first kernel (s)', onView: alignUtil });
    try {
      const el = await mem.load();
      if (this.token !== token) { mem.destroy(); return; }
      this.mem = mem;
      if (el) {
        memWrap.appendChild(el);
        // Both charts over the union of the two extents.
        if (util) {
          const ux = util.scales.x;
          const ext = [Math.min(mem.extent[0], ux.min), Math.max(mem.extent[1], ux.max)];
          mem.extent = ext;
          mem.setView(null);
        }
      }
      window.__tfb.pages.gpuMemory = el ? mem.info : { devices: 0 };
    } catch (e) {
      if (this.token !== token) return;
      memWrap.appendChild(h('div', { class: 'empty small error-text', id: 'gpu-memory-error' }, 'Could not load the memory view: ' + e.message));
      window.__tfb.pages.gpuMemory = { error: e.message };
    }
    const nv = await renderNvml(nvmlWrap, run, this.ctx.data.scalarTags[run], t0 === null ? null : t0 / 1e9);
    if (this.token !== token) { for (const c of nv.charts) c.destroy(); return; }
    this.charts.push(...nv.charts);
    window.__tfb.pages.gpu.nvml = nv.info;
  },
};

export default page;
