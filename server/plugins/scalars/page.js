// Scalars dashboard: one card per tag, grouped by tag prefix into
// collapsible sections; each card draws every selected run that has the tag.
// A card's series come in ONE request when it scrolls into view
// (/data/plugin/scalars/multirun: the selected runs as run=, the sidebar's
// filter as run_regex=, or no run at all for every run with the tag), with
// samples= about 2 points per pixel of the chart's width. Up to
// BAND_THRESHOLD runs the card draws every run's line (the faint raw line)
// and, when the weight is above 0, the smoothed line from the same answer
// (smoothing=W: TensorBoard's debiased EMA over the full history, then
// downsampled, as the single-series route does). Smoothing on the server
// before downsampling keeps the curve's shape the same at any zoom or
// sample count. A zoom on steps or a slider move is one more request
// (min_step/max_step for the window, smoothing= for the weight), never
// one per run. Past the threshold the card asks for summary=bands and draws the distribution
// across runs (lib/scalars_bands.js); a click there picks the runs nearest
// the cursor (/data/plugin/scalars/nearest) and draws them as lines.
import { h, clear, debounce } from '../core/dom.js';
import { getJSON, url, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { ScalarChart, parseScalars, TAG_DASHES } from '../core/charts.js';
import { safeRegex, defineState, key } from '../core/state.js';
import { remember, ensurePosted, getWithSelection } from '../core/selection.js';
import { setRunsChecked } from '../core/sidebar.js';
import { eng, naturalCompare, groupOf } from '../core/format.js';
import { multiTargets, multiParts, fetchGroups, drawGroups, buildCompareSettings, loadLayout, applyLayout, fromCustomScalars } from '../lib/scalars_compare.js';
import { loadHparams } from '../lib/hparams.js';
import { BandChart, parseBands, higherIsBetter } from '../lib/scalars_bands.js';
import { SCALAR_TAGS } from '../lib/catalog.js';

// Its URL keys (core/state.js).
defineState({
  group: key.str(),                  // '' | 'hparam:<name>' | 'regex:<ERE>'
  band: key.oneOf('minmax', 'std'),  // run groups' bands
  multi: key.json([], (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'), (v) => !v.length),  // multi-tag charts, one tag regex each
});

// Past this many runs a card draws the distribution across runs instead of
// one line per run (issue 18), and the best and worst BAND_K runs.
export const BAND_THRESHOLD = 200;
const BAND_K = 3;
const NEAREST_K = 5;

// The route takes at most 256 run= parameters: past MAX_RUN_PARAMS runs a
// card names a selection the server holds (core/selection.js).
const MAX_RUN_PARAMS = 250;

// The sidebar's run filter (a case-insensitive JavaScript regex) as the
// POSIX ERE the server's run_regex= takes: letters outside brackets become
// [xX], \d \w \s their classes. null when the regex uses what ERE lacks
// (lookaround, non-capturing groups, backreferences, lazy quantifiers,
// letters in brackets); the card then names its runs one by one.
export function toERE(src) {
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      const n = src[++i];
      if (n === undefined) return null;
      if (n === 'd') out += '[0-9]';
      else if (n === 'w') out += '[A-Za-z0-9_]';
      else if (n === 's') out += '[[:space:]]';
      else if (/[.^$|?*+()[\]{}\\/-]/.test(n)) out += '\\' + n;
      else return null;
    } else if (c === '[') {
      const j = src.indexOf(']', i + 2);
      if (j < 0) return null;
      const body = src.slice(i, j + 1);
      if (/[A-Za-z\\]/.test(body.replace(/\[:[a-z]+:\]/g, ''))) return null;
      out += body;
      i = j;
    } else if (c === '(' && src[i + 1] === '?') return null;
    else if ((c === '?' || c === '*' || c === '+' || c === '}') && src[i + 1] === '?') return null;
    else if (/[A-Za-z]/.test(c)) out += '[' + c.toUpperCase() + c.toLowerCase() + ']';
    else out += c;
  }
  return out;
}

// Tags of the selected runs, in first-seen order, filtered by the regex.
export function scalarTagsOf(data, runs, filter) {
  const { re } = safeRegex(filter);
  const seen = new Set();
  const sets = new Set();   // runs of one tag set share its object (lib/catalog.js)
  const out = [];
  for (const r of runs) {
    const ts = data.scalarTags[r];
    if (!ts || sets.has(ts)) continue;
    sets.add(ts);
    for (const t of Object.keys(ts)) {
      if (seen.has(t)) continue;
      seen.add(t);
      if (!re || re.test(t)) out.push(t);
    }
  }
  return out.sort(naturalCompare);
}

function fileName(run, tag, ext) {
  return (run + '_' + tag).replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120) + '.' + ext;
}

const collapsed = new Set();
const CACHE_MAX = 240;
// The multi-tag section (a layout's charts: the custom-scalars layout of
// the runs, the shared layout, the user's own) opens collapsed, like
// TensorBoard's Custom Scalars being a place of its own: the first view
// is the one-tag cards. It stays as the user leaves it for the page load;
// a chart the user adds opens it.
let multiOpen = false;

function ignoreOutliers() { return localStorage.getItem('tfb.ignoreOutliers') !== '0'; }

let layoutChecked = false; // the shared layout is offered once per page load

// A multi-tag chart's title: a layout chart's regex of exact names
// (^(a|b)$, as compare.js fromCustomScalars writes it) as its names, else
// the regex (its axes name the units).
function multiTitle(src) {
  const m = /^\^\((.*)\)\$$/.exec(src);
  const names = m ? m[1].split('|') : null;
  const plain = names && names.every((n) => !/(^|[^\\])[.*+?^${}()[\]]/.test(n));
  const text = plain ? names.map((n) => n.replace(/\\(.)/g, '$1')).join(', ') : src;
  return h('span', null, h('span', { class: 'muted' }, plain ? 'tags: ' : 'tags ~ '), text);
}

