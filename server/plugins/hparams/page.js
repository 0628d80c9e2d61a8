// HParams dashboard (issue 12): a scatter of one hyperparameter against one
// metric (last, min or max of a scalar tag: the experiments' metric tags
// or any scalar tag), one point per run in its colour, clicking a point
// selects only that run; and the experiment's hyperparameters with their
// types and the values seen. The runs table with a column per
// hyperparameter is on the Runs page; run groups on the Scalars page (the
// helpers they share are in js/lib/hparams.js). Sweeps (issue 18): above
// the scatter, parallel coordinates (lib/parcoords.js) with an axis per
// hyperparameter and metric, coloured by a chosen metric; brushing an axis
// keeps the runs inside (state.hpBrush), which become the selection of
// every tab and the rows of the runs table.
import { h, clear } from '../core/dom.js';
import { num } from '../core/api.js';
import { defineState, key } from '../core/state.js';
import { runColor, themeColor } from '../core/colors.js';
import { makeChart } from '../core/charts.js';
import { eng, linearTicks, logTicks } from '../core/format.js';
import { setRunsChecked } from '../core/sidebar.js';
import { hpText, loadHparams, loadHparamRows, keptRuns } from '../lib/hparams.js';
import { ParCoords, buildAxes, wantsLog } from '../lib/hparams_parcoords.js';
import { SCALAR_TAGS, allScalarTags, defaultTag } from '../lib/catalog.js';

// Its URL keys (core/state.js): the scatter's axes.
defineState({ hpx: key.str(), hpy: key.str() });

