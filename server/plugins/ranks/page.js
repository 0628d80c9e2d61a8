// Ranks dashboard: one distributed job at a time (runs that share a job
// name, or rank-N directories under one parent). From the ranks' event
// files: the straggler sentence, a rank x step heat map, the per-rank table
// and the per-step skew; from their GPU traces (asked for separately, as
// traces load slower): HTA's temporal breakdown per rank and the
// communication/computation overlap, and what the traces say of the job
// (distributedInfo: world size, backend, process groups; each rank's
// devices). Notes on bad input are shown as text.
import { h, clear, sortableTable } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { eng, ns, int, pct, linearTicks, niceStep } from '../core/format.js';
import { defineState, key } from '../core/state.js';
import { makeChart } from '../core/charts.js';
import { viridis, themeColor } from '../core/colors.js';

// Compute (own) time first, the default: a straggler is a rank that
// computes longer, and in step time every rank waits for it, so step time
// is flat across ranks and hides it.
const METRICS = [
  ['compute_ms', 'Compute time'],
  ['step_ms', 'Step time'],
  ['comm_ms', 'Communication time'],
  ['input_ms', 'Input wait'],
];
const MAX_SKEW_POINTS = 1500;
// The step window of the GPU figures (server/plugins/ranks/API.md,
// `window=`), as on the GPU page: kept in the URL.
const WINDOWS = [['all', 'All'], ['steps', 'Steps'], ['steps_but_last', 'Steps but the last']];
defineState({ ranksWindow: key.oneOf(...WINDOWS.map(([v]) => v)) });
const winLabel = (m) => (WINDOWS.find(([v]) => v === m) || [m, m])[1];
const BREAKDOWN = [
  ['compute_ns', 'Compute', '#4e79a7'],
  ['comm_ns', 'Communication', '#f28e2b'],
  ['memory_ns', 'Memory', '#76b7b2'],
  ['idle_ns', 'Idle', '#bab0ac'],
];

function fin(v) {
  const x = v === null || v === undefined ? NaN : num(v);
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}
function ms(v) { const x = fin(v); return x === null ? '–' : eng(x); }
function share(v) { const x = fin(v); return x === null ? '–' : pct(x); }

function stat(label, value, sub, subAttrs = {}) {
  return h('div', { class: 'stat' }, h('div', { class: 'label' }, label),
    h('div', { class: 'value' }, value), sub ? h('div', { class: 'sub', ...subAttrs }, sub) : null);
}

// Skew per step, thinned to at most MAX_SKEW_POINTS by keeping each
// bucket's largest value (a spike must stay visible).
function thinSkew(steps) {
  const pts = steps.filter((p) => fin(p[1]) !== null).map((p) => ({ x: num(p[0]), y: fin(p[1]) }));
  if (pts.length <= MAX_SKEW_POINTS) return pts;
  const per = Math.ceil(pts.length / MAX_SKEW_POINTS);
  const out = [];
  for (let i = 0; i < pts.length; i += per) {
    let best = pts[i];
    for (let k = i + 1; k < Math.min(i + per, pts.length); k++) if (pts[k].y > best.y) best = pts[k];
    out.push(best);
  }
  return out;
}

