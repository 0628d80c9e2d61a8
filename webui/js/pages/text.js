// Text dashboard: per (tag, run), the entries by step, shown as plain text
// (textContent), never parsed as HTML or markdown.
import { h, clear, debounce } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { wall } from '../core/format.js';
import { safeRegex } from '../core/state.js';

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.tagFilter = h('input', { type: 'search', id: 'tag-filter', class: 'filter', placeholder: 'Filter tags (regex)  /', value: ctx.state.tagFilter,
      oninput: debounce((e) => ctx.setState({ tagFilter: e.target.value }), 150) });
    ctx.settings.append(h('h3', null, 'Tags'), this.tagFilter);
    this.body = h('div', { class: 'grid text-grid' });
    ctx.main.append(this.body);
    this.render();
  },
  unmount() {},
  update(ctx) {
    this.ctx = ctx;
    if (document.activeElement !== this.tagFilter) this.tagFilter.value = ctx.state.tagFilter;
    this.render();
  },
  async render() {
    const { re } = safeRegex(this.ctx.state.tagFilter);
    const items = [];
    for (const r of this.ctx.runs) for (const t of Object.keys(this.ctx.data.textTags[r] || {})) if (!re || re.test(t)) items.push({ run: r, tag: t });
    items.sort((a, b) => a.tag.localeCompare(b.tag) || a.run.localeCompare(b.run));
    const token = {};
    this.token = token;
    const results = await Promise.all(items.map((it) => getJSON('data/plugin/text/text', { run: it.run, tag: it.tag }).catch((e) => ({ error: e.message }))));
    if (this.token !== token) return;
    clear(this.body);
    const shown = {};
    if (!items.length) this.body.appendChild(h('div', { class: 'empty small' }, 'No text tag matches.'));
    items.forEach((it, k) => {
      const res = results[k];
      const list = h('div', { class: 'text-list' });
      if (res && res.error) list.appendChild(h('div', { class: 'error-text' }, res.error));
      else {
        // Newest first, like TensorBoard.
        const entries = Array.isArray(res) ? res.slice().reverse() : [];
        for (const e of entries) {
          list.appendChild(h('div', { class: 'text-entry' },
            h('div', { class: 'text-step', title: wall(num(e.wall_time)) }, 'step ' + String(e.step)),
            h('pre', { class: 'text-body' }, typeof e.text === 'string' ? e.text : JSON.stringify(e.text))));
        }
        shown[it.run + ':' + it.tag] = entries.length;
      }
      this.body.appendChild(h('div', { class: 'card', dataset: { tag: it.tag, run: it.run } },
        h('div', { class: 'card-head' }, h('div', { class: 'card-title', title: it.tag }, it.tag)),
        h('div', { class: 'card-sub' }, h('span', { class: 'swatch', style: { background: runColor(it.run) } }), ' ', it.run),
        list));
    });
    window.__tfb.pages.text = shown;
  },
};

export default page;
