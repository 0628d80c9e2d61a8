// Histograms dashboard: one card per (tag, run); each step's histogram is a
// ridge in TensorBoard's "offset" view (earliest step at the back/top,
// later steps in front), or all overlaid on one baseline. Drawn on a canvas:
// the bucket counts are re-binned onto a shared x range.
import { h, clear, debounce } from '../core/dom.js';
import { runColor, withAlpha, themeColor } from '../core/colors.js';
import { eng } from '../core/format.js';
import { fetchHist, histTagsOf, renderCards, updateCards } from '../lib/histogram_cards.js';
import { HIST_TAGS } from '../lib/catalog.js';

// Shared x range and a uniform re-binning, so ridges line up.
function rebin(hists, nbins) {
  let lo = Infinity, hi = -Infinity;
  for (const hst of hists) {
    for (const [l, r, c] of hst.buckets) {
      if (!(c > 0) || !Number.isFinite(l) || !Number.isFinite(r)) continue;
      if (l < lo) lo = l;
      if (r > hi) hi = r;
    }
  }
  if (!(hi > lo)) { if (Number.isFinite(lo)) { hi = lo + 0.5; lo -= 0.5; } else { lo = 0; hi = 1; } }
  const w = (hi - lo) / nbins;
  const out = hists.map((hst) => {
    const bins = new Float64Array(nbins);
    for (const [l, r, c] of hst.buckets) {
      if (!(c > 0) || !Number.isFinite(l) || !Number.isFinite(r)) continue;
      if (r <= l) { bins[Math.min(nbins - 1, Math.max(0, Math.floor((l - lo) / w)))] += c; continue; }
      const i0 = Math.max(0, Math.floor((l - lo) / w)), i1 = Math.min(nbins - 1, Math.floor((r - lo) / w));
      for (let i = i0; i <= i1; i++) {
        const a = Math.max(l, lo + i * w), b = Math.min(r, lo + (i + 1) * w);
        if (b > a) bins[i] += (c * (b - a)) / (r - l);
      }
    }
    return { step: hst.step, bins };
  });
  return { lo, hi, out };
}

