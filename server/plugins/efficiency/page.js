// Efficiency dashboard (issue 29): how much of the hardware each run uses
// and where the rest goes. Per run: throughput, MFU (with where its peak
// came from), the goodput stacked bar and energy; for the picked run: MFU,
// throughput and energy over steps, and its collectives' bandwidth
// against the link. The figures are the server's (API.md); this page only
// draws them and says what each rests on ("peak unknown", "bf16 assumed",
// "6·N·T estimate", "power×time").
import { h, clear, sortableTable } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { eng, pct, bytes, linearTicks } from '../core/format.js';
import { makeChart } from '../core/charts.js';
import { COLOR, filledSet } from '../lib/plot.js';
import { pickRun, mountRunPage, updateRunPage, loadLatest } from '../lib/run_pick.js';

// The goodput parts, in the bar's order (API.md: they sum to wall_s).
const PARTS = [
  { key: 'productive_s', label: 'Productive steps', color: COLOR.green },
  { key: 'input_s', label: 'Input wait', color: COLOR.orange },
  { key: 'comm_s', label: 'Exposed comm', color: COLOR.purple },
  { key: 'startup_s', label: 'Before first step', color: COLOR.grey },
  { key: 'gap_s', label: 'Gaps between steps', color: COLOR.red },
  { key: 'checkpoint_s', label: 'Checkpoints', color: COLOR.blue },
];

function fin(v) { const x = num(v); return Number.isFinite(x) ? x : null; }
function show(v, unit = '') { const x = fin(v); return x === null ? '–' : eng(x) + unit; }

// What a run's MFU rests on, in words.
function mfuNotes(r) {
  const notes = [];
  // No FLOPs at all is not an unknown peak: say which is missing.
  if (fin(r.mfu_pct) === null) notes.push(fin(r.tflops) === null ? 'no FLOPs logged' : 'peak unknown');
  else notes.push(`${show(r.peak_tflops)} TFLOP/s peak (${r.peak_source})`);
  // The dtype picks the peak: said only where there are FLOPs to divide.
  if (r.dtype && fin(r.tflops) !== null) notes.push(r.dtype + (r.dtype_assumed ? ' assumed' : ''));
  if (r.flops_estimated) notes.push('6·N·T estimate');
  return notes;
}

function stat(label, value, sub, id) {
  return h('div', { class: 'stat', id }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value), sub ? h('div', { class: 'sub' }, sub) : null);
}

function card(title, ...body) {
  return h('div', { class: 'card', style: { marginBottom: '12px' } }, h('h3', { class: 'card-h' }, title), ...body);
}

