// Compare runs on the Scalars page (issue 12):
//  - run groups: with state.group ('hparam:<name>' or 'regex:<ERE>') each
//    tag's card draws one line per group, the mean over the group's runs,
//    with a band (min–max or ±1 std, state.band) - all computed by the
//    server over aligned steps (/data/plugin/hparams/groups; the rule is in
//    server/plugins/hparams/hparams_groups.h);
//  - multi-tag charts: state.multi holds tag regexes; each is one chart of
//    every matching tag of every selected run;
//  - the layout (multi, group, band) is saved to / loaded from the logdir's
//    tfboard_layout.json (/data/plugin/scalars/layout), so a team shares it.
import { h, clear } from '../core/dom.js';
import { getJSON, num, url } from '../core/api.js';
import { makeChart } from '../core/charts.js';
import { withAlpha, runColor } from '../core/colors.js';
import { getWithSelection } from '../core/selection.js';
import { eng, naturalCompare, linearTicks, logTicks, groupOf } from '../core/format.js';
import { safeRegex } from '../core/state.js';

// At most MAX_AXES units share a multi-tag chart: one y axis on the left,
// one on the right. A layout chart of more units is split into charts of
// MAX_AXES units each (API.md "Multi-tag charts"): a third axis would put
// two scales' ticks on one side, and one shared axis squeezes an accuracy
// of 0.9 into a line under a loss of 3.
export const MAX_AXES = 2;

// The unit of a tag: its first path component without a train/val/test/
// epoch affix, lower-cased. loss/train, val_loss and epoch_loss are one
// unit (one axis); loss and accuracy are two; grad_norm/fc1 and
// grad_norm/global one.
const AFFIX = /^(?:train|training|val|valid|validation|eval|evaluation|test|epoch)[_.-]|[_.-](?:train|training|val|valid|validation|eval|evaluation|test)$/;
export function unitOf(tag) {
  let u = groupOf(tag).toLowerCase();
  for (let i = 0; i < 3; i++) {
    const v = u.replace(AFFIX, '');
    if (!v || v === u) break;
    u = v;
  }
  return u;
}

// The (run, tag) lines of a multi-tag chart: every tag matching the regex
// (case-sensitive, as the user wrote it; tags are exact names) and the
// page's tag filter (case-insensitive, as for the one-tag cards) of every
// selected run, in the run's colour; only tags of `units` when given.
export function multiTargets(data, runs, src, tagFilter = '', units = null) {
  let re;
  try { re = new RegExp(src); } catch (e) { return []; }
  const { re: filter } = safeRegex(tagFilter);
  const tags = new Set();
  for (const r of runs) {
    for (const t of Object.keys(data.scalarTags[r] || {})) {
      if (re.test(t) && (!filter || filter.test(t)) && (!units || units.includes(unitOf(t)))) tags.add(t);
    }
  }
  const tagList = [...tags].sort(naturalCompare);
  const out = [];
  for (const t of tagList) {
    for (const r of runs) {
      if (data.scalarTags[r] && t in data.scalarTags[r]) {
        out.push({ run: r, tag: t, unit: unitOf(t), label: runs.length > 1 ? `${r} · ${t}` : t, color: runColor(r) });
      }
    }
  }
  return out;
}