// The rank x step heat map on a canvas: one row per rank, one cell per
// column of steps, coloured on viridis between the smallest and largest
// cell; empty cells stay the background colour. Hover shows the cell.
// The colour scale runs from the cells' 1st to their 99th percentile (cells
// outside take the end colours), so one slow first step does not paint
// every other cell the same dark colour. Rows in rank order (0, 1, 2, 10).
function drawHeatmap(wrap, job, tip) {
  job = byRank(job);
  const m = job.matrix;
  const rows = m.rows.length, cols = m.columns.length;
  const canvas = h('canvas', { id: 'ranks-heatmap', class: 'heatmap' });
  wrap.appendChild(canvas);
  const padL = 64, padB = 26, padT = 6, padR = 8;
  const cssW = Math.max(300, wrap.clientWidth || 800);
  const rowH = Math.max(2, Math.min(22, Math.floor(360 / Math.max(1, rows))));
  const cssH = padT + rows * rowH + padB;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  canvas.style.width = cssW + 'px';
  canvas.style.height = cssH + 'px';
  const g = canvas.getContext('2d');
  g.scale(dpr, dpr);
  const all = [];
  for (const r of m.rows) for (const v of r) { const x = fin(v); if (x !== null) all.push(x); }
  all.sort((a, b) => a - b);
  const q = (f) => (all.length ? all[Math.min(all.length - 1, Math.max(0, Math.round(f * (all.length - 1))))] : NaN);
  const lo = all.length ? q(0.01) : Infinity, hi = all.length ? q(0.99) : -Infinity;
  const span = hi > lo ? hi - lo : 1;
  const cellW = (cssW - padL - padR) / Math.max(1, cols);
  const text = themeColor('--text') || '#222';
  const muted = themeColor('--muted') || '#777';
  g.font = '11px sans-serif';
  g.textBaseline = 'middle';
  for (let r = 0; r < rows; r++) {
    const y = padT + r * rowH;
    for (let c = 0; c < cols; c++) {
      const x = fin(m.rows[r][c]);
      if (x === null) continue;
      g.fillStyle = viridis(Math.min(1, Math.max(0, (x - lo) / span)));
      g.fillRect(padL + c * cellW, y, Math.ceil(cellW), rowH);
    }
    const rk = job.ranks[r];
    if (rowH >= 9 || r % Math.ceil(9 / rowH) === 0) {
      g.fillStyle = rk && rk.straggler ? themeColor('--danger') || '#c00' : text;
      g.textAlign = 'right';
      g.fillText('rank ' + (rk ? rk.rank : r), padL - 6, y + rowH / 2);
    }
  }
  g.fillStyle = muted;
  const ticks = cols ? heatTicks(m.columns, padL, cellW, cssW - padL - padR) : [];
  const yT = padT + rows * rowH + 13;
  let right = -Infinity;
  const drawn = [];
  for (const t of ticks) {
    const label = String(t.step);
    const w = g.measureText(label).width;
    // Kept inside the canvas; a label that would touch the last one drawn
    // is left out.
    const x = Math.max(padL + w / 2, Math.min(cssW - padR - w / 2, t.x));
    if (x - w / 2 < right + 6) continue;
    g.textAlign = 'center';
    g.fillText(label, x, yT);
    g.fillRect(t.x, padT + rows * rowH, 1, 3);
    right = x + w / 2;
    drawn.push(t.step);
  }
  if (ticks.length) { g.textAlign = 'right'; g.fillText('step', padL - 6, yT); }
  canvas.dataset.ticks = drawn.join(',');  // the labels drawn (tests)
  canvas.addEventListener('mousemove', (e) => {
    const b = canvas.getBoundingClientRect();
    const c = Math.floor((e.clientX - b.left - padL) / cellW);
    const r = Math.floor((e.clientY - b.top - padT) / rowH);
    if (c < 0 || c >= cols || r < 0 || r >= rows) { tip.textContent = ''; return; }
    const col = m.columns[c];
    const steps = col[0] === col[1] ? 'step ' + col[0] : 'steps ' + col[0] + '–' + col[1];
    const rk = job.ranks[r];
    tip.textContent = `rank ${rk ? rk.rank : r}, ${steps}: ${ms(m.rows[r][c])} ms`;
  });
  canvas.addEventListener('mouseleave', () => { tip.textContent = ''; });
  return { lo, hi };
}

