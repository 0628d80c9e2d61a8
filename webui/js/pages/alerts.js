// Alerts dashboard (issue 23): every run's status (running, finished,
// crashed, stalled, diverged) from /data/runs_info, and the alert feed.
import { h, sortableTable } from '../core/dom.js';
import { num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { rel, int } from '../core/format.js';
import { runStateBadge } from '../core/sidebar.js';

function statusRows(info) {
  return (Array.isArray(info) ? info : []).filter((x) => x && x.status).map((x) => {
    const s = x.status;
    let detail = '';
    if (s.state === 'diverged') detail = `${s.diverged_why} in ${s.diverged_tag} at step ${s.diverged_step}`;
    else if (s.state === 'crashed') detail = `no end record; process ${s.pid} is gone`;
    else if (s.state === 'stalled') detail = `no new event for ${rel(num(s.idle_s))} (threshold ${rel(num(s.stall_after))})`;
    if (s.ended && s.reason) detail += (detail ? '; ' : '') + 'closed: ' + s.reason;
    return { run: x.name, state: s.state, idle: num(s.idle_s), steps: num(x.max_step), detail };
  });
}

const page = {
  mount(ctx) {
    this.ctx = ctx;
    this.statusTable = sortableTable([
      { key: 'run', label: 'Run', render: (r) => h('span', null, h('span', { class: 'swatch', style: { background: runColor(r.run) } }), ' ', r.run) },
      { key: 'state', label: 'State', render: (r) => runStateBadge(r.state) },
      { key: 'steps', label: 'Last step', num: true, render: (r) => (Number.isFinite(r.steps) ? int(r.steps) : '–') },
      { key: 'idle', label: 'Last event', num: true, render: (r) => (Number.isFinite(r.idle) ? rel(r.idle) + ' ago' : '–') },
      { key: 'detail', label: 'Detail', render: (r) => r.detail },
    ], { sortKey: 'run', sortDir: 1, className: 'status-table', rowProps: (r) => ({ dataset: { run: r.run, state: r.state } }) });
    ctx.main.append(h('h2', { class: 'page-title' }, 'Alerts'),
      h('h3', null, 'Run status'), h('div', { class: 'card table-card' }, this.statusTable.el));
    ctx.settings.append(h('p', { class: 'muted small' },
      'A run is finished when its writer closed cleanly, crashed when it did not and its process is gone (same host), stalled when no step arrived for max(--stall_after, 20 × its median step interval), diverged on NaN/Inf or a loss blow-up.'));
    this.render();
  },
  unmount() {},
  update(ctx) { this.ctx = ctx; this.render(); },
  render() {
    const sel = new Set(this.ctx.runs);
    const rows = statusRows(this.ctx.data.runsInfo).filter((r) => sel.has(r.run));
    this.statusTable.setRows(rows);
    window.__tfb.pages.alerts = { status: rows.map((r) => ({ run: r.run, state: r.state })) };
  },
};

export default page;