// The charts one multi-tag regex makes: its matching tags' units in
// order, MAX_AXES per chart ([] when no tag matches).
// Units come in the order the regex names their tags (a custom-scalars
// chart of [loss, accuracy] puts loss on the left), then by name.
export function multiParts(data, runs, src, tagFilter = '') {
  const at = new Map();
  for (const t of multiTargets(data, runs, src, tagFilter)) {
    const i = src.indexOf(t.tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const k = i < 0 ? Infinity : i;
    if (!at.has(t.unit) || k < at.get(t.unit)) at.set(t.unit, k);
  }
  const units = [...at.keys()].sort((a, b) => (at.get(a) - at.get(b)) || naturalCompare(a, b));
  const parts = [];
  for (let i = 0; i < units.length; i += MAX_AXES) parts.push(units.slice(i, i + MAX_AXES));
  return parts;
}

// The groups of one tag over the given runs: {groups: [{key, runs,
// points: [[step, mean, min, max, std, n, nonfinite]]}], left_out, rule}.
// Past GROUP_RUNS_INLINE runs the list goes as a selection the server
// holds (core/selection.js): 3,000 names in the query were a 414.
const GROUP_RUNS_INLINE = 250;
export function fetchGroups(tag, groupBy, runs) {
  const q = { tag, group_by: groupBy };
  if (runs.length > GROUP_RUNS_INLINE) return getWithSelection('data/plugin/hparams/groups', q, runs);
  return getJSON('data/plugin/hparams/groups', { ...q, runs: JSON.stringify(runs) });
}

// Group colours: a palette of their own, each at least 60 (RGB distance)
// from every run colour (core/colors.js RUN_PALETTE: muted Tableau and
// Okabe-Ito hues; these are saturated ones), so a group's mean is never
// taken for one run's line; each band reads on the light and the dark
// background at bandAlpha() (webui/README.md "Run groups").
const GROUP_PALETTE = ['#4361ee', '#ff006e', '#00d000', '#7209b7', '#8c8100', '#00a0ff', '#c1121f', '#00e5a0'];
export function groupColor(i) { return GROUP_PALETTE[i % GROUP_PALETTE.length]; }

// A band's fill opacity by theme: the dark background needs more to show
// the same band (0.18 there was hardly visible).
function bandAlpha() { return document.documentElement.dataset.theme === 'dark' || (document.documentElement.dataset.theme !== 'light' && window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches) ? 0.34 : 0.2; }

// TensorBoard's debiased EMA over the finite values of ys (null kept), as
// the lines' smoothing (server/plugins/scalars/API.md "smoothing").
export function smoothMean(ys, w) {
  if (!(w > 0)) return ys.slice();
  let last = 0, n = 0;
  return ys.map((y) => {
    if (y === null || !Number.isFinite(y)) return y;
    last = last * w + (1 - w) * y;
    n++;
    return last / (1 - Math.pow(w, n));
  });
}

// Draws the groups into canvas with Chart.js: per group a band (lower and
// upper edge, filled between) and the mean line. Returns the chart and a
// summary for the tests.
export function drawGroups(canvas, answer, band, logy, weight = 0) {
  const ds = [];
  const summary = [];
  const alpha = bandAlpha();
  answer.groups.forEach((g, i) => {
    const color = groupColor(i);
    const lo = [], hi = [], mean = [];
    for (const p of g.points) {
      const [step, m, mn, mx, sd] = [num(p[0]), num(p[1]), num(p[2]), num(p[3]), num(p[4])];
      if (!Number.isFinite(m)) { mean.push({ x: step, y: null }); lo.push({ x: step, y: null }); hi.push({ x: step, y: null }); continue; }
      mean.push({ x: step, y: m });
      lo.push({ x: step, y: band === 'std' ? m - sd : mn });
      hi.push({ x: step, y: band === 'std' ? m + sd : mx });
    }
    const base = ds.length;
    // The mean smoothed as the lines are (the slider's weight), the raw
    // mean faint behind it; the band stays the raw spread.
    const sm = smoothMean(mean.map((p) => p.y), weight);
    const smooth = mean.map((p, k) => ({ x: p.x, y: sm[k] }));
    ds.push({ label: g.key + ' (low)', data: lo, borderWidth: 0, pointRadius: 0, fill: false, tfbBand: true });
    ds.push({ label: g.key + ' (high)', data: hi, borderWidth: 0, pointRadius: 0, backgroundColor: withAlpha(color, alpha), fill: { target: base }, tfbBand: true });
    if (weight > 0) ds.push({ label: g.key + ' (raw mean)', data: mean, borderColor: withAlpha(color, 0.4), borderWidth: 1, pointRadius: 0, fill: false, tfbBand: true });
    ds.push({ label: `${g.key} (${g.runs.length} run${g.runs.length === 1 ? '' : 's'})`, data: smooth, borderColor: color, backgroundColor: color, borderWidth: 1.8, pointRadius: 0, fill: false });
    summary.push({ key: g.key, runs: g.runs.slice(), points: g.points.length, mean: mean.map((p) => p.y), smoothed: sm, color, bandFill: withAlpha(color, alpha), low: lo.map((p) => p.y), high: hi.map((p) => p.y) });
  });
  const chart = makeChart(canvas, {
    type: 'line',
    data: { datasets: ds },
    options: {
      parsing: false,
      spanGaps: false,
      plugins: {
        legend: { display: true, position: 'bottom', labels: { boxWidth: 10, filter: (item, d) => !d.datasets[item.datasetIndex].tfbBand } },
        tooltip: { mode: 'index', intersect: false, filter: (c) => !c.dataset.tfbBand, callbacks: { label: (c) => c.dataset.label + ': ' + eng(c.parsed.y) } },
        filler: { propagate: false },
      },
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: { type: 'linear', title: { display: true, text: 'Step' }, ticks: { callback: linearTicks, maxRotation: 0 } },
        y: { type: logy ? 'logarithmic' : 'linear', ticks: { callback: logy ? logTicks : linearTicks } },
      },
    },
  });
  return { chart, summary };
}