function niceTicks(lo, hi, n) {
  const span = hi - lo;
  const step0 = Math.pow(10, Math.floor(Math.log10(span / n)));
  const err = (span / n) / step0;
  const step = step0 * (err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

export function drawRidges(canvas, hists, color, mode, hover) {
  const dpr = window.devicePixelRatio || 1;
  const W = canvas.clientWidth, H = canvas.clientHeight;
  canvas.width = Math.round(W * dpr);
  canvas.height = Math.round(H * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  const maxSlices = mode === 'overlay' ? 12 : 30;
  let pick = hists;
  if (hists.length > maxSlices) {
    pick = [];
    for (let i = 0; i < maxSlices; i++) pick.push(hists[Math.round((i * (hists.length - 1)) / (maxSlices - 1))]);
  }
  const nb = Math.max(20, Math.min(80, Math.floor(W / 8)));
  const { lo, hi, out } = rebin(pick, nb);
  const m = { l: 8, r: 58, t: 8, b: 22 };
  const pw = W - m.l - m.r, ph = H - m.t - m.b;
  const k = out.length;
  const sliceH = mode === 'overlay' || k <= 1 ? ph : ph * 0.42;
  let ymax = 0;
  for (const s of out) for (const v of s.bins) if (v > ymax) ymax = v;
  if (!(ymax > 0)) ymax = 1;
  const xOf = (v) => m.l + ((v - lo) / (hi - lo)) * pw;
  const base = (i) => (mode === 'overlay' || k <= 1 ? m.t + ph : m.t + sliceH + (i / (k - 1)) * (ph - sliceH));
  const panel = themeColor('--panel');
  const muted = themeColor('--muted');
  const grid = themeColor('--grid');
  // Axis.
  ctx.strokeStyle = grid;
  ctx.fillStyle = muted;
  ctx.font = '11px ' + getComputedStyle(document.body).fontFamily;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of niceTicks(lo, hi, Math.max(2, Math.floor(pw / 80)))) {
    const x = xOf(t);
    ctx.beginPath(); ctx.moveTo(x + 0.5, m.t); ctx.lineTo(x + 0.5, m.t + ph); ctx.stroke();
    ctx.fillText(eng(t), x, m.t + ph + 5);
  }
  // Ridges, back to front.
  const bw = pw / nb;
  const labelEvery = Math.max(1, Math.ceil(k / Math.max(1, Math.floor(ph / 14))));
  for (let i = 0; i < k; i++) {
    const s = out[i];
    const y0 = base(i);
    const age = k > 1 ? i / (k - 1) : 1;
    ctx.beginPath();
    ctx.moveTo(m.l, y0);
    for (let j = 0; j < nb; j++) ctx.lineTo(m.l + (j + 0.5) * bw, y0 - (s.bins[j] / ymax) * sliceH);
    ctx.lineTo(m.l + pw, y0);
    ctx.closePath();
    if (mode !== 'overlay') { ctx.fillStyle = panel; ctx.fill(); }
    ctx.fillStyle = withAlpha(color, mode === 'overlay' ? 0.06 : 0.15 + 0.55 * age);
    ctx.fill();
    const isHover = hover !== null && hover === i;
    ctx.strokeStyle = isHover ? themeColor('--text') : withAlpha(color, 0.5 + 0.5 * age);
    ctx.lineWidth = isHover ? 2 : 1;
    ctx.stroke();
    if (mode !== 'overlay' && (i % labelEvery === 0 || i === k - 1 || isHover)) {
      ctx.fillStyle = isHover ? themeColor('--text') : muted;
      ctx.textAlign = 'left';
      ctx.textBaseline = 'middle';
      ctx.fillText(eng(s.step), m.l + pw + 6, y0);
    }
  }
  return { k, base, steps: out.map((s) => s.step), lo, hi, m, pw, nb, out, ymax };
}

class HistCard {
  constructor(pg, run, tag) {
    this.pg = pg; this.run = run; this.tag = tag; this.key = '';
    this.canvas = h('canvas', { class: 'plain', style: { height: '260px' } });
    this.info = h('div', { class: 'card-status muted' });
    this.tip = h('div', { class: 'chart-tooltip', hidden: true });
    this.el = h('div', { class: 'card', dataset: { tag, run } },
      h('div', { class: 'card-head' }, h('div', { class: 'card-title', title: tag }, tag)),
      h('div', { class: 'card-sub' }, h('span', { class: 'swatch', style: { background: runColor(run) } }), ' ', run),
      h('div', { class: 'chart-wrap', style: { height: 'auto' } }, this.canvas, this.tip), this.info);
    this.hover = null;
    this.canvas.addEventListener('mousemove', (e) => this.onHover(e));
    this.canvas.addEventListener('mouseleave', () => { this.hover = null; this.tip.hidden = true; this.draw(); });
  }
  async load() {
    const key = this.pg.gen + '|' + this.pg.mode;
    if (key === this.key) return;
    this.key = key;
    try {
      this.hists = await fetchHist(this.run, this.tag, this.pg.gen);
      this.draw();
      const last = this.hists[this.hists.length - 1];
      this.info.textContent = `${this.hists.length} step${this.hists.length === 1 ? '' : 's'}` + (last ? `, last step ${last.step}` : '');
      window.__tfb.charts['histograms:' + this.run + ':' + this.tag] = { steps: this.hists.length, drawn: this.layout ? this.layout.k : 0, mode: this.pg.mode };
    } catch (e) {
      this.key = '';
      this.info.textContent = 'Could not load: ' + e.message;
    }
  }
  draw() {
    if (!this.hists) return;
    this.layout = drawRidges(this.canvas, this.hists, runColor(this.run), this.pg.mode, this.hover);
  }
  onHover(e) {
    const L = this.layout;
    if (!L || !L.k) return;
    const r = this.canvas.getBoundingClientRect();
    const y = e.clientY - r.top, x = e.clientX - r.left;
    let best = 0, bd = Infinity;
    for (let i = 0; i < L.k; i++) { const d = Math.abs(L.base(i) - y); if (d < bd) { bd = d; best = i; } }
    if (this.pg.mode === 'overlay') best = L.k - 1;
    this.hover = best;
    this.draw();
    const j = Math.min(L.nb - 1, Math.max(0, Math.floor(((x - L.m.l) / L.pw) * L.nb)));
    const v = L.lo + ((j + 0.5) / L.nb) * (L.hi - L.lo);
    clear(this.tip);
    this.tip.append(h('div', null, 'Step ', h('b', null, eng(L.steps[best]))),
      h('div', null, 'x ≈ ', eng(v), ', count ≈ ', eng(L.out[best].bins[j])));
    this.tip.hidden = false;
    this.tip.style.left = Math.min(x + 12, this.canvas.clientWidth - 160) + 'px';
    this.tip.style.top = Math.max(0, y - 40) + 'px';
  }
}

const page = {
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { histTags: HIST_TAGS },
  mount(ctx) {
    this.ctx = ctx;
    this.gen = 0;
    this.mode = localStorage.getItem('tfb.histMode') || 'offset';
    this.cards = [];
    const radio = (v, label) => h('label', { class: 'radio' }, h('input', { type: 'radio', name: 'histmode', value: v, checked: this.mode === v,
      onchange: () => { this.mode = v; localStorage.setItem('tfb.histMode', v); for (const c of this.cards) c.load(); } }), label);
    this.tagFilter = h('input', { type: 'search', id: 'tag-filter', class: 'filter', placeholder: 'Filter tags (regex)  /', value: ctx.state.tagFilter,
      oninput: debounce((e) => ctx.setState({ tagFilter: e.target.value }), 150) });
    ctx.settings.append(h('h3', null, 'Tags'), this.tagFilter, h('h3', null, 'Histogram mode'), h('div', { class: 'radios' }, radio('offset', 'Offset'), radio('overlay', 'Overlay')));
    this.body = h('div', { class: 'sections' });
    ctx.main.append(this.body);
    this.observer = new IntersectionObserver((es) => { for (const e of es) if (e.isIntersecting && e.target.$card) e.target.$card.load(); }, { rootMargin: '300px' });
    this.onResize = debounce(() => { for (const c of this.cards) c.draw(); }, 200);
    window.addEventListener('resize', this.onResize);
    this.layout();
  },
  unmount() { this.observer.disconnect(); window.removeEventListener('resize', this.onResize); },
  update(ctx, changed) { updateCards(this, ctx, changed); },
  layout() {
    const items = histTagsOf(this.ctx.data, this.ctx.runs, this.ctx.state.tagFilter);
    renderCards(this, items, HistCard);
    window.__tfb.pages.histograms = { cards: items.length };
  },
};

export default page;