class Card {
  // tag: the card's tag; multi: a tag regex instead (a multi-tag chart,
  // tag is then 'multi:<regex>', with '#k' for the k-th chart of a regex
  // whose tags have more than MAX_AXES units); units: the units it draws
  // (compare.js unitOf), the first on the left axis, the second on the
  // right.
  constructor(page, tag, multi = null, units = null) {
    this.page = page;
    this.tag = tag;
    this.multi = multi;
    this.units = units;
    this.loadedKey = '';
    this.logy = null;   // per-card override of the global log scale
    this.wrap = h('div', { class: 'chart-wrap' });
    this.status = h('div', { class: 'card-status muted' });
    this.menu = h('div', { class: 'menu card-menu', hidden: true });
    const btn = (glyph, title, fn, cls) => h('button', { class: 'icon-btn small ' + (cls || ''), title, 'aria-label': title, onclick: fn }, glyph);
    this.el = h('div', { class: 'card', dataset: { tag } },
      h('div', { class: 'card-head' },
        h('div', { class: 'card-title', title: tag }, multi ? multiTitle(multi) : tag),
        h('div', { class: 'card-tools' },
          btn('⤢', 'Enlarge', () => { this.el.classList.toggle('wide'); }, 'enlarge'),
          btn('log', 'Toggle log scale', () => this.toggleLog(), 'logbtn'),
          btn('⟲', 'Reset zoom', () => this.chart && this.chart.resetZoom(), 'reset'),
          h('div', { class: 'menu-wrap' },
            btn('⤓', 'Download CSV / JSON', (e) => { e.stopPropagation(); this.openMenu(); }, 'download'),
            this.menu))),
      this.wrap, this.status);
    this.chart = null;
    this.range = null;   // zoomed step window [a, b], or null
    this.drawToken = null;
    // Coalesces the view changes of one gesture into one load; the line
    // keeps its last weight until the new smoothed series is in.
    this.smoothSoon = debounce(() => this.load(), 50);
  }

  // The card's lines: [{run, tag, label, color}] - one per selected run
  // with the tag, or for a multi-tag chart one per (run, matching tag).
  targets() {
    if (this.multi) {
      const ts = multiTargets(this.page.ctx.data, this.page.ctx.runs, this.multi, this.page.ctx.state.tagFilter, this.units && this.units.length ? this.units : null);
      const right = this.units && this.units.length > 1 ? this.units[1] : null;
      // Line styles: the left axis's tags first (the first one solid).
      const tags = [...new Set(ts.filter((t) => t.unit !== right).map((t) => t.tag).concat(ts.map((t) => t.tag)))];
      // The run's colour (as in the sidebar), the tag's line style, the
      // unit's axis.
      return ts.map((t) => ({ ...t, axis: t.unit === right ? 'y1' : 'y', axisLabel: t.unit, dash: TAG_DASHES[tags.indexOf(t.tag) % TAG_DASHES.length], legend: t.tag }));
    }
    return this.page.runsWithTag(this.tag).map((r) => ({ run: r, tag: this.tag, label: r, color: runColor(r) }));
  }

  // Run groups apply to the one-tag cards.
  grouping() { return this.multi ? '' : this.page.ctx.state.group; }

  openMenu() {
    clear(this.menu);
    const runs = this.targets();
    if (!this.multi && runs.length > BAND_THRESHOLD) {
      // Thousands of per-run links help nobody: the batched answer.
      const spec = this.page.runSpec(this.tag);
      const q = { tag: this.tag, ...spec.params };
      if (spec.sel) ensurePosted(spec.sel).catch(() => {});   // the links name it
      this.menu.appendChild(h('div', { class: 'menu-row' }, h('span', { class: 'run-name' }, `${runs.length} runs`),
        // The route refuses lines answers past 2 M points: fewer samples
        // per run the more runs there are.
        h('a', { href: url('data/plugin/scalars/multirun', { ...q, summary: 'lines', samples: Math.max(2, Math.min(1000, Math.floor(2e6 / runs.length))) }), download: fileName('runs', this.tag, 'json') }, 'lines JSON'),
        h('a', { href: url('data/plugin/scalars/multirun', { ...q, summary: 'bands' }), download: fileName('bands', this.tag, 'json') }, 'bands JSON')));
      this.menu.hidden = !this.menu.hidden;
      return;
    }
    for (const t of runs) {
      const q = { run: t.run, tag: t.tag };
      this.menu.appendChild(h('div', { class: 'menu-row' },
        h('span', { class: 'swatch', style: { background: t.color } }),
        h('span', { class: 'run-name' }, t.label),
        h('a', { href: url('data/plugin/scalars/scalars', { ...q, format: 'csv' }), download: fileName(t.run, t.tag, 'csv') }, 'CSV'),
        h('a', { href: url('data/plugin/scalars/scalars', q), download: fileName(t.run, t.tag, 'json') }, 'JSON')));
    }
    if (!runs.length) this.menu.appendChild(h('div', { class: 'muted' }, 'No run selected.'));
    this.menu.hidden = !this.menu.hidden;
  }

  toggleLog() {
    const cur = this.logy === null ? this.page.ctx.state.logy : this.logy;
    this.logy = !cur;
    this.el.querySelector('.logbtn').classList.toggle('on', this.logy);
    this.applyView();
  }

  // The view settings but smoothing, which changes only together with the
  // smoothed series fetched for it (Card.draw).
  view() {
    const s = this.page.ctx.state;
    return {
      x: s.x, logy: this.logy === null ? s.logy : this.logy,
      ignoreOutliers: ignoreOutliers(), focusStep: s.step,
    };
  }