// The heat map's step axis: round steps (niceStep) about every
// HEAT_TICK_PX pixels, HEAT_TICKS_MIN to HEAT_TICKS_MAX of them (a 200-step
// job reads 0, 25, 50, ... 200, not only "step 0" and "step 199"). columns:
// [[first, last] step of each cell]; x is where the step's cell starts plus
// its place inside the cell.
const HEAT_TICK_PX = 80, HEAT_TICKS_MIN = 5, HEAT_TICKS_MAX = 8;
function heatTicks(columns, padL, cellW, plotW) {
  const s0 = columns[0][0], s1 = columns[columns.length - 1][1];
  if (!(s1 > s0)) return [{ step: s0, x: padL + cellW / 2 }];
  const n = Math.max(HEAT_TICKS_MIN, Math.min(HEAT_TICKS_MAX, Math.floor(plotW / HEAT_TICK_PX)));
  const count = (st) => Math.floor(s1 / st) - Math.ceil(s0 / st) + 1;
  // niceStep rounds the step up: ask for more until there are enough.
  let step = Math.max(1, Math.round(niceStep(s1 - s0, n)));
  for (let k = n + 1; count(step) < HEAT_TICKS_MIN && step > 1 && k <= 4 * HEAT_TICKS_MAX; k++) step = Math.max(1, Math.round(niceStep(s1 - s0, k)));
  for (let k = n - 1; count(step) > HEAT_TICKS_MAX && k >= 1; k--) step = Math.max(1, Math.round(niceStep(s1 - s0, k)));
  const out = [];
  let c = 0;
  for (let t = Math.ceil(s0 / step) * step; t <= s1 && out.length < 2 * HEAT_TICKS_MAX; t += step) {
    while (c < columns.length - 1 && columns[c][1] < t) c++;
    const [a, b] = columns[c];
    const within = b > a ? (Math.min(Math.max(t, a), b) - a) / (b - a + 1) : 0;
    out.push({ step: t, x: padL + (c + within) * cellW });
  }
  return out;
}

