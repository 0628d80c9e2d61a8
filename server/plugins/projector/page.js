// The Projector tab's placeholder (i31-projui writes the real page: PCA,
// t-SNE, UMAP, 2-D/3-D): lists each projector run's embeddings from
// /data/plugin/projector/runs and /info, their shapes and any notes.
import { h, clear } from '../core/dom.js';
import { getJSON } from '../core/api.js';

export default {
  id: 'projector',
  mount(ctx) {
    this.ctx = ctx;
    this.body = h('div', { id: 'projector-body' }, 'loading');
    ctx.main.append(h('h2', { class: 'page-title' }, 'Projector'), this.body);
    return this.update();
  },
  async update() {
    const runs = await getJSON('data/plugin/projector/runs');
    clear(this.body);
    for (const run of runs) {
      const info = await getJSON('data/plugin/projector/info?run=' + encodeURIComponent(run));
      const notes = info.tfboardNotes || {};
      for (const e of info.embeddings || []) {
        const shape = (e.tensorShape || []).join(' × ');
        this.body.append(h('p', { class: 'projector-embedding' }, run + ': ' + e.tensorName + ' ' + shape));
        for (const n of notes[e.tensorName] || []) this.body.append(h('p', { class: 'projector-note small' }, n));
      }
    }
  },
  unmount() {},
};
