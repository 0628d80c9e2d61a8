// GPU dashboard (from the trace store / nsys export / Kineto JSON a run
// holds): utilization per device over time, the kernel table (sortable,
// searchable), the memcpy breakdown, the idle-time breakdown, and a timeline
// with one lane per stream, drawn on a canvas, that zooms like a map (wheel
// to zoom, drag to pan, double-click to reset) and asks the server again for
// the visible window.
import { h, clear, debounce, sortableTable } from '../core/dom.js';
import { placeTip } from '../core/tooltip.js';
import { getJSON, num, url } from '../core/api.js';
import { eng, ns, pct, bytes, int, si, niceStep } from '../core/format.js';
import { makeChart, } from '../core/charts.js';
import { themeColor, withAlpha } from '../core/colors.js';
import { COLOR, devColor, filledSet, timeChartOptions, sizeCanvas } from '../lib/plot.js';
import { MemoryView, renderNvml, hasNvml } from '../lib/gpu_memory.js';
import { renderHta } from '../lib/gpu_hta.js';
import { pickRun, mountRunPage, updateRunPage } from '../lib/run_pick.js';
import { SCALAR_TAGS } from '../lib/catalog.js';
import { defineState, key } from '../core/state.js';

// The step window (server/plugins/gpu/API.md, `window=`): the whole trace,
// the work inside the ProfilerStep annotations, or that without the last
// step (HTA's default). Kept in the URL like the rest of the page state.
const WINDOWS = [['all', 'All'], ['steps', 'Steps'], ['steps_but_last', 'Steps but the last']];
defineState({ gpuWindow: key.oneOf(...WINDOWS.map(([v]) => v)) });
// The route parameters of a window: none for all, so those requests stay
// as they were.
const winParams = (w) => (w && w !== 'all' ? { window: w } : {});

const gpuRunsCache = { list: [], traced: new Set(), files: new Map() };

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
// spans: [{lane, kind, name|null, start_ns, end_ns, count, busy_ns,
// correlation?, launch_ns?, ...}]}.
function normSpan(s, laneLabel) {
  const kind = String(s.kind ?? 'kernel');
  const count = num(s.count ?? 1);
  return {
    start: num(s.start_ns), end: num(s.end_ns), kind,
    name: s.name === null || s.name === undefined ? (count > 1 ? `${count} ${kind} spans` : kind) : String(s.name),
    lane: laneLabel.get(s.lane) ?? String(s.lane), count, busy: num(s.busy_ns ?? 0),
    launch: s.launch_ns === undefined ? null : num(s.launch_ns), depth: 0,
    corr: s.correlation === undefined ? null : num(s.correlation),
  };
}

// /data/plugin/gpu/host: the CPU threads' ops and runtime calls and the
// NVTX ranges and marks of the run's trace files (our store, nsys exports,
// Kineto): {lanes: [{id, kind, label, depth}], spans: [{lane, kind:
// op|runtime|range|mark, name, start_ns, end_ns, depth, correlation?}],
// top_ops, busy_ns, span_ns, trace_start_ns, trace_end_ns, total}. A
// runtime call's correlation is its kernels' (/timeline).
function normHost(res) {
  const lanes = (res.lanes || []).map((l) => ({ id: l.id, label: String(l.label), kind: String(l.kind), rows: Math.max(1, Math.min(8, num(l.depth) || 1)) }));
  const byId = new Map(lanes.map((l) => [l.id, l.label]));
  const spans = (res.spans || []).map((q) => ({
    start: num(q.start_ns), end: num(q.end_ns), kind: String(q.kind), name: String(q.name),
    lane: byId.get(q.lane) ?? String(q.lane), depth: Math.min(7, num(q.depth) || 0), count: 1,
    corr: q.correlation === undefined ? null : num(q.correlation),
  })).filter((q) => Number.isFinite(q.start) && Number.isFinite(q.end));
  return { lanes, spans, total: num(res.total) || 0, truncated: !!res.truncated };
}

const ARROWS_MAX = 80;
const HOST_ROW = 17, GPU_LANE = 24, MIN_H = 380, AXIS_H = 20, LABEL_W = 170, OVERVIEW_H = 34;

