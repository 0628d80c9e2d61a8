// The test dashboard's page (served as js/pages/testplug.js), by the web
// UI's page contract (webui/README.md): the runs with testplug/ tags and
// the values its decoder kept.
import { h, clear } from '../core/dom.js';
import { getJSON } from '../core/api.js';

export default {
  id: 'testplug',
  mount(ctx) {
    this.ctx = ctx;
    this.body = h('div', { id: 'testplug-body' }, 'loading');
    ctx.main.append(h('h2', { class: 'page-title' }, 'Test plugin'), this.body);
    return this.update();
  },
  async update() {
    const [d, v] = await Promise.all([getJSON('data/plugin/testplug/runs'), getJSON('data/plugin/testplug/values')]);
    clear(this.body);
    for (const [run, n] of Object.entries(d.runs)) {
      this.body.append(h('p', { class: 'testplug-run' }, run + ': ' + n + ' tags'));
    }
    for (const [run, x] of Object.entries(v.runs)) {
      this.body.append(h('p', { class: 'testplug-values' }, run + ': ' + x.values + ' values'));
    }
  },
  unmount() {},
};
