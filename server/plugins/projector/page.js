// Projector dashboard: an embedding (add_embedding, TensorBoard's
// projector_config.pbtxt) as a point cloud in 2-D or 3-D. PCA comes from
// the server (computed in C: components and explained variance); t-SNE
// and UMAP run in a Web Worker (worker.js, served as
// js/lib/projector_worker.js) with progress and a stop button. Points are
// coloured and labelled by a metadata column, drawn as their sprite when
// the embedding has one, found by a regex on a column, and a picked
// point lists its k nearest neighbours (cosine or Euclidean, in the
// original space) with their distances. Names and labels from the files
// are text only: DOM text nodes, or canvas fillText.
import { h, clear, debounce } from '../core/dom.js';
import { getJSON, url, HttpError } from '../core/api.js';
import { defineState, key, safeRegex } from '../core/state.js';
import { themeColor, viridis } from '../core/colors.js';
import { eng } from '../core/format.js';
import { PointCloud, FRAME_BUDGET_MS, LOD_MIN_POINTS } from '../lib/projector_gl.js';

const ROUTE = 'data/plugin/projector/';
// t-SNE and UMAP run on at most this many points, a seeded sample of the
// rest (TensorBoard samples 10,000 for t-SNE and 5,000 for UMAP too):
// t-SNE's exact repulsion is O(n^2) per iteration (about 25 M pairs a
// step at 5,000) and both methods' neighbour search is O(n^2 d).
export const TSNE_MAX_POINTS = 5000;
export const UMAP_MAX_POINTS = 5000;
// The methods' settings, TensorBoard's projector defaults (perplexity 30,
// UMAP's 15 neighbours) and run lengths that settle 5,000 points: t-SNE
// early exaggeration takes the worker's first 250 iterations, and UMAP's
// reference code runs 200 to 500 epochs by size.
export const TSNE_PERPLEXITY = 30;
export const TSNE_ITERATIONS = 500;
export const UMAP_NEIGHBORS = 15;
export const UMAP_EPOCHS = 300;
// Neighbours listed for a picked point, at most (the input is clamped).
export const KNN_MAX = 100;
// Labels drawn on the canvas at once: past this, a label field is a blur.
export const LABEL_MAX = 50;
// Matches of a search listed in the side panel (all are highlighted).
export const MATCH_LIST_MAX = 100;
// Distinct values of a colour column that get a colour of their own; past
// this a numeric column is a gradient and any other shares colours.
export const COLOR_CATEGORIES_MAX = 20;
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac',
  '#0072b2', '#d55e00', '#009e73', '#cc79a7', '#56b4e9', '#e69f00', '#17becf', '#bcbd22', '#7f3c8d', '#3d5a80'];
const SEED = 42;
// A press that moves less than this is a click (pick), not a drag.
const CLICK_PX = 4;
// How near (CSS px) the cursor must be to a point to pick it.
const PICK_PX = 10;
// After the last drag or wheel event, the view is still this long before
// the whole cloud is drawn again (gl.js: level of detail while moving).
const MOVE_SETTLE_MS = 150;

// The page's own look, once per document (the frame's style.css names no
// dashboard): a stage that fills the main area beside a side panel.
const CSS = `
.prj-row { display: flex; align-items: center; justify-content: space-between; gap: 8px; margin: 4px 0; font-size: 13px; }
.prj-row select, .prj-row input[type=number] { max-width: 150px; }
.prj-bar { display: flex; align-items: center; gap: 10px; min-height: 28px; }
.prj-bar progress { width: 220px; }
.prj-pca { margin: 4px 0 8px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.prj-body { display: flex; gap: 12px; align-items: stretch; }
.prj-view { flex: 1; min-width: 0; display: flex; flex-direction: column; }
.prj-stage { position: relative; height: max(420px, calc(100vh - 230px)); border: 1px solid var(--border); border-radius: 6px; overflow: hidden; background: var(--panel); }
.prj-stage canvas { position: absolute; inset: 0; width: 100%; height: 100%; }
.prj-overlay { cursor: grab; touch-action: none; }
.prj-legend { display: flex; flex-wrap: wrap; gap: 2px 12px; margin-top: 6px; }
.prj-legend .swatch { display: inline-block; width: 10px; height: 10px; border-radius: 50%; }
.prj-legend-title { font-weight: 600; }
.prj-side { width: 280px; flex: none; max-height: max(420px, calc(100vh - 230px)); overflow: auto; background: var(--panel); border: 1px solid var(--border); border-radius: 6px; padding: 8px 10px; overflow-wrap: anywhere; }
.prj-sub { margin: 8px 0 4px; color: var(--muted); }
.prj-list { margin: 0; padding-left: 22px; }
.prj-list li { cursor: pointer; padding: 1px 0; }
.prj-list li:hover { background: var(--hover); }
.prj-dist { float: right; font-family: var(--mono); color: var(--muted); margin-left: 8px; }
.prj-idx { float: right; color: var(--muted); font-size: 11px; }
.prj-meta { margin: 4px 0; color: var(--muted); }
#prj-search.invalid { outline: 2px solid var(--danger); }
@media (max-width: 900px) { .prj-body { flex-direction: column; } .prj-side { width: auto; max-height: none; } }
`;
function addStyle() {
  if (document.getElementById('prj-style')) return;
  document.head.append(h('style', { id: 'prj-style' }, CSS));
}

