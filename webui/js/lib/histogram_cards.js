// The histogram cards the Histograms and Distributions pages share: the
// series of a (run, tag), the (run, tag) pairs to show, the cards laid out
// in sections by tag prefix, and the pages' update.
import { h, clear } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { naturalCompare, groupOf } from '../core/format.js';
import { safeRegex } from '../core/state.js';

const cache = new Map();

// [[wall, step, [[left, right, count], ...]], ...] -> [{wall, step, buckets}]
export function fetchHist(run, tag, gen) {
  const key = gen + '|' + run + '\u0000' + tag;
  let p = cache.get(key);
  if (!p) {
    p = getJSON('data/plugin/histograms/histograms', { run, tag }).then((rows) => rows.map((r) => ({
      wall: num(r[0]), step: num(r[1]),
      buckets: (r[2] || []).map((b) => [num(b[0]), num(b[1]), num(b[2])]),
    })));
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return p;
}

export function histTagsOf(data, runs, filter) {
  const { re } = safeRegex(filter);
  const out = [];
  for (const r of runs) {
    for (const t of Object.keys(data.histTags[r] || {}).sort()) {
      if (!re || re.test(t)) out.push({ run: r, tag: t });
    }
  }
  out.sort((a, b) => naturalCompare(a.tag, b.tag) || naturalCompare(a.run, b.run));
  return out;
}

// Lays out one card per (run, tag) in collapsible sections by tag prefix,
// watched by the page's IntersectionObserver so cards load when seen. The
// Histograms and Distributions pages share it.
export function renderCards(page, items, CardClass) {
  page.observer.disconnect();
  clear(page.body);
  page.cards = [];
  const groups = new Map();
  for (const it of items) {
    const g = groupOf(it.tag);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(it);
  }
  if (!items.length) page.body.appendChild(h('div', { class: 'empty small' }, page.ctx.runs.length ? 'No histogram tag matches.' : 'No run selected.'));
  for (const [g, list] of groups) {
    const grid = h('div', { class: 'grid' });
    for (const it of list) {
      const c = new CardClass(page, it.run, it.tag);
      c.el.$card = c;
      page.cards.push(c);
      grid.appendChild(c.el);
      page.observer.observe(c.el);
    }
    page.body.appendChild(h('details', { class: 'section', open: true },
      h('summary', null, h('span', { class: 'section-name' }, g), h('span', { class: 'muted count' }, String(list.length))), grid));
  }
}

// A histogram page's update: new data is a new generation of fetches, the
// filter box follows the URL state (unless typed in), the cards are laid out.
export function updateCards(page, ctx, changed) {
  page.ctx = ctx;
  if (changed.includes('data')) page.gen++;
  if (document.activeElement !== page.tagFilter) page.tagFilter.value = ctx.state.tagFilter;
  page.layout();
}
