// Scalars dashboard: one card per tag, grouped by tag prefix into
// collapsible sections; each card draws every selected run that has the tag.
// Data is fetched per (run, tag) when a card scrolls into view, with
// samples= about 2 points per pixel of the chart's width: the raw series
// (the faint line) and, when the weight is above 0, the server's smoothed
// series (smoothing=W: TensorBoard's debiased EMA over the full history,
// then downsampled), which draws the smoothed line. Smoothing on the server
// before downsampling keeps the curve's shape the same at any zoom or
// sample count; moving the slider asks again for the smoothed series only.
import { h, clear, debounce } from '../core/dom.js';
import { getJSON, url, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { ScalarChart, parseScalars } from '../core/charts.js';
import { safeRegex } from '../core/state.js';
import { multiTargets, fetchGroups, drawGroups, buildCompareSettings, loadLayout, applyLayout } from '../lib/scalars_compare.js';
import { loadHparams } from '../lib/hparams.js';

// Tags of the selected runs, in first-seen order, filtered by the regex.
export function scalarTagsOf(data, runs, filter) {
  const { re } = safeRegex(filter);
  const seen = new Set();
  const out = [];
  for (const r of runs) {
    for (const t of Object.keys(data.scalarTags[r] || {})) {
      if (seen.has(t)) continue;
      seen.add(t);
      if (!re || re.test(t)) out.push(t);
    }
  }
  return out.sort((a, b) => a.localeCompare(b));
}

export function groupOf(tag) {
  const i = tag.indexOf('/');
  return i > 0 ? tag.slice(0, i) : tag;
}

function fileName(run, tag, ext) {
  return (run + '_' + tag).replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120) + '.' + ext;
}

const collapsed = new Set();
const CACHE_MAX = 240;

function ignoreOutliers() { return localStorage.getItem('tfb.ignoreOutliers') === '1'; }

let layoutChecked = false; // the shared layout is offered once per page load