defineState({
  prjRun: key.str(),
  prjTensor: key.str(),
  prjMethod: key.oneOf('pca', 'tsne', 'umap'),
  prjDim: key.oneOf('3', '2'),
  prjColor: key.str(),
  prjLabel: key.str(),
  prjSearch: key.str(),
  prjMetric: key.oneOf('cosine', 'euclidean'),
});

function hexRgb(hex) {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) {
    const r = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(hex);
    return r ? [+r[1], +r[2], +r[3]] : [128, 128, 128];
  }
  const v = parseInt(m[1], 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

// TensorBoard's metadata.tsv rule: one column has no header, several do.
export function parseMetadata(text) {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  if (!lines.length) return { columns: [], rows: [] };
  const first = lines[0].split('\t');
  if (first.length > 1) return { columns: first, rows: lines.slice(1).map((l) => l.split('\t')) };
  return { columns: ['label'], rows: lines.map((l) => [l]) };
}

async function getBytes(path, params) {
  const u = url(path, params);
  let res;
  try { res = await fetch(u, { cache: 'no-store' }); } catch (e) { throw new HttpError(0, 'server unreachable', u); }
  if (!res.ok) {
    let msg = res.status + ' ' + res.statusText;
    try { const j = JSON.parse(await res.text()); if (j && j.error) msg = j.error; } catch (e) { /* not JSON */ }
    throw new HttpError(res.status, msg, u);
  }
  return res;
}

function seededSample(n, m) {
  const idx = Int32Array.from({ length: n }, (_, i) => i);
  let a = SEED;
  for (let i = n - 1; i > 0; i--) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    const j = a % (i + 1);
    const t = idx[i]; idx[i] = idx[j]; idx[j] = t;
  }
  return idx.slice(0, m).sort();
}

