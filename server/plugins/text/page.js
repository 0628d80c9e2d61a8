// Text dashboard: per (tag, run), the entries by step, their Markdown as
// the server rendered it (cmark, raw HTML already turned into text). That
// HTML is never inserted as HTML: it is parsed inert (DOMParser runs no
// script) and only allowed elements are rebuilt with DOM calls, their text
// as text nodes, links only to http(s)/mailto/relative URLs. Without it
// (a text over 64 KiB, or past the answer's Markdown budget), the plain
// text, saying why.
import { h, clear, debounce } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { wall, naturalCompare } from '../core/format.js';
import { safeRegex } from '../core/state.js';
import { TEXT_TAGS } from '../lib/catalog.js';

const ALLOWED = new Set(['P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'STRONG', 'EM', 'CODE', 'PRE', 'UL', 'OL', 'LI',
  'BLOCKQUOTE', 'HR', 'BR', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'A', 'DEL']);
const SAFE_URL = /^(https?:|mailto:|[^:]*$|[^:]*[/?#])/i;

// A copy of node's children keeping only ALLOWED elements (others give
// their children), text as text nodes, no attribute but a checked href.
function rebuild(node, into) {
  for (const c of node.childNodes) {
    if (c.nodeType === Node.TEXT_NODE) {
      // The newlines cmark puts between block elements are no text.
      if (!/^\n+$/.test(c.nodeValue)) into.appendChild(document.createTextNode(c.nodeValue));
      continue;
    }
    if (c.nodeType !== Node.ELEMENT_NODE) continue;
    if (!ALLOWED.has(c.tagName)) { rebuild(c, into); continue; }
    const el = document.createElement(c.tagName.toLowerCase());
    if (c.tagName === 'A') {
      const href = c.getAttribute('href') || '';
      if (href && SAFE_URL.test(href)) { el.setAttribute('href', href); el.setAttribute('rel', 'noopener noreferrer'); el.setAttribute('target', '_blank'); }
    }
    rebuild(c, el);
    into.appendChild(el);
  }
  return into;
}

function markdownBody(e) {
  if (typeof e.html !== 'string') {
    // Not rendered (too long, past the answer's budget, or no memory):
    // the plain text, preformatted, and the server's reason above it.
    const pre = h('pre', { class: 'text-body' }, typeof e.text === 'string' ? e.text : JSON.stringify(e.text));
    if (typeof e.not_rendered !== 'string') return pre;
    return h('div', { class: 'text-plain' }, h('div', { class: 'text-note small' }, 'Shown as plain text: ' + e.not_rendered + '.'), pre);
  }
  const doc = new DOMParser().parseFromString(e.html, 'text/html');
  return rebuild(doc.body, h('div', { class: 'text-body markdown' }));
}

const FIRST_ENTRIES = 10;

const page = {
  // what the frame fetches for it on every reload (lib/catalog.js)
  catalog: { textTags: TEXT_TAGS },
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
    items.sort((a, b) => naturalCompare(a.tag, b.tag) || naturalCompare(a.run, b.run));
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
        const add = (e) => list.appendChild(h('div', { class: 'text-entry' },
          h('div', { class: 'text-step', title: wall(num(e.wall_time)) }, 'step ' + String(e.step)),
          markdownBody(e)));
        // A tag logged at every step (batch ids) would make a card
        // thousands of rows tall: the newest few, and the rest on demand.
        entries.slice(0, FIRST_ENTRIES).forEach(add);
        if (entries.length > FIRST_ENTRIES) {
          const more = h('button', { class: 'link text-more', onclick: () => {
            more.remove();
            entries.slice(FIRST_ENTRIES).forEach(add);
          } }, `Show all ${entries.length} entries`);
          list.appendChild(more);
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
