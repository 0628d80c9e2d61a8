// Alerts dashboard (issue 23): every run's status (running, finished,
// crashed, stalled, diverged) from /data/runs_info, and the alert feed.
import { h, sortableTable } from '../core/dom.js';
import { getJSON, num } from '../core/api.js';
import { runColor } from '../core/colors.js';
import { rel, int, wall } from '../core/format.js';
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

// The feed, shared by probe() (every catalog load, whatever tab is shown)
// and the page: events after `seq`, kept in order, newest last.
const feed = { seq: 0, events: [], active: 0, notified: 0 };

async function pollFeed() {
  const a = await getJSON('data/plugin/alerts/feed', { since: feed.seq }).catch(() => null);
  if (!a || !Array.isArray(a.events)) return;
  for (const e of a.events) feed.events.push(e);
  if (feed.events.length > 500) feed.events.splice(0, feed.events.length - 500);
  feed.seq = num(a.last_seq) || feed.seq;
  feed.active = num(a.active) || 0;
  notify();
}

// Browser notifications for alerts that fired since the last ones told,
// when the user allowed them (the page asks only on a click).
function notify() {
  const fresh = feed.events.filter((e) => e.seq > feed.notified && e.event === 'fired');
  feed.notified = feed.seq;
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  for (const e of fresh.slice(-5)) {
    try { new Notification('tfboard: ' + e.run, { body: e.message, tag: 'tfb-' + e.seq }); } catch (_) { /* not allowed here */ }
  }
  window.__tfb.notified = (window.__tfb.notified || 0) + Math.min(fresh.length, 5);
}

// When an event happened: its step and the wall time the run logged with
// that step (step_wall); a condition bound to no step (input-bound, GPU
// idle, a straggler, a clear) says when the server first saw it hold.
function whenCell(e) {
  const st = e.step === null || e.step === undefined ? null : num(e.step);
  const sw = num(e.step_wall);
  if (st !== null && Number.isFinite(st)) {
    return h('span', { class: 'alert-when', title: Number.isFinite(sw) ? 'logged ' + wall(sw) : 'the run logged no time with this step' },
      'step ' + int(st), h('br'), h('span', { class: 'muted small' }, Number.isFinite(sw) ? wall(sw) : '–'));
  }
  return h('span', { class: 'alert-when', title: 'not bound to a step: when the server saw it' },
    h('span', { class: 'muted' }, 'seen'), h('br'), h('span', { class: 'muted small' }, wall(num(e.wall_time))));
}
function whenValue(e) {
  const sw = num(e.step_wall);
  return Number.isFinite(sw) ? sw : num(e.wall_time);
}

const page = {
  // The first screen needs /data/runs_info (webui/README.md): the status table is each run's state.
  runsInfo: true,
  // Alerts arrive whatever tab is open: the feed is polled on each
  // catalog load, and the tab shows how many conditions hold now.
  probe() { return pollFeed(); },
  badge() { return feed.active; },

  mount(ctx) {
    this.ctx = ctx;
    this.statusTable = sortableTable([
      { key: 'run', label: 'Run', render: (r) => h('span', null, h('span', { class: 'swatch', style: { background: runColor(r.run) } }), ' ', r.run) },
      { key: 'state', label: 'State', render: (r) => runStateBadge(r.state) },
      { key: 'steps', label: 'Last step', num: true, render: (r) => (Number.isFinite(r.steps) ? int(r.steps) : '–') },
      { key: 'idle', label: 'Last event', num: true, render: (r) => (Number.isFinite(r.idle) ? rel(r.idle) + ' ago' : '–') },
      { key: 'detail', label: 'Detail', render: (r) => r.detail },
    ], { sortKey: 'run', sortDir: 1, className: 'status-table', rowProps: (r) => ({ dataset: { run: r.run, state: r.state } }) });
    // When, Run, What first: the columns a reader needs fit an 800 px
    // window (the rest scroll inside the card).
    this.feedTable = sortableTable([
      { key: 'when', label: 'When', num: true, value: whenValue, render: whenCell },
      { key: 'run', label: 'Run', render: (e) => h('span', { class: 'run-cell' }, h('span', { class: 'swatch', style: { background: runColor(e.run) } }), ' ', e.run) },
      { key: 'message', label: 'What', render: (e) => h('span', { class: 'alert-what' }, e.message) },
      { key: 'event', label: 'Event', render: (e) => h('span', { class: e.event === 'fired' ? 'error-text' : 'muted' }, e.event) },
      { key: 'rule', label: 'Rule', render: (e) => h('span', { class: 'mono' }, e.rule) },
      { key: 'seq', label: '#', num: true, render: (e) => String(e.seq) },
    ], { sortKey: 'seq', sortDir: -1, className: 'alert-feed', rowProps: (e) => ({ dataset: { run: e.run, rule: e.rule, event: e.event } }) });
    this.feedEmpty = h('div', { class: 'empty small', id: 'alerts-none' }, 'No alert has fired.');
    this.notifyBtn = h('button', { class: 'link', id: 'alerts-notify', onclick: () => this.askNotify() });
    ctx.main.append(h('h2', { class: 'page-title' }, 'Alerts'),
      h('div', { class: 'toolbar' }, this.notifyBtn),
      h('h3', null, 'Alert feed'), this.feedEmpty, h('div', { class: 'card table-card' }, this.feedTable.el),
      h('h3', null, 'Run status'), h('div', { class: 'card table-card' }, this.statusTable.el));
    ctx.settings.append(h('p', { class: 'muted small' },
      'A run is finished when its writer closed cleanly, crashed when it did not and its process is gone (same host), stalled when no step arrived for max(--stall_after, 20 × its median step interval), diverged on NaN/Inf or a loss blow-up.'));
    this.render();
  },
  unmount() { clearInterval(this.timer); },
  update(ctx) { this.ctx = ctx; this.render(); },
  askNotify() {
    if (typeof Notification === 'undefined') return;
    Notification.requestPermission().then(() => this.render());
  },
  render() {
    if (!this.timer) this.timer = setInterval(() => pollFeed().then(() => this.render()), 5000);
    const perm = typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
    this.notifyBtn.textContent = perm === 'granted' ? 'Browser notifications: on'
      : perm === 'denied' ? 'Browser notifications: blocked' : perm === 'unsupported' ? 'Browser notifications: not available' : 'Notify me in the browser';
    this.notifyBtn.disabled = perm !== 'default';
    const selFeed = new Set(this.ctx.runs);
    const ev = feed.events.filter((e) => selFeed.has(e.run) || !this.ctx.data.runs.includes(e.run));
    this.feedTable.setRows(ev);
    this.feedEmpty.hidden = ev.length > 0;
    this.feedTable.el.parentNode.hidden = ev.length === 0;
    const sel = new Set(this.ctx.runs);
    const rows = statusRows(this.ctx.data.runsInfo).filter((r) => sel.has(r.run));
    this.statusTable.setRows(rows);
    window.__tfb.pages.alerts = { status: rows.map((r) => ({ run: r.run, state: r.state })),
      feed: ev.map((e) => ({ seq: e.seq, run: e.run, rule: e.rule, event: e.event, step: e.step, step_wall: e.step_wall })), active: feed.active };
  },
};

export default page;
