// Images dashboard: one row per tag with a card per selected run side by
// side, each with its own step slider; one global step slider moves every
// card to its last image at or before that step. Every image of every step
// is listed (the server keeps no sample of 10). Images load only when their
// card scrolls into view (IntersectionObserver), so 500 cards stay fast.
// Click an image to enlarge it; "pixelated" keeps small images sharp;
// brightness and contrast are CSS filters, as TensorBoard's.
import { h, clear, debounce } from '../core/dom.js';
import { num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { wall } from '../core/format.js';
import { safeRegex } from '../core/state.js';
import { atStep, mediaRows, MEDIA_CARDS_MAX } from '../lib/media_cards.js';

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.cards = [];
    this.view = { pixelated: false, brightness: 1, contrast: 1, global: null };
    // Steps the user picked on single cards, kept across data reloads
    // (key: tag, run, sample).
    this.picked = new Map();
    this.observer = new IntersectionObserver((seen) => {
      for (const s of seen) if (s.isIntersecting) { const c = s.target.__card; if (c) { c.visible = true; this.show(c); } }
    }, { rootMargin: '200px' });
    this.tagFilter = h('input', { type: 'search', id: 'tag-filter', class: 'filter', placeholder: 'Filter tags (regex)  /', value: ctx.state.tagFilter,
      oninput: debounce((e) => ctx.setState({ tagFilter: e.target.value }), 150) });
    this.globalSlider = h('input', { type: 'range', id: 'images-global-step', min: 0, max: 0, value: 0, step: 1,
      oninput: () => this.setGlobal(Number(this.globalSlider.value)) });
    this.globalLabel = h('span', { id: 'images-global-label', class: 'small' }, '');
    const filters = () => this.applyFilters();
    this.pixel = h('input', { type: 'checkbox', id: 'images-pixelated', onchange: (e) => { this.view.pixelated = e.target.checked; filters(); } });
    this.bright = h('input', { type: 'range', id: 'images-brightness', min: 0, max: 2, step: 0.05, value: 1,
      oninput: (e) => { this.view.brightness = Number(e.target.value); filters(); } });
    this.contrast = h('input', { type: 'range', id: 'images-contrast', min: 0, max: 2, step: 0.05, value: 1,
      oninput: (e) => { this.view.contrast = Number(e.target.value); filters(); } });
    ctx.settings.append(h('h3', null, 'Tags'), this.tagFilter,
      h('h3', null, 'Step (all cards)'), this.globalSlider, this.globalLabel,
      h('h3', null, 'Display'),
      h('label', { class: 'check' }, this.pixel, ' pixelated'),
      h('label', null, 'brightness ', this.bright),
      h('label', null, 'contrast ', this.contrast),
      h('button', { type: 'button', id: 'images-reset', onclick: () => {
        this.view.brightness = 1; this.view.contrast = 1; this.bright.value = 1; this.contrast.value = 1; filters();
      } }, 'reset'));
    this.body = h('div', { class: 'images-page' });
    this.lightbox = h('div', { class: 'images-lightbox', id: 'images-lightbox', hidden: true, onclick: () => { this.lightbox.hidden = true; } });
    ctx.main.append(this.body, this.lightbox);
    this.keyHandler = (e) => { if (e.key === 'Escape') this.lightbox.hidden = true; };
    document.addEventListener('keydown', this.keyHandler);
    window.__tfb.pages.images = { cards: 0, loaded: 0, renders: 0 };
    this.render();
  },
  unmount() {
    if (this.observer) this.observer.disconnect();
    document.removeEventListener('keydown', this.keyHandler);
  },
  update(ctx) {
    this.ctx = ctx;
    if (document.activeElement !== this.tagFilter) this.tagFilter.value = ctx.state.tagFilter;
    this.render();
  },
  applyFilters() {
    const f = `brightness(${this.view.brightness}) contrast(${this.view.contrast})`;
    for (const c of this.cards) {
      c.img.style.filter = f;
      c.img.classList.toggle('pixelated', this.view.pixelated);
    }
  },
  setGlobal(step) {
    this.view.global = step;
    this.picked.clear();
    this.globalLabel.textContent = 'step ' + step;
    for (const c of this.cards) {
      c.index = atStep(c.entries, step);
      c.slider.value = c.index;
      this.show(c);
    }
  },
  // Shows entry c.index of the card (loads the image only once visible).
  show(c) {
    const e = c.entries[c.index];
    if (!e) return;
    c.label.textContent = `step ${e.step}` + (c.entries.length > 1 ? `  (${c.index + 1}/${c.entries.length})` : '');
    c.label.title = wall(num(e.wall_time));
    c.dims.textContent = e.width && e.height ? `${e.width}×${e.height}` : '';
    if (!c.visible) return;
    const src = 'data/plugin/images/individualImage?' + e.query;
    if (c.img.getAttribute('src') !== src) {
      c.note.textContent = '';
      c.img.src = src;
    }
  },
  async render() {
    const { re } = safeRegex(this.ctx.state.tagFilter);
    const token = {};
    this.token = token;
    let got;
    try {
      got = await mediaRows('images', 'images', this.ctx.runs, re);
    } catch (e) {
      if (this.token === token) clear(this.body).appendChild(h('div', { class: 'error-text' }, e.message));
      return;
    }
    const { keys, rows: byTag, lists, total } = got;
    if (this.token !== token) return;
    this.observer.disconnect();
    clear(this.body);
    this.cards = [];
    if (!keys.length) this.body.appendChild(h('div', { class: 'empty small' }, 'No image tag matches.'));
    if (total > lists.length) {
      this.body.appendChild(h('div', { class: 'small media-cap' },
        `Showing the first ${lists.length} of ${total} cards (at most ${MEDIA_CARDS_MAX}): narrow the tag filter or the run selection to see the rest.`));
    }
    let n = 0, minStep = Infinity, maxStep = -Infinity;
    for (const k of keys) {
      const g = byTag.get(k);
      const row = h('div', { class: 'images-row' });
      for (const r of g.runs) {
        const res = lists[n++];
        row.appendChild(this.card(g, r, res));
        if (Array.isArray(res) && res.length) {
          minStep = Math.min(minStep, res[0].step);
          maxStep = Math.max(maxStep, res[res.length - 1].step);
        }
      }
      this.body.appendChild(h('section', { class: 'images-tag', dataset: { tag: g.tag } },
        h('h3', { class: 'images-tag-title', title: g.tag }, k), row));
    }
    if (Number.isFinite(minStep)) {
      this.globalSlider.min = minStep;
      this.globalSlider.max = maxStep;
      const g = this.view.global === null ? maxStep : Math.min(Math.max(this.view.global, minStep), maxStep);
      this.globalSlider.value = g;
      this.globalLabel.textContent = 'step ' + g;
      if (this.view.global !== null) this.view.global = g;
    }
    this.applyFilters();
    window.__tfb.pages.images.cards = this.cards.length;
    window.__tfb.pages.images.renders++;
  },
  card(g, run, res) {
    const entries = Array.isArray(res) ? res : [];
    const img = h('img', { class: 'images-img', alt: `${g.tag} (${run})` });
    const note = h('div', { class: 'error-text small' });
    const label = h('span', { class: 'images-step' });
    const dims = h('span', { class: 'small images-dims' });
    const slider = h('input', { type: 'range', class: 'images-slider', min: 0, max: Math.max(0, entries.length - 1), step: 1, value: Math.max(0, entries.length - 1) });
    const key = g.tag + '\u0000' + run + '\u0000' + g.sample;
    const c = { entries, img, note, label, dims, slider, index: Math.max(0, entries.length - 1), visible: false };
    // A step picked on this card, else the global step, else the last.
    const want = this.picked.has(key) ? this.picked.get(key) : this.view.global;
    if (want !== null && want !== undefined && entries.length) {
      c.index = atStep(entries, want);
      slider.value = c.index;
    }
    slider.addEventListener('input', () => {
      c.index = Number(slider.value);
      if (entries[c.index]) this.picked.set(key, entries[c.index].step);
      this.show(c);
    });
    img.addEventListener('load', () => { window.__tfb.pages.images.loaded++; });
    // A truncated or refused image: say so in the card, nothing else.
    img.addEventListener('error', () => {
      note.textContent = 'This image cannot be shown.';
      // The server says why ({"error": ...}); shown as text.
      const src = img.src;
      fetch(src).then((r) => (r.ok ? null : r.json())).then((j) => {
        if (j && j.error && img.src === src) note.textContent = j.error;
      }).catch(() => {});
    });
    img.addEventListener('click', () => {
      clear(this.lightbox).appendChild(h('img', { src: img.src, class: this.view.pixelated ? 'pixelated' : '',
        style: { filter: img.style.filter }, alt: img.alt }));
      this.lightbox.hidden = false;
    });
    const el = h('div', { class: 'card images-card', dataset: { tag: g.tag, run, sample: String(g.sample) } },
      h('div', { class: 'card-sub' }, h('span', { class: 'swatch', style: { background: runColor(run) } }), ' ', run),
      res && res.error ? h('div', { class: 'error-text' }, res.error) : null,
      h('div', { class: 'images-frame' }, img), note,
      h('div', { class: 'images-meta' }, label, ' ', dims),
      entries.length > 1 ? slider : null);
    el.__card = c;
    this.cards.push(c);
    this.observer.observe(el);
    this.show(c);
    return el;
  },
};

export default page;
