// HTA's counters on the GPU page, over the page's step window (served as
// js/lib/gpu_hta.js): the launch statistics (/data/plugin/gpu/launches:
// CPU duration of each launch call, GPU duration of its op, launch delay,
// HTA's fixed-cutoff outliers) and the queue length per stream
// (/data/plugin/gpu/queue: percentiles and the time at the launch queue's
// limit). The rules are the server's (analysis/trace_launch.h,
// trace_queue.h); the cutoffs shown come from its answer.
import { h, sortableTable } from '../core/dom.js';
import { num } from '../core/api.js';
import { ns, pct, int } from '../core/format.js';

const DIST_ROWS = [['cpu', 'CPU (launch call)'], ['gpu', 'GPU (op)'], ['delay', 'Launch delay']];

function launchCard(a) {
  const table = sortableTable([
    { key: 'what', label: 'Duration' },
    { key: 'p50', label: 'p50', num: true, render: (r) => ns(r.p50) },
    { key: 'p90', label: 'p90', num: true, render: (r) => ns(r.p90) },
    { key: 'p99', label: 'p99', num: true, render: (r) => ns(r.p99) },
    { key: 'max', label: 'Max', num: true, render: (r) => ns(r.max) },
    { key: 'mean', label: 'Mean', num: true, render: (r) => ns(r.mean) },
  ], { className: 'launch-table' });
  table.setRows(DIST_ROWS.map(([k, label]) => {
    const d = a[k] || {};
    return { what: label, p50: num(d.p50_ns), p90: num(d.p90_ns), p99: num(d.p99_ns), max: num(d.max_ns), mean: num(d.mean_ns) };
  }));
  const outl = sortableTable([
    { key: 'name', label: 'Op', render: (r) => h('span', { class: 'mono', title: r.name }, r.name.length > 60 ? r.name.slice(0, 57) + '…' : r.name) },
    { key: 'stream', label: 'GPU / stream' },
    { key: 'cpu', label: 'CPU', num: true, render: (r) => ns(r.cpu) },
    { key: 'gpu', label: 'GPU', num: true, render: (r) => ns(r.gpu) },
    { key: 'delay', label: 'Delay', num: true, render: (r) => ns(r.delay) },
    { key: 'why', label: 'Outlier' },
  ], { sortKey: 'delay', className: 'launch-outliers' });
  outl.setRows((a.outliers || []).map((o) => ({
    name: String(o.name ?? o.kind), stream: `${o.device} / ${o.stream}`, cpu: num(o.cpu_ns), gpu: num(o.gpu_ns), delay: num(o.delay_ns),
    why: [o.delay_outlier ? 'delay' : '', o.runtime_outlier ? 'runtime' : ''].filter(Boolean).join(', '),
  })));
  const rc = ns(num(a.runtime_cutoff_ns)), dc = ns(num(a.delay_cutoff_ns));
  return h('div', { class: 'card', id: 'gpu-launches', style: { marginBottom: '12px' } },
    h('h3', { class: 'card-h' }, 'Launch statistics (' + (a.window && a.window.mode !== 'all' ? 'step window: ' + a.window.mode.replace(/_/g, ' ') : 'whole trace') + ')'),
    h('div', { class: 'muted' }, `${int(num(a.launches))} launches paired with their runtime call` +
      (num(a.unmatched) ? `, ${int(num(a.unmatched))} GPU ops without one` : '') +
      `. Launch delay = GPU start − call end (0 when negative). HTA's outliers: call > ${rc} (${int(num(a.runtime_outliers))}),` +
      ` delay > ${dc} (${int(num(a.delay_outliers))}); short kernels (GPU < CPU): ${int(num(a.short_kernels))}.`),
    h('div', { class: 'table-card' }, table.el),
    (a.outliers || []).length
      ? h('div', { class: 'table-card', style: { maxHeight: '300px', marginTop: '8px' } }, outl.el)
      : h('div', { class: 'muted' }, 'No outliers.'));
}

function queueCard(q) {
  const limit = num(q.limit);
  const table = sortableTable([
    { key: 'stream', label: 'GPU / stream' },
    { key: 'ops', label: 'Ops', num: true, render: (r) => int(r.ops) },
    { key: 'p50', label: 'p50', num: true, render: (r) => r.p50.toFixed(1) },
    { key: 'p90', label: 'p90', num: true, render: (r) => r.p90.toFixed(1) },
    { key: 'p99', label: 'p99', num: true, render: (r) => r.p99.toFixed(1) },
    { key: 'max', label: 'Max', num: true, render: (r) => int(r.max) },
    { key: 'at', label: `At ≥ ${limit}`, num: true, render: (r) => (r.at ? `${ns(r.at)} (${pct(r.frac)})` : '–') },
  ], { sortKey: 'max', className: 'queue-table' });
  table.setRows((q.streams || []).map((s) => ({
    stream: `${s.device} / ${s.stream}`, ops: num(s.ops), p50: num(s.p50), p90: num(s.p90), p99: num(s.p99), max: num(s.max),
    at: num(s.at_limit_ns), frac: num(s.at_limit_fraction),
  })));
  return h('div', { class: 'card', id: 'gpu-queue', style: { marginBottom: '12px' } },
    h('h3', { class: 'card-h' }, 'Launch queue length per stream'),
    h('div', { class: 'muted' }, `Ops launched but not yet started (HTA: +1 at the launch call, −1 when the op starts). At ${limit} queued ops a CUDA stream blocks the next launch.`),
    (q.streams || []).length ? h('div', { class: 'table-card' }, table.el) : h('div', { class: 'muted' }, 'No launches paired with their runtime call.'));
}

// Fills wrap with both cards; returns what the tests read.
export async function renderHta(wrap, run, fetchJSON) {
  const [a, q] = await Promise.all([
    fetchJSON('data/plugin/gpu/launches', { run }),
    fetchJSON('data/plugin/gpu/queue', { run }),
  ]);
  wrap.append(launchCard(a), queueCard(q));
  return { launches: num(a.launches), outliers: (a.outliers || []).length, streams: (q.streams || []).length };
}