// The job with its ranks (and the heat map's rows) in numeric rank order.
function byRank(job) {
  const idx = job.ranks.map((r, i) => i);
  idx.sort((a, b) => (num(job.ranks[a].rank) ?? a) - (num(job.ranks[b].rank) ?? b));
  if (idx.every((v, i) => v === i)) return job;
  return { ...job, ranks: idx.map((i) => job.ranks[i]), matrix: { ...job.matrix, rows: idx.map((i) => job.matrix.rows[i]) } };
}

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.charts = [];
    this.job = null;
    this.metric = 'compute_ms';
    this.jobSelect = h('select', { id: 'ranks-job', onchange: (e) => { this.job = e.target.value; this.render(); } });
    this.metricSelect = h('select', { id: 'ranks-metric', onchange: (e) => { this.metric = e.target.value; this.render(); } },
      METRICS.map(([k, label]) => h('option', { value: k, selected: k === this.metric }, label)));
    this.windowSelect = h('select', { id: 'ranks-window', 'aria-label': 'Step window', onchange: (e) => this.ctx.setState({ ranksWindow: e.target.value }) },
      WINDOWS.map(([v, label]) => h('option', { value: v, selected: v === ctx.state.ranksWindow }, label)));
    ctx.settings.append(h('h3', null, 'Job'), this.jobSelect,
      h('h3', null, 'Heat map'), this.metricSelect,
      h('h3', null, 'Step window'), this.windowSelect,
      h('p', { class: 'muted small hint' }, 'Of the GPU figures and the straggler from the traces. All: each rank\'s whole trace. Steps: the work launched inside its ProfilerStep annotations. Steps but the last: without the last step (HTA\'s default).'),
      h('p', { class: 'muted small hint' },
        'A job is the runs that share a job name (rank record of tfb_writer_open_rank) or rank-N directories under one parent. ' +
        'Times from pipeline/step_ms, pipeline/input_ms and comm/ms; GPU figures from the ranks\' traces.'));
    this.body = h('div');
    ctx.main.append(h('h2', { class: 'page-title' }, 'Ranks'), this.body);
    this.render();
  },
  unmount() { this.destroyCharts(); this.token = null; },
  update(ctx, changed) {
    this.ctx = ctx;
    this.windowSelect.value = ctx.state.ranksWindow;
    if (changed.includes('data') || changed.includes('ranksWindow')) this.render();
  },
  destroyCharts() {
    for (const c of this.charts) c.destroy();
    this.charts = [];
    this.gpuCharts = [];
  },
  async render() {
    const token = {};
    this.token = token;
    let jobs;
    try {
      jobs = (await getJSON('data/plugin/ranks/jobs')).jobs || [];
    } catch (e) {
      if (this.token !== token) return;
      this.showError('Could not list the jobs: ' + e.message);
      return;
    }
    if (this.token !== token) return;
    const names = jobs.map((j) => String(j.job));
    if (!names.includes(this.job)) this.job = names[0] || null;
    clear(this.jobSelect);
    for (const j of jobs) {
      this.jobSelect.appendChild(h('option', { value: String(j.job), selected: String(j.job) === this.job },
        `${j.job} (${num(j.ranks)} rank${num(j.ranks) === 1 ? '' : 's'})`));
    }
    if (!this.job) {
      this.destroyCharts();
      clear(this.body);
      this.body.appendChild(h('div', { class: 'empty small' }, 'No distributed job in this logdir.'));
      window.__tfb.pages.ranks = { job: null, jobs: 0 };
      return;
    }
    let job;
    try {
      job = await getJSON('data/plugin/ranks/job', { job: this.job, metric: this.metric, columns: 400 });
    } catch (e) {
      if (this.token !== token) return;
      this.showError('Could not load the job view: ' + e.message);
      return;
    }
    if (this.token !== token) return;
    this.destroyCharts();
    clear(this.body);
    this.drawJob(job);
    window.__tfb.pages.ranks = {
      job: job.job, jobs: jobs.length, ranks: job.ranks.length,
      stragglers: job.stragglers.map((s) => num(s.rank)),
      notes: job.notes.map((n) => String(n.text)),
      heatmap: { rows: job.matrix.rows.length, cols: job.matrix.columns.length, metric: job.matrix.metric },
      gpu: 'loading',
    };
    // The GPU side: traces may take a while to load the first time. On a
    // reload the figures drawn before stay until the new ones arrive (no
    // collapse and jump of the page).
    const gpuCard = h('div', { class: 'card', id: 'ranks-gpu', style: { marginBottom: '12px' } },
      h('h3', { class: 'card-h' }, 'GPU time per rank (HTA temporal breakdown)'),
      h('div', { class: 'muted small' }, 'Loading the ranks\' GPU traces…'));
    this.gpuSlot.appendChild(gpuCard);
    if (this.lastGpu && this.lastGpu.job === this.job) {
      this.drawGpu(gpuCard, this.lastGpu.data);
      this.rankTable.setRows(this.rows(job, this.lastGpu.data));
    }
    let gpu;
    try {
      // 202 {"loading": true, "progress"} while the ranks' traces load in
      // the background: show the progress and ask again.
      for (;;) {
        const w = this.ctx.state.ranksWindow;
        gpu = await getJSON('data/plugin/ranks/gpu', { job: this.job, ...(w && w !== 'all' ? { window: w } : {}) });
        if (this.token !== token) return;
        if (!gpu.loading) break;
        let msg = gpuCard.querySelector('#ranks-gpu-loading');
        if (!msg) {
          msg = h('div', { class: 'muted small', id: 'ranks-gpu-loading' });
          gpuCard.insertBefore(msg, gpuCard.children[1] || null);
        }
        msg.textContent = `Loading the GPU traces of ${num(gpu.ranks_loading)} of ${num(gpu.ranks)} ranks: ${pct(fin(gpu.progress) ?? 0, 0)}`;
        window.__tfb.pages.ranks.gpuProgress = fin(gpu.progress);
        await new Promise((r) => setTimeout(r, 300));
        if (this.token !== token) return;
      }
    } catch (e) {
      if (this.token !== token) return;
      clear(gpuCard);
      gpuCard.appendChild(h('div', { class: 'small error-text' }, 'Could not load the GPU figures: ' + e.message));
      return;
    }
    if (this.token !== token) return;
    this.lastGpu = { job: this.job, data: gpu };
    for (const c of this.gpuCharts || []) { c.destroy(); this.charts = this.charts.filter((x) => x !== c); }
    this.drawGpu(gpuCard, gpu);
    this.traceVerdict(job, gpu);
    this.rankTable.setRows(this.rows(job, gpu));
    const ts = gpu.trace_straggler;
    window.__tfb.pages.ranks.gpu = { traced: num(gpu.n_traced), overlap: fin(gpu.overlap),
      traceStraggler: ts && ts.straggler !== null ? num(ts.straggler) : null,
      window: gpu.window ? String(gpu.window.mode) : 'all', computeNs: num(gpu.compute_ns) };
  },
  showError(msg) {
    this.destroyCharts();
    clear(this.body);
    this.body.appendChild(h('div', { class: 'empty small error-text' }, msg));
  },
  rows(job, gpu) {
    const g = new Map();
    if (gpu) for (const r of gpu.ranks) g.set(num(r.rank), r);
    // Each rank's MFU, energy and bus bandwidth (the job's "efficiency",
    // by run: the Efficiency dashboard's figures).
    const eff = new Map();
    for (const e of job.efficiency || []) eff.set(String(e.run), e);
    return job.ranks.map((r) => {
      const gr = g.get(num(r.rank));
      const ef = eff.get(String(r.run || '')) || {};
      return {
        mfu: fin(ef.mfu_pct), energy: fin(ef.energy_j), busbw: fin(ef.busbw_gbps),
        rank: num(r.rank), run: String(r.run || ''), host: r.host ? String(r.host) : '',
        steps: num(r.steps),
        step_mean: fin(r.step_ms.mean), step_p50: fin(r.step_ms.p50), step_p90: fin(r.step_ms.p90),
        input: fin(r.input_ms.mean), comm: fin(r.comm_ms.mean), compute: fin(r.compute_ms.p50),
        busy: gr && gr.has_trace ? fin(gr.busy_pct) : null,
        overlap: gr && gr.has_trace ? fin(gr.overlap) : null,
        slowdown: fin(r.slowdown), straggler: !!r.straggler,
      };
    });
  },
  drawJob(job) {
    const rule = job.rule || {};
    const strag = job.stragglers || [];
    const verdict = h('div', { class: 'verdict ' + (strag.length ? 'highly' : 'not'), id: 'ranks-verdict' },
      h('h2', null, strag.length ? `${strag.length} straggler${strag.length === 1 ? '' : 's'}` : 'No straggler'),
      strag.map((s) => h('div', { class: 'straggler-sentence' }, String(s.sentence))),
      h('div', { class: 'muted small' },
        `Rule: a rank whose own time (step − communication) is more than ${pct(fin(rule.straggler_excess) ?? 0, 0)} above the median rank's, ` +
        `in at least ${pct(fin(rule.straggler_share) ?? 0, 0)} of the steps.`));
    const sk = job.skew || {};
    this.body.append(verdict,
      h('div', { class: 'stats' },
        stat('Ranks', String(num(job.n_ranks)), job.world_size ? 'world size ' + num(job.world_size) : 'world size unknown',
          { id: 'ranks-world-size', 'data-known': job.world_size ? '1' : '0' }),
        stat('Steps', String(num(job.n_steps))),
        stat('Median own time', ms(job.job_median_own_ms) + ' ms', 'step − communication'),
        stat('Others in comm', share(job.others_comm_share), 'of each step, non-stragglers'),
        stat('Skew p50', ms(sk.p50_ms) + ' ms', 'p90 ' + ms(sk.p90_ms) + ' ms'),
        stat('Skew max', ms(sk.max_ms) + ' ms', sk.max_step === null || sk.max_step === undefined ? '' : 'at step ' + num(sk.max_step))));
    const notes = job.notes || [];
    if (notes.length) {
      this.body.appendChild(h('div', { class: 'card', id: 'ranks-notes', style: { marginBottom: '12px' } },
        h('h3', { class: 'card-h' }, 'Notes on the input'),
        h('ul', { class: 'recs' }, notes.map((n) => h('li', { class: 'note' }, String(n.text))))));
    }
    // Heat map.
    const metricLabel = (METRICS.find(([k]) => k === job.matrix.metric) || [0, job.matrix.metric])[1];
    const tip = h('div', { class: 'muted small', id: 'ranks-heatmap-tip', style: { minHeight: '16px' } });
    const wrap = h('div', { class: 'heatmap-wrap' });
    const legend = h('div', { class: 'muted small' });
    const steps = job.matrix.columns.length;
    const per = steps ? job.matrix.columns[0][1] - job.matrix.columns[0][0] + 1 : 1;
    this.body.appendChild(h('div', { class: 'card', style: { marginBottom: '12px' } },
      h('h3', { class: 'card-h' }, `${metricLabel} per rank and step` + (per > 1 ? ` (mean over about ${per} steps per cell)` : '')),
      wrap, legend, tip));
    if (job.matrix.rows.length && steps) {
      const { lo, hi } = drawHeatmap(wrap, job, tip);
      if (Number.isFinite(lo)) legend.textContent = `colour: ${eng(lo)} ms (dark) to ${eng(hi)} ms (light), the cells' 1st to 99th percentile`;
    } else {
      wrap.appendChild(h('div', { class: 'muted small' }, 'No step timings.'));
    }
    // Per-rank table.
    const cols = [
      { key: 'rank', label: 'Rank', num: true, render: (r) => (r.straggler ? h('b', { class: 'error-text' }, String(r.rank)) : String(r.rank)) },
      { key: 'run', label: 'Run', render: (r) => h('span', { class: 'mono', style: { whiteSpace: 'nowrap' } }, r.run) },
      { key: 'host', label: 'Host', render: (r) => h('span', { style: { whiteSpace: 'nowrap' } }, r.host) },
      { key: 'steps', label: 'Steps', num: true },
      { key: 'step_mean', label: 'Step mean ms', num: true, render: (r) => ms(r.step_mean) },
      { key: 'step_p50', label: 'p50', num: true, render: (r) => ms(r.step_p50) },
      { key: 'step_p90', label: 'p90', num: true, render: (r) => ms(r.step_p90) },
      { key: 'input', label: 'Input wait ms', num: true, render: (r) => ms(r.input) },
      { key: 'comm', label: 'Comm ms', num: true, render: (r) => ms(r.comm) },
      { key: 'compute', label: 'Compute p50 ms', num: true, render: (r) => ms(r.compute) },
      { key: 'busy', label: 'GPU busy', num: true, render: (r) => (r.busy === null ? '–' : eng(r.busy) + ' %') },
      { key: 'overlap', label: 'Comm overlap', num: true, render: (r) => share(r.overlap) },
      { key: 'mfu', label: 'MFU', num: true, render: (r) => (r.mfu === null ? '–' : eng(r.mfu) + ' %') },
      { key: 'energy', label: 'Energy J', num: true, render: (r) => (r.energy === null ? '–' : eng(r.energy)) },
      { key: 'busbw', label: 'Bus GB/s', num: true, render: (r) => (r.busbw === null ? '–' : eng(r.busbw)) },
      { key: 'slowdown', label: 'vs median', num: true, render: (r) => (r.slowdown === null ? '–' : (r.slowdown >= 0 ? '+' : '') + pct(r.slowdown)) },
    ];
    this.rankTable = sortableTable(cols, { sortKey: 'rank', sortDir: 1 });
    this.rankTable.setRows(this.rows(job, null));
    this.rankTable.el.id = 'ranks-table';
    this.body.appendChild(h('div', { class: 'card table-card', style: { marginBottom: '12px' } }, this.rankTable.el));
    this.gpuSlot = h('div');
    this.body.appendChild(this.gpuSlot);
    // Skew.
    const pts = thinSkew((sk.steps || []));
    const canvas = h('canvas', { id: 'ranks-skew' });
    this.body.appendChild(h('div', { class: 'card' },
      h('h3', { class: 'card-h' }, 'Skew per step: last minus first rank to finish (ms)'),
      pts.length ? h('div', { class: 'chart-wrap' }, canvas) : h('div', { class: 'muted small' }, 'Needs the wall times of at least 2 ranks per step.')));
    if (pts.length) {
      this.charts.push(makeChart(canvas, {
        type: 'line',
        data: { datasets: [{ label: 'skew', data: pts, borderColor: '#e15759', backgroundColor: '#e15759', pointRadius: 0, borderWidth: 1 }] },
        options: {
          animation: false, parsing: false, normalized: true,
          plugins: { legend: { display: false },
            tooltip: { callbacks: { title: (it) => 'Step ' + it[0].parsed.x, label: (c) => eng(c.parsed.y) + ' ms' } } },
          scales: { x: { type: 'linear', title: { display: true, text: 'Step' } },
            y: { beginAtZero: true, title: { display: true, text: 'ms' }, ticks: { callback: linearTicks } } },
        },
      }));
    }
  },
  // Without step times the step rule has nothing to judge: the verdict is
  // then the traces' (the rank whose NCCL collectives start last,
  // server/analysis/ranks_trace_straggler.h), and says so.
  traceVerdict(job, gpu) {
    const ts = gpu.trace_straggler;
    const verdict = this.body.querySelector('#ranks-verdict');
    if (!ts || !verdict || num(job.n_steps) > 0) return;
    const p = (ts.per_rank || []).find((x) => ts.straggler !== null && num(x.rank) === num(ts.straggler));
    clear(verdict);
    verdict.className = 'verdict ' + (p ? 'highly' : 'not');
    // (append() writes a null as the text "null": left out.)
    verdict.append(...[
      h('h2', null, p ? '1 straggler (from the traces)' : 'No straggler (from the traces)'),
      p ? h('div', { class: 'straggler-sentence' },
        `Rank ${num(p.rank)} starts its NCCL collectives last in ${num(p.last)} of ${num(ts.compared)} (${pct(fin(p.last_share) ?? 0, 0)}); ` +
        `the other ranks wait ${eng(num(p.wait_caused_ns) / 1e6)} ms for it in all.`) : null,
      h('div', { class: 'muted small' },
        `No step times in the event files: judged from the ${num(ts.ranks)} traced ranks' NCCL kernel start times. ` +
        `Rule: the rank that starts last in at least ${pct(fin(ts.share_min) ?? 0, 0)} of the collectives (at least ${num(ts.collectives_min)} compared).`)].filter(Boolean));
  },
  drawGpu(card, gpu) {
    clear(card);
    card.appendChild(h('h3', { class: 'card-h' }, 'GPU time per rank (HTA temporal breakdown)'));
    const traced = gpu.ranks.filter((r) => r.has_trace);
    if (!traced.length && !(gpu.notes || []).length) {
      card.appendChild(h('div', { class: 'muted small' }, 'No GPU trace in this job (no *.sqlite or *.pt.trace.json files in the rank directories).'));
      return;
    }
    // Which window the figures cover, as the server applied it (the first
    // traced rank's; each rank's own is on its row of the answer).
    const win = gpu.window || { mode: 'all' };
    card.appendChild(h('div', { class: 'small', id: 'ranks-window-note' },
      h('b', null, 'Step window: '), winLabel(win.mode),
      win.steps !== null && win.steps !== undefined
        ? ` — ${int(num(win.steps))} ProfilerStep${num(win.steps) === 1 ? '' : 's'}, ${ns(num(win.duration_ns))}`
        : ' — the whole trace',
      win.note ? h('span', { class: 'error-text' }, ` (${win.note})`) : null));
    card.appendChild(h('div', { class: 'small', id: 'ranks-overlap' },
      `Communication/computation overlap: ${share(gpu.overlap)} of the NCCL kernel time has a compute kernel running on the same device ` +
      `(${num(gpu.n_traced)} of ${gpu.ranks.length} ranks traced).`));
    const dist = gpu.distributed;
    if (dist) {
      // The job's place in the world as its traces say it (Kineto's
      // distributedInfo), also when the rank directories do not.
      const pgs = (dist.process_groups || []).map((g) =>
        `${g.desc ?? g.name ?? '?'}${g.name !== null && g.name !== undefined ? ' (' + g.name + ')' : ''}: ` +
        `${g.size !== null && g.size !== undefined ? num(g.size) + ' ranks' : '? ranks'}${g.ranks ? ' ' + g.ranks : ''}${g.backend ? ', ' + g.backend : ''}`);
      card.appendChild(h('div', { class: 'small', id: 'ranks-distributed' },
        `From the traces: world size ${dist.world_size ?? 'unknown'}` +
        (dist.backend ? `, backend ${dist.backend}` : '') +
        (dist.pg_count !== null && dist.pg_count !== undefined ? `, ${num(dist.pg_count)} process group${num(dist.pg_count) === 1 ? '' : 's'}` : '') +
        (pgs.length ? ': ' + pgs.join('; ') : '') + '.'));
      const ws = this.body.querySelector('#ranks-world-size');
      if (ws && dist.world_size !== null && dist.world_size !== undefined && ws.dataset.known !== '1') {
        ws.textContent = `world size ${num(dist.world_size)} (from the traces)`;
      }
    }
    const names = new Map();
    for (const r of traced) for (const d of r.device_info || []) {
      if (!d.name) continue;
      const key = d.name + (d.sm_count ? `, ${num(d.sm_count)} SMs` : '') + (d.compute_capability ? `, compute ${d.compute_capability}` : '');
      names.set(key, (names.get(key) || 0) + 1);
    }
    if (names.size) {
      card.appendChild(h('div', { class: 'small muted', id: 'ranks-devices' },
        'Devices: ' + [...names].map(([k, n]) => `${n} × ${k}`).join('; ')));
    }
    for (const n of gpu.notes || []) card.appendChild(h('div', { class: 'small error-text note' }, String(n.text)));
    if (!traced.length) return;
    const canvas = h('canvas', { id: 'ranks-breakdown' });
    const height = Math.max(160, Math.min(600, 28 * traced.length + 60));
    card.appendChild(h('div', { class: 'chart-wrap', style: { height: height + 'px' } }, canvas));
    const tot = (r) => BREAKDOWN.reduce((a, [k]) => a + num(r[k]), 0) || 1;
    const chart = makeChart(canvas, {
      type: 'bar',
      data: {
        labels: traced.map((r) => 'rank ' + num(r.rank)),
        datasets: BREAKDOWN.map(([k, label, color]) => ({
          label, backgroundColor: color, stack: 's', data: traced.map((r) => (100 * num(r[k])) / tot(r)),
        })),
      },
      options: {
        indexAxis: 'y', animation: false, maintainAspectRatio: false,
        plugins: { legend: { position: 'top', align: 'end', labels: { boxWidth: 12 } },
          tooltip: { callbacks: { label: (c) => c.dataset.label + ': ' + eng(c.parsed.x) + '%' } } },
        scales: { x: { stacked: true, max: 100, title: { display: true, text: '% of the trace span' } }, y: { stacked: true } },
      },
    });
    this.charts.push(chart);
    this.gpuCharts = [chart];
  },
};

export default page;
