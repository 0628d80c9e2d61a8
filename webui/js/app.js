// The frame of every dashboard (UI.md "Frame"): top bar with the tabs that
// have data, reload button and time, auto-reload, settings; the load
// progress bar; the health banner; the sidebar with the run selector and the
// page's own settings; the main area the page draws into.
import { h, clear } from './dom.js';
import { getJSON, getOptional, onActivity } from './api.js';
import { state, setState, loadFromUrl, onStateChange } from './state.js';
import { mountRunList, selectedRuns } from './sidebar.js';
import { wallShort, int, bytes } from './format.js';
import { assignRunColors } from './colors.js';
import scalars from './pages/scalars.js';
import runs from './pages/runs.js';
import histograms from './pages/histograms.js';
import distributions from './pages/distributions.js';
import text from './pages/text.js';
import health from './pages/health.js';
import gradients from './pages/gradients.js';
import gpu from './pages/gpu.js';
import pipeline from './pages/pipeline.js';

const PAGES = [scalars, runs, histograms, distributions, text, health, gradients, gpu, pipeline];
const AUTO_RELOAD_MS = 30000;

// Test hook (tests/webui): charts and pages publish what they drew here.
window.__tfb = { charts: {}, pages: {}, reloads: 0, errors: [], ready: false };

const data = {
  runs: [], scalarTags: {}, histTags: {}, textTags: {}, alerts: null,
  runsInfo: null, plugins: null, progress: null, loaded: false,
};

let current = null;      // the mounted page
let runList = null;
let els = {};
let autoTimer = null;
let progressTimer = null;
let reloading = null;

function el(id) { return document.getElementById(id); }

function buildFrame() {
  document.body.append(
    h('header', { class: 'topbar' },
      h('a', { class: 'brand', href: '#', title: 'tfboard' }, h('span', { class: 'logo' }, 'tf'), 'board'),
      h('nav', { class: 'tabs', id: 'tabs', role: 'tablist' }),
      h('div', { class: 'spacer' }),
      h('span', { class: 'busy', id: 'busy', title: 'Requests in flight' }),
      h('span', { class: 'reload-time muted', id: 'reload-time' }),
      h('button', { class: 'icon-btn', id: 'reload', title: 'Reload (r)', onclick: () => reload(true) }, '⟳'),
      h('label', { class: 'toggle', title: 'Reload every 30 s' },
        h('input', { type: 'checkbox', id: 'auto-reload', checked: state.auto,
          onchange: (e) => setState({ auto: e.target.checked }) }), 'Auto'),
      h('div', { class: 'menu-wrap' },
        h('button', { class: 'icon-btn', id: 'settings-btn', title: 'Settings', 'aria-haspopup': 'true',
          onclick: () => el('settings-menu').toggleAttribute('hidden') }, '⚙'),
        h('div', { class: 'menu', id: 'settings-menu', hidden: true },
          h('label', null, h('input', { type: 'checkbox', id: 'ignore-outliers',
            checked: localStorage.getItem('tfb.ignoreOutliers') === '1',
            onchange: (e) => { localStorage.setItem('tfb.ignoreOutliers', e.target.checked ? '1' : '0'); refreshPage(['settings']); } }),
          'Ignore outliers in chart y range'),
          h('div', { class: 'muted small' }, 'Keys: / filter tags, r reload'),
          h('a', { href: 'vendor/chart.js-LICENSE.md', target: '_blank', class: 'small' }, 'Chart.js licence')))),
    h('div', { class: 'progress', id: 'progress', hidden: true },
      h('div', { class: 'bar', id: 'progress-bar' }),
      h('span', { class: 'progress-text', id: 'progress-text' })),
    h('div', { class: 'banner', id: 'banner', hidden: true, role: 'alert' }),
    h('div', { class: 'layout' },
      h('aside', { class: 'sidebar' },
        h('section', { id: 'run-selector' }),
        h('section', { id: 'page-settings', class: 'page-settings' })),
      h('main', { class: 'main', id: 'main' })));
  els = { tabs: el('tabs'), main: el('main'), settings: el('page-settings'), banner: el('banner') };
  document.addEventListener('click', (e) => {
    const menu = el('settings-menu');
    if (!menu.hidden && !e.target.closest('.menu-wrap')) menu.hidden = true;
  });
  runList = mountRunList(el('run-selector'), () => data.runs);
  onActivity((n) => { el('busy').classList.toggle('on', n > 0); });
}

