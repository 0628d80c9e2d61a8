// PR Curves dashboard: a card per tag with a curve per selected run
// (precision over recall), a step slider per card (each run shows its
// curve at or before that step), and on hover the threshold and the
// TP / FP / TN / FN counts of the point.
import { h, clear, debounce } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { safeRegex } from '../core/state.js';
import '../core/charts.js'; // Chart.js theme and defaults (no animation)
import { naturalCompare } from '../core/format.js';

const ChartJS = window.Chart;

// The run's entry at or before step (its first when none is).
function atStep(entries, step) {
  let best = 0;
  for (let i = 0; i < entries.length; i++) if (entries[i].step <= step) best = i;
  return best;
}

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.charts = [];
    this.tagFilter = h('input', { type: 'search', id: 'tag-filter', class: 'filter', placeholder: 'Filter tags (regex)  /', value: ctx.state.tagFilter,
      oninput: debounce((e) => ctx.setState({ tagFilter: e.target.value }), 150) });
    ctx.settings.append(h('h3', null, 'Tags'), this.tagFilter);
    this.body = h('div', { class: 'grid' });
    ctx.main.append(this.body);
    window.__tfb.pages.pr_curves = {};
    this.render();
  },
  unmount() { this.destroy(); },
  update(ctx) {
    this.ctx = ctx;
    if (document.activeElement !== this.tagFilter) this.tagFilter.value = ctx.state.tagFilter;
    this.render();
  },
  destroy() {
    for (const c of this.charts) c.destroy();
    this.charts = [];
  },
  async render() {
    const token = {};
    this.token = token;
    const { re } = safeRegex(this.ctx.state.tagFilter);
    let tags;
    try {
      tags = await getJSON('data/plugin/pr_curves/tags');
    } catch (e) {
      clear(this.body).appendChild(h('div', { class: 'error-text' }, e.message));
      return;
    }
    const byTag = new Map();
    for (const r of this.ctx.runs) {
      for (const t of Object.keys(tags[r] || {})) {
        if (re && !re.test(t)) continue;
        if (!byTag.has(t)) byTag.set(t, []);
        byTag.get(t).push(r);
      }
    }
    const keys = [...byTag.keys()].sort(naturalCompare);
    const data = await Promise.all(keys.map((t) => Promise.all(byTag.get(t).map((r) =>
      getJSON('data/plugin/pr_curves/pr_curves', { run: r, tag: t }).then((d) => d[r] || []).catch((e) => ({ error: e.message }))))));
    if (this.token !== token) return;
    this.destroy();
    clear(this.body);
    if (!keys.length) this.body.appendChild(h('div', { class: 'empty small' }, 'No PR curve tag matches.'));
    keys.forEach((t, k) => this.card(t, byTag.get(t), data[k]));
  },
  card(tag, runs, lists) {
    const steps = [...new Set(lists.flatMap((l) => (Array.isArray(l) ? l.map((e) => e.step) : [])))].sort((a, b) => a - b);
    const canvas = h('canvas');
    const label = h('span', { class: 'small pr-step' });
    const hover = h('div', { class: 'small pr-hover' }, 'Hover a point for its threshold and counts.');
    const slider = h('input', { type: 'range', class: 'pr-slider', min: 0, max: Math.max(0, steps.length - 1), value: Math.max(0, steps.length - 1), step: 1 });
    const errors = lists.map((l, i) => (l && l.error ? h('div', { class: 'error-text' }, runs[i] + ': ' + l.error) : null));
    const el = h('div', { class: 'card pr-card', dataset: { tag } },
      h('div', { class: 'card-head' }, h('div', { class: 'card-title', title: tag }, tag)),
      errors, h('div', { class: 'chart-box', style: { height: '280px' } }, canvas),
      h('div', { class: 'pr-meta' }, label, steps.length > 1 ? slider : null), hover);
    this.body.appendChild(el);
    const shown = [];
    const datasets = () => runs.map((r, i) => {
      const l = Array.isArray(lists[i]) ? lists[i] : [];
      const e = l.length ? l[atStep(l, steps[Number(slider.value)] ?? 0)] : null;
      shown[i] = e;
      // A threshold that nothing reaches (TP + FP = 0) has no precision
      // (TensorBoard's data says 0): not drawn, or the curve would end in a
      // line down to (0, 0).
      const pts = e ? e.recall.map((rc, j) => ({ x: num(rc), y: num(e.precision[j]), j }))
        .filter((p) => num(e.true_positives[p.j]) + num(e.false_positives[p.j]) > 0) : [];
      return { label: r, data: pts, borderColor: runColor(r), backgroundColor: runColor(r), showLine: true, pointRadius: 2, pointHoverRadius: 5, borderWidth: 2, clip: 6 };
    });
    const chart = new ChartJS(canvas, {
      type: 'scatter',
      data: { datasets: datasets() },
      options: {
        animation: false,
        scales: { x: { min: 0, max: 1, ticks: { stepSize: 0.2 }, title: { display: true, text: 'Recall' } }, y: { min: 0, max: 1, ticks: { stepSize: 0.2 }, title: { display: true, text: 'Precision' } } },
        plugins: {
          legend: { display: runs.length > 1 },
          tooltip: {
            callbacks: {
              label: (c) => {
                const e = shown[c.datasetIndex];
                const j = c.raw.j;
                return `${runs[c.datasetIndex]}: threshold ${num(e.thresholds[j]).toFixed(3)}  P ${c.raw.y.toFixed(3)}  R ${c.raw.x.toFixed(3)}  TP ${e.true_positives[j]}  FP ${e.false_positives[j]}  TN ${e.true_negatives[j]}  FN ${e.false_negatives[j]}`;
              },
            },
          },
        },
        onHover: (ev, items) => {
          if (!items.length) return;
          const it = items[0];
          const e = shown[it.datasetIndex];
          const j = chart.data.datasets[it.datasetIndex].data[it.index].j;
          hover.textContent = `${runs[it.datasetIndex]} step ${e.step}: threshold ${num(e.thresholds[j]).toFixed(3)}, ` +
            `TP ${e.true_positives[j]}, FP ${e.false_positives[j]}, TN ${e.true_negatives[j]}, FN ${e.false_negatives[j]}`;
        },
      },
    });
    this.charts.push(chart);
    const sync = () => {
      label.textContent = steps.length ? 'step ' + steps[Number(slider.value)] : '';
      chart.data.datasets = datasets();
      chart.update();
      window.__tfb.pages.pr_curves[tag] = { step: steps[Number(slider.value)], runs: shown.map((e) => (e ? e.step : null)) };
    };
    slider.addEventListener('input', sync);
    sync();
    window.__tfb.charts['pr_curves:' + tag] = chart;
  },
};

export { atStep };
export default page;