// The settings block: group by (none / an hparam / a regex), band, the
// multi-tag charts and the layout buttons. hparams: names to offer.
export function buildCompareSettings(ctx, hparams, onMessage) {
  const s = ctx.state;
  const mode = s.group.startsWith('hparam:') ? 'hparam' : s.group.startsWith('regex:') ? 'regex' : '';
  const groupSel = h('select', { id: 'group-by', 'aria-label': 'Group runs by' },
    h('option', { value: '' }, 'no grouping'),
    ...hparams.map((n) => h('option', { value: 'hparam:' + n, selected: s.group === 'hparam:' + n }, 'hparam ' + n)),
    h('option', { value: 'regex', selected: mode === 'regex' }, 'regex over run name…'));
  const reInput = h('input', { type: 'search', id: 'group-regex', class: 'filter', placeholder: 'e.g. lr=([0-9.e-]+)',
    value: mode === 'regex' ? s.group.slice(6) : '', hidden: mode !== 'regex', 'aria-label': 'Group regex (first capture group)' });
  let regexMode = mode === 'regex'; // chosen, maybe with no regex typed yet
  const apply = () => {
    regexMode = groupSel.value === 'regex';
    if (regexMode) {
      reInput.hidden = false;
      ctx.setState({ group: reInput.value ? 'regex:' + reInput.value : '' });
    } else {
      reInput.hidden = true;
      ctx.setState({ group: groupSel.value });
    }
  };
  groupSel.addEventListener('change', apply);
  reInput.addEventListener('change', apply);
  const bandSel = h('select', { id: 'group-band', 'aria-label': 'Band',
    onchange: (e) => ctx.setState({ band: e.target.value }) },
  h('option', { value: 'minmax', selected: s.band === 'minmax' }, 'band: min – max'),
  h('option', { value: 'std', selected: s.band === 'std' }, 'band: mean ± 1 std'));

  const multiInput = h('input', { type: 'search', id: 'multi-input', class: 'filter', placeholder: 'tags regex, e.g. loss/(train|val)', 'aria-label': 'Multi-tag chart regex' });
  const add = () => {
    const v = multiInput.value.trim();
    if (!v) return;
    if (!safeRegex(v).ok) { multiInput.classList.add('invalid'); return; }
    multiInput.classList.remove('invalid');
    if (!ctx.state.multi.includes(v)) ctx.setState({ multi: [...ctx.state.multi, v] });
    multiInput.value = '';
  };
  multiInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') add(); });
  const list = h('ul', { class: 'multi-list', id: 'multi-list' });
  const refreshList = () => {
    clear(list);
    for (const m of ctx.state.multi) {
      list.append(h('li', null, h('code', null, m), ' ',
        h('button', { class: 'link', title: 'Remove', onclick: () => ctx.setState({ multi: ctx.state.multi.filter((x) => x !== m) }) }, '✕')));
    }
  };
  refreshList();
  const save = h('button', { class: 'link', id: 'layout-save', onclick: () => saveLayout(ctx.state).then(
    () => onMessage('Layout saved to tfboard_layout.json in the logdir.'), (e) => onMessage('Could not save the layout: ' + e.message)) }, 'Save layout to logdir');
  const load = h('button', { class: 'link', id: 'layout-load', onclick: () => loadLayout().then((l) => {
    if (l) { applyLayout(ctx, l); onMessage('Shared layout loaded.'); } else onMessage('The logdir has no saved layout.');
  }, (e) => onMessage('Could not load the layout: ' + e.message)) }, 'Load shared layout');
  const el = h('div', { class: 'compare-settings' },
    h('h3', null, 'Group runs'), groupSel, reInput, bandSel,
    h('h3', null, 'Multi-tag charts'), h('div', { class: 'row' }, multiInput, h('button', { class: 'link', id: 'multi-add', onclick: add }, 'Add')), list,
    h('div', { class: 'row-buttons' }, save, load));
  return {
    el,
    update() {
      refreshList();
      const g = ctx.state.group;
      if (g) regexMode = g.startsWith('regex:');
      const md = regexMode ? 'regex' : g;
      groupSel.value = md;
      reInput.hidden = md !== 'regex';
      bandSel.value = ctx.state.band;
    },
  };
}

export function layoutOf(state) {
  return { version: 1, multi: state.multi, group: state.group, band: state.band };
}

export async function saveLayout(state) {
  const res = await fetch(url('data/plugin/scalars/layout'), {
    method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(layoutOf(state)),
  });
  if (!res.ok) {
    let msg = res.status + ' ' + res.statusText;
    try { const j = await res.json(); if (j.error) msg = j.error; } catch (e) { /* not JSON */ }
    throw new Error(msg);
  }
}

export async function loadLayout() {
  const r = await getJSON('data/plugin/scalars/layout');
  return r && r.layout && typeof r.layout === 'object' ? r.layout : null;
}

// Takes the known keys of a layout, each only when of the right shape.
// A custom_scalars layout (TensorBoard's, e.g. from PyTorch's
// add_custom_scalars) as our layout: each chart, multiline or margin, one
// multi-tag chart of exactly its tags.
export function fromCustomScalars(cs) {
  const esc = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const multi = [];
  for (const cat of (cs && cs.category) || []) {
    for (const ch of cat.chart || []) {
      const tags = ch.multiline ? ch.multiline.tag || []
        : ch.margin ? (ch.margin.series || []).flatMap((s) => [s.value, s.lower, s.upper].filter(Boolean)) : [];
      if (tags.length) multi.push('^(' + tags.map(esc).join('|') + ')$');
    }
  }
  return multi.length ? { multi } : null;
}

export function applyLayout(ctx, l) {
  const ch = {};
  if (Array.isArray(l.multi) && l.multi.every((x) => typeof x === 'string')) ch.multi = l.multi;
  if (typeof l.group === 'string') ch.group = l.group;
  if (l.band === 'minmax' || l.band === 'std') ch.band = l.band;
  ctx.setState(ch);
}