function ctx() {
  return {
    main: els.main,
    settings: els.settings,
    data,
    runs: selectedRuns(data.runs),
    state,
    setState,
  };
}

function availablePages() {
  return PAGES.filter((p) => p.available(data));
}

function renderTabs() {
  clear(els.tabs);
  for (const p of availablePages()) {
    const active = current === p;
    const badge = p.badge ? p.badge(data) : 0;
    els.tabs.appendChild(h('a', {
      class: 'tab' + (active ? ' active' : ''), role: 'tab', href: '#tab=' + p.id, id: 'tab-' + p.id,
      'aria-selected': active ? 'true' : 'false',
      onclick: (e) => { e.preventDefault(); setState({ tab: p.id, step: null }); },
    }, p.title, badge ? h('span', { class: 'badge', title: badge + ' alerts' }, String(badge)) : null));
  }
}

// Picks the page for state.tab (or the first with data), mounting it when it
// changed. Returns true when a new page was mounted.
function choosePage() {
  const avail = availablePages();
  let want = avail.find((p) => p.id === state.tab) || null;
  if (!want && state.tab && !data.loaded) want = PAGES.find((p) => p.id === state.tab) || null;
  if (!want) want = avail[0] || null;
  if (want === current) return false;
  if (current && current.unmount) current.unmount();
  clear(els.main);
  clear(els.settings);
  current = want;
  if (current) current.mount(ctx());
  return true;
}

function renderEmpty() {
  if (current || !data.loaded || data.runs.length) return;
  clear(els.main);
  const loading = data.progress && !data.progress.done;
  els.main.appendChild(h('div', { class: 'empty', id: 'empty-help' },
    h('h2', null, loading ? 'Loading the log directory…' : 'No data in this log directory yet'),
    h('p', null, 'tfboard shows runs: directories holding TensorBoard event files (', h('code', null, '*tfevents*'),
      '). Log a scalar from your training loop with libtfboard:'),
    h('pre', { class: 'code' },
      '#include <tfboard.h>\n\n' +
      'tfb_writer *w;\n' +
      'tfb_writer_open(&w, "runs/exp1", NULL);\n' +
      'for (int64_t step = 0; step < steps; step++) {\n' +
      '    double loss = train_step();\n' +
      '    tfb_scalar(w, "loss", loss, step);\n' +
      '}\n' +
      'tfb_writer_close(w);'),
    h('p', null, 'Then point tfboard at the parent directory: ', h('code', null, 'tfboard --logdir runs/'),
      '. Event files written by TensorFlow, PyTorch, tensorboardX, JAX or Keras work too. This page reloads by itself.')));
}

function renderBanner() {
  const b = els.banner;
  clear(b);
  const sel = new Set(selectedRuns(data.runs));
  const alerts = (data.alerts || []).filter((a) => sel.has(a.run));
  if (!alerts.length) { b.hidden = true; return; }
  const first = alerts[0];
  b.hidden = false;
  b.append(h('span', { class: 'banner-icon' }, '⚠'),
    h('span', null, 'Non-finite values in ', h('b', null, String(alerts.length)),
      alerts.length === 1 ? ' series' : ' series', ' of the selected runs. First: ',
      h('code', null, first.tag), ' in run ', h('code', null, first.run), ' at step ', String(first.first_step), '. '),
    h('a', { href: '#', id: 'banner-first', onclick: (e) => {
      e.preventDefault();
      setState({ tab: 'scalars', tagFilter: '^' + escapeRe(first.tag) + '$', step: Number(first.first_step) });
    } }, 'Show it'),
    ' · ',
    h('a', { href: '#tab=health', onclick: (e) => { e.preventDefault(); setState({ tab: 'health' }); } }, 'All alerts'));
}

export function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

function refreshPage(changed) {
  const mounted = choosePage();
  renderTabs();
  renderBanner();
  renderEmpty();
  if (!mounted && current && current.update) current.update(ctx(), changed);
}