  applyView() {
    if (this.grouping()) { if (this.page.visible.has(this)) this.load(); return; }
    if (this.bchart) { this.bchart.setView(this.view()); this.publish(); return; }
    if (!this.chart) { if (this.gchart && this.page.visible.has(this)) this.load(); return; }
    this.chart.setView(this.view());
    this.publish();
    // A new smoothing weight needs the server's smoothed series (load()
    // does nothing when the weight is the one drawn or being fetched).
    if (this.page.visible.has(this)) this.smoothSoon();
  }

  samples() {
    return Math.max(200, Math.min(5000, Math.round((this.wrap.clientWidth || 400) * 2)));
  }

  // Loads (or reuses) each selected run's series and draws them; a no-op
  // when nothing it depends on changed since the last draw.
  async load() {
    // A one-tag card over many runs (bands) is keyed by its run list's
    // identity (page.runsWithTag keeps one array while the selection and
    // the tags stay): joining 100,000 names per card per load took
    // seconds (issue 28).
    const many = !this.multi && this.page.runsWithTag(this.tag).length > BAND_THRESHOLD;
    const runs = many ? ['#' + this.page.listId(this.page.runsWithTag(this.tag))]
      : this.targets().map((t) => t.label + (t.axis === 'y1' ? '\u0002' : ''));
    const g = this.grouping();
    const key = [this.page.gen, this.samples(), g ? g + '|' + this.page.ctx.state.band + '|' + this.page.ctx.state.logy + '|' + this.page.ctx.state.smoothing : this.page.ctx.state.smoothing,
      many || runs.length > BAND_THRESHOLD ? this.page.highlightRuns().join('\u0001') : '', ...runs].join('\u0000');
    if (key === this.loadedKey) return;
    this.loadedKey = key;
    await (g ? this.drawGrouped(g) : this.draw());
  }

  // One line per run group (the server's mean over aligned steps) with its
  // band; replaces the per-run chart while grouping is on.
  async drawGrouped(groupBy) {
    const token = {};
    this.drawToken = token;
    if (this.chart) { this.chart.destroy(); this.chart = null; }
    if (this.bchart) { this.bchart.destroy(); this.bchart = null; }
    try {
      const ans = await fetchGroups(this.tag, groupBy, this.page.runsWithTag(this.tag));
      if (this.drawToken !== token) return;
      if (this.gchart) this.gchart.destroy();
      clear(this.wrap);
      const canvas = h('canvas');
      this.wrap.append(canvas);
      const weight = this.page.ctx.state.smoothing;
      const { chart, summary } = drawGroups(canvas, ans, this.page.ctx.state.band, this.page.ctx.state.logy, weight);
      this.gchart = chart;
      const nf = ans.groups.reduce((a, g) => a + g.points.reduce((b, p) => b + num(p[6]), 0), 0);
      this.status.textContent = `${ans.groups.length} group${ans.groups.length === 1 ? '' : 's'} by ${groupBy}` +
        (ans.left_out ? `; ${ans.left_out} run${ans.left_out === 1 ? '' : 's'} in no group` : '') +
        (nf ? `; ${nf} non-finite value${nf === 1 ? '' : 's'} left out of the means` : '') + (weight > 0 ? `; means smoothed (${weight})` : '');
      this.status.classList.toggle('warn', nf > 0);
      window.__tfb.charts['scalars:' + this.tag] = { grouped: true, groupBy, band: this.page.ctx.state.band, weight, groups: summary, leftOut: ans.left_out };
    } catch (e) {
      if (this.drawToken !== token) return;
      this.loadedKey = '';
      this.status.textContent = 'Could not group: ' + e.message;
      this.status.classList.add('warn');
    }
  }