const page = {
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { scalarTags: SCALAR_TAGS },
  mount(ctx) {
    this.ctx = ctx;
    this.gen = 0;
    this.xSel = h('select', { id: 'hp-x', onchange: (e) => ctx.setState({ hpx: e.target.value }) });
    this.ySel = h('select', { id: 'hp-y', onchange: (e) => ctx.setState({ hpy: e.target.value }) });
    this.statSel = h('select', { id: 'hp-stat', onchange: (e) => ctx.setState({ hpStat: e.target.value }) },
      ...['last', 'min', 'max'].map((v) => h('option', { value: v, selected: ctx.state.hpStat === v }, v)));
    this.colorSel = h('select', { id: 'hp-color', onchange: (e) => ctx.setState({ hpColor: e.target.value }) });
    ctx.settings.append(h('h3', null, 'Parallel coordinates: colour by'), this.colorSel,
      h('p', { class: 'muted small hint' }, 'Drag along an axis to keep the runs inside (every tab follows); click an axis to clear its brush.'),
      h('h3', null, 'Horizontal: hyperparameter'), this.xSel,
      h('h3', null, 'Vertical: metric'), this.ySel, h('h3', null, 'Value of the metric'), this.statSel,
      h('p', { class: 'muted small hint' }, 'Click a point to select only that run; the Runs page filters by every hyperparameter.'));
    this.canvas = h('canvas');
    this.info = h('div', { class: 'card-status muted' });
    this.infoTable = h('div', { class: 'card table-card' });
    this.pcWrap = h('div', { class: 'pc-wrap', id: 'parcoords' });
    this.pcInfo = h('div', { class: 'card-status muted', id: 'parcoords-info' });
    this.pcKey = '';
    ctx.main.append(h('h2', { class: 'page-title' }, 'Hyperparameters'),
      h('div', { class: 'card wide' }, h('div', { class: 'card-head' }, h('div', { class: 'card-title' }, 'Parallel coordinates')), this.pcWrap, this.pcInfo),
      h('div', { class: 'card wide' }, h('div', { class: 'chart-wrap hp-scatter' }, this.canvas), this.info),
      h('h3', null, 'Hyperparameters of the experiment'), this.infoTable);
    this.refresh();
  },

  unmount() {
    if (this.chart) this.chart.destroy();
    this.chart = null;
    if (this.pc) this.pc.destroy();
    this.pc = null;
  },

  // The parallel coordinates: rebuilt when the data, the colour metric or
  // the statistic change; otherwise only the brushes are redrawn.
  async refreshPc(hps, metricTags, tags) {
    const ctx = this.ctx;
    const colorTag = tags.includes(ctx.state.hpColor) ? ctx.state.hpColor : (metricTags[0] || defaultTag(tags));
    clear(this.colorSel);
    for (const t of tags) this.colorSel.append(h('option', { value: t, selected: t === colorTag }, t));
    const stat = ctx.state.hpStat;
    const key = [this.gen, colorTag, stat, hps.map((c) => c.name).join('\u0001')].join('\u0000');
    if (!this.pc) this.pc = new ParCoords(this.pcWrap, { onBrush: (k, b) => this.brushed(k, b) });
    if (key !== this.pcKey) {
      const { rows } = await loadHparamRows(this.gen, [colorTag]);
      this.pcRows = rows;
      const runs = [...rows.values()].filter((r) => r.has_hparams).map((r) => r.run);
      const mtags = [...new Set([...metricTags, colorTag].filter((t) => t))];
      const axes = buildAxes([
        ...hps.map((c) => ({ key: 'hp:' + c.name, label: c.display_name || c.name, values: runs.map((r) => rows.get(r).hparams[c.name]) })),
        ...mtags.map((t) => ({ key: 'metric:' + t, label: t, values: runs.map((r) => { const m = rows.get(r).metrics[t]; return m ? num(m[stat]) : undefined; }) })),
      ]);
      const color = runs.map((r) => { const m = rows.get(r).metrics[colorTag]; return m ? num(m[stat]) : undefined; });
      this.pcKey = key;
      this.pcRuns = runs;
      this.pc.setData(axes, runs, color, ctx.state.hpBrush || {});
    } else this.pc.setBrush(ctx.state.hpBrush || {});
    const sm = this.pc.summary();
    this.pcInfo.textContent = !this.pcRuns.length ? 'No run logged hyperparameters.'
      : `${sm.kept} of ${sm.runs} runs kept by the brushes; colour: ${stat} of ${colorTag} (by rank: bright = lowest)`;
    window.__tfb.pages.parcoords = { ...sm, color: colorTag, stat };
  },

  // A brush drawn or cleared: into the state (URL), and the runs it keeps
  // (with the Runs page's column filters) become the selection.
  brushed(key, b) {
    const ctx = this.ctx;
    const brush = { ...(ctx.state.hpBrush || {}) };
    if (b) brush[key] = b; else delete brush[key];
    ctx.setState({ hpBrush: brush });
    const all = ctx.data.runs;
    setRunsChecked(all, keptRuns(all, this.pcRows || new Map(), ctx.state.hpFilter, brush, ctx.state.hpStat));
  },

  update(ctx, changed) {
    this.ctx = ctx;
    if (changed.includes('data')) this.gen++;
    this.refresh();
  },

  async refresh() {
    const ctx = this.ctx;
    const token = {};
    this.token = token;
    const base = await loadHparams(this.gen, '');
    if (this.token !== token) return;
    const hps = base.experiment.hparams;
    const metricTags = base.experiment.metrics.map((m) => m.tag);
    const tags = [...new Set([...metricTags, ...allScalarTags(ctx.data)])];
    const x = hps.some((c) => c.name === ctx.state.hpx) ? ctx.state.hpx : (hps[0] ? hps[0].name : '');
    const y = tags.includes(ctx.state.hpy) ? ctx.state.hpy : (metricTags[0] || tags[0] || '');
    clear(this.xSel);
    for (const c of hps) this.xSel.append(h('option', { value: c.name, selected: c.name === x }, c.display_name || c.name));
    clear(this.ySel);
    for (const t of tags) this.ySel.append(h('option', { value: t, selected: t === y }, t));
    this.statSel.value = ctx.state.hpStat;
    this.renderInfo(hps);
    await this.refreshPc(hps, metricTags, tags);
    if (this.token !== token) return;
    const hp = y ? await loadHparams(this.gen, y) : base;
    if (this.token !== token) return;
    const col = hps.find((c) => c.name === x);
    const sel = new Set(ctx.runs);
    const pts = [];
    // Runs whose metric is NaN or +-Inf (a diverged run): kept, drawn as a
    // cross on the plot's edge with their name (diverged below).
    const diverged = [];
    const categories = col && col.type !== 'number' ? col.values.map(hpText) : null;
    for (const r of hp.runs) {
      if (!r.has_hparams || !sel.has(r.run) || !col || !(x in r.hparams)) continue;
      const m = r.metrics[y];
      const v = m ? num(m[ctx.state.hpStat]) : null;
      if (v === null || v === undefined) continue;
      const hv = r.hparams[x];
      const xv = categories ? categories.indexOf(hpText(hv)) : num(hv);
      if (!Number.isFinite(xv)) continue;
      if (!Number.isFinite(v)) diverged.push({ x: xv, value: Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf', run: r.run });
      else pts.push({ x: xv, y: v, run: r.run });
    }
    // Chart.js takes unparsed data as sorted on x (it reads the x range
    // from the first and last points): sort, or most runs fall outside.
    pts.sort((a, b) => a.x - b.x);
    this.draw(pts, x, y, categories, diverged);
    const nd = diverged.length;
    this.info.textContent = !hps.length ? 'No run logged hyperparameters.'
      : `${pts.length + nd} run${pts.length + nd === 1 ? '' : 's'} with ${x} and ${ctx.state.hpStat} of ${y || '–'}` +
        (nd ? `; ${nd} with a non-finite value (✕ at the top edge)` : '');
    this.info.classList.toggle('warn', nd > 0);
    const sc = this.chart.scales;
    window.__tfb.pages.hparams = { x, y, stat: ctx.state.hpStat, points: pts.map((p) => ({ ...p })), categories,
      diverged: (this.divergedDrawn || []).map((d) => ({ ...d })), scales: { x: sc.x.type, y: sc.y.type }, chartId: this.chart.id };
  },

  draw(pts, x, y, categories, diverged = []) {
    if (this.chart) this.chart.destroy();
    const xs = pts.map((p) => p.x).concat(diverged.map((d) => d.x));
    const ds = [{
      data: pts, pointRadius: 5, pointHoverRadius: 7,
      pointBackgroundColor: pts.map((p) => runColor(p.run)), pointBorderColor: pts.map((p) => runColor(p.run)),
    }];
    // The diverged runs' x values widen the x axis (an invisible point at
    // a y the chart already has, so the y range stays the finite runs').
    if (diverged.length) {
      const y0 = pts.length ? pts[0].y : 1;
      ds.push({ data: diverged.map((d) => ({ x: d.x, y: y0 })).sort((a, b) => a.x - b.x), pointRadius: 0, pointHoverRadius: 0, pointHitRadius: 0 });
    }
    // The diverged runs: a cross in the run's colour at the plot's top
    // edge, over its x, with its name and value beside it.
    const page = this;
    this.divergedDrawn = [];
    const marks = {
      id: 'hpDiverged',
      afterDatasetsDraw(chart) {
        const { ctx, chartArea: a, scales } = chart;
        page.divergedDrawn = [];
        ctx.save();
        ctx.font = '11px ' + getComputedStyle(document.body).fontFamily;
        ctx.textBaseline = 'middle';
        for (const d of diverged) {
          const px = scales.x.getPixelForValue(d.x);
          if (!(px >= a.left - 1 && px <= a.right + 1)) continue;
          const py = a.top + 8;
          ctx.strokeStyle = runColor(d.run);
          ctx.lineWidth = 2.2;
          ctx.beginPath();
          ctx.moveTo(px - 5, py - 5); ctx.lineTo(px + 5, py + 5);
          ctx.moveTo(px + 5, py - 5); ctx.lineTo(px - 5, py + 5);
          ctx.stroke();
          const text = `${d.run}: ${d.value}`;
          const w = ctx.measureText(text).width;
          const right = px + 9 + w <= a.right;
          ctx.textAlign = right ? 'left' : 'right';
          // The name in the text colour: a dark run colour is unreadable
          // on the dark theme; the cross carries the run's colour.
          ctx.fillStyle = themeColor('--text');
          ctx.fillText(text, right ? px + 9 : px - 9, py);
          page.divergedDrawn.push({ run: d.run, value: d.value, px, py, label: text });
        }
        ctx.restore();
        const pub = window.__tfb.pages.hparams;
        if (pub && pub.chartId === chart.id) pub.diverged = page.divergedDrawn.map((m) => ({ ...m }));
      },
    };
    // A metric spanning decades (losses of 0.01 next to 50) on a log axis,
    // by the parallel coordinates' rule; the diverged runs' row needs room.
    const logY = wantsLog(pts.map((p) => p.y));
    const logX = !categories && wantsLog(xs);
    this.chart = makeChart(this.canvas, {
      type: 'scatter',
      data: { datasets: ds },
      plugins: [marks],
      options: {
        parsing: false,
        layout: { padding: { top: diverged.length ? 18 : 0 } },
        plugins: {
          legend: { display: false },
          tooltip: { filter: (c) => c.datasetIndex === 0, callbacks: { label: (c) => `${c.raw.run}: ${x} = ${categories ? categories[c.raw.x] : eng(c.raw.x)}, ${y} = ${eng(c.raw.y)}` } },
        },
        onClick: (e, all) => {
          const els = all.filter((el) => el.datasetIndex === 0);
          if (!els.length) return;
          setRunsChecked(this.ctx.data.runs, [pts[els[0].index].run]);
        },
        scales: {
          x: {
            // A log-uniform sweep (a learning rate) on a log axis, as in
            // the parallel coordinates.
            type: logX ? 'logarithmic' : 'linear',
            title: { display: true, text: x }, grace: '5%',
            ...(categories ? { min: -0.5, max: categories.length - 0.5, ticks: { stepSize: 1, callback: (v) => (Number.isInteger(v) ? categories[v] ?? '' : '') } }
              : { ticks: { callback: logX ? logTicks : linearTicks } }),
          },
          y: { type: logY ? 'logarithmic' : 'linear', title: { display: true, text: y + (logY ? ' (log)' : '') }, grace: '5%', ticks: { callback: logY ? logTicks : linearTicks } },
        },
      },
    });
  },

  renderInfo(hps) {
    clear(this.infoTable);
    if (!hps.length) return;
    const t = h('table', { class: 'table', id: 'hp-info' },
      h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, 'Type'), h('th', { class: 'num' }, 'Runs'), h('th', null, 'Values'))));
    const body = h('tbody');
    for (const c of hps) {
      const vals = c.type === 'number' && c.min !== null && c.values.length > 8
        ? `${eng(num(c.min))} … ${eng(num(c.max))} (${c.values.length}${c.more_values ? '+' : ''} values)`
        : c.values.map(hpText).join(', ') + (c.more_values ? ', …' : '');
      body.append(h('tr', null, h('td', { title: c.description || '' }, c.display_name || c.name), h('td', null, c.type),
        h('td', { class: 'num' }, String(c.runs)), h('td', null, vals + (c.interval ? `  [interval ${c.interval[0]} – ${c.interval[1]}]` : ''))));
    }
    t.append(body);
    this.infoTable.append(t);
  },
};

export default page;
