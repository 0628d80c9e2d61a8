// Graphs dashboard: a run's GraphDef (TensorBoard's `/graph` route, as
// pbtxt) drawn as name-scope groups, closed at first; a group opens in
// place (its children laid out then, and only then: graphs_layout.js);
// edges carry the source's tensor shape (`_output_shapes`), control edges
// dashed; search by node name opens the groups down to a node and selects
// it; nodes coloured by device, or by compute time or memory from a
// `/run_metadata` with step stats; a side panel with the op, attributes,
// inputs and outputs. Every string of the graph goes in as text (SVG text
// nodes, textContent), never as HTML.
import { h, clear, debounce } from '../core/dom.js';
import { getJSON, url } from '../core/api.js';
import { defineState, key } from '../core/state.js';
import { int, bytes as fmtBytes } from '../core/format.js';
import { parsePbtxt } from '../lib/graphs_pbtxt.js';
import { buildGraph, applyStepStats, edgeLabel, searchNodes, attrText, ancestors, GRAPH_LAZY_FIELDS } from '../lib/graphs_model.js';
import { layeredLayout } from '../lib/graphs_layout.js';

// Bounds (the plugin's API.md "The Graphs tab" says why each).
export const LIMIT_ATTR_SIZE = 1024;        // attribute values over this stay on the server
export const SEARCH_MAX_RESULTS = 100;      // matches listed under the search box
export const GROUP_DRAWN_MAX = 500;         // children of one open group drawn; the rest counted in one box
export const LABEL_MAX = 28;                // characters of a node's label in its box (the panel has all)
export const ATTR_SHOWN_MAX = 2000;         // characters of an attribute shown before "show all"
const NODE_H = 26, GROUP_H = 40, PAD = 12, HEADER = 24, CHAR_W = 6.6;

const COLOR_MODES = ['structure', 'device', 'compute', 'memory'];
defineState({ graphRun: key.str(), graphTag: key.str(), graphStats: key.str(), graphColor: key.oneOf(...COLOR_MODES) });

const SVG = 'http://www.w3.org/2000/svg';
function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of kids) if (c !== null && c !== undefined) el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
}
const clip = (t, n) => (t.length > n ? t.slice(0, n - 1) + '…' : t);
const DEVICE_COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
let cssLinked = false;

function stats() {
  window.__tfb = window.__tfb || { pages: {} };
  window.__tfb.pages = window.__tfb.pages || {};
  return (window.__tfb.pages.graphs = window.__tfb.pages.graphs || {});
}