// A timeline like Nsight Systems' and Perfetto's, drawn on canvas: an
// overview strip of the whole trace with the visible window marked (click
// or drag it to move), then the time axis and the lanes: per CPU thread its
// ops and CUDA API calls (nested rows), NVTX ranges, then one lane per GPU
// stream; arrows from each launch call to its kernel. Wheel: zoom at the
// cursor; drag: pan; double-click: the whole trace. Each change of window
// asks the server again for that window (merged spans when zoomed out).
class Timeline {
  // opts.gpu false: a CPU-only trace (no GPU routes to ask).
  constructor(wrap, run, opts = {}) {
    this.run = run;
    this.gpu = opts.gpu !== false;
    this.win = winParams(opts.window);
    this.full = null;         // [start_ns, end_ns]
    this.view = null;
    this.spans = [];
    this.host = { lanes: [], spans: [], total: 0 };
    this.overview = null;     // spans of the full window, for the strip
    this.ovCanvas = h('canvas', { class: 'plain', id: 'gpu-overview', title: 'The whole trace: click or drag to move the window' });
    this.canvas = h('canvas', { class: 'plain', id: 'gpu-timeline' });
    this.tip = h('div', { class: 'chart-tooltip', hidden: true });
    this.info = h('div', { class: 'card-status muted' });
    // trace.json of the visible window (Perfetto, chrome://tracing); the
    // server caps it at max_events and says so in otherData.truncated.
    this.download = h('a', { class: 'small', id: 'gpu-download', download: `${run}.trace.json`, style: { marginLeft: 'auto' }, title: 'Chrome trace JSON of the visible window, for Perfetto' }, 'Download this window (trace.json)');
    wrap.append(this.ovCanvas, this.canvas, this.tip, h('div', { class: 'toolbar' }, this.info, this.gpu ? this.download : null));
    this.fetchSoon = debounce(() => this.fetch(), 150);
    this.bind();
    this.fetch();
  }
  async fetch() {
    const token = {};
    this.token = token;
    try {
      const q = { run: this.run, max: 3000, ...this.win };
      if (this.view) { q.start_ns = Math.floor(this.view[0]); q.end_ns = Math.ceil(this.view[1]); }
      const [res, hres] = await Promise.all([
        this.gpu ? gpuJSON('data/plugin/gpu/timeline', q) : Promise.resolve(null),
        gpuJSON('data/plugin/gpu/host', { ...q, max: 4000 }).catch(() => null),
      ]);
      // A timeline the page has since replaced (a reload re-renders the
      // page: this canvas is no longer in it) neither draws nor speaks
      // for the page: its zero-size canvas once overwrote the live one's
      // figures in __tfb (a flaky "tall: 0" in test_timeline).
      if (this.token !== token || !this.canvas.isConnected) return;
      if (!this.full) {
        // The extent of both sides (the host calls start before the first
        // kernel).
        let a = Infinity, b = -Infinity;
        if (res && num(res.total) > 0) { a = num(res.start_ns); b = num(res.end_ns); }
        if (hres && num(hres.total) > 0) { a = Math.min(a, num(hres.trace_start_ns)); b = Math.max(b, num(hres.trace_end_ns)); }
        if (!Number.isFinite(a)) { a = 0; b = 1000; }
        this.full = [a, Math.max(b, a + 1000)];
        this.view = this.full.slice();
      }
      const laneLabel = new Map(((res && res.lanes) || []).map((l) => [l.id, String(l.label)]));
      this.gpuLanes = ((res && res.lanes) || []).map((l) => String(l.label));
      // The trace model's own host lanes (step / input spans of our store).
      this.stepLanes = new Set(((res && res.lanes) || []).filter((l) => l.kind === 'host').map((l) => String(l.label)));
      this.spans = ((res && res.spans) || []).map((x) => normSpan(x, laneLabel)).filter((x) => Number.isFinite(x.start) && Number.isFinite(x.end));
      this.host = hres ? normHost(hres) : { lanes: [], spans: [], total: 0 };
      this.merged = !!(res && res.merged);
      this.total = res ? num(res.total) : 0;
      if (!this.overview) this.overview = { gpu: this.spans, host: this.host.spans.filter((x) => x.depth === 0) };
      this.draw();
      window.__tfb.pages.gpuTimeline = {
        run: this.run, spans: this.spans.length, total: this.total, merged: this.merged, lanes: this.lanes.slice(), view: this.view.slice(),
        hostLanes: this.host.lanes.map((l) => l.label), hostSpans: this.host.spans.length, hostTotal: this.host.total, flows: this.flows, flowPairs: this.flowPairs,
        height: this.canvas.clientHeight, download: this.download.getAttribute('href'), ticks: this.axisTicks.slice(),
        fetches: (window.__tfb.pages.gpuTimeline?.fetches || 0) + 1,
      };
    } catch (e) {
      this.info.textContent = 'Could not load the timeline: ' + e.message;
    }
  }
  // Lanes top to bottom: [{label, y, h, rows, kind}].
  layout() {
    const out = [];
    let y = AXIS_H + 4;
    // Each thread's NVTX ranges right above its ops, as Nsight draws them.
    const host = this.host.lanes.slice().sort((p, q) => {
      const tp = p.label.replace(/^(CPU|NVTX) /, ''), tq = q.label.replace(/^(CPU|NVTX) /, '');
      if (tp !== tq) return tp < tq ? -1 : 1;
      return p.kind === 'nvtx' ? -1 : 1;
    });
    for (const l of host) { const hh = l.rows * HOST_ROW + 6; out.push({ label: l.label, y, h: hh, rows: l.rows, kind: l.kind }); y += hh; }
    const gl = (this.gpuLanes || []).slice();
    for (const q of this.spans) if (!gl.includes(q.lane)) gl.push(q.lane);
    // Tall even for a few lanes: the GPU streams take the room left up to
    // MIN_H (80 px each at most).
    const gh = gl.length ? Math.max(GPU_LANE, Math.min(80, Math.floor((MIN_H - 4 - y) / gl.length))) : GPU_LANE;
    for (const l of gl) {
      const step = this.stepLanes && this.stepLanes.has(l);
      const hh = step ? GPU_LANE : gh;
      out.push({ label: l, y, h: hh, rows: 1, kind: 'gpu', step });
      y += hh;
    }
    return { lanes: out, height: y + 4 };
  }
  color(s) {
    switch (s.kind) {
      case 'input': return COLOR.red;
      case 'step': return withAlpha(COLOR.blue, 0.35);
      case 'memcpy': return COLOR.orange;
      case 'memset': return COLOR.brown;
      case 'mixed': return '#888';
      case 'runtime': return COLOR.yellow;
      case 'range': return withAlpha(COLOR.purple, 0.85);
      case 'mark': return COLOR.purple;
      default: return hashColor(s.name);
    }
  }
  draw() {
    const L = this.layout();
    // gpuTimeline.lanes: every lane, host lanes first.
    this.lanes = L.lanes.map((l) => l.label);
    const H = Math.max(200, L.height);
    const { ctx, W } = sizeCanvas(this.canvas, H);
    const pw = W - LABEL_W - 8;
    const [a, b] = this.view;
    const xOf = (t) => LABEL_W + ((t - a) / (b - a)) * pw;
    const laneBy = new Map(L.lanes.map((l) => [l.label, l]));
    this.geom = { pw, xOf, laneBy, lanes: L.lanes };
    const muted = themeColor('--muted');
    // Lane backgrounds and labels; a rule between host and GPU lanes.
    L.lanes.forEach((l, i) => {
      ctx.fillStyle = i % 2 ? themeColor('--bg') : 'transparent';
      ctx.fillRect(LABEL_W, l.y, pw, l.h);
      ctx.fillStyle = l.kind === 'gpu' && !l.step ? devColor(0) : l.kind === 'nvtx' ? COLOR.purple : muted;
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      const lab = l.label.length > 26 ? l.label.slice(0, 25) + '…' : l.label;
      ctx.fillText(lab, LABEL_W - 8, l.y + (l.kind === 'gpu' ? l.h : Math.min(l.h, GPU_LANE)) / 2);
    });
    const firstGpu = L.lanes.find((l) => l.kind === 'gpu');
    if (firstGpu && firstGpu !== L.lanes[0]) {
      ctx.strokeStyle = muted;
      ctx.beginPath(); ctx.moveTo(0, firstGpu.y - 0.5); ctx.lineTo(W, firstGpu.y - 0.5); ctx.stroke();
    }
    const box = (s) => {
      const l = laneBy.get(s.lane);
      if (!l) return null;
      const x0 = Math.max(LABEL_W, xOf(s.start)), x1 = Math.min(LABEL_W + pw, xOf(s.end));
      if (x1 < LABEL_W || x0 > LABEL_W + pw) return null;
      if (l.kind === 'gpu') return { x0, x1, y: l.y + 3, hh: l.h - 6 };
      return { x0, x1, y: l.y + 3 + Math.min(s.depth, l.rows - 1) * HOST_ROW, hh: HOST_ROW - 2 };
    };
    const paint = (s) => {
      const r = box(s);
      if (!r) return;
      ctx.fillStyle = this.color(s);
      if (s.kind === 'mark') {
        // An instant: a diamond at its time.
        const x = xOf(s.start), m = r.y + r.hh / 2, d = r.hh / 2;
        ctx.beginPath(); ctx.moveTo(x, m - d); ctx.lineTo(x + d * 0.7, m); ctx.lineTo(x, m + d); ctx.lineTo(x - d * 0.7, m); ctx.closePath(); ctx.fill();
        return;
      }
      ctx.fillRect(r.x0, r.y, Math.max(1, r.x1 - r.x0), r.hh);
      if (r.x1 - r.x0 > 40) {
        ctx.save();
        ctx.beginPath(); ctx.rect(r.x0, r.y, r.x1 - r.x0, r.hh); ctx.clip();
        ctx.fillStyle = s.kind === 'runtime' || s.kind === 'step' ? '#222' : '#fff';
        ctx.textAlign = 'left';
        ctx.textBaseline = 'middle';
        ctx.fillText(s.name, r.x0 + 3, r.y + r.hh / 2);
        ctx.restore();
      }
    };
    for (const s of this.host.spans) paint(s);
    for (const s of this.spans) paint(s);
    // Launch -> kernel arrows: from the runtime call with the kernel's
    // correlation id (else the one that started at its launch_ns) to the
    // kernel's start, when both are in view and few enough to read.
    this.flows = 0;
    this.flowPairs = [];
    const calls = new Map(), byCorr = new Map();
    for (const s of this.host.spans) {
      if (s.kind !== 'runtime') continue;
      calls.set(s.start, s);
      if (s.corr !== null) byCorr.set(s.corr, s);
    }
    const launched = this.spans.filter((s) => s.launch !== null && s.count === 1);
    // Past ARROWS_MAX launches in view they would hide the kernels: the
    // info line says to zoom in instead.
    this.arrowsHidden = launched.length > ARROWS_MAX;
    if (launched.length && !this.arrowsHidden) {
      ctx.strokeStyle = withAlpha(themeColor('--fg') || '#333', 0.55);
      ctx.fillStyle = ctx.strokeStyle;
      ctx.lineWidth = 1;
      for (const k of launched) {
        const c = (k.corr !== null && byCorr.get(k.corr)) || calls.get(k.launch);
        const rc = c && box(c), rk = box(k);
        if (!rc || !rk) continue;
        const x0 = xOf(c.start), y0 = rc.y + rc.hh, x1 = Math.max(LABEL_W, xOf(k.start)), y1 = rk.y;
        ctx.beginPath(); ctx.moveTo(x0, y0);
        ctx.bezierCurveTo(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2, x1, y1 - 1); ctx.stroke();
        ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x1 - 3, y1 - 5); ctx.lineTo(x1 + 3, y1 - 5); ctx.closePath(); ctx.fill();
        this.flows++;
        if (this.flowPairs.length < 50) this.flowPairs.push({ call: c.name, lane: c.lane, kernel: k.name, kernelLane: k.lane, corr: k.corr });
      }
    }
    // Time axis (top), relative to the trace start.
    ctx.fillStyle = muted;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    // Ticks on round times since the start (100 µs, 200 µs, ...), about
    // one every 110 px; a label that would cross an edge is kept inside.
    const n = Math.max(2, Math.floor(pw / 110));
    const r0 = a - this.full[0], r1 = b - this.full[0];
    const step = niceStep(r1 - r0, n);
    ctx.strokeStyle = withAlpha(muted, 0.25);
    this.axisTicks = [];
    for (let t = Math.ceil(r0 / step) * step, k = 0; t <= r1 + step * 1e-9 && k < 100; k++, t = (Math.ceil(r0 / step) + k) * step) {
      const x = xOf(t + this.full[0]);
      const label = si(parseFloat((t / 1e9).toPrecision(12)), 's');
      const w = ctx.measureText(label).width;
      ctx.textAlign = x + w / 2 > W - 2 ? 'right' : x - w / 2 < LABEL_W ? 'left' : 'center';
      ctx.fillText(label, x, 4);
      this.axisTicks.push(label);
      ctx.beginPath(); ctx.moveTo(x + 0.5, AXIS_H); ctx.lineTo(x + 0.5, H); ctx.stroke();
    }
    ctx.textAlign = 'center';
    this.drawOverview();
    if (this.gpu) this.download.href = url('data/plugin/gpu/trace.json', { run: this.run, start_ns: Math.floor(a), end_ns: Math.ceil(b) });
    const parts = [];
    if (this.gpu) parts.push(`${int(this.total ?? this.spans.length)} GPU spans` + (this.merged ? ` (neighbours merged into ${int(this.spans.length)} marks)` : ''));
    if (this.host.lanes.length) parts.push(`${int(this.host.spans.length)} CPU ops, calls and ranges` + (this.host.truncated ? ' (the longest shown; zoom in for all)' : ''));
    if (this.flows) parts.push(`${this.flows} launch → kernel arrows`);
    else if (this.arrowsHidden) parts.push('zoom in for launch → kernel arrows');
    this.info.textContent = `${parts.join(', ')} in a ${ns(b - a)} window. Wheel: zoom · drag: pan · double-click: whole trace.`;
  }
  drawOverview() {
    const { ctx, W } = sizeCanvas(this.ovCanvas, OVERVIEW_H);
    const pw = W - LABEL_W - 8;
    const [a, b] = this.full;
    const xOf = (t) => LABEL_W + ((t - a) / (b - a)) * pw;
    ctx.fillStyle = themeColor('--muted');
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.fillText('Whole trace', LABEL_W - 8, OVERVIEW_H / 2);
    ctx.fillStyle = themeColor('--bg');
    ctx.fillRect(LABEL_W, 2, pw, OVERVIEW_H - 4);
    const ov = this.overview || { gpu: [], host: [] };
    const rows = [[ov.host, 4, COLOR.grey], [ov.gpu, OVERVIEW_H / 2 + 1, devColor(0)]];
    for (const [list, y, col] of rows) {
      ctx.fillStyle = col;
      for (const s of list) ctx.fillRect(xOf(s.start), y, Math.max(1, xOf(s.end) - xOf(s.start)), OVERVIEW_H / 2 - 5);
    }
    const v0 = xOf(this.view[0]), v1 = xOf(this.view[1]);
    ctx.fillStyle = withAlpha(COLOR.blue, 0.18);
    ctx.fillRect(v0, 0, Math.max(2, v1 - v0), OVERVIEW_H);
    ctx.strokeStyle = COLOR.blue;
    ctx.strokeRect(v0 + 0.5, 0.5, Math.max(2, v1 - v0) - 1, OVERVIEW_H - 1);
    this.ovGeom = { pw, W };
  }
  setView(na, span) {
    na = Math.max(this.full[0], Math.min(na, this.full[1] - span));
    this.view = [na, na + span];
    this.draw();
    this.fetchSoon();
  }
  bind() {
    const cv = this.canvas;
    cv.addEventListener('wheel', (e) => {
      e.preventDefault();
      const g = this.geom;
      if (!g) return;
      const r = cv.getBoundingClientRect();
      const fx = Math.min(1, Math.max(0, (e.clientX - r.left - LABEL_W) / g.pw));
      const [a, b] = this.view;
      const span = b - a;
      const k = e.deltaY > 0 ? 1.25 : 0.8;
      const ns2 = Math.max(1000, Math.min(this.full[1] - this.full[0], span * k));
      this.setView(a + fx * span - fx * ns2, ns2);
    }, { passive: false });
    let drag = null;
    cv.addEventListener('mousedown', (e) => { if (!this.view) return; drag = { x: e.clientX, view: this.view.slice(), g: 'main' }; cv.classList.add('dragging'); });
    // The overview: the window follows the pointer while the button is down.
    const ovMove = (e) => {
      if (!this.full || !this.ovGeom) return;
      const r = this.ovCanvas.getBoundingClientRect();
      const f = (e.clientX - r.left - LABEL_W) / this.ovGeom.pw;
      const span = this.view[1] - this.view[0];
      this.setView(this.full[0] + f * (this.full[1] - this.full[0]) - span / 2, span);
    };
    this.ovCanvas.addEventListener('mousedown', (e) => { drag = { g: 'ov' }; ovMove(e); });
    window.addEventListener('mouseup', () => { if (drag) { drag = null; cv.classList.remove('dragging'); } });
    window.addEventListener('mousemove', (e) => {
      if (!drag || !this.geom) return;
      if (drag.g === 'ov') { ovMove(e); return; }
      const dx = e.clientX - drag.x;
      const span = drag.view[1] - drag.view[0];
      this.setView(drag.view[0] - (dx / this.geom.pw) * span, span);
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
    const lane = g.lanes.find((l) => y >= l.y && y < l.y + l.h);
    const t = this.view[0] + ((x - LABEL_W) / g.pw) * (this.view[1] - this.view[0]);
    const tol = ((this.view[1] - this.view[0]) / g.pw) * 2;
    let s = null;
    if (lane && lane.kind === 'gpu') s = this.spans.find((q) => q.lane === lane.label && q.start - tol <= t && q.end + tol >= t);
    else if (lane) {
      const row = Math.max(0, Math.min(lane.rows - 1, Math.floor((y - lane.y - 3) / HOST_ROW)));
      s = this.host.spans.find((q) => q.lane === lane.label && Math.min(q.depth, lane.rows - 1) === row && q.start - tol <= t && q.end + tol >= t);
    }
    if (!s) { this.tip.hidden = true; return; }
    clear(this.tip);
    const what = { op: 'CPU op', runtime: 'CUDA API call', range: 'NVTX range', mark: 'NVTX mark' }[s.kind] || s.kind;
    this.tip.append(h('div', null, h('b', null, s.name)),
      h('div', null, `${what}, ${ns(s.end - s.start)}` + (s.count > 1 ? `, ${s.count} merged` : '')),
      h('div', { class: 'muted' }, `at +${si((s.start - this.full[0]) / 1e9, 's')}` + (s.launch !== null && s.launch !== undefined ? `, launched ${ns(s.start - s.launch)} earlier` : '')));
    this.tip.hidden = false;
    // Beside the pointer, never over it (the tooltip is position: fixed:
    // window coordinates, core/tooltip.js).
    placeTip(this.tip, e.clientX, e.clientY);
  }
}

// A trace with CPU activity only (torch.profiler without CUDA): where the
// time went by op (self time), the top ops, and the timeline of the CPU
// threads. Returns the timeline.
async function renderCpuOnly(body, run) {
  const res = await gpuJSON('data/plugin/gpu/host', { run, max: 1 });
  const top = (res.top_ops || []).map((o) => ({ name: String(o.name), count: num(o.count), total_ns: num(o.total_ns), self_ns: num(o.self_ns) }));
  const busy = num(res.busy_ns) || 0, span = num(res.span_ns) || 0;
  if (!top.length) return null;
  const selfSum = top.reduce((x, o) => x + o.self_ns, 0) || 1;
  const parts = top.slice(0, 8).map((o) => [o.name, o.self_ns, hashColor(o.name)]);
  const rest = top.slice(8).reduce((x, o) => x + o.self_ns, 0);
  if (rest > 0) parts.push(['other ops', rest, COLOR.grey]);
  const table = sortableTable([
    { key: 'name', label: 'Op', render: (r) => h('span', { class: 'mono', title: r.name }, r.name) },
    { key: 'count', label: 'Calls', num: true, render: (r) => int(r.count) },
    { key: 'self_ns', label: 'Self time', num: true, render: (r) => ns(r.self_ns) },
    { key: 'share', label: 'Share', num: true, render: (r) => pct(r.share) },
    { key: 'total_ns', label: 'Total (with children)', num: true, render: (r) => ns(r.total_ns) },
  ], { sortKey: 'self_ns', className: 'cpu-ops-table' });
  table.setRows(top.map((o) => ({ ...o, share: o.self_ns / selfSum })));
  const tl = h('div', { class: 'timeline-wrap', id: 'timeline-wrap' });
  body.append(
    h('p', { class: 'muted small', id: 'gpu-cpu-only' }, `This trace holds CPU activity only (torch.profiler without CUDA, or no GPU on the machine): ${int(num(res.total))} CPU ops over ${ns(span)} (ops busy ${ns(busy)}, summed over threads). Below: where the time went, the top ops and the timeline of the CPU threads.`),
    h('div', { class: 'card', style: { marginBottom: '12px' } }, h('h3', { class: 'card-h' }, 'Timeline'), tl),
    h('div', { class: 'card', style: { marginBottom: '12px' }, id: 'cpu-breakdown' }, h('h3', { class: 'card-h' }, 'CPU time by op (self time)'),
      h('div', { class: 'hbar', style: { height: '18px' } }, parts.map(([name, v, col]) => h('div', { style: { width: (100 * v / selfSum) + '%', background: col }, title: `${name}: ${ns(v)}` }))),
      h('div', { class: 'legend' }, parts.map(([name, v, col]) => h('span', null, h('span', { class: 'swatch', style: { background: col } }), `${name} ${pct(v / selfSum, 0)}`)))),
    h('div', { class: 'card' }, h('h3', { class: 'card-h' }, 'Top ops'), h('div', { class: 'table-card', style: { maxHeight: '420px' } }, table.el)));
  return { timeline: new Timeline(tl, run, { gpu: false }), ops: top.length };
}

const SAMPLE_NOTE = 'SAMPLE TRACE: generated by examples/gpu_sample_trace.c on a machine without a GPU, not measured. Run the demo on a machine with a GPU for a real one.';
const isSample = (files) => (files || []).some((f) => /(^|\/)SAMPLE[^/]*$/.test(String(f)));

const page = {
  // The first screen needs /data/runs_info (webui/README.md): the runs with a trace (runs_info's trace files) pick what the page shows.
  runsInfo: true,
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { scalarTags: SCALAR_TAGS },
  // Runs with GPU traces for the run selector: runs_info lists each run's
  // trace files.
  probe(data) {
    const info = Array.isArray(data.runsInfo) ? data.runsInfo : [];
    const withTrace = new Set(info.filter((x) => x && Array.isArray(x.trace_files) && x.trace_files.length).map((x) => x.name));
    // Runs with the always-on NVML metrics (gpu/<dev>/sm_util, ...) too.
    gpuRunsCache.traced = withTrace;
    gpuRunsCache.files = new Map(info.filter((x) => x && Array.isArray(x.trace_files)).map((x) => [x.name, x.trace_files]));
    gpuRunsCache.list = data.runs.filter((r) => withTrace.has(r) || hasNvml((data.scalarTags || {})[r]));
    return Promise.resolve();
  },
  mount(ctx) {
    this.charts = [];
    mountRunPage(this, ctx, 'gpu-run', 'GPU',
      'From CUPTI traces (tfb_gpu_trace_start), nsys SQLite exports or PyTorch profiler JSON in the run directory.');
    this.windowSelect = h('select', { id: 'gpu-window', 'aria-label': 'Step window', onchange: (e) => ctx.setState({ gpuWindow: e.target.value }) },
      WINDOWS.map(([v, label]) => h('option', { value: v, selected: v === ctx.state.gpuWindow }, label)));
    ctx.settings.append(h('h3', null, 'Step window'), this.windowSelect,
      h('p', { class: 'muted small hint' }, 'All: the whole trace. Steps: the work launched inside the ProfilerStep annotations. Steps but the last: without the last step, often cut short by the profiler (HTA\'s default).'));
    this.render();
  },
  unmount() { for (const c of this.charts) c.destroy(); this.charts = []; if (this.mem) this.mem.destroy(); this.mem = null; },
  update(ctx, changed) {
    if (this.windowSelect) this.windowSelect.value = ctx.state.gpuWindow;
    if (changed.includes('gpuWindow')) { this.ctx = ctx; this.render(); return; }
    updateRunPage(this, ctx, changed);
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
    const winName = this.ctx.state.gpuWindow;
    const wp = winParams(winName);
    const wJSON = (path, params, onProgress) => gpuJSON(path, { ...params, ...wp }, onProgress);
    let summary, kernels;
    const progress = (p) => {
      if (this.token !== token) return;
      clear(this.body);
      this.body.appendChild(h('div', { class: 'empty small', id: 'gpu-loading' }, `Reading the GPU trace of ${run}… ${Math.round(100 * p)} %`));
      window.__tfb.pages.gpuLoading = { run, progress: p };
    };
    try {
      [summary, kernels] = await Promise.all([
        wJSON('data/plugin/gpu/summary', { run }, progress),
        wJSON('data/plugin/gpu/kernels', { run, limit: 500 }),
      ]);
    } catch (e) {
      if (this.token !== token) return;
      clear(this.body);
      this.body.appendChild(h('div', { class: 'empty small error-text', id: 'gpu-error' }, 'Could not load the GPU analysis: ' + e.message));
      window.__tfb.pages.gpu = { run, error: e.message };
      return;
    }
    const devices = summary.devices || [];
    const sample = isSample(gpuRunsCache.files.get(run));
    // Which window the figures below cover, as the server applied it.
    const win = summary.window || { mode: 'all', requested: winName };
    const winLabel = (m) => (WINDOWS.find(([v]) => v === m) || [m, m])[1];
    const windowNote = () => h('div', { class: 'small gpu-window-note', id: 'gpu-window-note', style: { marginBottom: '8px' } },
      h('b', null, 'Step window: '), winLabel(win.mode),
      win.steps !== null && win.steps !== undefined
        ? ` — ${int(num(win.steps))} ProfilerStep${num(win.steps) === 1 ? '' : 's'}, ${ns(num(win.duration_ns))}`
        : ' — the whole trace',
      win.note ? h('span', { class: 'error-text' }, ` (${win.note})`) : null);
    // What the trace says of itself: categories the server did not read
    // (never 0 devices without a word) and its distributedInfo.
    const traceNotes = () => {
      const notes = summary.notes || [];
      const dist = summary.distributed;
      if (!notes.length && !dist) return null;
      return h('div', { class: 'card', id: 'gpu-notes', style: { marginBottom: '12px' } },
        h('h3', { class: 'card-h' }, 'About this trace'),
        dist ? h('div', { class: 'small', id: 'gpu-distributed' },
          `Distributed: rank ${dist.rank ?? '?'} of world size ${dist.world_size ?? '?'}` +
          (dist.backend ? `, backend ${dist.backend}` : '') +
          `, ${(dist.process_groups || []).length} process group${(dist.process_groups || []).length === 1 ? '' : 's'}` +
          ((dist.process_groups || []).length ? ': ' + dist.process_groups.map((g) => `${g.desc ?? g.name ?? '?'} (${g.size ?? '?'} ranks${g.ranks ? ' ' + g.ranks : ''})`).join('; ') : '') + '.') : null,
        notes.map((n) => h('div', { class: 'small error-text note' }, 'Trace note: ' + String(n.text))));
    };
    if (!devices.length) {
      // No kernel, copy or memset: the CPU side of the trace, or a word
      // why the page is empty.
      for (const c of this.charts) c.destroy();
      this.charts = [];
      clear(this.body);
      if (sample) this.body.appendChild(h('div', { class: 'empty small', id: 'gpu-sample' }, SAMPLE_NOTE));
      this.body.appendChild(windowNote());
      const tn = traceNotes();
      if (tn) this.body.appendChild(tn);
      let cpu = null;
      try { cpu = await renderCpuOnly(this.body, run); } catch (e) { cpu = null; }
      if (this.token !== token) return;
      if (cpu) this.timeline = cpu.timeline;
      else {
        const files = (gpuRunsCache.files.get(run) || []).map((f) => String(f).split('/').pop()).join(', ');
        this.body.appendChild(h('div', { class: 'empty small', id: 'gpu-empty' }, `The trace files of ${run} (${files}) hold no GPU kernels, copies or CPU ops to show.`));
      }
      window.__tfb.pages.gpu = { run, traced: true, devices: 0, kernels: 0, cpuOnly: !!cpu, cpuOps: cpu ? cpu.ops : 0, sample, notes: (summary.notes || []).length };
      return;
    }
    const utils = await Promise.all(devices.map((d) => wJSON('data/plugin/gpu/utilization', { run, device: d.id, buckets: 300 }).catch(() => null)));
    if (this.token !== token) return;
    for (const c of this.charts) c.destroy();
    this.charts = [];
    clear(this.body);
    if (sample) this.body.appendChild(h('div', { class: 'empty small', id: 'gpu-sample' }, SAMPLE_NOTE));
    this.body.appendChild(windowNote());
    const tn = traceNotes();
    if (tn) this.body.appendChild(tn);

    // Device cards: what the trace says of the device, headline numbers,
    // the idle breakdown bar (HTA's per-stream rule, summed over the
    // device's streams) and, with more than one stream, each stream's.
    const devRow = h('div', { class: 'cols', id: 'gpu-devices' });
    devices.forEach((d, i) => {
      const idle = d.idle || {};
      const idleTotal = IDLE_PARTS.reduce((a, [k]) => a + (num(idle[k]) || 0), 0);
      const props = [
        d.sm_count ? `${int(num(d.sm_count))} SMs` : null,
        d.total_mem !== null && d.total_mem !== undefined ? `${(num(d.total_mem) / 2 ** 30).toFixed(1)} GiB` : null,
        d.compute_capability ? `compute capability ${d.compute_capability}` : null,
      ].filter(Boolean);
      const streams = d.streams || [];
      // The bar is the whole span: the busy part, then the device's idle
      // time split by cause (a GPU 94.6 % busy shows a short idle tail, not
      // a full-width red "Host wait"). The causes are HTA's per-stream sums,
      // which exceed the device's idle time when streams overlap, so each
      // cause gets its share of the device's idle time; the legend gives
      // each cause's share of the idle time and of the span.
      const busy = Math.max(0, num(d.busy_ns) || 0);
      const idleNs = Math.max(0, num(d.idle_ns ?? idleTotal) || 0);
      const spanNs = Math.max(num(d.span_ns) || 0, busy + idleNs);
      const ofSpan = (v) => (spanNs > 0 ? v / spanNs : 0);
      const partNs = (v) => (idleTotal > 0 ? idleNs * v / idleTotal : 0);
      devRow.appendChild(h('div', { class: 'card gpu-device' },
        h('h3', { class: 'card-h' }, h('span', { class: 'swatch', style: { background: devColor(i) } }), ` GPU ${d.id}` + (d.name && d.name !== 'GPU ' + d.id ? ': ' + d.name : '')),
        props.length ? h('div', { class: 'small muted gpu-props' }, props.join(' · ')) : null,
        h('div', { class: 'stats' },
          h('div', { class: 'stat' }, h('div', { class: 'label' }, 'Busy'), h('div', { class: 'value' }, pct(num(d.busy_fraction))), h('div', { class: 'sub', title: 'Kernels, copies and memsets: their union on the device' }, ns(num(d.busy_ns)) + ' of ' + ns(num(d.span_ns)))),
          h('div', { class: 'stat' }, h('div', { class: 'label' }, 'Kernels'), h('div', { class: 'value' }, int(num(d.kernels))), h('div', { class: 'sub' }, ns(num(d.kernel_ns)) + ' total'))),
        h('div', { class: 'small muted' }, `Idle time: ${ns(idleNs)} (${pct(ofSpan(idleNs), 1)} of the ${ns(spanNs)} span)` +
          (streams.length > 1 ? `; by stream, summed over ${streams.length} streams: ${ns(idleTotal)}` : '')),
        h('div', { class: 'hbar gpu-span-bar', title: 'The span: busy, then the idle time by cause' },
          busy > 0 ? h('div', { class: 'gpu-busy-part', style: { width: (100 * ofSpan(busy)) + '%', background: devColor(i) }, title: `Busy: ${ns(busy)}` }) : null,
          IDLE_PARTS.map(([k, label, color]) => {
            const v = num(idle[k]) || 0;
            return v > 0 ? h('div', { dataset: { part: k }, style: { width: (100 * ofSpan(partNs(v))) + '%', background: color }, title: `${label}: ${ns(v)}` }) : null;
          })),
        h('div', { class: 'legend gpu-idle-legend' },
          h('span', null, h('span', { class: 'swatch', style: { background: devColor(i) } }), `Busy ${pct(ofSpan(busy), 1)} of span`),
          IDLE_PARTS.map(([k, label, color]) => {
            const v = num(idle[k]) || 0;
            return h('span', { dataset: { part: k } }, h('span', { class: 'swatch', style: { background: color } }),
              idleTotal > 0 ? `${label} ${pct(v / idleTotal, 0)} of idle (${pct(ofSpan(partNs(v)), 1)} of span)` : `${label} –`);
          })),
        streams.length > 1 ? h('table', { class: 'table gpu-streams', style: { marginTop: '8px' } },
          h('thead', null, h('tr', null, ['Stream', 'Events', ...IDLE_PARTS.map(([, label]) => label)].map((c, k) => h('th', { class: k ? 'num' : '' }, c)))),
          h('tbody', null, streams.map((st) => h('tr', null, h('td', null, String(num(st.stream))), h('td', { class: 'num' }, int(num(st.events))),
            IDLE_PARTS.map(([k]) => h('td', { class: 'num' }, ns(num(st[k]) || 0))))))) : null));
    });
    this.body.appendChild(devRow);
    // The timeline, near the top: what ran where, when.
    const tlWrap = h('div', { class: 'timeline-wrap', id: 'timeline-wrap' });
    this.body.appendChild(h('div', { class: 'card', style: { marginBottom: '12px' } }, h('h3', { class: 'card-h' }, 'Timeline' + (sample ? ' (sample)' : '')), tlWrap));

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
        xTitle: 'Time since first kernel', fmt: (v) => v.toFixed(1) + ' %',
        legend: { display: devices.length > 1 }, interaction: { mode: 'index', intersect: false },
        y: { min: 0, max: 100, title: { display: true, text: 'Busy (%)' } },
      }),
    }));

    // Memory and NVML metrics: filled below, without holding up the rest.
    const memWrap = h('div', { id: 'gpu-memory-wrap' });
    const nvmlWrap = h('div', { id: 'gpu-nvml-wrap' });
    const htaWrap = h('div', { id: 'gpu-hta-wrap' });
    this.body.append(htaWrap, memWrap, nvmlWrap);
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
      h('div', { class: 'card', style: { marginBottom: '12px' } }, h('div', { class: 'toolbar' }, h('h3', { class: 'card-h' }, 'Kernels'), search,
        h('span', { class: 'muted' }, `${krows.length} distinct kernels`)), h('div', { class: 'table-card', style: { maxHeight: '420px' } }, ktable.el)),
      h('div', { class: 'card' }, h('h3', { class: 'card-h' }, 'Memory copies and sets'), mrows.length ? mtable.el : h('div', { class: 'muted' }, 'No memory copies recorded.')));

    this.timeline = new Timeline(tlWrap, run, { window: winName });
    window.__tfb.pages.gpu = { run, traced: true, sample, window: win, devices: devices.length, kernels: krows.length, kernelsShown: krows.length, memcpy: mrows.length, utilPoints: uds.map((d) => d.data.length) };
    this.renderExtras(run, token, Number.isFinite(t0) ? t0 : null, memWrap, nvmlWrap, wp);
    renderHta(htaWrap, run, wJSON).then((info) => {
      if (this.token === token) window.__tfb.pages.gpu.hta = info;
    }, (e) => {
      if (this.token !== token) return;
      htaWrap.appendChild(h('div', { class: 'empty small error-text' }, 'Could not load the launch statistics: ' + e.message));
      window.__tfb.pages.gpu.hta = { error: e.message };
    });
  },
  // The memory view and the NVML charts, on the utilization chart's time
  // origin (the first kernel); zooming the memory chart zooms it too. wp:
  // the page's step window as route parameters (the memory view's too).
  async renderExtras(run, token, t0, memWrap, nvmlWrap, wp) {
    const util = this.utilChart;
    const alignUtil = (v) => {
      if (!util || !v) return;
      // Never left of the utilization chart's origin: no negative time.
      util.options.scales.x.min = Math.max(0, v[0]);
      util.options.scales.x.max = Math.max(0, v[1]);
      util.update('none');
    };
    const mem = new MemoryView(run, { t0, xTitle: t0 === null ? null : 'Time since first kernel', onView: alignUtil, params: wp });
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