  // Fetches what the chart needs now and draws it: one /multirun request
  // per tag (one for a one-tag card) holding every run's raw and (weight >
  // 0) smoothed series, of the overview or, when zoomed on steps, of the
  // window. Requests go through the page's cache, so a zoom reset or a
  // slider moved back asks for nothing. A newer draw supersedes this one.
  async draw() {
    const token = {};
    this.drawToken = token;
    if (this.gchart) { this.gchart.destroy(); this.gchart = null; clear(this.wrap); }
    // Bands need no per-run targets (100,000 objects a card).
    if (!this.multi && this.page.runsWithTag(this.tag).length > BAND_THRESHOLD) { await this.drawBands(token); return; }
    const runs = this.targets();
    // A multi-tag chart draws a line per run and tag: past the threshold
    // it would be thousands of lines (and answers the route refuses).
    const nRuns = this.multi ? new Set(runs.map((t) => t.run)).size : 0;
    if (nRuns > BAND_THRESHOLD) {
      if (this.chart) { this.chart.destroy(); this.chart = null; }
      clear(this.wrap);
      this.status.textContent = `${nRuns} runs: a multi-tag chart draws up to ${BAND_THRESHOLD}; filter the runs in the sidebar.`;
      this.status.classList.add('warn');
      return;
    }
    if (this.bchart) { this.bchart.destroy(); this.bchart = null; }
    if (this.note) { this.note.remove(); this.note = null; }
    const samples = this.samples();
    const weight = this.page.ctx.state.smoothing;
    const range = this.page.ctx.state.x === 'step' ? this.range : null;
    const first = !this.chart;
    if (first) this.status.textContent = 'Loading…';
    try {
      let inWindow = 0;
      const tags = [...new Set(runs.map((t) => t.tag))];
      const specs = tags.map((tag) => this.page.runSpec(tag));
      const answers = await Promise.all(tags.map((tag, i) => this.page.fetchMulti(tag, specs[i], samples, 'lines', [], weight, range)));
      // Zoomed: the lines run on past the window's edges with the overview
      // of the same weight when the cache holds it (it does after a zoom
      // from the overview; after a slider move while zoomed it does not,
      // and the window alone is drawn: the rest is outside the view).
      const overviews = range
        ? await Promise.all(tags.map((tag, i) => (this.page.cachedMulti(tag, specs[i], samples, 'lines', [], weight, null) || Promise.resolve(null)).catch(() => null)))
        : [];
      // The loss spikes of each run (alerts plugin), drawn as markers.
      const spikes = new Map(await Promise.all(runs.map(async (t) => [t.run + '\u0000' + t.tag, await this.page.spikesOf(t.run, t.tag)])));
      if (this.drawToken !== token) return;
      const batch = new Map(tags.map((tag, i) => [tag, { ans: answers[i], overview: overviews[i] || null }]));
      const has = (t) => t.run in batch.get(t.tag).ans.series;
      const missing = runs.filter((t) => !has(t)).length;
      const series = runs.filter(has).map((t) => {
        const { ans, overview } = batch.get(t.tag);
        const s = { run: t.label, color: t.color, cols: ans.series[t.run], smooth: weight > 0 ? ans.smoothed[t.run] : null, spikes: spikes.get(t.run + '\u0000' + t.tag) || [],
          axis: t.axis, axisLabel: t.axisLabel, dash: t.dash, legend: t.legend };
        if (range) {
          inWindow += s.cols.n;
          const o = overview && overview.series[t.run];
          if (o) {
            s.cols = mergeWindow(o, s.cols, range[0], range[1]);
            if (s.smooth) s.smooth = mergeWindow(overview.smoothed[t.run], s.smooth, range[0], range[1]);
          }
        }
        return s;
      });
      if (this.drawToken !== token) return;
      if (!this.chart) this.chart = new ScalarChart(this.wrap, { onZoom: (r) => this.zoomed(r), onView: () => this.publish(), legend: !!this.multi });
      this.chart.view = Object.assign(this.chart.view, this.view());
      // A zoom reset while this draw was in flight drops its window.
      if (range && !this.chart.zoomed) return;
      this.window = range ? { range, points: inWindow } : null;
      this.drawn = { samples, weight };
      this.chart.setData(series, weight);
      const nf = series.reduce((a, s) => a + countNonFinite(s.cols), 0);
      this.status.textContent = (nf ? `${nf} non-finite point${nf > 1 ? 's' : ''} marked (▲ +Inf, ▼ -Inf, ✕ NaN)` : '') +
        (missing ? `${nf ? '; ' : ''}${missing} selected run${missing > 1 ? 's' : ''} not in the server's answer` : '');
      this.status.classList.toggle('warn', nf > 0 || missing > 0);
      this.publish();
      this.page.markDrawn();
    } catch (e) {
      if (this.drawToken !== token) return;
      this.loadedKey = '';
      this.status.textContent = (range ? 'Could not load the zoomed range: ' : 'Could not load: ') + e.message;
      this.status.classList.add('warn');
    }
  }

  // Zooming in on steps asks the server again for the visible window at
  // full density (min_step/max_step), raw and smoothed in one answer; the
  // points outside it stay as they were (see draw). The window's smoothed
  // values are still the full-history EMA, so the curve keeps its shape.
  // Past the threshold: the distribution across runs, the best and worst
  // runs, the picked runs and the density, from one summary=bands answer.
  async drawBands(token) {
    if (this.chart) { this.chart.destroy(); this.chart = null; this.range = null; this.window = null; }
    const spec = this.page.runSpec(this.tag);
    const samples = this.samples();
    if (!this.bchart) this.status.textContent = `Loading ${spec.count} runs…`;
    try {
      const ans = await this.page.fetchMulti(this.tag, spec, samples, 'bands', this.page.highlightRuns());
      if (this.drawToken !== token) return;
      if (!this.bchart) {
        clear(this.wrap);
        this.bchart = new BandChart(this.wrap, { onPick: (p) => this.page.pickNearest(this, p) });
      }
      this.bchart.setView(this.view());
      this.bchart.setData(ans);
      const s = this.page.ctx.state;
      const up = higherIsBetter(this.tag);
      const parts = [`${ans.runs} runs: median, p25–p75, p5–p95; best ${ans.best.length} solid, worst ${ans.worst.length} dashed (by last value, ${up ? 'higher' : 'lower'} is better)`];
      if (ans.runs !== spec.count) parts.push(`the server matched ${ans.runs} runs, the sidebar ${spec.count}`);
      if (ans.nonfinite.length) parts.push(`${ans.nonfinite.length} run${ans.nonfinite.length > 1 ? 's' : ''} with non-finite values (✕)`);
      if (s.smoothing > 0) parts.push('not smoothed');
      if (s.x !== 'step') parts.push('x is the step');
      this.status.textContent = parts.join('; ') + '. Click the band to pick the nearest runs.';
      this.status.classList.toggle('warn', ans.runs !== spec.count || ans.nonfinite.length > 0);
      this.drawn = { samples, mode: 'bands' };
      this.publish();
      this.page.markDrawn();
    } catch (e) {
      if (this.drawToken !== token) return;
      this.loadedKey = '';
      this.status.textContent = 'Could not load: ' + e.message;
      this.status.classList.add('warn');
    }
  }

  zoomed(range) {
    const next = range && this.page.ctx.state.x === 'step' ? [Math.floor(range[0]), Math.ceil(range[1])] : null;
    if (!next && !this.range) { this.publish(); return; }
    this.range = next;
    this.draw();
  }

  publish() {
    if (this.chart) window.__tfb.charts['scalars:' + this.tag] = { mode: 'lines', ...this.chart.summary(), window: this.window || null, drawn: this.drawn || null };
    else if (this.bchart) window.__tfb.charts['scalars:' + this.tag] = { ...this.bchart.summary(), drawn: this.drawn || null };
  }

