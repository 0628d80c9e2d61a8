// Input-pipeline dashboard: the verdict in words and numbers, step-time
// statistics, recommendations, a stacked bar per step (input wait vs the
// rest of the step) and, when the run has a GPU trace, how much of the GPU's
// idle time falls inside input waits.
import { h, clear } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { eng, pct, linearTicks } from '../core/format.js';
import { makeChart } from '../core/charts.js';
import { themeColor } from '../core/colors.js';
import { COLOR } from '../lib/plot.js';
import { pickRun, mountRunPage, updateRunPage, loadLatest } from '../lib/run_pick.js';
import { SCALAR_TAGS } from '../lib/catalog.js';

const VERDICT_TEXT = {
  highly: 'Highly input-bound',
  moderately: 'Moderately input-bound',
  potentially: 'Potentially input-bound',
  not: 'Not input-bound',
};

const MAX_BARS = 400;

function pipelineRuns(data) {
  return data.runs.filter((r) => data.scalarTags[r] && data.tagNames.step_ms in data.scalarTags[r]);
}

// Steps averaged into at most MAX_BARS bars, so a 100k-step run stays
// readable and fast; each bar says which steps it covers.
function bucketSteps(steps) {
  if (steps.length <= MAX_BARS) return steps.map((s) => ({ label: String(s[0]), from: s[0], to: s[0], step: s[1], input: s[2] }));
  const per = Math.ceil(steps.length / MAX_BARS);
  const out = [];
  for (let i = 0; i < steps.length; i += per) {
    const chunk = steps.slice(i, i + per);
    const st = chunk.reduce((a, s) => a + s[1], 0) / chunk.length;
    const inp = chunk.reduce((a, s) => a + s[2], 0) / chunk.length;
    out.push({ label: chunk[0][0] + '–' + chunk[chunk.length - 1][0], from: chunk[0][0], to: chunk[chunk.length - 1][0], step: st, input: inp });
  }
  return out;
}

function stat(label, value, sub) {
  return h('div', { class: 'stat' }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value), sub ? h('div', { class: 'sub' }, sub) : null);
}

const page = {
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { scalarTags: SCALAR_TAGS },
  mount(ctx) {
    this.chart = null;
    mountRunPage(this, ctx, 'pipeline-run', 'Input pipeline',
      `From the ${ctx.data.tagNames.step_ms} and ${ctx.data.tagNames.input_ms} scalars (tfb_step_begin / tfb_input_begin in libtfboard).`);
    this.render();
  },
  unmount() { if (this.chart) this.chart.destroy(); },
  update(ctx, changed) { updateRunPage(this, ctx, changed); },
  async render() {
    const run = pickRun(this.ctx, pipelineRuns(this.ctx.data), this.runSelect);
    if (!run) return;
    const got = await loadLatest(this, 'the pipeline analysis', () => Promise.all([
      getJSON('data/plugin/pipeline/summary', { run }),
      getJSON('data/plugin/pipeline/steps', { run }),
    ]));
    if (!got) return;
    const [sum, steps] = got;
    clear(this.body);
    const frac = num(sum.input_fraction);
    const verdict = sum.verdict || 'not';
    const sm = sum.step_ms || {};
    const gpuIdle = sum.gpu_idle_in_input_fraction === null || sum.gpu_idle_in_input_fraction === undefined ? null : num(sum.gpu_idle_in_input_fraction);
    this.body.append(
      h('div', { class: 'verdict ' + verdict, id: 'pipeline-verdict' },
        h('h2', null, VERDICT_TEXT[verdict] || verdict),
        h('div', null, `${pct(frac)} of step time is spent waiting for input: ${eng(num(sum.mean_input_ms))} ms of a ${eng(num(sum.mean_step_ms))} ms step on average, over ${num(sum.steps)} steps.` +
          (Number.isFinite(num(sum.saving_fraction)) ? ` Faster input would save about ${pct(num(sum.saving_fraction))} of step time (input advice needs 5 %).` : '')),
        gpuIdle !== null ? h('div', null, `${pct(gpuIdle)} of the GPU's idle time falls inside input waits.`) : null),
      h('div', { class: 'stats' },
        stat('Steps', String(num(sum.steps))),
        stat('Input share', pct(frac), 'Σ input / Σ step'),
        stat('Step time p50', eng(num(sm.p50)) + ' ms', 'mean ' + eng(num(sm.mean)) + ' ± ' + eng(num(sm.stddev))),
        stat('Step time p90', eng(num(sm.p90)) + ' ms'),
        stat('Step time p99', eng(num(sm.p99)) + ' ms', 'min ' + eng(num(sm.min)) + ', max ' + eng(num(sm.max))),
        gpuIdle !== null ? stat('GPU idle in input', pct(gpuIdle), 'share of GPU idle time') : null));
    const recs = Array.isArray(sum.recommendations) ? sum.recommendations : [];
    if (recs.length) {
      this.body.appendChild(h('div', { class: 'card', style: { marginBottom: '12px' } },
        h('h3', { class: 'card-h' }, 'Recommendations'),
        h('ul', { class: 'recs', id: 'pipeline-recs' }, recs.map((r) => h('li', null, String(r))))));
    }
    const bars = bucketSteps(steps.map((s) => [num(s[0]), num(s[1]), num(s[2])]));
    const canvas = h('canvas');
    this.body.appendChild(h('div', { class: 'card' },
      h('h3', { class: 'card-h' }, 'Time per step' + (bars.length < steps.length ? ` (mean of ${Math.ceil(steps.length / bars.length)} steps per bar)` : '')),
      h('div', { class: 'chart-wrap tall' }, canvas)));
    if (this.chart) this.chart.destroy();
    this.chart = makeChart(canvas, {
      type: 'bar',
      data: {
        labels: bars.map((b) => b.label),
        datasets: [
          { label: 'Input wait', data: bars.map((b) => b.input), backgroundColor: themeColor('--danger'), stack: 's' },
          { label: 'Rest of step', data: bars.map((b) => Math.max(0, b.step - b.input)), backgroundColor: COLOR.blue, stack: 's' },
        ],
      },
      options: {
        plugins: { legend: { position: 'top', align: 'end', labels: { boxWidth: 12 } },
          tooltip: { callbacks: { title: (it) => 'Step ' + it[0].label, label: (c) => c.dataset.label + ': ' + eng(c.parsed.y) + ' ms' } } },
        scales: {
          x: { stacked: true, title: { display: true, text: 'Step' }, ticks: { maxRotation: 0, autoSkipPadding: 16 } },
          y: { stacked: true, title: { display: true, text: 'ms' }, ticks: { callback: linearTicks } },
        },
        datasets: { bar: { barPercentage: 1, categoryPercentage: bars.length > 100 ? 1 : 0.9 } },
      },
    });
    window.__tfb.pages.pipeline = { run, verdict, steps: steps.length, bars: bars.length, recommendations: recs.length };
  },
};

export default page;