const page = {
  mount(ctx) {
    this.charts = [];
    mountRunPage(this, ctx, 'efficiency-run', 'Efficiency',
      'From the perf/* scalars and the perf/work record (tfb_step_work in libtfboard), pipeline/step_ms, the GPUs\' energy and the collectives (tfb_comm_begin_bytes, NCCL kernels in the traces).');
    this.render();
  },
  unmount() { this.destroyCharts(); },
  update(ctx, changed) { updateRunPage(this, ctx, changed); },
  destroyCharts() { for (const c of this.charts) c.destroy(); this.charts = []; },
  chart(canvas, config) { const c = makeChart(canvas, config); this.charts.push(c); return c; },
  async render() {
    const all = await loadLatest(this, 'the efficiency figures', () => getJSON('data/plugin/efficiency/runs'));
    if (!all) return;
    // The runs picked in the sidebar (its filter and checkboxes), as the
    // other pages compare them.
    const picked = new Set(this.ctx.runs || []);
    const rows = (all.runs || []).filter((r) => picked.has(r.run));
    this.destroyCharts();
    clear(this.body);
    if (!rows.length) {
      clear(this.runSelect);
      this.body.appendChild(h('div', { class: 'empty', id: 'efficiency-empty' },
        (all.runs || []).length ? 'No selected run has step timing or perf scalars: pick one in the run list.'
          : 'No run has step timing: call tfb_step_begin / tfb_step_end (and tfb_step_work for MFU) in the training loop.'));
      window.__tfb.pages.efficiency = { runs: 0 };
      return;
    }
    const run = pickRun(this.ctx, rows.map((r) => r.run), this.runSelect);
    // The collectives answer 202 {"loading": true} while the run's trace
    // loads in the background: ask again until it is there.
    const collectives = async () => {
      for (;;) {
        const c = await getJSON('data/plugin/efficiency/collectives', { run });
        if (!c.loading) return c;
        await new Promise((res) => setTimeout(res, 300));
      }
    };
    const got = await loadLatest(this, 'the efficiency series', () => Promise.all([
      getJSON('data/plugin/efficiency/steps', { run }),
      collectives(),
    ]));
    if (!got) return;
    const [steps, coll] = got;
    const r = rows.find((x) => x.run === run);
    this.drawSummary(r);
    this.drawRunsTable(rows, num(all.left_out));
    this.drawGoodput(rows);
    this.drawSteps(steps, r);
    this.drawCollectives(coll);
    window.__tfb.pages.efficiency = {
      runs: rows.length, run, mfu: fin(r.mfu_pct), goodput: fin(r.goodput.goodput),
      notes: mfuNotes(r), steps: (steps.steps || []).length, peakKnown: !!steps.peak_known,
      collectives: (coll.rows || []).length, below: (coll.rows || []).filter((c) => c.below).length,
    };
  },
  drawSummary(r) {
    const g = r.goodput || {};
    const notes = mfuNotes(r);
    const mfu = fin(r.mfu_pct);
    this.body.appendChild(h('div', { class: 'stats', id: 'efficiency-stats' },
      stat('MFU', mfu === null ? (fin(r.tflops) === null ? '–' : 'peak unknown') : eng(mfu) + ' %', notes.join(' · ') + (r.device ? ' · ' + r.device : ''), 'efficiency-mfu'),
      stat('Throughput', show(r.tokens_per_s, ' tokens/s'), show(r.samples_per_s, ' samples/s') + ' · ' + show(r.tflops, ' TFLOP/s')),
      stat('Goodput', fin(g.goodput) === null ? '–' : pct(fin(g.goodput)), 'of ' + show(g.wall_s, ' s') + ' wall', 'efficiency-goodput'),
      stat('Energy', show(r.energy_wh, ' Wh'), show(r.energy_j, ' J') + (fin(r.gco2) !== null ? ' · ' + show(r.gco2, ' gCO2') : '') +
        (r.energy_source === 'power_x_time' ? ' · power×time (no energy counter)' : ''), 'efficiency-energy'),
      stat('Per token', show(r.j_per_token, ' J'), show(r.j_per_sample, ' J/sample'))));
  },
  drawRunsTable(rows, leftOut) {
    const cols = [
      // Run names stay whole; at 800 px the card scrolls sideways.
      { key: 'run', label: 'Run', render: (x) => h('span', { class: 'mono', style: { whiteSpace: 'nowrap' } }, x.run) },
      { key: 'steps', label: 'Steps', num: true },
      { key: 'tokens_per_s', label: 'Tokens/s', num: true, value: (x) => fin(x.tokens_per_s), render: (x) => show(x.tokens_per_s) },
      { key: 'tflops', label: 'TFLOP/s', num: true, value: (x) => fin(x.tflops), render: (x) => show(x.tflops) },
      { key: 'mfu', label: 'MFU', num: true, value: (x) => fin(x.mfu_pct),
        render: (x) => h('span', { title: mfuNotes(x).join(' · ') }, fin(x.mfu_pct) === null ? (fin(x.tflops) === null ? '–' : 'peak unknown') : show(x.mfu_pct, ' %'),
          (x.dtype_assumed && fin(x.tflops) !== null) || x.flops_estimated ? h('div', { class: 'muted small' },
            [x.dtype_assumed && fin(x.tflops) !== null ? x.dtype + ' assumed' : '', x.flops_estimated ? '6·N·T estimate' : ''].filter(Boolean).join(', ')) : null) },
      { key: 'goodput', label: 'Goodput', num: true, value: (x) => fin(x.goodput.goodput), render: (x) => (fin(x.goodput.goodput) === null ? '–' : pct(fin(x.goodput.goodput))) },
      { key: 'energy_wh', label: 'Wh', num: true, value: (x) => fin(x.energy_wh),
        render: (x) => h('span', null, show(x.energy_wh), x.energy_source === 'power_x_time' ? h('div', { class: 'muted small' }, 'power×time') : null) },
      { key: 'gco2', label: 'gCO2', num: true, value: (x) => fin(x.gco2), render: (x) => show(x.gco2) },
      { key: 'j_per_token', label: 'J/token', num: true, value: (x) => fin(x.j_per_token), render: (x) => show(x.j_per_token) },
    ];
    const t = sortableTable(cols, { sortKey: 'run', sortDir: 1 });
    t.setRows(rows);
    t.el.id = 'efficiency-runs';
    this.body.appendChild(h('div', { class: 'card table-card', style: { marginBottom: '12px' } }, t.el,
      leftOut ? h('div', { class: 'muted small' }, `${leftOut} more runs not shown (API.md, EFF_RUNS_MAX).`) : null));
  },
  drawGoodput(rows) {
    const withG = rows.filter((x) => fin(x.goodput.wall_s) !== null && fin(x.goodput.wall_s) > 0);
    if (!withG.length) return;
    const canvas = h('canvas', { id: 'efficiency-goodput-bar' });
    const height = Math.max(80, 28 * withG.length + 60);
    this.body.appendChild(card('Where the wall time goes (goodput = productive share)',
      h('div', { class: 'chart-wrap', style: { height: height + 'px' } }, canvas)));
    this.chart(canvas, {
      type: 'bar',
      data: {
        labels: withG.map((x) => x.run),
        datasets: PARTS.map((p) => ({ label: p.label, backgroundColor: p.color, stack: 'g',
          data: withG.map((x) => fin(x.goodput[p.key]) ?? 0) })),
      },
      options: {
        indexAxis: 'y', animation: false,
        plugins: {
          legend: { position: 'top', align: 'end', labels: { boxWidth: 12 } },
          tooltip: { callbacks: { label: (c) => {
            const wall = fin(withG[c.dataIndex].goodput.wall_s);
            return `${c.dataset.label}: ${eng(c.parsed.x)} s (${pct(c.parsed.x / wall)} of ${eng(wall)} s)`;
          } } },
        },
        scales: { x: { stacked: true, title: { display: true, text: 's' }, ticks: { callback: linearTicks } }, y: { stacked: true } },
      },
    });
  },
  drawSteps(steps, run) {
    const cols = steps.columns || [];
    const at = (name) => cols.indexOf(name);
    const rows = steps.steps || [];
    const series = (name) => rows.filter((s) => fin(s[at(name)]) !== null).map((s) => ({ x: num(s[0]), y: num(s[at(name)]) }));
    const grid = h('div', { class: 'grid', id: 'efficiency-steps' });
    const thin = num(steps.stride) > 1 ? ` (every ${num(steps.stride)}th of ${num(steps.total_steps)} steps)` : '';
    // y1: a second axis on the right, for a series of another size (samples/s
    // beside tokens/s).
    const line = (title, sets, yTitle, note, y1Title) => {
      const canvas = h('canvas');
      grid.appendChild(card(title + thin, note ? h('div', { class: 'muted small' }, note) : null, h('div', { class: 'chart-wrap' }, canvas)));
      this.chart(canvas, {
        type: 'line',
        data: { datasets: sets },
        options: {
          parsing: false, animation: false, interaction: { mode: 'nearest', intersect: false },
          plugins: { legend: { align: 'end', labels: { boxWidth: 12 } },
            tooltip: { callbacks: { title: (it) => 'Step ' + it[0].parsed.x, label: (c) => c.dataset.label + ': ' + eng(c.parsed.y) } } },
          scales: { x: { type: 'linear', title: { display: true, text: 'Step' } }, y: { title: { display: true, text: yTitle }, ticks: { callback: linearTicks } },
            ...(y1Title ? { y1: { position: 'right', title: { display: true, text: y1Title }, ticks: { callback: linearTicks }, grid: { drawOnChartArea: false } } } : {}) },
        },
      });
    };
    const mfu = series('mfu_pct');
    if (steps.peak_known && mfu.length) line('MFU over steps', [filledSet('MFU %', mfu, COLOR.green)], '% of peak');
    else if (fin(run.tflops) === null) grid.appendChild(card('MFU over steps', h('div', { class: 'muted small', id: 'efficiency-no-flops' },
      'No FLOPs per step: log them with tfb_step_work (or writer.step_work), or give the model size and tokens per step as hparams for the 6·N·T estimate.')));
    else grid.appendChild(card('MFU over steps', h('div', { class: 'muted small', id: 'efficiency-peak-unknown' },
      'Peak unknown: the device is not in the peak table and no --peak_tflops was given, so no MFU is shown (never a guess).')));
    const tps = series('tokens_per_s'), sps = series('samples_per_s'), tfl = series('tflops');
    if (tps.length || sps.length || tfl.length) {
      // tokens/s on the left; samples/s and TFLOP/s (numbers of another
      // size) on the right, or on the left when there are no tokens.
      const sets = [];
      const right = tps.length ? 'y1' : 'y';
      if (tps.length) sets.push(filledSet('tokens/s', tps, COLOR.blue));
      if (sps.length) sets.push(filledSet('samples/s', sps, COLOR.orange, { yAxisID: right, fill: false }));
      if (tfl.length) sets.push(filledSet('TFLOP/s', tfl, COLOR.purple, { yAxisID: right, fill: false }));
      line('Throughput over steps', sets, tps.length ? 'tokens/s' : 'per second', null,
        tps.length && (sps.length || tfl.length) ? (sps.length ? 'samples/s' : '') + (sps.length && tfl.length ? ', ' : '') + (tfl.length ? 'TFLOP/s' : '') : null);
    }
    const ej = series('energy_j'), jt = series('j_per_token');
    if (ej.length) line('Energy per step', [filledSet('J per step', ej, COLOR.red)], 'J');
    if (jt.length) line('Energy per token', [filledSet('J per token', jt, COLOR.brown)], 'J/token');
    this.body.appendChild(grid);
  },
  drawCollectives(coll) {
    const rows = coll.rows || [];
    if (!rows.length) {
      this.body.appendChild(card('Collectives', h('div', { class: 'muted small', id: 'efficiency-no-coll' },
        'No collectives: neither NCCL kernels in a PyTorch profiler trace nor tfb_comm_begin_bytes spans.')));
      return;
    }
    const cols = [
      { key: 'kind', label: 'Collective', render: (x) => (x.below ? h('b', { class: 'error-text', title: `bus bandwidth under ${eng(num(coll.below_pct))} % of the link` }, x.kind + ' ⚠ far below the link') : x.kind) },
      { key: 'bucket_lo', label: 'Size ≥', num: true, render: (x) => bytes(num(x.bucket_lo)) },
      { key: 'count', label: 'Count', num: true },
      { key: 'bytes', label: 'Bytes', num: true, render: (x) => bytes(num(x.bytes)) },
      { key: 'algbw_gbps', label: 'Alg GB/s', num: true, value: (x) => fin(x.algbw_gbps), render: (x) => show(x.algbw_gbps) },
      { key: 'busbw_gbps', label: 'Bus GB/s', num: true, value: (x) => fin(x.busbw_gbps), render: (x) => show(x.busbw_gbps) },
      { key: 'link_pct', label: '% of link', num: true, value: (x) => fin(x.link_pct), render: (x) => (fin(x.link_pct) === null ? 'link unknown' : eng(fin(x.link_pct)) + ' % of ' + show(x.link_gbps)) },
      { key: 'source', label: 'From', render: (x) => (x.source === 'trace' ? 'GPU kernels' : 'host spans') },
    ];
    const t = sortableTable(cols, { sortKey: 'bytes', sortDir: -1 });
    t.setRows(rows.map((x) => ({ ...x, bytes: num(x.bytes), count: num(x.count) })));
    t.el.id = 'efficiency-collectives';
    this.body.appendChild(card('Collectives (bus bandwidth as nccl-tests)', h('div', { class: 'table-card' }, t.el)));
  },
};

export default page;
