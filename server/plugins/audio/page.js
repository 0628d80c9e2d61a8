// Audio dashboard: one row per tag (and sample) with a card per selected
// run side by side, each an <audio> player with its own step slider; one
// global step slider moves every card to its last clip at or before that
// step, as the Images tab does. A clip's label is shown as text. Every
// clip of every step is listed; a player loads its clip only when played
// (preload="none"), so many cards stay cheap. A clip the server refuses
// (a WAV header that lies) shows the server's reason.
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
    this.global = null;
    this.picked = new Map(); // steps picked on single cards (tag, run, sample)
    this.tagFilter = h('input', { type: 'search', id: 'tag-filter', class: 'filter', placeholder: 'Filter tags (regex)  /', value: ctx.state.tagFilter,
      oninput: debounce((e) => ctx.setState({ tagFilter: e.target.value }), 150) });
    this.globalSlider = h('input', { type: 'range', id: 'audio-global-step', min: 0, max: 0, value: 0, step: 1,
      oninput: () => this.setGlobal(Number(this.globalSlider.value)) });
    this.globalLabel = h('span', { id: 'audio-global-label', class: 'small' }, '');
    ctx.settings.append(h('h3', null, 'Tags'), this.tagFilter,
      h('h3', null, 'Step (all cards)'), this.globalSlider, this.globalLabel);
    this.body = h('div', { class: 'audio-page' });
    ctx.main.append(this.body);
    window.__tfb.pages.audio = { cards: 0, renders: 0 };
    this.render();
  },
  unmount() {
    for (const c of this.cards) c.player.pause();
  },
  update(ctx) {
    this.ctx = ctx;
    if (document.activeElement !== this.tagFilter) this.tagFilter.value = ctx.state.tagFilter;
    this.render();
  },
  setGlobal(step) {
    this.global = step;
    this.picked.clear();
    this.globalLabel.textContent = 'step ' + step;
    for (const c of this.cards) {
      c.index = atStep(c.entries, step);
      c.slider.value = c.index;
      this.show(c);
    }
  },
  show(c) {
    const e = c.entries[c.index];
    if (!e) return;
    c.label.textContent = `step ${e.step}` + (c.entries.length > 1 ? `  (${c.index + 1}/${c.entries.length})` : '');
    c.label.title = wall(num(e.wall_time));
    c.text.textContent = e.label_text || '';
    const src = 'data/plugin/audio/individualAudio?' + e.query;
    if (c.player.getAttribute('src') !== src) {
      c.note.textContent = '';
      c.player.setAttribute('type', e.contentType || 'audio/wav');
      c.player.src = src;
    }
  },
  async render() {
    const { re } = safeRegex(this.ctx.state.tagFilter);
    const token = {};
    this.token = token;
    let got;
    try {
      got = await mediaRows('audio', 'audio', this.ctx.runs, re);
    } catch (e) {
      if (this.token === token) clear(this.body).appendChild(h('div', { class: 'error-text' }, e.message));
      return;
    }
    const { keys, rows: byTag, lists, total } = got;
    if (this.token !== token) return;
    for (const c of this.cards) c.player.pause();
    clear(this.body);
    this.cards = [];
    if (!keys.length) this.body.appendChild(h('div', { class: 'empty small' }, 'No audio tag matches.'));
    if (total > lists.length) {
      this.body.appendChild(h('div', { class: 'small media-cap' },
        `Showing the first ${lists.length} of ${total} cards (at most ${MEDIA_CARDS_MAX}): narrow the tag filter or the run selection to see the rest.`));
    }
    let n = 0, minStep = Infinity, maxStep = -Infinity;
    for (const k of keys) {
      const g = byTag.get(k);
      const row = h('div', { class: 'audio-row' });
      for (const r of g.runs) {
        const res = lists[n++];
        row.appendChild(this.card(g, r, res));
        if (Array.isArray(res) && res.length) {
          minStep = Math.min(minStep, res[0].step);
          maxStep = Math.max(maxStep, res[res.length - 1].step);
        }
      }
      this.body.appendChild(h('section', { class: 'audio-tag', dataset: { tag: g.tag } },
        h('h3', { class: 'audio-tag-title', title: g.tag }, k), row));
    }
    if (Number.isFinite(minStep)) {
      this.globalSlider.min = minStep;
      this.globalSlider.max = maxStep;
      const g = this.global === null ? maxStep : Math.min(Math.max(this.global, minStep), maxStep);
      this.globalSlider.value = g;
      this.globalLabel.textContent = 'step ' + g;
      if (this.global !== null) this.global = g;
    }
    window.__tfb.pages.audio.cards = this.cards.length;
    window.__tfb.pages.audio.renders++;
  },
  card(g, run, res) {
    const entries = Array.isArray(res) ? res : [];
    const player = h('audio', { class: 'audio-player', controls: true, preload: 'none' });
    const note = h('div', { class: 'error-text small audio-note' });
    const label = h('span', { class: 'audio-step' });
    const text = h('div', { class: 'audio-label small' });
    const slider = h('input', { type: 'range', class: 'audio-slider', min: 0, max: Math.max(0, entries.length - 1), step: 1, value: Math.max(0, entries.length - 1) });
    const key = g.tag + '\u0000' + run + '\u0000' + g.sample;
    const c = { entries, player, note, label, text, slider, index: Math.max(0, entries.length - 1) };
    const want = this.picked.has(key) ? this.picked.get(key) : this.global;
    if (want !== null && want !== undefined && entries.length) {
      c.index = atStep(entries, want);
      slider.value = c.index;
    }
    slider.addEventListener('input', () => {
      c.index = Number(slider.value);
      if (entries[c.index]) this.picked.set(key, entries[c.index].step);
      this.show(c);
    });
    // A refused clip: the server says why ({"error": ...}), shown as text.
    player.addEventListener('error', () => {
      note.textContent = 'This clip cannot be played.';
      const src = player.src;
      fetch(src).then((r) => (r.ok ? null : r.json())).then((j) => {
        if (j && j.error && player.src === src) note.textContent = j.error;
      }).catch(() => {});
    });
    const el = h('div', { class: 'card audio-card', dataset: { tag: g.tag, run, sample: String(g.sample) } },
      h('div', { class: 'card-sub' }, h('span', { class: 'swatch', style: { background: runColor(run) } }), ' ', run),
      res && res.error ? h('div', { class: 'error-text' }, res.error) : null,
      player, note, text,
      h('div', { class: 'audio-meta' }, label),
      entries.length > 1 ? slider : null);
    el.__card = c;
    this.cards.push(c);
    this.show(c);
    return el;
  },
};

export default page;