const page = {
  mount(ctx) {
    addStyle();
    this.ctx = ctx;
    this.dead = false;
    this.emb = null;
    // What the browser tests read (window.__tfb.pages.projector), with the
    // fps measure they call.
    this.pub = {
      fps: null,
      measureFps: (ms) => this.measureFps(ms),
      // Where point i is drawn, in CSS px from the canvas's top left.
      screenOf: (i) => { const sp = this.screenPos(); return [sp[2 * i], sp[2 * i + 1]]; },
      // Points the last frame drew, and gl.js's level-of-detail bounds.
      drawnNow: () => (this.gl ? this.gl.drawn() : 0),
      lod: { budgetMs: FRAME_BUDGET_MS, minPoints: LOD_MIN_POINTS },
    };
    window.__tfb.pages.projector = this.pub;
    const sel = (id, on) => h('select', { id, onchange: on });
    this.runSel = sel('prj-run', (e) => ctx.setState({ prjRun: e.target.value, prjTensor: '' }));
    this.tensorSel = sel('prj-tensor', (e) => ctx.setState({ prjTensor: e.target.value }));
    this.methodSel = sel('prj-method', (e) => ctx.setState({ prjMethod: e.target.value }));
    for (const [v, t] of [['pca', 'PCA (server)'], ['tsne', 't-SNE'], ['umap', 'UMAP']]) this.methodSel.append(h('option', { value: v }, t));
    this.dimSel = sel('prj-dim', (e) => ctx.setState({ prjDim: e.target.value }));
    for (const v of ['3', '2']) this.dimSel.append(h('option', { value: v }, v + '-D'));
    this.colorSel = sel('prj-color', (e) => ctx.setState({ prjColor: e.target.value }));
    this.labelSel = sel('prj-label', (e) => ctx.setState({ prjLabel: e.target.value }));
    this.search = h('input', { type: 'search', id: 'prj-search', class: 'filter', placeholder: 'Search labels (regex)', value: ctx.state.prjSearch,
      oninput: debounce((e) => ctx.setState({ prjSearch: e.target.value }), 150) });
    this.metricSel = sel('prj-metric', (e) => ctx.setState({ prjMetric: e.target.value }));
    for (const [v, t] of [['cosine', 'Cosine'], ['euclidean', 'Euclidean']]) this.metricSel.append(h('option', { value: v }, t));
    this.kInput = h('input', { type: 'number', class: 'num-input', id: 'prj-k', min: '1', max: String(KNN_MAX), value: '10', onchange: () => this.neighbours() });
    this.spriteBox = h('input', { type: 'checkbox', id: 'prj-sprites', checked: true, onchange: () => this.restyle() });
    const row = (label, el) => h('label', { class: 'prj-row' }, h('span', null, label), el);
    this.spriteRow = row('Sprites as points', this.spriteBox);
    ctx.settings.append(h('h3', null, 'Embedding'), row('Run', this.runSel), row('Tensor', this.tensorSel),
      h('h3', null, 'Projection'), row('Method', this.methodSel), row('Dimensions', this.dimSel),
      h('h3', null, 'Points'), row('Colour by', this.colorSel), row('Label by', this.labelSel), this.spriteRow,
      h('h3', null, 'Search'), this.search,
      h('h3', null, 'Neighbours'), row('Distance', this.metricSel), row('k', this.kInput));

    this.status = h('div', { id: 'prj-status', class: 'small prj-status' });
    this.progress = h('progress', { id: 'prj-progress', max: '1', value: '0', hidden: true });
    this.stopBtn = h('button', { id: 'prj-stop', class: 'btn', hidden: true, onclick: () => this.stop() }, 'Stop');
    this.pcaInfo = h('div', { id: 'prj-pca', class: 'small prj-pca' });
    this.canvas = h('canvas', { id: 'prj-canvas', class: 'prj-canvas' });
    this.overlay = h('canvas', { id: 'prj-overlay', class: 'prj-overlay' });
    this.tip = h('div', { class: 'prj-tip', hidden: true });
    this.legend = h('div', { id: 'prj-legend', class: 'small prj-legend' });
    this.side = h('div', { id: 'prj-side', class: 'prj-side small' });
    this.stage = h('div', { class: 'prj-stage' }, this.canvas, this.overlay, this.tip);
    this.message = h('div', { id: 'prj-message' });
    ctx.main.append(h('div', { class: 'prj' },
      h('div', { class: 'prj-bar' }, this.status, this.progress, this.stopBtn),
      this.message, this.pcaInfo,
      h('div', { class: 'prj-body' }, h('div', { class: 'prj-view' }, this.stage, this.legend), this.side)));
    try {
      this.gl = new PointCloud(this.canvas);
    } catch (e) {
      this.gl = null;
      this.showMessage('The projector needs WebGL: ' + e.message);
    }
    this.bindInput();
    this.onResize = () => this.resize();
    window.addEventListener('resize', this.onResize);
    this.load();
  },

  unmount() {
    this.stop(true);
    window.removeEventListener('resize', this.onResize);
    if (this.raf) cancelAnimationFrame(this.raf);
    this.dead = true;
  },

  update(ctx, changed) {
    this.ctx = ctx;
    const c = new Set(changed);
    if (c.has('data') || c.has('prjRun') || c.has('prjTensor')) { this.load(); return; }
    if (c.has('prjMethod') || c.has('prjDim')) { this.project(); return; }
    if (c.has('prjColor') || c.has('prjLabel') || c.has('prjSearch')) {
      if (document.activeElement !== this.search) this.search.value = ctx.state.prjSearch;
      this.restyle();
    }
    if (c.has('prjMetric')) this.neighbours();
  },

  showMessage(text, isError = true) {
    clear(this.message);
    if (text) this.message.append(h('div', { class: isError ? 'empty small error-text' : 'empty small' }, text));
    this.pub.message = text || null;
  },

  setOptions(selEl, values, current) {
    clear(selEl);
    for (const v of values) selEl.append(h('option', { value: v.value }, v.text));
    selEl.value = current;
  },

  // Runs, then the run's embeddings, then the picked tensor, its metadata
  // and sprite; then the projection.
  async load() {
    const token = {};
    this.token = token;
    const st = this.ctx.state;
    this.stop(true);
    this.showMessage(null);
    this.methodSel.value = st.prjMethod;
    this.dimSel.value = st.prjDim;
    this.metricSel.value = st.prjMetric;
    try {
      const runs = await getJSON(ROUTE + 'runs');
      if (this.token !== token) return;
      if (!Array.isArray(runs) || !runs.length) { this.showMessage('No run has an embedding.', false); return; }
      const run = runs.includes(st.prjRun) ? st.prjRun : runs[0];
      this.setOptions(this.runSel, runs.map((r) => ({ value: r, text: r })), run);
      const info = await getJSON(ROUTE + 'info', { run });
      if (this.token !== token) return;
      const embs = (info && Array.isArray(info.embeddings)) ? info.embeddings : [];
      if (!embs.length) { this.showMessage('Run ' + run + ' lists no embedding.', false); return; }
      const e = embs.find((x) => x.tensorName === st.prjTensor) || embs[0];
      this.setOptions(this.tensorSel, embs.map((x) => ({ value: x.tensorName, text: x.tensorName + (Array.isArray(x.tensorShape) ? '  (' + x.tensorShape.join(' × ') + ')' : '') })), e.tensorName);
      this.status.textContent = 'Loading ' + e.tensorName + '…';
      const name = e.tensorName;
      const [tensorRes, meta, sprite] = await Promise.all([
        getBytes(ROUTE + 'tensor', { run, name }).then((r) => r.arrayBuffer()),
        e.metadataPath ? getBytes(ROUTE + 'metadata', { run, name }).then((r) => r.text()).catch((err) => ({ error: err.message })) : null,
        e.sprite && e.sprite.imagePath ? this.loadSprite(run, name).catch((err) => ({ error: err.message })) : null,
      ]);
      if (this.token !== token) return;
      this.setEmbedding(run, e, tensorRes, meta, sprite, (info.tfboardNotes && Array.isArray(info.tfboardNotes[name])) ? info.tfboardNotes[name] : []);
      this.project();
    } catch (err) {
      if (this.token !== token) return;
      this.status.textContent = '';
      this.showMessage('Could not load the embedding: ' + err.message);
    }
  },

  async loadSprite(run, name) {
    const res = await getBytes(ROUTE + 'sprite_image', { run, name });
    const blob = await res.blob();
    const img = new Image();
    const u = URL.createObjectURL(blob);
    try {
      img.src = u;
      await img.decode();
    } finally { URL.revokeObjectURL(u); }
    return img;
  },

  // serverNotes: what the server's `info` noted of this embedding
  // (tfboardNotes: rows that do not match, a sprite that does not fit...).
  setEmbedding(run, e, buf, metaText, sprite, serverNotes) {
    const shape = Array.isArray(e.tensorShape) ? e.tensorShape : [];
    let [n, d] = shape;
    const notes = serverNotes.filter((x) => typeof x === 'string');
    if (!(d > 0) || buf.byteLength % 4) throw new Error(`the tensor's answer (${buf.byteLength} bytes) does not fit its shape [${shape.join(', ')}]`);
    if (n * d * 4 !== buf.byteLength) {
      notes.push(`The tensor holds ${buf.byteLength / 4 / d} rows where its shape says ${n}.`);
      n = Math.floor(buf.byteLength / 4 / d);
    }
    const data = new Float32Array(buf, 0, n * d);
    // Rows with a NaN or an infinity cannot be placed: left out, counted.
    const ok = new Uint8Array(n);
    let bad = 0;
    for (let i = 0; i < n; i++) {
      let good = 1;
      for (let c = 0; c < d; c++) if (!Number.isFinite(data[i * d + c])) { good = 0; break; }
      ok[i] = good;
      if (!good) bad++;
    }
    if (bad) notes.push(`${bad} of ${n} points have a NaN or infinite value: not shown.`);
    let meta = { columns: [], rows: [] };
    if (metaText && typeof metaText === 'object') notes.push('Metadata not loaded: ' + metaText.error + '.');
    else if (typeof metaText === 'string') {
      meta = parseMetadata(metaText);
      if (meta.rows.length !== n) notes.push(`The metadata has ${meta.rows.length} rows for ${n} points: ${meta.rows.length < n ? 'the points past them have no label' : 'the rows past them are not used'}.`);
    }
    let spriteImg = null, grid = null;
    if (sprite && sprite.error) notes.push('Sprite not loaded: ' + sprite.error + '.');
    else if (sprite) {
      const [w, hh] = e.sprite.singleImageDim || [];
      if (w > 0 && hh > 0) {
        const cols = Math.floor(sprite.naturalWidth / w);
        if (cols < 1 || sprite.naturalWidth % w || sprite.naturalHeight % hh) notes.push(`The sprite (${sprite.naturalWidth} × ${sprite.naturalHeight}) is not a whole number of ${w} × ${hh} images.`);
        if (cols >= 1) { spriteImg = sprite; grid = [cols, sprite.naturalWidth / w, sprite.naturalHeight / hh]; }
      }
    }
    // Norms once, for cosine neighbours.
    const norm = new Float32Array(n);
    for (let i = 0; i < n; i++) { let s = 0; for (let c = 0; c < d; c++) s += data[i * d + c] * data[i * d + c]; norm[i] = Math.sqrt(s); }
    this.emb = { run, name: e.tensorName, n, d, data, ok, bad, meta, notes, spriteImg, grid, norm, spriteCells: grid ? Math.floor(grid[1]) * Math.floor(grid[2]) : 0 };
    this.selected = -1;
    this.hover = -1;
    this.knn = [];
    if (this.gl && spriteImg) this.gl.setSprite(spriteImg, grid);
    this.spriteRow.hidden = !spriteImg;
    const cols = meta.columns.map((c, i) => ({ value: String(i), text: c }));
    const st = this.ctx.state;
    this.setOptions(this.colorSel, [{ value: '', text: '(none)' }, ...cols], cols.some((c) => c.value === st.prjColor) ? st.prjColor : (cols.length ? '0' : ''));
    this.setOptions(this.labelSel, cols.length ? cols : [{ value: '', text: '(index)' }], cols.some((c) => c.value === st.prjLabel) ? st.prjLabel : (cols.length ? '0' : ''));
    clear(this.side);
    this.pub.run = run;
    this.pub.tensor = e.tensorName;
    this.pub.points = n;
    this.pub.dims = d;
    this.pub.columns = meta.columns.slice();
    this.pub.notes = notes.slice();
    this.pub.sprite = grid ? grid.slice() : null;
    this.showMessage(notes.length ? notes.join(' ') : null, false);
  },

  label(i) {
    const m = this.emb.meta;
    const c = Number(this.labelSel.value || 0);
    const r = m.rows[i];
    return r && r[c] !== undefined ? r[c] : (m.columns.length ? '' : String(i));
  },

  // The projection the state asks for, then the view.
  async project() {
    if (!this.emb || !this.gl) return;
    this.stop(true);
    const st = this.ctx.state;
    this.methodSel.value = st.prjMethod;
    this.dimSel.value = st.prjDim;
    const dim = Number(st.prjDim);
    this.pub.method = st.prjMethod;
    this.pub.dim = dim;
    this.pub.projected = false;
    clear(this.pcaInfo);
    if (st.prjMethod === 'pca') await this.pca(dim);
    else this.runWorker(st.prjMethod, dim);
  },

  // PCA from the server's `pca` route (server/plugins/projector/API.md:
  // components, mean, explained variance and its ratio, rows left out);
  // the points are projected here on the first 2 or 3 components.
  async pca(dim) {
    const e = this.emb;
    const token = this.token;
    this.status.textContent = 'PCA on the server…';
    let ans;
    const t0 = performance.now();
    try {
      ans = await getJSON(ROUTE + 'pca', { run: e.run, name: e.name, components: dim });
    } catch (err) {
      if (this.token !== token || this.emb !== e) return;
      this.status.textContent = '';
      const why = err instanceof HttpError && (err.status === 404 || err.status === 501) ? 'this server has no PCA route' : err.message;
      this.pcaInfo.append(h('div', { class: 'error-text', id: 'prj-pca-missing' }, 'PCA unavailable: ' + why + '. Pick t-SNE or UMAP.'));
      this.pub.pca = null;
      this.setCoords(null, dim);
      return;
    }
    const ms = performance.now() - t0;
    if (this.token !== token || this.emb !== e) return;
    const comps = Array.isArray(ans.components) ? ans.components : [];
    const mean = Array.isArray(ans.mean) ? ans.mean.map(Number) : null;
    const ratio = Array.isArray(ans.explained_variance_ratio) ? ans.explained_variance_ratio.map(Number) : null;
    const vars = Array.isArray(ans.explained_variance) ? ans.explained_variance.map(Number) : null;
    const k = Math.min(dim, comps.length);
    if (k < 1 || comps.some((c) => !Array.isArray(c) || c.length !== e.d)) {
      this.pcaInfo.append(h('div', { class: 'error-text', id: 'prj-pca-missing' }, 'PCA unavailable: the server\'s answer has no usable components.'));
      this.status.textContent = '';
      this.setCoords(null, dim);
      return;
    }
    const n = e.n, d = e.d, X = e.data;
    const Y = new Float32Array(n * dim);
    const C = comps.slice(0, k).map((c) => Float64Array.from(c, Number));
    const mu = mean && mean.length === d ? Float64Array.from(mean) : new Float64Array(d);
    for (let i = 0; i < n; i++) {
      if (!e.ok[i]) continue;
      for (let j = 0; j < k; j++) {
        let s = 0;
        const cj = C[j];
        for (let c = 0; c < d; c++) s += (X[i * d + c] - mu[c]) * cj[c];
        Y[i * dim + j] = s;
      }
    }
    const pct = (x) => (Number.isFinite(x) ? (100 * x).toFixed(1) + ' %' : '?');
    const total = ratio ? ratio.slice(0, k).reduce((a, b) => a + b, 0) : NaN;
    this.pcaInfo.append(h('span', { class: 'prj-pc-total' }, `Explained variance: ${pct(total)} in ${k} components`),
      ...Array.from({ length: k }, (_, j) => h('span', { class: 'prj-pc' },
        `PC${j + 1} ${pct(ratio ? ratio[j] : NaN)}` + (vars && Number.isFinite(vars[j]) ? ` (variance ${eng(vars[j])})` : ''))));
    if (ans.rows_used !== undefined && ans.rows_used < n - e.bad) this.pcaInfo.append(h('span', { class: 'muted' }, `components from ${Number(ans.rows_used).toLocaleString('en-US')} evenly spaced rows`));
    this.pub.pca = { components: k, ratio: ratio ? ratio.slice(0, k) : null, variance: vars ? vars.slice(0, k) : null, total, ms };
    this.status.textContent = `PCA of ${n.toLocaleString('en-US')} points × ${d}, answered by the server in ${ms.toFixed(0)} ms`;
    this.setCoords(Y, dim, null);
  },

  runWorker(method, dim) {
    const e = this.emb;
    const cap = method === 'tsne' ? TSNE_MAX_POINTS : UMAP_MAX_POINTS;
    let good = [];
    for (let i = 0; i < e.n; i++) if (e.ok[i]) good.push(i);
    let sample = Int32Array.from(good);
    if (sample.length > cap) sample = Int32Array.from(seededSample(sample.length, cap), (j) => good[j]);
    good = null;
    const m = sample.length;
    const name = method === 'tsne' ? 't-SNE' : 'UMAP';
    if (m < 3) { this.status.textContent = name + ' needs at least 3 points.'; return; }
    const X = new Float32Array(m * e.d);
    for (let q = 0; q < m; q++) X.set(e.data.subarray(sample[q] * e.d, sample[q] * e.d + e.d), q * e.d);
    const w = new Worker(new URL('../lib/projector_worker.js', import.meta.url));
    this.worker = w;
    this.sample = sample;
    this.pub.sampled = m;
    this.pub.iterations = 0;
    this.pub.running = true;
    this.pub.stopped = false;
    this.progress.hidden = false;
    this.progress.value = 0;
    this.stopBtn.hidden = false;
    const what = `${name} of ${m < e.n - e.bad ? 'a sample of ' : ''}${m.toLocaleString('en-US')} points`;
    this.status.textContent = what + ': starting…';
    const place = (coords) => {
      const Y = new Float32Array(e.n * dim);
      const keep = new Uint8Array(e.n);
      for (let q = 0; q < m; q++) { keep[sample[q]] = 1; for (let c = 0; c < dim; c++) Y[sample[q] * dim + c] = coords[q * dim + c]; }
      this.setCoords(Y, dim, keep);
    };
    w.onmessage = (ev) => {
      if (this.worker !== w) return;
      const msg = ev.data;
      if (msg.type === 'progress') {
        this.progress.value = msg.done / msg.total;
        this.status.textContent = `${what}: ${msg.phase === 'neighbours' ? 'nearest neighbours' : msg.phase} ${msg.done} of ${msg.total}`;
        if (msg.coords) { this.pub.iterations = msg.done; place(msg.coords); }
      } else if (msg.type === 'done') {
        this.pub.iterations = msg.iterations;
        place(msg.coords);
        this.finishWorker(what + `: done, ${msg.iterations} ${method === 'tsne' ? 'iterations' : 'epochs'}`);
      } else if (msg.type === 'error') {
        this.finishWorker(name + ' failed: ' + msg.message);
      }
    };
    w.onerror = (ev) => { if (this.worker === w) this.finishWorker(name + ' failed: ' + (ev.message || 'worker error')); };
    w.postMessage({ method, data: X, n: m, d: e.d, dim, seed: SEED, perplexity: TSNE_PERPLEXITY, iterations: TSNE_ITERATIONS, neighbors: UMAP_NEIGHBORS, epochs: UMAP_EPOCHS }, [X.buffer]);
  },

  finishWorker(text) {
    if (this.worker) this.worker.terminate();
    this.worker = null;
    this.progress.hidden = true;
    this.stopBtn.hidden = true;
    this.pub.running = false;
    this.status.textContent = text;
  },

  // Stop: the worker is ended and the last layout it sent stays.
  stop(quiet) {
    if (!this.worker) return;
    const it = this.pub.iterations;
    this.finishWorker(quiet ? '' : `Stopped after ${it} ${this.ctx.state.prjMethod === 'tsne' ? 'iterations' : 'epochs'}.`);
    if (!quiet) this.pub.stopped = true;
  },

  // Coordinates (n x dim) to the view: centred, scaled into [-1, 1] with
  // one factor for all axes (so shapes keep their proportions).
  setCoords(Y, dim, keep) {
    const e = this.emb;
    const n = e.n;
    const pos = new Float32Array(n * 3);
    this.visible = new Uint8Array(n);
    if (Y) {
      const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
      for (let i = 0; i < n; i++) {
        if (!e.ok[i] || (keep && !keep[i])) continue;
        this.visible[i] = 1;
        for (let c = 0; c < dim; c++) { const v = Y[i * dim + c]; if (v < lo[c]) lo[c] = v; if (v > hi[c]) hi[c] = v; }
      }
      let span = 0;
      for (let c = 0; c < dim; c++) span = Math.max(span, hi[c] - lo[c]);
      const s = span > 0 ? 2 / span : 1;
      for (let i = 0; i < n; i++) {
        if (!this.visible[i]) continue;
        for (let c = 0; c < dim; c++) pos[i * 3 + c] = (Y[i * dim + c] - (lo[c] + hi[c]) / 2) * s;
      }
    }
    this.gl.setPositions(pos, dim);
    this.screen = new Float32Array(n * 2);
    this.screenDirty = true;
    this.pub.projected = !!Y;
    this.pub.visible = this.visible.reduce((a, b) => a + b, 0);
    this.resize();
    this.restyle();
  },

  // Colours, sizes and sprites from the colour column, the search and the
  // picked point with its neighbours.
  restyle() {
    const e = this.emb;
    if (!e || !this.gl || !this.visible) return;
    const n = e.n;
    const col = new Uint8Array(n * 4), size = new Float32Array(n), spr = new Float32Array(n);
    const cidx = this.colorSel.value === '' ? -1 : Number(this.colorSel.value);
    const colour = this.colourMap(cidx);
    const { re, ok } = safeRegex(this.ctx.state.prjSearch);
    this.search.classList.toggle('invalid', !ok);
    const matches = [];
    if (re) for (let i = 0; i < n; i++) if (this.visible[i] && re.test(this.label(i))) matches.push(i);
    const hit = new Uint8Array(n);
    for (const i of matches) hit[i] = 1;
    const near = new Uint8Array(n);
    for (const nb of this.knn) near[nb.i] = 1;
    const focus = re || this.selected >= 0;
    const useSprite = !!(e.spriteImg && this.spriteBox.checked);
    const base = useSprite ? Math.max(12, Math.min(28, 700 / Math.sqrt(n))) : Math.max(2.5, Math.min(8, 260 / Math.sqrt(n)));
    for (let i = 0; i < n; i++) {
      const [r, g, b] = colour(i);
      const lit = !focus || hit[i] || near[i] || i === this.selected;
      col[4 * i] = r; col[4 * i + 1] = g; col[4 * i + 2] = b;
      col[4 * i + 3] = this.visible[i] ? (lit ? 255 : 40) : 0;
      size[i] = !this.visible[i] ? 0 : i === this.selected ? base * 2 : (near[i] || hit[i]) ? base * 1.5 : base;
      spr[i] = useSprite && i < e.spriteCells ? i : -1;
    }
    this.gl.useSprite = useSprite;
    this.gl.setStyle(col, size, spr);
    if (focus) {
      const order = new Uint32Array(n);
      let a = 0, b = n;
      for (let i = 0; i < n; i++) { if (col[4 * i + 3] === 255) order[--b] = i; else order[a++] = i; }
      this.gl.setOrder(order);
    } else this.gl.setOrder(null);
    this.matches = matches;
    this.pub.matches = matches.length;
    this.pub.spritesShown = useSprite;
    this.drawLegend(cidx);
    this.drawSide();
    this.redraw();
  },

  colourMap(cidx) {
    const e = this.emb;
    const accent = hexRgb(themeColor('--accent') || '#f57c00');
    this.legendItems = [];
    if (cidx < 0) return () => accent;
    const vals = e.meta.rows.map((r) => (r[cidx] === undefined ? '' : r[cidx]));
    const counts = new Map();
    for (const v of vals) counts.set(v, (counts.get(v) || 0) + 1);
    const distinct = [...counts.keys()];
    const nums = distinct.every((v) => v.trim() !== '' && Number.isFinite(Number(v)));
    if (distinct.length > COLOR_CATEGORIES_MAX && nums) {
      const xs = vals.map(Number);
      let lo = Infinity, hi = -Infinity;
      for (const x of xs) { if (x < lo) lo = x; if (x > hi) hi = x; }
      this.legendItems = [{ text: eng(lo), rgb: hexRgb(viridis(0)) }, { text: eng(hi), rgb: hexRgb(viridis(1)) }];
      return (i) => (i < xs.length ? hexRgb(viridis(hi > lo ? (xs[i] - lo) / (hi - lo) : 0)) : [150, 150, 150]);
    }
    distinct.sort((a, b) => counts.get(b) - counts.get(a) || (a < b ? -1 : 1));
    const slot = new Map();
    distinct.forEach((v, j) => slot.set(v, hexRgb(PALETTE[j % PALETTE.length])));
    this.legendItems = distinct.slice(0, COLOR_CATEGORIES_MAX).map((v) => ({ text: (v === '' ? '(empty)' : v) + ' (' + counts.get(v) + ')', rgb: slot.get(v) }));
    if (distinct.length > COLOR_CATEGORIES_MAX) this.legendItems.push({ text: `+${distinct.length - COLOR_CATEGORIES_MAX} more values share these colours`, rgb: null });
    const grey = [150, 150, 150];
    return (i) => (i < vals.length ? slot.get(vals[i]) : grey);
  },

  drawLegend(cidx) {
    clear(this.legend);
    if (cidx < 0) return;
    this.legend.append(h('span', { class: 'prj-legend-title' }, this.emb.meta.columns[cidx] + ':'));
    for (const it of this.legendItems) {
      this.legend.append(h('span', { class: 'prj-legend-item' },
        it.rgb ? h('span', { class: 'swatch', style: { background: `rgb(${it.rgb.join(',')})` } }) : null, ' ', it.text));
    }
    this.pub.legend = this.legendItems.map((x) => x.text);
  },

  // The picked point's k nearest neighbours in the original space.
  neighbours() {
    const e = this.emb;
    this.knn = [];
    if (!e || this.selected < 0) { this.restyle(); return; }
    const k = Math.max(1, Math.min(KNN_MAX, Math.floor(Number(this.kInput.value)) || 10));
    this.kInput.value = String(k);
    const cos = this.ctx.state.prjMetric === 'cosine';
    const d = e.d, X = e.data, s = this.selected;
    const best = [];
    for (let i = 0; i < e.n; i++) {
      if (i === s || !e.ok[i]) continue;
      let dist;
      if (cos) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += X[s * d + c] * X[i * d + c];
        const den = e.norm[s] * e.norm[i];
        dist = den > 0 ? 1 - dot / den : 1;
      } else {
        let ss = 0;
        for (let c = 0; c < d; c++) { const t = X[s * d + c] - X[i * d + c]; ss += t * t; }
        dist = Math.sqrt(ss);
      }
      if (best.length === k && dist >= best[k - 1].dist) continue;
      let p = best.length < k ? best.length : k - 1;
      best[p] = null;
      while (p > 0 && best[p - 1].dist > dist) { best[p] = best[p - 1]; p--; }
      best[p] = { i, dist };
    }
    this.knn = best;
    this.pub.neighbours = best.map((b) => ({ i: b.i, label: this.label(b.i), dist: b.dist }));
    this.restyle();
  },

  select(i) {
    this.selected = i;
    this.pub.selected = i;
    this.neighbours();
  },

  drawSide() {
    const e = this.emb;
    clear(this.side);
    if (this.selected >= 0) {
      const s = this.selected;
      const head = h('div', { class: 'prj-picked' }, h('b', null, 'Point ' + s + ': '), this.label(s),
        h('button', { class: 'link', id: 'prj-clear', style: { marginLeft: '8px' }, onclick: () => this.select(-1) }, 'clear'));
      const meta = e.meta.columns.length && e.meta.rows[s] ? h('div', { class: 'prj-meta' }, ...e.meta.columns.map((c, j) => h('div', null, c + ': ' + (e.meta.rows[s][j] ?? '')))) : null;
      const list = h('ol', { id: 'prj-knn', class: 'prj-list' }, ...this.knn.map((nb) => h('li', { dataset: { i: String(nb.i) }, onclick: () => this.select(nb.i) },
        h('span', { class: 'prj-nb-label' }, this.label(nb.i) || '#' + nb.i), h('span', { class: 'prj-dist' }, nb.dist.toFixed(4)), h('span', { class: 'prj-idx' }, '#' + nb.i))));
      this.side.append(head, meta, h('div', { class: 'prj-sub' }, `${this.knn.length} nearest (${this.ctx.state.prjMetric === 'cosine' ? 'cosine distance' : 'Euclidean distance'}, in all ${e.d} dimensions)`), list);
    }
    if (this.ctx.state.prjSearch) {
      const ms = this.matches || [];
      this.side.append(h('div', { class: 'prj-sub', id: 'prj-match-count' }, `${ms.length} point${ms.length === 1 ? '' : 's'} match “${this.ctx.state.prjSearch}”`),
        h('ul', { id: 'prj-matches', class: 'prj-list' }, ...ms.slice(0, MATCH_LIST_MAX).map((i) => h('li', { onclick: () => this.select(i) }, this.label(i) || '', h('span', { class: 'prj-idx' }, '#' + i)))),
        ms.length > MATCH_LIST_MAX ? h('div', { class: 'muted' }, `… and ${ms.length - MATCH_LIST_MAX} more`) : null);
    }
    if (!this.side.childNodes.length) this.side.append(h('div', { class: 'muted' }, 'Click a point to list its nearest neighbours.'));
  },

  resize() {
    if (!this.gl) return;
    const r = this.stage.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(r.width)), hh = Math.max(1, Math.round(r.height));
    for (const c of [this.canvas, this.overlay]) { c.width = w * dpr; c.height = hh * dpr; }
    this.screenDirty = true;
    this.redraw();
  },

  redraw() {
    if (this.raf || !this.gl) return;
    this.raf = requestAnimationFrame(() => { this.raf = 0; this.frame(); });
  },

  frame() {
    if (this.dead) return;
    const bg = hexRgb(themeColor('--panel') || '#ffffff');
    this.gl.bg = bg.map((v) => v / 255);
    this.gl.draw();
    this.screenDirty = true;
    this.drawLabels();
    this.pub.frames = (this.pub.frames || 0) + 1;
  },

  screenPos() {
    if (this.screenDirty) { this.gl.project(this.screen); this.screenDirty = false; }
    return this.screen;
  },

  // Labels of the hovered and picked points, the neighbours and the first
  // search matches, as canvas text.
  drawLabels() {
    const cx = this.overlay.getContext('2d');
    const dpr = window.devicePixelRatio || 1;
    cx.setTransform(dpr, 0, 0, dpr, 0, 0);
    cx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    if (!this.emb || !this.visible) return;
    const want = [];
    if (this.selected >= 0) want.push(this.selected);
    for (const nb of this.knn) want.push(nb.i);
    if (this.ctx.state.prjSearch) for (const i of (this.matches || []).slice(0, LABEL_MAX)) want.push(i);
    if (this.hover >= 0) want.push(this.hover);
    if (!want.length) return;
    const sp = this.screenPos();
    cx.font = '12px system-ui, sans-serif';
    cx.textBaseline = 'middle';
    const ink = themeColor('--text') || '#1f2328', halo = themeColor('--panel') || '#fff';
    const seen = new Set();
    for (const i of want.slice(0, LABEL_MAX + 2)) {
      if (seen.has(i) || !this.visible[i]) continue;
      seen.add(i);
      const x = sp[2 * i], y = sp[2 * i + 1];
      if (!Number.isFinite(x)) continue;
      const t = this.label(i) || '#' + i;
      cx.lineWidth = 3; cx.strokeStyle = halo; cx.strokeText(t, x + 8, y);
      cx.fillStyle = ink; cx.fillText(t, x + 8, y);
    }
  },

  pick(x, y) {
    if (!this.visible) return -1;
    const sp = this.screenPos();
    let best = -1, bd = PICK_PX * PICK_PX;
    for (let i = 0; i < this.emb.n; i++) {
      if (!this.visible[i]) continue;
      const dx = sp[2 * i] - x, dy = sp[2 * i + 1] - y;
      const dd = dx * dx + dy * dy;
      if (dd < bd) { bd = dd; best = i; }
    }
    return best;
  },

  bindInput() {
    const cv = this.overlay;
    let down = null;
    cv.addEventListener('pointerdown', (ev) => { down = { x: ev.clientX, y: ev.clientY, moved: false }; cv.setPointerCapture(ev.pointerId); });
    cv.addEventListener('pointermove', (ev) => {
      if (!this.gl || !this.emb) return;
      if (down) {
        const dx = ev.clientX - down.x, dy = ev.clientY - down.y;
        if (!down.moved && Math.hypot(dx, dy) < CLICK_PX) return;
        down.moved = true;
        down.x = ev.clientX; down.y = ev.clientY;
        const c = this.gl.cam;
        if (this.gl.dim === 3) {
          c.theta -= dx * 0.01;
          c.phi = Math.max(-1.5, Math.min(1.5, c.phi + dy * 0.01));
        } else {
          const r = cv.getBoundingClientRect();
          c.panX += (2 * dx / r.width) / c.zoom * Math.max(r.width / r.height, 1) / 0.92;
          c.panY -= (2 * dy / r.height) / c.zoom / Math.min(r.width / r.height, 1) / 0.92;
        }
        this.moved();
        return;
      }
      const r = cv.getBoundingClientRect();
      const i = this.pick(ev.clientX - r.left, ev.clientY - r.top);
      if (i !== this.hover) { this.hover = i; this.redraw(); }
    });
    cv.addEventListener('pointerup', (ev) => {
      const wasClick = down && !down.moved;
      down = null;
      if (!wasClick || !this.emb) return;
      const r = cv.getBoundingClientRect();
      this.select(this.pick(ev.clientX - r.left, ev.clientY - r.top));
    });
    cv.addEventListener('pointerleave', () => { if (this.hover >= 0) { this.hover = -1; this.redraw(); } });
    cv.addEventListener('wheel', (ev) => {
      if (!this.gl) return;
      ev.preventDefault();
      const f = Math.exp(ev.deltaY * 0.001);
      const c = this.gl.cam;
      if (this.gl.dim === 3) c.dist = Math.max(0.5, Math.min(20, c.dist * f));
      else c.zoom = Math.max(0.1, Math.min(200, c.zoom / f));
      this.moved();
    }, { passive: false });
  },

  // The view moved: a moving frame now (gl.js's level of detail), and a
  // still one, every point drawn, MOVE_SETTLE_MS after the last move.
  moved() {
    this.gl.moving = true;
    clearTimeout(this.settle);
    this.settle = setTimeout(() => { if (this.gl) { this.gl.moving = false; this.redraw(); } }, MOVE_SETTLE_MS);
    this.redraw();
  },

  // Frames per second while the 3-D view turns for ms milliseconds (the
  // browser test and the bench call it through window.__tfb).
  // pub.drawn: the points the last turning frame drew.
  measureFps(ms) {
    return new Promise((resolve) => {
      const t0 = performance.now();
      let frames = 0;
      this.gl.moving = true;
      const tick = () => {
        const t = performance.now();
        if (t - t0 >= ms) {
          const fps = frames / ((t - t0) / 1000);
          this.pub.fps = fps;
          this.pub.drawn = this.gl.drawn();
          this.gl.moving = false;
          this.redraw();
          resolve(fps);
          return;
        }
        this.gl.cam.theta += 0.02;
        this.frame();
        frames++;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
  },
};

export default page;