// Tag listings come as {run: {tag: {...}}} (scalars, histograms) or
// {run: [tag, ...]} (text, as TensorBoard's text plugin); pages see the
// first form.
function tagMap(v) {
  const out = {};
  if (!v || typeof v !== 'object') return out;
  for (const [run, tags] of Object.entries(v)) {
    out[run] = {};
    if (Array.isArray(tags)) for (const t of tags) out[run][String(t)] = {};
    else if (tags && typeof tags === 'object') for (const t of Object.keys(tags)) out[run][t] = tags[t];
  }
  return out;
}

async function fetchCatalog() {
  const [runsList, scalarTags, histTags, textTags, alerts, runsInfo, plugins] = await Promise.all([
    getJSON('data/runs'),
    getOptional('data/plugin/scalars/tags'),
    getOptional('data/plugin/histograms/tags'),
    getOptional('data/plugin/text/tags'),
    getOptional('data/plugin/health/alerts'),
    getOptional('data/runs_info'),
    getOptional('data/plugins_listing'),
  ]);
  data.runs = Array.isArray(runsList) ? runsList.map(String) : [];
  assignRunColors(data.runs);
  data.scalarTags = tagMap(scalarTags);
  data.histTags = tagMap(histTags);
  data.textTags = tagMap(textTags);
  data.alerts = alerts && Array.isArray(alerts.alerts) ? alerts.alerts : null;
  data.runsInfo = runsInfo;
  data.plugins = plugins;
  await Promise.all(PAGES.filter((p) => p.probe).map((p) => p.probe(data).catch(() => null)));
  data.loaded = true;
}

// Reloads the catalog (runs, tags, alerts) and lets the page refresh its
// charts. Concurrent calls share one reload.
async function reload(userAsked) {
  if (reloading) return reloading;
  reloading = (async () => {
    try {
      await fetchCatalog();
      window.__tfb.reloads++;
      el('reload-time').textContent = 'Reloaded ' + wallShort(Date.now() / 1000);
      el('reload-time').classList.remove('error');
      runList.refresh();
      refreshPage(['data']);
    } catch (e) {
      el('reload-time').textContent = 'Reload failed: ' + e.message;
      el('reload-time').classList.add('error');
    } finally {
      reloading = null;
      window.__tfb.ready = true;
    }
  })();
  if (userAsked) pollProgress();
  return reloading;
}

// Polls the load progress while the server is still reading the logdir,
// and reloads the catalog as data arrives so charts fill in.
async function pollProgress() {
  clearTimeout(progressTimer);
  let p;
  try { p = await getOptional('data/plugin/core/progress'); } catch (e) { p = null; }
  data.progress = p;
  const bar = el('progress');
  if (!p || p.done) {
    bar.hidden = true;
    return p;
  }
  bar.hidden = false;
  const frac = p.bytes_total > 0 ? p.bytes_done / p.bytes_total : (p.files_total > 0 ? p.files_done / p.files_total : 0);
  el('progress-bar').style.width = (Math.min(1, frac) * 100).toFixed(1) + '%';
  el('progress-text').textContent = `Loading: ${int(p.files_done)} / ${int(p.files_total)} files, ${bytes(p.bytes_done)} / ${bytes(p.bytes_total)}`;
  progressTimer = setTimeout(async () => {
    const q = await pollProgress();
    // Reload the catalog each poll while loading and once when done.
    reload(false);
    return q;
  }, 700);
  return p;
}

function scheduleAuto() {
  clearInterval(autoTimer);
  if (state.auto) autoTimer = setInterval(() => { if (!document.hidden) reload(false); }, AUTO_RELOAD_MS);
}

function onKey(e) {
  const t = e.target;
  const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === '/') {
    const f = document.getElementById('tag-filter') || document.getElementById('run-filter');
    if (f) { e.preventDefault(); f.focus(); f.select(); }
  } else if (e.key === 'r') {
    e.preventDefault();
    reload(true);
  } else if (e.key === 'Escape') {
    el('settings-menu').hidden = true;
  }
}

async function main() {
  loadFromUrl();
  buildFrame();
  onStateChange((changed) => {
    if (changed.includes('auto')) { el('auto-reload').checked = state.auto; scheduleAuto(); }
    if (changed.some((k) => k === 'runs' || k === 'runFilter')) runList.refresh();
    refreshPage(changed);
  });
  document.addEventListener('keydown', onKey);
  scheduleAuto();
  await pollProgress();
  await reload(false);
}

window.addEventListener('error', (e) => window.__tfb.errors.push(String(e.message)));
main();