  // Under the band chart: which runs a click picked, and a link selecting
  // only them.
  pickNote(runs, p) {
    if (this.note) this.note.remove();
    this.note = h('div', { class: 'card-status pick-note' },
      runs.length ? `Nearest to step ${Math.round(p.step)}, value ${eng(p.value)}: ` : 'No run near that point.',
      runs.map((r, i) => h('span', null, i ? ', ' : '', h('span', { class: 'swatch', style: { background: runColor(r) } }), ' ', r)),
      runs.length ? h('button', { class: 'link', onclick: () => setRunsChecked(this.page.ctx.data.runs, runs) }, 'select only these') : null,
      h('button', { class: 'link pick-clear', onclick: () => this.page.clearPick() }, 'clear'));
    this.el.appendChild(this.note);
  }

  destroy() {
    if (this.chart) this.chart.destroy();
    if (this.bchart) this.bchart.destroy();
    if (this.gchart) this.gchart.destroy();
    delete window.__tfb.charts['scalars:' + this.tag];
  }
}

// The cache key of a /multirun answer (page.fetchMulti).
function multiKey(gen, tag, spec, samples, mode, highlight, weight, win) {
  return [gen, 'multi', tag, JSON.stringify(spec.params), samples, mode, weight, win ? win.join(':') : '', ...highlight].join('\u0000');
}

// The full (downsampled) series with the window [a, b] replaced by the
// denser window answer.
function mergeWindow(full, win, a, b) {
  const idx = [];
  for (let i = 0; i < full.n; i++) if (full.step[i] < a) idx.push(['f', i]);
  for (let i = 0; i < win.n; i++) idx.push(['w', i]);
  for (let i = 0; i < full.n; i++) if (full.step[i] > b) idx.push(['f', i]);
  const n = idx.length;
  const out = { wall: new Float64Array(n), step: new Float64Array(n), value: new Float64Array(n), n };
  idx.forEach(([src, i], k) => {
    const c = src === 'f' ? full : win;
    out.wall[k] = c.wall[i]; out.step[k] = c.step[i]; out.value[k] = c.value[i];
  });
  return out;
}

function countNonFinite(c) {
  let n = 0;
  for (let i = 0; i < c.n; i++) if (!Number.isFinite(c.value[i])) n++;
  return n;
}