const page = {
  mount(ctx) {
    this.ctx = ctx;
    if (!cssLinked) {
      document.head.appendChild(h('link', { rel: 'stylesheet', href: 'js/lib/graphs_graphs.css' }));
      cssLinked = true;
    }
    this.graph = null;
    this.selected = null;
    this.view = { tx: 20, ty: 20, k: 1 };
    this.runSel = h('select', { id: 'graphs-run', 'aria-label': 'Run', onchange: (e) => ctx.setState({ graphRun: e.target.value, graphTag: '', graphStats: '' }) });
    this.tagSel = h('select', { id: 'graphs-tag', 'aria-label': 'Graph', onchange: (e) => ctx.setState({ graphTag: e.target.value }) });
    this.statsSel = h('select', { id: 'graphs-stats', 'aria-label': 'Step stats', onchange: (e) => ctx.setState({ graphStats: e.target.value }) });
    this.colorSel = h('select', { id: 'graphs-color', 'aria-label': 'Colour', onchange: (e) => ctx.setState({ graphColor: e.target.value }) },
      h('option', { value: 'structure' }, 'Structure'), h('option', { value: 'device' }, 'Device'),
      h('option', { value: 'compute' }, 'Compute time'), h('option', { value: 'memory' }, 'Memory'));
    this.search = h('input', { type: 'search', id: 'graphs-search', class: 'filter', placeholder: 'Search nodes by name',
      oninput: debounce(() => this.showMatches(), 120),
      onkeydown: (e) => { if (e.key === 'Enter' && this.matches && this.matches.hits.length) this.reveal(this.matches.hits[0]); } });
    this.results = h('div', { id: 'graphs-results', class: 'graphs-results small' });
    this.legend = h('div', { id: 'graphs-legend', class: 'graphs-legend small' });
    ctx.settings.append(h('h3', null, 'Graph'), h('label', { class: 'graphs-field' }, 'Run ', this.runSel),
      h('label', { class: 'graphs-field' }, 'Graph ', this.tagSel), h('label', { class: 'graphs-field' }, 'Step stats ', this.statsSel),
      h('label', { class: 'graphs-field' }, 'Colour ', this.colorSel), this.legend,
      h('h3', null, 'Search'), this.search, this.results);
    this.msg = h('div', { id: 'graphs-message', class: 'graphs-message small' });
    this.notes = h('div', { id: 'graphs-notes', class: 'graphs-notes small' });
    this.svg = s('svg', { id: 'graphs-svg', class: 'graphs-svg' });
    this.svg.appendChild(s('defs', null,
      s('marker', { id: 'graphs-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' },
        s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'graphs-arrowhead' }))));
    this.rootG = s('g', { class: 'graphs-root' });
    this.svg.appendChild(this.rootG);
    this.panel = h('aside', { id: 'graphs-panel', class: 'graphs-panel', hidden: true });
    const toolbar = h('div', { class: 'graphs-toolbar small' },
      h('button', { id: 'graphs-fit', class: 'link', onclick: () => this.fit() }, 'Fit'),
      h('button', { id: 'graphs-collapse', class: 'link', onclick: () => this.collapseAll() }, 'Close all'),
      h('span', { class: 'graphs-hint' }, 'Click a box to see it; double-click or ± to open a scope; drag to pan, wheel to zoom.'));
    this.stage = h('div', { class: 'graphs-stage' }, this.svg, this.panel);
    ctx.main.append(h('div', { class: 'graphs-page' }, toolbar, this.msg, this.notes, this.stage));
    this.bindPanZoom();
    this.load();
  },
  unmount() { this.token = null; },
  update(ctx, changed) {
    this.ctx = ctx;
    const ch = Array.isArray(changed) ? changed : [changed];
    if (ch.includes('graphColor') && !ch.some((c) => c === 'data' || c === 'graphRun' || c === 'graphTag' || c === 'graphStats')) {
      this.colorSel.value = ctx.state.graphColor;
      this.draw();
      return;
    }
    if (ch.some((c) => c === 'data' || c === 'graphRun' || c === 'graphTag' || c === 'graphStats')) this.load(ch.includes('data'));
  },

  // The runs with graphs (`/info`), then the picked graph and step stats.
  async load(reload) {
    const token = {};
    this.token = token;
    const st = this.ctx.state;
    let info;
    try {
      info = await getJSON('data/plugin/graphs/info');
    } catch (e) {
      if (this.token === token) this.message('Could not list the graphs: ' + e.message);
      return;
    }
    if (this.token !== token) return;
    const runs = Object.keys(info || {});
    const sel = (el, opts, v) => {
      clear(el);
      for (const [val, label] of opts) el.appendChild(h('option', { value: val }, label));
      el.value = v;
    };
    if (!runs.length) { this.message('No run has a graph.'); sel(this.runSel, [], ''); return; }
    const run = runs.includes(st.graphRun) ? st.graphRun : runs[0];
    sel(this.runSel, runs.map((r) => [r, r]), run);
    const ri = info[run] || {};
    const tags = Object.values(ri.tags || {});
    const graphOpts = [];
    if (ri.run_graph) graphOpts.push(['', 'Op graph']);
    for (const t of tags) {
      if (t.op_graph) graphOpts.push(['op:' + t.tag, 'Op graph: ' + t.tag]);
      if (t.conceptual_graph) graphOpts.push(['conceptual:' + t.tag, 'Conceptual graph: ' + t.tag]);
    }
    const statsOpts = [['', 'None']].concat(tags.filter((t) => t.profile).map((t) => [t.tag, t.tag]));
    const graphKey = graphOpts.some(([v]) => v === st.graphTag) ? st.graphTag : (graphOpts[0] || [''])[0];
    // The first profile's step stats by default: they cost one request.
    const statsTag = statsOpts.some(([v]) => v === st.graphStats && v) ? st.graphStats : (statsOpts[1] || [''])[0];
    sel(this.tagSel, graphOpts, graphKey);
    sel(this.statsSel, statsOpts, statsTag);
    this.colorSel.value = st.graphColor;
    if (!graphOpts.length) { this.message(`Run ${run} has step stats but no graph.`); return; }
    const want = run + '\u0000' + graphKey + '\u0000' + statsTag;
    if (this.loaded === want && reload) return; // a data reload changes no graph already drawn
    const out = stats();
    const t0 = performance.now();
    const params = { run, limit_attr_size: LIMIT_ATTR_SIZE, large_attrs_key: '_too_large_attrs' };
    if (graphKey.startsWith('op:')) { params.tag = graphKey.slice(3); params.conceptual = 'false'; }
    if (graphKey.startsWith('conceptual:')) { params.tag = graphKey.slice(11); params.conceptual = 'true'; }
    this.message('Loading the graph of ' + run + '…');
    let text, metaText = null;
    try {
      // both asked at once: the step stats need not wait for the graph
      const meta = statsTag ? getText('data/plugin/graphs/run_metadata', { run, tag: statsTag }).catch((e) => e) : null;
      text = await getText('data/plugin/graphs/graph', params);
      if (meta) metaText = await meta;
    } catch (e) {
      if (this.token === token) this.message(`Could not load the graph of ${run}: ${e.message}`);
      return;
    }
    if (this.token !== token) return;
    const t1 = performance.now();
    let graph;
    try {
      graph = buildGraph(parsePbtxt(text, { lazy: GRAPH_LAZY_FIELDS }));
    } catch (e) {
      this.message(`The graph of ${run} could not be read: ${e.message}`);
      return;
    }
    const t2 = performance.now();
    const notes = graph.notes.slice();
    graph.statsNodes = 0;
    if (metaText instanceof Error) notes.push(`step stats ${statsTag}: ${metaText.message}`);
    else if (metaText !== null) {
      try {
        graph.statsNodes = applyStepStats(graph, parsePbtxt(metaText));
        if (!graph.statsNodes) notes.push(`step stats ${statsTag} name no node of this graph (PyTorch's name only the device): compute time and memory are unknown`);
      } catch (e) { notes.push(`step stats ${statsTag} could not be read: ${e.message}`); }
    }
    this.graph = graph;
    this.loaded = want;
    this.selected = null;
    this.panel.hidden = true;
    this.devices = [...new Set([...graph.nodes.values()].map((n) => n.device))].sort();
    this.message(graph.nodeCount ? `${run}: ${int(graph.nodeCount)} nodes, ${int(graph.edgeCount)} edges, ${int(graph.groups.size - 1)} scopes.`
      : `${run}: this graph has no nodes (the server answered an empty GraphDef).`);
    clear(this.notes);
    if (notes.length) {
      this.notes.appendChild(h('details', null, h('summary', null, `${notes.length} note${notes.length > 1 ? 's' : ''} on this graph`),
        h('ul', null, notes.map((t) => h('li', null, t)))));
    }
    this.draw();
    this.fit();
    const t3 = performance.now();
    Object.assign(out, { run, fetchMs: t1 - t0, parseMs: t2 - t1, drawMs: t3 - t2, openMs: t3 - t0, nodes: graph.nodeCount,
      edges: graph.edgeCount, scopes: graph.groups.size - 1, notes, statsNodes: graph.statsNodes });
    this.showMatches();
  },

  message(t) { this.msg.textContent = t; },

  // Box sizes; an open group's comes from its own layout.
  size(item) {
    if (item.kind === 'node') return { w: Math.min(180, Math.max(44, clip(item.label, LABEL_MAX).length * CHAR_W + 22)), h: NODE_H };
    if (item.kind === 'more') return { w: 150, h: GROUP_H };
    if (!item.expanded) return { w: Math.min(230, Math.max(80, clip(item.label, LABEL_MAX).length * CHAR_W + 44)), h: GROUP_H };
    const L = this.layout(item);
    const label = Math.min(230, clip(item.label, LABEL_MAX).length * CHAR_W + 60);
    return { w: Math.max(L.width + 2 * PAD, label), h: L.height + 2 * PAD + HEADER };
  },

  // The children drawn of an open group: the first GROUP_DRAWN_MAX, any
  // selected or searched node among the rest, and one box counting the rest.
  drawn(g) {
    if (g.children.length <= GROUP_DRAWN_MAX) return g.children;
    const items = g.children.slice(0, GROUP_DRAWN_MAX);
    const keep = new Set(items);
    for (const p of g.pinned || []) if (!keep.has(p)) { items.push(p); keep.add(p); }
    items.push({ kind: 'more', id: g.path + '/…', count: g.children.length - items.length, parent: g, label: '' });
    return items;
  },

  // Lays out an open group's children (cached until a group inside it
  // opens or closes).
  layout(g) {
    if (g.layout) return g.layout;
    const items = this.drawn(g);
    const idx = new Map(items.map((it, k) => [it, k]));
    const sizes = items.map((it) => this.size(it));
    const edges = [];
    for (const e of g.edges.values()) if (idx.has(e.from) && idx.has(e.to)) edges.push({ from: idx.get(e.from), to: idx.get(e.to), e });
    const L = layeredLayout(sizes, edges);
    g.layout = { items, sizes, edges, ...L };
    return g.layout;
  },

  toggle(g) {
    const t0 = performance.now();
    const before = this.boxes && this.boxes.get('group:' + g.id);
    g.expanded = !g.expanded;
    for (let a = g; a; a = a.parent) a.layout = null;
    this.draw();
    // The group's top-left corner stays where it was on screen, so the
    // scope opens in place instead of the whole graph jumping.
    const after = this.boxes.get('group:' + g.id);
    if (before && after) {
      this.view.tx += (before.x - after.x) * this.view.k;
      this.view.ty += (before.y - after.y) * this.view.k;
      this.applyView();
    }
    const st = stats();
    st.lastToggleMs = performance.now() - t0;
    st.lastToggle = g.path;
  },

  collapseAll() {
    if (!this.graph) return;
    for (const g of this.graph.groups.values()) { g.expanded = g === this.graph.root; g.layout = null; }
    this.draw();
    this.fit();
  },

  color(item) {
    const mode = this.ctx.state.graphColor;
    if (mode === 'device') {
      const d = item.device;
      if (d === 'mixed') return 'var(--graphs-mixed)';
      if (!d) return null;
      return DEVICE_COLORS[this.devices.indexOf(d) % DEVICE_COLORS.length];
    }
    if (mode === 'compute' || mode === 'memory') {
      const v = item.stats ? (mode === 'compute' ? item.stats.micros : item.stats.bytes) : null;
      if (v === null) return null;
      const max = mode === 'compute' ? this.graph.root.stats?.maxMicros : this.graph.root.stats?.maxBytes;
      const t = max > 0 ? Math.log1p(v) / Math.log1p(max) : 0;
      return `hsl(28, 95%, ${Math.round(92 - 50 * t)}%)`;
    }
    return null;
  },

  // Redraws what is open: each open group's layout, nested, and records
  // where every drawn box is (for reveal and the tests).
  draw() {
    clear(this.rootG);
    const g = this.graph;
    if (!g) return;
    // the largest node value of each kind, for the colour scale
    if (g.root.stats) {
      let mm = 0, mb = 0;
      for (const n of g.nodes.values()) if (n.stats) { mm = Math.max(mm, n.stats.micros); mb = Math.max(mb, n.stats.bytes); }
      for (const x of g.groups.values()) if (x.stats && x !== g.root) { mm = Math.max(mm, x.stats.micros); mb = Math.max(mb, x.stats.bytes); }
      g.root.stats.maxMicros = mm;
      g.root.stats.maxBytes = mb;
    }
    this.boxes = new Map();
    const edgeLayer = s('g', { class: 'graphs-edges' });
    const nodeLayer = s('g', { class: 'graphs-nodes' });
    let count = 0;
    const place = (grp, ox, oy) => {
      const L = this.layout(grp);
      L.edges.forEach((ed, k) => {
        const pts = L.routes[k];
        if (!pts) return;
        const P = pts.map(([x, y]) => [x + ox, y + oy]);
        let d = `M${P[0][0]},${P[0][1]}`;
        if (P.length === 2) {
          const my = (P[0][1] + P[1][1]) / 2;
          d += ` C${P[0][0]},${my} ${P[1][0]},${my} ${P[1][0]},${P[1][1]}`;
        } else for (let i = 1; i < P.length; i++) d += ` L${P[i][0]},${P[i][1]}`;
        const e = ed.e;
        const path = s('path', { d, class: 'graphs-edge' + (e.control ? ' control' : ''), 'marker-end': 'url(#graphs-arrow)',
          'stroke-width': Math.min(4, 1 + Math.log2(e.count)).toFixed(2), 'data-from': e.from.id, 'data-to': e.to.id });
        path.appendChild(s('title', null, `${e.from.id || '(root)'} → ${e.to.id}${e.control ? ' (control)' : ''}: ${e.count} edge${e.count > 1 ? 's' : ''}`));
        edgeLayer.appendChild(path);
        const lbl = edgeLabel(e);
        if (lbl) {
          const m = P.length === 2 ? [(P[0][0] + P[1][0]) / 2, (P[0][1] + P[1][1]) / 2] : P[Math.floor(P.length / 2)];
          edgeLayer.appendChild(s('text', { x: m[0] + 4, y: m[1], class: 'graphs-edge-label' }, clip(lbl, 24)));
        }
      });
      L.items.forEach((it, k) => {
        const { w, h: hh } = L.sizes[k];
        const x = ox + L.x[k] - w / 2, y = oy + L.y[k] - hh / 2;
        count++;
        if (it.kind !== 'more') this.boxes.set(it.kind + ':' + it.id, { x, y, w, h: hh });
        if (it.kind === 'more') {
          nodeLayer.appendChild(s('g', { class: 'graphs-more', transform: `translate(${x},${y})` },
            s('rect', { width: w, height: hh, rx: 6 }), s('text', { x: w / 2, y: hh / 2 + 4, 'text-anchor': 'middle' }, `… ${int(it.count)} more nodes`),
            s('title', null, `${int(it.count)} more nodes of this scope are not drawn (at most ${GROUP_DRAWN_MAX}); search finds them.`)));
          return;
        }
        const fill = this.color(it);
        const cls = (it.kind === 'node' ? 'graphs-node' : 'graphs-group ' + (it.expanded ? 'open' : 'closed'))
          + (this.selected === it ? ' selected' : '') + (this.matchSet && this.matchSet.has(it) ? ' match' : '');
        const el = s('g', { class: cls, transform: `translate(${x},${y})`, 'data-id': it.id });
        const rect = s('rect', { width: w, height: hh, rx: it.kind === 'node' ? hh / 2 : 6 });
        if (fill && !(it.kind === 'group' && it.expanded)) rect.setAttribute('style', 'fill:' + fill);
        el.appendChild(rect);
        el.appendChild(s('title', null, it.kind === 'node' ? `${it.name}\n${it.op}` : `${it.path}\n${int(it.count)} nodes`));
        if (it.kind === 'node') {
          el.appendChild(s('text', { x: w / 2, y: hh / 2 + 4, 'text-anchor': 'middle' }, clip(it.label, LABEL_MAX)));
          el.addEventListener('click', (ev) => { ev.stopPropagation(); this.select(it); });
        } else {
          const head = it.expanded ? 16 : hh / 2 - 2;
          el.appendChild(s('text', { x: 24, y: head, class: 'graphs-group-label' }, clip(it.label, LABEL_MAX)));
          if (!it.expanded) el.appendChild(s('text', { x: 24, y: hh / 2 + 12, class: 'graphs-group-count' }, `${int(it.count)} node${it.count === 1 ? '' : 's'}`));
          const tg = s('g', { class: 'graphs-toggle', transform: `translate(6,${it.expanded ? 5 : hh / 2 - 7})` },
            s('rect', { width: 14, height: 14, rx: 3 }), s('text', { x: 7, y: 11, 'text-anchor': 'middle' }, it.expanded ? '−' : '+'));
          tg.addEventListener('click', (ev) => { ev.stopPropagation(); this.toggle(it); });
          el.appendChild(tg);
          el.addEventListener('click', (ev) => { ev.stopPropagation(); this.select(it); });
          el.addEventListener('dblclick', (ev) => { ev.stopPropagation(); this.toggle(it); });
        }
        nodeLayer.appendChild(el);
        if (it.kind === 'group' && it.expanded) place(it, x + PAD, y + PAD + HEADER);
      });
    };
    place(g.root, 0, 0);
    // edges above the group frames, below the boxes that are not frames
    this.rootG.append(nodeLayer, edgeLayer);
    // boxes inside open frames must stay clickable above the edges
    edgeLayer.setAttribute('pointer-events', 'stroke');
    const st = stats();
    st.drawn = count;
    st.open = [...g.groups.values()].filter((x) => x.expanded && x !== g.root).map((x) => x.path);
    st.rootSize = { w: g.root.layout.width, h: g.root.layout.height };
    this.drawLegend();
    this.applyView();
  },

  drawLegend() {
    clear(this.legend);
    const mode = this.ctx.state.graphColor;
    if (!this.graph) return;
    if (mode === 'device') {
      for (const d of this.devices) {
        this.legend.appendChild(h('div', null, h('span', { class: 'swatch', style: { background: d ? DEVICE_COLORS[this.devices.indexOf(d) % DEVICE_COLORS.length] : 'var(--panel)' } }), ' ', d || 'no device'));
      }
      this.legend.appendChild(h('div', null, h('span', { class: 'swatch', style: { background: 'var(--graphs-mixed)' } }), ' several devices'));
    } else if (mode === 'compute' || mode === 'memory') {
      if (!this.graph.statsNodes) { this.legend.appendChild(h('div', { class: 'graphs-nostats' }, 'No step stats for this graph: pick a tag with step stats.')); return; }
      const max = mode === 'compute' ? this.graph.root.stats.maxMicros : this.graph.root.stats.maxBytes;
      this.legend.appendChild(h('div', { class: 'graphs-scale' }, h('span', null, '0'), h('span', { class: 'graphs-ramp' }),
        h('span', null, mode === 'compute' ? fmtMicros(max) : fmtBytes(max))));
    }
  },

  select(item) {
    this.selected = item;
    const st = stats();
    st.selected = item ? item.id : null;
    for (const el of this.rootG.querySelectorAll('.selected')) el.classList.remove('selected');
    const box = item && this.rootG.querySelector(`[data-id="${CSS.escape(item.id)}"]${item.kind === 'node' ? '.graphs-node' : '.graphs-group'}`);
    if (box) box.classList.add('selected');
    this.showPanel(item);
  },

  showPanel(item) {
    const p = this.panel;
    clear(p);
    if (!item) { p.hidden = true; return; }
    p.hidden = false;
    const row = (k, v) => h('tr', null, h('th', null, k), h('td', null, v));
    const close = h('button', { class: 'link graphs-panel-close', 'aria-label': 'Close', onclick: () => this.select(null) }, '×');
    if (item.kind === 'group') {
      const ops = new Map();
      const walk = (g) => { for (const c of g.children) { if (c.kind === 'node') ops.set(c.op, (ops.get(c.op) || 0) + 1); else walk(c); } };
      walk(item);
      const top = [...ops.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
      p.append(close, h('h3', { class: 'graphs-panel-title' }, item.path),
        h('table', { class: 'graphs-kv' }, row('scope', `${int(item.count)} nodes`), row('device', item.device === 'mixed' ? 'several' : (item.device || 'none')),
          item.stats ? row('compute', fmtMicros(item.stats.micros)) : null, item.stats ? row('memory', fmtBytes(item.stats.bytes)) : null),
        h('h4', null, 'Ops'), h('table', { class: 'graphs-kv' }, top.map(([op, c]) => row(op, int(c)))),
        h('button', { class: 'link', onclick: () => this.toggle(item) }, item.expanded ? 'Close this scope' : 'Open this scope'));
      return;
    }
    const tooLarge = new Set();
    const attrs = [];
    for (const [k, v] of item.attrs) {
      if (k === '_too_large_attrs') { for (const x of ((v.list || [])[0] || {}).s || []) tooLarge.add(String(x)); continue; }
      attrs.push([k, v]);
    }
    const attrValue = (k, v) => {
      const t = attrText(v);
      if (t.length <= ATTR_SHOWN_MAX && !t.includes('\n')) return t;
      const pre = h('pre', { class: 'graphs-attr' }, t.slice(0, ATTR_SHOWN_MAX));
      if (t.length <= ATTR_SHOWN_MAX) return pre;
      const more = h('button', { class: 'link', onclick: () => { pre.textContent = t; more.remove(); } }, `show all ${int(t.length)} characters`);
      return h('div', null, pre, more);
    };
    const link = (n) => h('button', { class: 'link graphs-jump', title: n.name, onclick: () => this.reveal(n) }, n.name);
    const inputs = item.inputs.map((inp) => {
      const src = this.graph.nodes.get(inp.name);
      const shape = src && !inp.control ? (src.shapes[inp.port] || '') : '';
      return h('li', { class: inp.control ? 'control' : null }, src ? link(src) : h('span', { class: 'graphs-missing' }, inp.name + ' (no such node)'),
        inp.port ? `:${inp.port}` : '', shape ? ' ' + shape : '', inp.control ? ' (control)' : '');
    });
    const outputs = item.outputs.map((o) => h('li', { class: o.control ? 'control' : null }, link(o.node),
      !o.control ? (item.shapes[o.port] ? ' ' + item.shapes[o.port] : '') : ' (control)'));
    p.append(close, h('h3', { class: 'graphs-panel-title' }, item.name),
      h('table', { class: 'graphs-kv' }, row('op', item.op), row('device', item.device || 'none'),
        item.shapes.length ? row('outputs', item.shapes.join(', ')) : null,
        item.stats ? row('compute', fmtMicros(item.stats.micros)) : null, item.stats ? row('memory', fmtBytes(item.stats.bytes)) : null),
      h('h4', null, `Attributes (${attrs.length})`),
      h('table', { class: 'graphs-kv graphs-attrs' }, attrs.map(([k, v]) => row(k, attrValue(k, v))),
        [...tooLarge].map((k) => row(k, h('span', { class: 'graphs-omitted' }, `omitted: over ${int(LIMIT_ATTR_SIZE)} bytes`)))),
      h('h4', null, `Inputs (${inputs.length})`), h('ul', { class: 'graphs-io' }, inputs),
      h('h4', null, `Outputs (${outputs.length})`), h('ul', { class: 'graphs-io' }, outputs));
  },

  showMatches() {
    clear(this.results);
    this.matchSet = null;
    const q = this.search.value.trim();
    if (!this.graph || !q) { this.matches = null; this.markMatches(); return; }
    const m = searchNodes(this.graph, q, SEARCH_MAX_RESULTS);
    this.matches = m;
    this.matchSet = new Set(m.hits);
    this.results.appendChild(h('div', { class: 'graphs-count' }, m.total > m.hits.length ? `${int(m.total)} nodes match, the first ${m.hits.length}:` : `${int(m.total)} node${m.total === 1 ? '' : 's'} match`));
    for (const n of m.hits) this.results.appendChild(h('button', { class: 'link graphs-hit', title: n.name, onclick: () => this.reveal(n) }, n.name));
    stats().matches = m.total;
    this.markMatches();
  },
  markMatches() {
    for (const el of this.rootG.querySelectorAll('.match')) el.classList.remove('match');
    if (!this.matchSet) return;
    for (const n of this.matchSet) {
      const el = this.rootG.querySelector(`.graphs-node[data-id="${CSS.escape(n.id)}"]`);
      if (el) el.classList.add('match');
    }
  },

  // Opens the groups down to node n, selects it and centres it.
  reveal(n) {
    const t0 = performance.now();
    for (const g of ancestors(n)) {
      if (!g.expanded || (g.children.length > GROUP_DRAWN_MAX && !(g.pinned || []).includes(n))) {
        g.expanded = true;
        if (g.children.length > GROUP_DRAWN_MAX) g.pinned = (g.pinned || []).concat([n]);
        for (let a = g; a; a = a.parent) a.layout = null;
      }
    }
    this.draw();
    this.select(n);
    const b = this.boxes.get('node:' + n.id);
    if (b) {
      const r = this.svg.getBoundingClientRect();
      this.view.k = Math.max(this.view.k, 0.9);
      this.view.tx = r.width / 2 - (b.x + b.w / 2) * this.view.k;
      this.view.ty = r.height / 2 - (b.y + b.h / 2) * this.view.k;
      this.applyView();
    }
    const st = stats();
    st.lastRevealMs = performance.now() - t0;
    st.revealed = n.id;
  },

  fit() {
    if (!this.graph || !this.graph.root.layout) return;
    const r = this.svg.getBoundingClientRect();
    const L = this.graph.root.layout;
    const k = Math.min(1.2, (r.width - 40) / Math.max(1, L.width), (r.height - 40) / Math.max(1, L.height));
    this.view.k = Math.max(0.05, k);
    this.view.tx = (r.width - L.width * this.view.k) / 2;
    this.view.ty = Math.max(20, (r.height - L.height * this.view.k) / 2);
    this.applyView();
  },
  applyView() {
    const v = this.view;
    this.rootG.setAttribute('transform', `translate(${v.tx},${v.ty}) scale(${v.k})`);
  },
  bindPanZoom() {
    let drag = null;
    this.svg.addEventListener('pointerdown', (e) => {
      if (e.target.closest && e.target.closest('.graphs-node, .graphs-group.closed, .graphs-toggle')) return;
      drag = { x: e.clientX, y: e.clientY, tx: this.view.tx, ty: this.view.ty };
      this.svg.setPointerCapture(e.pointerId);
    });
    this.svg.addEventListener('pointermove', (e) => {
      if (!drag) return;
      this.view.tx = drag.tx + e.clientX - drag.x;
      this.view.ty = drag.ty + e.clientY - drag.y;
      this.applyView();
    });
    const end = () => { drag = null; };
    this.svg.addEventListener('pointerup', end);
    this.svg.addEventListener('pointercancel', end);
    this.svg.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = this.svg.getBoundingClientRect();
      const px = e.clientX - r.left, py = e.clientY - r.top;
      const f = Math.exp(-e.deltaY * 0.0015);
      const k = Math.min(4, Math.max(0.02, this.view.k * f));
      this.view.tx = px - (px - this.view.tx) * (k / this.view.k);
      this.view.ty = py - (py - this.view.ty) * (k / this.view.k);
      this.view.k = k;
      this.applyView();
    }, { passive: false });
  },
};

function fmtMicros(us) {
  if (!(us > 0)) return '0 µs';
  if (us < 1000) return `${Math.round(us)} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

// The graph routes answer pbtxt (text/x-protobuf), not JSON; an error
// answer's {"error"} text is kept.
async function getText(path, params) {
  const res = await fetch(url(path, params), { cache: 'no-store' });
  const text = await res.text();
  if (!res.ok) {
    let msg = res.status + ' ' + res.statusText;
    try { const j = JSON.parse(text); if (j && j.error) msg = j.error; } catch (e) { if (text && text.length < 300) msg = text; }
    throw new Error(msg);
  }
  return text;
}

export default page;