class Card {
  // tag: the card's tag; multi: a tag regex instead (a multi-tag chart,
  // tag is then 'multi:<regex>').
  constructor(page, tag, multi = null) {
    this.page = page;
    this.tag = tag;
    this.multi = multi;
    this.loadedKey = '';
    this.logy = null;   // per-card override of the global log scale
    this.wrap = h('div', { class: 'chart-wrap' });
    this.status = h('div', { class: 'card-status muted' });
    this.menu = h('div', { class: 'menu card-menu', hidden: true });
    const btn = (glyph, title, fn, cls) => h('button', { class: 'icon-btn small ' + (cls || ''), title, 'aria-label': title, onclick: fn }, glyph);
    this.el = h('div', { class: 'card', dataset: { tag } },
      h('div', { class: 'card-head' },
        h('div', { class: 'card-title', title: tag }, multi ? h('span', null, h('span', { class: 'muted' }, 'tags ~ '), multi) : tag),
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
    if (this.multi) return multiTargets(this.page.ctx.data, this.page.ctx.runs, this.multi);
    return this.page.runsWithTag(this.tag).map((r) => ({ run: r, tag: this.tag, label: r, color: runColor(r) }));
  }

  // Run groups apply to the one-tag cards.
  grouping() { return this.multi ? '' : this.page.ctx.state.group; }

  openMenu() {
    clear(this.menu);
    const runs = this.targets();
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
    const runs = this.targets().map((t) => t.label);
    const g = this.grouping();
    const key = [this.page.gen, this.samples(), g ? g + '|' + this.page.ctx.state.band + '|' + this.page.ctx.state.logy : this.page.ctx.state.smoothing, ...runs].join('\u0000');
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
    try {
      const ans = await fetchGroups(this.tag, groupBy, this.page.runsWithTag(this.tag));
      if (this.drawToken !== token) return;
      if (this.gchart) this.gchart.destroy();
      clear(this.wrap);
      const canvas = h('canvas');
      this.wrap.append(canvas);
      const { chart, summary } = drawGroups(canvas, ans, this.page.ctx.state.band, this.page.ctx.state.logy);
      this.gchart = chart;
      const nf = ans.groups.reduce((a, g) => a + g.points.reduce((b, p) => b + num(p[6]), 0), 0);
      this.status.textContent = `${ans.groups.length} group${ans.groups.length === 1 ? '' : 's'} by ${groupBy}` +
        (ans.left_out ? `; ${ans.left_out} run${ans.left_out === 1 ? '' : 's'} in no group` : '') +
        (nf ? `; ${nf} non-finite value${nf === 1 ? '' : 's'} left out of the means` : '') + ' (means are not smoothed)';
      this.status.classList.toggle('warn', nf > 0);
      window.__tfb.charts['scalars:' + this.tag] = { grouped: true, groupBy, band: this.page.ctx.state.band, groups: summary, leftOut: ans.left_out };
    } catch (e) {
      if (this.drawToken !== token) return;
      this.loadedKey = '';
      this.status.textContent = 'Could not group: ' + e.message;
      this.status.classList.add('warn');
    }
  }

  // Fetches what the chart needs now and draws it: per run the raw and
  // (weight > 0) smoothed overview series, and when zoomed on steps both
  // again for the window, merged in. Requests go through the page's cache,
  // so a slider move asks only for the smoothed series at the new weight
  // and a zoom only for the window. A newer draw supersedes this one.
  async draw() {
    const token = {};
    this.drawToken = token;
    if (this.gchart) { this.gchart.destroy(); this.gchart = null; clear(this.wrap); }
    const runs = this.targets();
    const samples = this.samples();
    const weight = this.page.ctx.state.smoothing;
    const range = this.page.ctx.state.x === 'step' ? this.range : null;
    const first = !this.chart;
    if (first) this.status.textContent = 'Loading…';
    try {
      let inWindow = 0;
      const series = await Promise.all(runs.map(async (t) => {
        const get = (w, win) => this.page.fetchSeries(t.run, t.tag, samples, w, win);
        const [raw, smooth, rawWin, smoothWin] = await Promise.all([
          get(0, null),
          weight > 0 ? get(weight, null) : null,
          range ? get(0, range) : null,
          range && weight > 0 ? get(weight, range) : null,
        ]);
        const s = { run: t.label, color: t.color, cols: raw, smooth, spikes: await this.page.spikesOf(t.run, t.tag) };
        if (range) {
          inWindow += rawWin.n;
          s.cols = mergeWindow(raw, rawWin, range[0], range[1]);
          if (smooth) s.smooth = mergeWindow(smooth, smoothWin, range[0], range[1]);
        }
        return s;
      }));
      if (this.drawToken !== token) return;
      if (!this.chart) this.chart = new ScalarChart(this.wrap, { onZoom: (r) => this.zoomed(r) });
      this.chart.view = Object.assign(this.chart.view, this.view());
      // A zoom reset while this draw was in flight drops its window.
      if (range && !this.chart.zoomed) return;
      this.window = range ? { range, points: inWindow } : null;
      this.drawn = { samples, weight };
      this.chart.setData(series, weight);
      const nf = series.reduce((a, s) => a + countNonFinite(s.cols), 0);
      this.status.textContent = nf ? `${nf} non-finite point${nf > 1 ? 's' : ''} marked (▲ +Inf, ▼ -Inf, ✕ NaN)` : '';
      this.status.classList.toggle('warn', nf > 0);
      this.publish();
    } catch (e) {
      if (this.drawToken !== token) return;
      this.loadedKey = '';
      this.status.textContent = (range ? 'Could not load the zoomed range: ' : 'Could not load: ') + e.message;
      this.status.classList.add('warn');
    }
  }

  // Zooming in on steps asks the server again for the visible window at
  // full density (min_step/max_step), raw and smoothed; the points outside
  // it stay as they were. The window's smoothed values are still the
  // full-history EMA, so the curve keeps its shape.
  zoomed(range) {
    const next = range && this.page.ctx.state.x === 'step' ? [Math.floor(range[0]), Math.ceil(range[1])] : null;
    if (!next && !this.range) { this.publish(); return; }
    this.range = next;
    this.draw();
  }

  publish() {
    if (this.chart) window.__tfb.charts['scalars:' + this.tag] = { ...this.chart.summary(), window: this.window || null, drawn: this.drawn || null };
  }

  destroy() {
    if (this.chart) this.chart.destroy();
    if (this.gchart) this.gchart.destroy();
    delete window.__tfb.charts['scalars:' + this.tag];
  }
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
  mount(ctx) {
    this.ctx = ctx;
    this.gen = 0;
    this.cache = new Map();
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

  unmount() {
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
        if (l) { applyLayout(this.ctx, l); this.compareMsg.textContent = 'Shared layout from the logdir applied.'; }
      }
    }
  },

  runsWithTag(tag) {
    return this.ctx.runs.filter((r) => this.ctx.data.scalarTags[r] && tag in this.ctx.data.scalarTags[r]);
  },

  // One scalar series as columns: raw (weight 0) or smoothed by the
  // server with the weight, the overview or a step window [a, b]. Cached by
  // (run, tag, samples, weight, window, generation); the cache forgets
  // older generations and, past CACHE_MAX entries, the oldest ones (a
  // dragged slider leaves many weights behind).
  // The loss spikes of a run (alerts plugin; [] when it has none or the
  // plugin is absent), one request per run and data generation.
  async spikesOf(run, tag) {
    const key = this.gen + '\u0000' + run;
    if (!this.spikeCache || this.spikeCache.gen !== this.gen) this.spikeCache = { gen: this.gen, m: new Map() };
    if (!this.spikeCache.m.has(key)) {
      this.spikeCache.m.set(key, getJSON('data/plugin/alerts/spikes', { run }).then((a) => (a && a.spikes) || []).catch(() => []));
    }
    return (await this.spikeCache.m.get(key)).filter((sp) => sp.tag === tag);
  },

  fetchSeries(run, tag, samples, weight, win) {
    const key = [this.gen, run, tag, samples, weight, win ? win.join(':') : ''].join('\u0000');
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);   // refresh its place in the eviction order
      this.cache.set(key, hit);
      return hit;
    }
    const q = { run, tag, samples };
    if (weight > 0) q.smoothing = weight;
    if (win) { q.min_step = win[0]; q.max_step = win[1]; }
    const promise = getJSON('data/plugin/scalars/scalars', q).then((rows) => parseScalars(rows, num));
    this.cache.set(key, promise);
    promise.catch(() => { if (this.cache.get(key) === promise) this.cache.delete(key); });
    while (this.cache.size > CACHE_MAX) this.cache.delete(this.cache.keys().next().value);
    return promise;
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
    // Multi-tag charts first, in their own section.
    const multi = ctx.state.multi || [];
    const multiKeys = new Set(multi.map((m) => 'multi:' + m));
    for (const [t, c] of this.cards) {
      if (c.multi && !multiKeys.has(t)) { this.observer.unobserve(c.el); this.visible.delete(c); c.destroy(); this.cards.delete(t); }
    }
    if (multi.length) {
      const grid = h('div', { class: 'grid' });
      for (const m of multi) {
        const key = 'multi:' + m;
        let c = this.cards.get(key);
        if (!c) {
          c = new Card(this, key, m);
          c.el.$card = c;
          this.cards.set(key, c);
          this.observer.observe(c.el);
        }
        grid.appendChild(c.el);
      }
      this.body.appendChild(h('details', { class: 'section', open: true, id: 'multi-section' },
        h('summary', null, h('span', { class: 'section-name' }, 'Multi-tag charts'), h('span', { class: 'muted count' }, String(multi.length))), grid));
    }
    const total = Object.values(ctx.data.scalarTags).reduce((a, t) => a + Object.keys(t).length, 0);
    this.head.append(h('span', { class: 'muted' },
      `${tags.length} tag${tags.length === 1 ? '' : 's'}` + (ctx.state.tagFilter ? (tags.length === 1 ? ' matches' : ' match') + ' the filter' : '') +
      `, ${ctx.runs.length} run${ctx.runs.length === 1 ? '' : 's'} selected`));
    if (!tags.length) {
      this.body.appendChild(h('div', { class: 'empty small' },
        ctx.runs.length ? (total ? 'No scalar tag matches the filter.' : 'No scalars logged yet.') : 'No run selected: tick runs in the sidebar.'));
    }
    for (const [g, list] of [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
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
    if (changed.includes('multi')) this.layout();
    if (changed.some((k) => ['group', 'band'].includes(k))) for (const c of this.visible) c.load();
    if (changed.some((k) => ['data', 'runs', 'runFilter', 'tagFilter'].includes(k))) {
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