const page = {
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { scalarTags: SCALAR_TAGS },
  mount(ctx) {
    this.ctx = ctx;
    this.gen = 0;
    this.cache = new Map();
    this.highlight = [];   // runs picked on a band chart, drawn as lines
    // The group-by settings need every run's hparams (megabytes for a big
    // sweep): asked for once the first chart is drawn (or after 3 s), so
    // they do not compete with it.
    this.drewFirst = false;
    this.firstDrawn = new Promise((resolve) => { this.markDrawn = () => { this.drewFirst = true; resolve(); }; });
    setTimeout(() => this.markDrawn(), 3000);
    this.hovered = null;   // the run under the mouse in the sidebar, too
    this.multiCount = (ctx.state.multi || []).length;
    // Hovering a run in the sidebar draws it on the band charts (one
    // request per card, after the mouse rests a moment).
    this.onHoverRun = debounce((e) => {
      const run = e.detail || null;
      if (run === this.hovered) return;
      this.hovered = run;
      for (const c of this.visible) if (c.bchart) c.load();
    }, 200);
    window.addEventListener('tfb:hover-run', this.onHoverRun);

    this.cards = new Map();
    this.visible = new Set();
    this.observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        const card = e.target.$card;
        if (!card) continue;
        if (e.isIntersecting) { this.visible.add(card); card.load(); } else this.visible.delete(card);
      }
    }, { rootMargin: '300px' });
    this.buildSettings(ctx);
    this.head = h('div', { class: 'page-head' });
    this.body = h('div', { class: 'sections', id: 'scalar-sections' });
    ctx.main.append(this.head, this.body);
    this.layout();
    this.onResize = debounce(() => { for (const c of this.visible) c.load(); }, 300);
    window.addEventListener('resize', this.onResize);
  },

  // The frame's first load waits for this before it fetches what the
  // other tabs need (core/app.js, webui/README.md "Pages").
  drawn() { return this.firstDrawn; },

  unmount() {
    window.removeEventListener('tfb:hover-run', this.onHoverRun);
    this.observer.disconnect();
    window.removeEventListener('resize', this.onResize);
    for (const c of this.cards.values()) c.destroy();
    this.cards.clear();
  },

  buildSettings(ctx) {
    const s = ctx.state;
    const set = ctx.setState;
    const { ok } = safeRegex(s.tagFilter);
    this.tagFilter = h('input', { type: 'search', id: 'tag-filter', class: 'filter' + (ok ? '' : ' invalid'),
      placeholder: 'Filter tags (regex)  /', value: s.tagFilter, 'aria-label': 'Filter tags (regex)',
      oninput: debounce((e) => set({ tagFilter: e.target.value }), 150) });
    this.smoothRange = h('input', { type: 'range', id: 'smoothing', min: 0, max: 0.999, step: 0.001, value: s.smoothing,
      oninput: (e) => { this.smoothNum.value = e.target.value; this.setSmoothing(parseFloat(e.target.value)); } });
    this.smoothNum = h('input', { type: 'number', id: 'smoothing-value', class: 'num-input', min: 0, max: 0.999, step: 0.001, value: s.smoothing,
      onchange: (e) => {
        let v = parseFloat(e.target.value);
        if (!(v >= 0)) v = 0;
        if (v > 0.999) v = 0.999;
        e.target.value = v;
        this.smoothRange.value = v;
        this.setSmoothing(v);
      } });
    this.setSmoothing = debounce((v) => set({ smoothing: v }), 60);
    const radio = (val, label) => h('label', { class: 'radio' },
      h('input', { type: 'radio', name: 'xaxis', value: val, checked: s.x === val, onchange: () => set({ x: val }) }), label);
    this.logBox = h('input', { type: 'checkbox', id: 'log-y', checked: s.logy, onchange: (e) => set({ logy: e.target.checked }) });
    ctx.settings.append(
      h('h3', null, 'Tags'), this.tagFilter,
      h('h3', null, 'Smoothing'), h('div', { class: 'slider-row' }, this.smoothRange, this.smoothNum),
      h('h3', null, 'Horizontal axis'), h('div', { class: 'radios', id: 'x-axis' }, radio('step', 'Step'), radio('relative', 'Relative'), radio('wall', 'Wall')),
      h('h3', null, 'Vertical axis'), h('label', { class: 'check' }, this.logBox, 'Log scale'),
      h('p', { class: 'muted small hint' }, 'Drag a box on a chart to zoom, double-click to reset.'));
    this.compareBox = h('div', { id: 'compare-settings' });
    this.compareMsg = h('p', { class: 'muted small', id: 'layout-msg' });
    ctx.settings.append(this.compareBox, this.compareMsg);
    this.buildCompare();
  },

  // Group-by choices need the hparam names: built again when they come.
  async buildCompare() {
    await this.firstDrawn;
    const gen = this.gen;
    const hp = await loadHparams(gen, '');
    const names = hp.experiment.hparams.map((c) => c.name);
    if (this.compareNames === names.join('\u0000') && this.compare) return;
    this.compareNames = names.join('\u0000');
    this.compare = buildCompareSettings(this.ctx, names, (m) => { this.compareMsg.textContent = m; });
    clear(this.compareBox);
    this.compareBox.append(this.compare.el);
    // A fresh view (no groups or multi-tag charts in the URL) takes the
    // logdir's shared layout, once per page load.
    if (!layoutChecked) {
      layoutChecked = true;
      if (!this.ctx.state.group && !this.ctx.state.multi.length) {
        const l = await loadLayout().catch(() => null);
        if (l) { this.multiSource = 'shared layout of the logdir'; this.applyLayoutQuietly(l); this.compareMsg.textContent = 'Shared layout from the logdir applied.'; }
        else {
          // No shared layout: a custom scalars layout of the runs opens as
          // multi-tag charts.
          const cs = this.ctx.data.plugins && this.ctx.data.plugins.custom_scalars && this.ctx.data.plugins.custom_scalars.enabled
            ? fromCustomScalars(await getJSON('data/plugin/custom_scalars/layout').catch(() => null)) : null;
          if (cs) { this.multiSource = 'custom scalars layout of the runs'; this.applyLayoutQuietly(cs); this.compareMsg.textContent = 'Custom scalars layout of the runs applied (Multi-tag charts, collapsed).'; }
        }
      }
    }
  },

  // A layout applied on load: its charts stay in the collapsed section.
  applyLayoutQuietly(l) {
    this.applyingLayout = true;
    try { applyLayout(this.ctx, l); } finally { this.applyingLayout = false; }
  },

  // The selected runs having tag: one array per tag while the selection
  // (ctx.runs, the same array while it stays: core/sidebar.js) and the
  // tags stay, so cards key their loads by its identity (listId).
  // Each run's tag set is looked up once per selection and tag listing
  // (runs of one set share its object, lib/catalog.js), not once per tag:
  // four cards filtering 100,000 names each were a tenth of a second of
  // the first chart (issue 28). When every selected run has the one same
  // set, a tag of it keeps the selection's own array.
  runsWithTag(tag) {
    const { runs, data } = this.ctx;
    let w = this.withTag;
    if (!w || w.runs !== runs || w.tags !== data.scalarTags) {
      const setOf = new Array(runs.length);
      const distinct = new Map();   // set (or undefined) -> its index
      for (let i = 0; i < runs.length; i++) {
        const ts = data.scalarTags[runs[i]];
        let k = distinct.get(ts);
        if (k === undefined) { k = distinct.size; distinct.set(ts, k); }
        setOf[i] = k;
      }
      w = this.withTag = { runs, tags: data.scalarTags, byTag: new Map(), setOf, sets: [...distinct.keys()] };
    }
    let out = w.byTag.get(tag);
    if (!out) {
      const has = Uint8Array.from(w.sets, (ts) => (ts && tag in ts ? 1 : 0));
      if (w.sets.length === 1) out = has[0] ? runs : [];
      else out = runs.filter((r, i) => has[w.setOf[i]] === 1);
      w.byTag.set(tag, out);
    }
    return out;
  },

  // A number naming an array (by identity) for cache keys.
  listId(list) {
    if (!this.listIds) { this.listIds = new WeakMap(); this.nextListId = 1; }
    let id = this.listIds.get(list);
    if (!id) { id = this.nextListId++; this.listIds.set(list, id); }
    return id;
  },

  // The loss spikes of a run's tag (alerts plugin; [] when there are none
  // or the plugin is absent): one request for every run per data
  // generation, so a chart still costs one /multirun request.
  async spikesOf(run, tag) {
    if (!this.spikeCache || this.spikeCache.gen !== this.gen) {
      this.spikeCache = {
        gen: this.gen,
        all: getJSON('data/plugin/alerts/spikes').then((a) => (a && a.spikes) || []).catch(() => []),
      };
    }
    return (await this.spikeCache.all).filter((sp) => sp.run === run && sp.tag === tag);
  },

  // The runs band charts draw as lines besides the best and worst: the
  // picked ones and the one hovered in the sidebar.
  highlightRuns() {
    const out = this.highlight.slice();
    if (this.hovered && !out.includes(this.hovered)) out.push(this.hovered);
    return out;
  },

  // How a card names its runs to /multirun: nothing (every run with the
  // tag) when every run is selected, the sidebar's filter as run_regex when
  // the selection is that filter (as where= when it is an expression over
  // runs_wide: the server selects the same runs), else each run, or past the route's 256
  // run= parameters a selection the server holds (selection=ID; sel: its
  // names, posted before the request). runs: what the sidebar shows for
  // the tag (the answer is checked against it).
  runSpec(tag) {
    const runs = this.runsWithTag(tag);
    const s = this.ctx.state;
    let params = null;
    if (s.runs === null && s.runWhere) params = { where: s.runWhere };
    else if (s.runs === null && !s.runFilter) params = {};
    else if (s.runs === null) {
      const ere = toERE(s.runFilter);
      if (ere !== null) params = { run_regex: ere };
    }
    // The route takes at most 256 run= parameters; a longer list is a
    // held selection (an alternation of 3,000 names was a 41 KB URI: 414).
    let sel = null;
    if (!params && runs.length > MAX_RUN_PARAMS) { sel = runs; params = { selection: remember(runs) }; }
    if (!params) params = { run: runs };
    return { runs, count: runs.length, params, sel };
  },

  // One tag for many runs in one request: {mode: 'lines', series: {run:
  // columns}, smoothed: {run: columns}} (smoothed only for weight > 0;
  // win [a, b]: only steps a..b, at up to `samples` points) or the parsed
  // bands answer. Cached by all of that and the generation; the cache
  // forgets older generations and, past CACHE_MAX entries, the oldest ones
  // (a dragged slider leaves many weights behind).
  fetchMulti(tag, spec, samples, mode, highlight, weight = 0, win = null) {
    const key = multiKey(this.gen, tag, spec, samples, mode, highlight, weight, win);
    const hit = this.cachedMulti(tag, spec, samples, mode, highlight, weight, win);
    if (hit) return hit;
    const q = { tag, ...spec.params, samples, summary: mode };
    if (mode === 'bands') { q.k = BAND_K; if (highlight.length) q.highlight = highlight; }
    if (weight > 0) q.smoothing = weight;
    if (win) { q.min_step = win[0]; q.max_step = win[1]; }
    const go = () => (spec.sel ? getWithSelection('data/plugin/scalars/multirun', q, spec.sel) : getJSON('data/plugin/scalars/multirun', q));
    // Until the first chart is drawn the band answers are asked for one
    // after the other: on a 2-core server four of 100,000 runs at once
    // shared the cores and the first chart waited for all four (issue 28).
    let ask;
    if (mode === 'bands' && !this.drewFirst) {
      ask = (this.bandsChain || Promise.resolve()).catch(() => null).then(go);
      this.bandsChain = ask;
    } else ask = go();
    const promise = ask.then((ans) => {
      if (mode === 'bands' || ans.mode === 'bands') return parseBands(ans);
      const parse = (obj) => {
        const out = {};
        for (const [run, rows] of Object.entries(obj || {})) out[run] = parseScalars(rows, num);
        return out;
      };
      return { mode: 'lines', runs: ans.runs, series: parse(ans.series), smoothed: parse(ans.smoothed) };
    });
    this.cache.set(key, promise);
    promise.catch(() => { if (this.cache.get(key) === promise) this.cache.delete(key); });
    while (this.cache.size > CACHE_MAX) this.cache.delete(this.cache.keys().next().value);
    return promise;
  },

  // fetchMulti's answer when the cache holds it (asking for nothing), else
  // null.
  cachedMulti(tag, spec, samples, mode, highlight, weight = 0, win = null) {
    const key = multiKey(this.gen, tag, spec, samples, mode, highlight, weight, win);
    const hit = this.cache.get(key);
    if (!hit) return null;
    this.cache.delete(key);   // refresh its place in the eviction order
    this.cache.set(key, hit);
    return hit;
  },

  // A click on a band chart: the runs nearest (step, value) become the
  // highlighted runs of every band chart, and the card says which they are
  // (with a link that selects just them).
  async pickNearest(card, p) {
    const spec = this.runSpec(card.tag);
    // The same runs as the chart's bands (run= or run_regex=).
    const q = { tag: card.tag, step: p.step, value: p.value, k: NEAREST_K, ...spec.params };
    try {
      const ans = spec.sel ? await getWithSelection('data/plugin/scalars/nearest', q, spec.sel) : await getJSON('data/plugin/scalars/nearest', q);
      const allowed = new Set(spec.runs);
      const runs = (ans.runs || []).map((r) => r.run).filter((r) => allowed.has(r)).slice(0, NEAREST_K);
      this.highlight = runs;
      window.__tfb.pages.scalarsPick = { tag: card.tag, step: p.step, value: p.value, runs };
      for (const c of this.visible) c.load();
      card.pickNote(runs, p);
    } catch (e) {
      card.status.textContent = 'Could not find the nearest runs: ' + e.message;
      card.status.classList.add('warn');
    }
  },

  // Forgets the picked runs: the band charts draw best and worst only.
  clearPick() {
    this.highlight = [];
    delete window.__tfb.pages.scalarsPick;
    for (const c of this.cards.values()) if (c.note) { c.note.remove(); c.note = null; }
    for (const c of this.visible) c.load();
  },

  // (Re)builds the sections for the current tag set, reusing cards.
  layout() {
    const ctx = this.ctx;
    const tags = scalarTagsOf(ctx.data, ctx.runs, ctx.state.tagFilter);
    const keep = new Set(tags);
    for (const [t, c] of this.cards) {
      if (!c.multi && !keep.has(t)) { this.observer.unobserve(c.el); this.visible.delete(c); c.destroy(); this.cards.delete(t); }
    }
    const groups = new Map();
    for (const t of tags) {
      const g = groupOf(t);
      if (!groups.has(g)) groups.set(g, []);
      groups.get(g).push(t);
    }
    clear(this.body);
    clear(this.head);
    // Multi-tag charts first, in their own section, collapsed at first
    // (multiOpen). The tag filter applies to their tags as to the cards';
    // a regex whose tags have more than MAX_AXES units is one chart per
    // MAX_AXES units.
    const multi = ctx.state.multi || [];
    const parts = [];
    for (const m of multi) {
      const ps = multiParts(ctx.data, ctx.runs, m, ctx.state.tagFilter);
      // A regex matching nothing keeps its (empty) chart, unless the tag
      // filter is what hides its tags.
      if (!ps.length && !ctx.state.tagFilter) ps.push([]);
      ps.forEach((units, k) => parts.push({ key: 'multi:' + m + (k ? '#' + (k + 1) : ''), m, units }));
    }
    const multiKeys = new Set(parts.map((p) => p.key));
    for (const [t, c] of this.cards) {
      if (c.multi && !multiKeys.has(t)) { this.observer.unobserve(c.el); this.visible.delete(c); c.destroy(); this.cards.delete(t); }
    }
    if (multi.length) {
      const grid = h('div', { class: 'grid' });
      for (const p of parts) {
        let c = this.cards.get(p.key);
        if (!c) {
          c = new Card(this, p.key, p.m, p.units);
          c.el.$card = c;
          this.cards.set(p.key, c);
          this.observer.observe(c.el);
        }
        c.units = p.units;
        grid.appendChild(c.el);
      }
      const count = parts.length === multi.length || !ctx.state.tagFilter ? String(parts.length) : `${parts.length} (filtered)`;
      const sec = h('details', { class: 'section', open: multiOpen, id: 'multi-section' },
        h('summary', null, h('span', { class: 'section-name' }, 'Multi-tag charts'), h('span', { class: 'muted count' }, count),
          h('span', { class: 'muted small section-note' }, this.multiSource ? ' · ' + this.multiSource : '')),
        parts.length ? grid : h('div', { class: 'empty small' }, 'No tag of these charts matches the filter.'));
      sec.addEventListener('toggle', () => { multiOpen = sec.open; });
      this.body.appendChild(sec);
    }
    this.head.append(h('span', { class: 'muted' },
      `${tags.length} tag${tags.length === 1 ? '' : 's'}` + (ctx.state.tagFilter ? (tags.length === 1 ? ' matches' : ' match') + ' the filter' : '') +
      `, ${ctx.runs.length} run${ctx.runs.length === 1 ? '' : 's'} selected`));
    if (!tags.length) {
      const total = Object.values(ctx.data.scalarTags).reduce((a, t) => a + Object.keys(t).length, 0);
      this.body.appendChild(h('div', { class: 'empty small' },
        ctx.runs.length ? (total ? 'No scalar tag matches the filter.' : 'No scalars logged yet.') : 'No run selected: tick runs in the sidebar.'));
    }
    for (const [g, list] of [...groups.entries()].sort((a, b) => naturalCompare(a[0], b[0]))) {
      const grid = h('div', { class: 'grid' });
      const sec = h('details', { class: 'section', open: !collapsed.has(g) },
        h('summary', null, h('span', { class: 'section-name' }, g), h('span', { class: 'muted count' }, String(list.length))),
        grid);
      sec.addEventListener('toggle', () => {
        if (sec.open) collapsed.delete(g); else collapsed.add(g);
      });
      for (const t of list) {
        let c = this.cards.get(t);
        if (!c) {
          c = new Card(this, t);
          c.el.$card = c;
          this.cards.set(t, c);
          this.observer.observe(c.el);
        }
        grid.appendChild(c.el);
      }
      this.body.appendChild(sec);
    }
    window.__tfb.pages.scalars = { tags, groups: [...groups.keys()] };
    // Cards that stay visible after a relayout reload if their runs changed.
    for (const c of this.visible) c.load();
  },

  update(ctx, changed) {
    this.ctx = ctx;
    if (changed.includes('data')) { this.gen++; this.cache.clear(); this.buildCompare(); }
    if (this.compare && changed.some((k) => ['group', 'band', 'multi'].includes(k))) this.compare.update();
    if (changed.includes('multi')) {
      // A chart the user added (not a layout applied on load) is shown.
      const n = (ctx.state.multi || []).length;
      if (n > this.multiCount && !this.applyingLayout) multiOpen = true;
      this.multiCount = n;
      this.layout();
    }
    if (changed.some((k) => ['group', 'band'].includes(k))) for (const c of this.visible) c.load();
    if (changed.some((k) => ['data', 'runs', 'runFilter', 'runWhereHits', 'tagFilter'].includes(k))) {
      const { ok } = safeRegex(ctx.state.tagFilter);
      this.tagFilter.classList.toggle('invalid', !ok);
      if (document.activeElement !== this.tagFilter) this.tagFilter.value = ctx.state.tagFilter;
      this.layout();
    }
    if (changed.some((k) => ['smoothing', 'x', 'logy', 'settings', 'step'].includes(k))) {
      if (changed.includes('logy')) for (const c of this.cards.values()) { c.logy = null; c.el.querySelector('.logbtn').classList.remove('on'); }
      this.smoothRange.value = ctx.state.smoothing;
      this.smoothNum.value = ctx.state.smoothing;
      this.logBox.checked = ctx.state.logy;
      for (const r of document.querySelectorAll('input[name=xaxis]')) r.checked = r.value === ctx.state.x;
      for (const c of this.cards.values()) c.applyView();
    }
    if (changed.includes('step') && ctx.state.step !== null) this.scrollToFocus();
  },

  scrollToFocus() {
    const first = this.cards.values().next().value;
    if (first) first.el.scrollIntoView({ block: 'center' });
  },
};

export default page;
