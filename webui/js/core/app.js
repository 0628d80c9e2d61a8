// The frame of every dashboard (UI.md "Frame"): top bar with the tabs that
// have data, reload button and time, auto-reload, settings; the load
// progress bar; the pages' banner; the sidebar with the run selector and the
// page's own settings; the main area the page draws into.
//
// The frame has no list of dashboards and names none: the server's
// /data/plugins_listing names them in tab order, says which have data,
// gives each tab's title and the page module to import() (webui/README.md
// "Pages"); each page says what the frame fetches for it on a reload (its
// `catalog`), declares its own URL keys (core/state.js) and may put a
// banner above every tab (`banner`). A new dashboard is a new plugin
// folder on the server, no edit here.
import { h, clear } from './dom.js';
import { getJSON, getOptional, onActivity } from './api.js';
import { state, setState, loadFromUrl, onStateChange, resolveUrlSelection, pendingSelection } from './state.js';
import { mountRunList, selectedRuns, setRunsChecked } from './sidebar.js';
import { recoverSelection } from './selection.js';
import { wallShort, int, bytes, naturalSorted } from './format.js';
import { retheme } from './charts.js';
import { exportView } from './export.js';
import { assignRunColors } from './colors.js';

const AUTO_RELOAD_MS = 30000;

// Test hook (tests/webui): charts and pages publish what they drew here.
window.__tfb = { charts: {}, pages: {}, reloads: 0, errors: [], ready: false, tabs: [], modules: {} };

const data = {
  // and each key a loaded page's `catalog` names (its answer, as the
  // page's take() makes it)
  runs: [], runsInfo: null, plugins: null, progress: null, loaded: false,
  // The listing as the frame uses it, in tab order: [{name, title,
  // enabled, disableReload, path, load}] where load is the settled module
  // load of an enabled entry ({mod} or {error}); null for a disabled one.
  pages: [],
  listingError: null,    // why there are no tabs although there are runs
};

let current = null;      // {entry, mod, broken}: the page in the main area (broken: its error shown instead)
let runList = null;
let els = {};
let autoTimer = null;
let progressTimer = null;
let reloading = null;

function el(id) { return document.getElementById(id); }

function buildFrame() {
  document.body.append(
    h('header', { class: 'topbar' },
      h('button', { class: 'icon-btn', id: 'sidebar-toggle', title: 'Show / hide the sidebar', 'aria-label': 'Show / hide the sidebar',
        onclick: () => toggleSidebar() }, '☰'),
      h('a', { class: 'brand', href: '#', title: 'tfboard' }, h('span', { class: 'logo' }, 'tf'), 'board'),
      h('nav', { class: 'tabs', id: 'tabs', role: 'tablist' }),
      // Tabs that do not fit the bar move into this menu (fitTabs).
      h('div', { class: 'menu-wrap tabs-more', id: 'tabs-more', hidden: true },
        h('button', { class: 'tab more-btn', id: 'tabs-more-btn', 'aria-haspopup': 'true',
          onclick: (e) => { e.stopPropagation(); el('tabs-more-menu').toggleAttribute('hidden'); } }, 'More ▾'),
        h('div', { class: 'menu tabs-menu', id: 'tabs-more-menu', hidden: true })),
      h('div', { class: 'spacer' }),
      h('span', { class: 'busy', id: 'busy', title: 'Requests in flight' }),
      h('span', { class: 'reload-time muted', id: 'reload-time' }),
      h('button', { class: 'icon-btn', id: 'reload', title: 'Reload (r)', onclick: () => reload(true) }, '⟳'),
      h('label', { class: 'toggle', title: 'Reload every 30 s' },
        h('input', { type: 'checkbox', id: 'auto-reload', checked: state.auto,
          onchange: (e) => setState({ auto: e.target.checked }) }), 'Auto'),
      h('button', { class: 'icon-btn', id: 'theme-toggle', title: 'Light / dark theme', 'aria-label': 'Light / dark theme',
        onclick: () => toggleTheme() }, '◐'),
      h('div', { class: 'menu-wrap' },
        h('button', { class: 'icon-btn', id: 'settings-btn', title: 'Settings', 'aria-haspopup': 'true',
          onclick: () => el('settings-menu').toggleAttribute('hidden') }, '⚙'),
        h('div', { class: 'menu', id: 'settings-menu', hidden: true },
          h('label', null, h('input', { type: 'checkbox', id: 'ignore-outliers',
            checked: localStorage.getItem('tfb.ignoreOutliers') !== '0',
            onchange: (e) => { localStorage.setItem('tfb.ignoreOutliers', e.target.checked ? '1' : '0'); refreshPage(['settings']); } }),
          'Robust y range (extreme outliers left out, with a marker)'),
          h('button', { class: 'menu-item', id: 'export-view', title: 'One HTML file that draws these charts offline, with their data',
            onclick: () => { el('settings-menu').hidden = true; exportCurrent(); } }, '⇩ Export this view (HTML)'),
          h('div', { class: 'muted small' }, 'Keys: / filter tags, r reload'),
          h('a', { href: 'vendor/chart.js-LICENSE.md', target: '_blank', class: 'small' }, 'Chart.js licence')))),
    h('div', { class: 'progress', id: 'progress', hidden: true },
      h('div', { class: 'bar', id: 'progress-bar' }),
      h('span', { class: 'progress-text', id: 'progress-text' })),
    h('div', { class: 'banner', id: 'banner', hidden: true, role: 'alert' }),
    h('div', { class: 'banner', id: 'storage-banner', hidden: true, role: 'status' }),
    h('div', { class: 'layout' },
      h('aside', { class: 'sidebar' },
        h('section', { id: 'run-selector' }),
        h('section', { id: 'page-settings', class: 'page-settings' })),
      h('main', { class: 'main', id: 'main' })));
  els = { tabs: el('tabs'), main: el('main'), settings: el('page-settings'), banner: el('banner') };
  // Every drop-down menu of the frame and the pages (a `.menu` in a
  // `.menu-wrap`: settings, "More", a chart's download menu) closes on a
  // click outside its own wrap, on Escape (onEscape) and on any change of the
  // view state: a filter, the tab (closeMenus in main()).
  document.addEventListener('click', (e) => closeMenus(e.target.closest('.menu-wrap')));
  window.addEventListener('resize', () => fitTabs());
  if (localStorage.getItem('tfb.sidebar') === 'hidden') document.body.classList.add('sidebar-hidden');
  runList = mountRunList(el('run-selector'), () => data.runs, (r) => {
    const i = Array.isArray(data.runsInfo) ? data.runsInfo.find((x) => x && x.name === r) : null;
    return i && i.status ? i.status.state : null;
  });
  onActivity((n) => { el('busy').classList.toggle('on', n > 0); });
}

// Hides every open `.menu` but the one inside `keep` (a .menu-wrap, or
// null for all).
function closeMenus(keep = null) {
  for (const menu of document.querySelectorAll('.menu-wrap .menu:not([hidden])')) {
    if (!keep || !keep.contains(menu)) menu.hidden = true;
  }
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

// ---- the plugin listing and the page modules ----

// Turns TensorBoard's listing {name: {enabled, tab_name, disable_reload,
// loading_mechanism: {type, module_path}}} into entries in tab order (an
// object keeps its keys in insertion order, so JSON order is tab order).
// A malformed entry stays in the list with the reason, so its tab says what
// went wrong instead of vanishing.
function parseListing(listing) {
  if (!listing || typeof listing !== 'object' || Array.isArray(listing)) {
    throw new Error('the server\'s plugin listing is not an object');
  }
  const out = [];
  for (const [name, p] of Object.entries(listing)) {
    const e = { name, title: name, enabled: false, disableReload: false, path: null, problem: null };
    out.push(e);
    if (!p || typeof p !== 'object') { e.problem = 'its listing entry is not an object'; continue; }
    e.enabled = p.enabled === true;
    if (typeof p.tab_name === 'string' && p.tab_name) e.title = p.tab_name;
    e.disableReload = p.disable_reload === true;
    const lm = p.loading_mechanism;
    if (!lm || typeof lm !== 'object') e.problem = 'the listing gives no loading_mechanism';
    else if (lm.type === 'NONE') e.noPage = true; // data only, no tab
    else if (lm.type !== 'JS_MODULE') e.problem = 'unsupported loading mechanism "' + String(lm.type) + '" (this UI loads JS_MODULE only)';
    else if (typeof lm.module_path !== 'string' || !lm.module_path) e.problem = 'the listing gives no module_path';
    else e.path = lm.module_path;
  }
  return out;
}

// module URL -> {promise, failed}: each module is imported once. A load that
// failed (network, 404, syntax error) is kept, so the tab shows the error,
// and is tried again only on a reload the user asked for; the retry adds a
// query to the URL because the browser may remember the failed URL.
const moduleCache = new Map();
let retries = 0;

// Imports the page module of entry e; resolves with {mod} or {error},
// never rejects.
function loadPage(e) {
  if (e.problem) return Promise.resolve({ error: e.problem });
  let u;
  try {
    // module_path is relative to the page root (index.html), not to this
    // module, and must stay on this server: a listing cannot pull in code
    // from elsewhere.
    u = new URL(e.path, document.baseURI);
    if (u.origin !== location.origin) throw new Error('not on this server');
  } catch (err) {
    return Promise.resolve({ error: 'bad module_path "' + e.path + '": ' + err.message });
  }
  let c = moduleCache.get(u.href);
  if (!c) {
    c = { failed: false, retry: 0 };
    c.promise = importPage(u, e.path, c);
    moduleCache.set(u.href, c);
  } else if (c.failed && c.retry < retries) {
    c.failed = false;
    c.retry = retries;
    const r = new URL(u);
    r.searchParams.set('retry', String(retries));
    c.promise = importPage(r, e.path, c);
  }
  return c.promise;
}

function importPage(u, path, c) {
  return import(u.href).then((m) => {
    const mod = m && m.default;
    if (!mod || typeof mod.mount !== 'function') return { error: path + ' does not export a page (a default export with mount(ctx))' };
    return { mod };
  }, (err) => {
    c.failed = true;
    return { error: 'could not load ' + path + ': ' + (err && err.message ? err.message : String(err)) };
  });
}

// Runs the probes of the loaded page modules (after the catalog is in
// data) and publishes the module states for the tests.
async function probePages(entries, toProbe = entries) {
  await Promise.all(toProbe.map(async (e) => {
    if (e.load && e.load.mod && e.load.mod.probe) {
      try { await e.load.mod.probe(data); } catch (err) { /* the page shows what it has */ }
    }
  }));
  window.__tfb.modules = Object.fromEntries(entries.filter((e) => e.load)
    .map((e) => [e.name, e.load.mod ? 'loaded' : e.load.error]));
}

function enabledPages() {
  return data.pages.filter((e) => e.enabled && !e.noPage);
}

function renderTabs() {
  clear(els.tabs);
  clear(el('tabs-more-menu'));
  const tabs = enabledPages();
  for (const e of tabs) {
    const active = current !== null && current.entry.name === e.name;
    const mod = e.load && e.load.mod;
    // No load yet: its module comes after the first page's (fetchCatalog).
    const broken = e.load && !mod;
    let badge = 0;
    try { badge = mod && mod.badge ? mod.badge(data) : 0; } catch (err) { badge = 0; }
    els.tabs.appendChild(h('a', {
      class: 'tab' + (active ? ' active' : '') + (broken ? ' broken' : ''), role: 'tab',
      href: '#tab=' + encodeURIComponent(e.name), id: 'tab-' + e.name,
      'aria-selected': active ? 'true' : 'false',
      title: broken ? e.load.error : null,
      onclick: (ev) => { ev.preventDefault(); setState({ tab: e.name, step: null }); },
    }, e.title, badge ? h('span', { class: 'badge', title: badge + ' alerts' }, String(badge)) : null));
  }
  // Dashboards without data are not tabs (as in TensorBoard) but never
  // missing without a word: one greyed note names them.
  const off = (data.pages || []).filter((e) => !e.enabled && !e.noPage);
  if (off.length) {
    els.tabs.appendChild(h('span', {
      class: 'tabs-off', id: 'tabs-off', 'aria-disabled': 'true',
      title: 'No run has data for: ' + off.map((e) => e.title).join(', ') + '. Log it and its tab appears.',
    }, off.length + ' without data'));
  }
  window.__tfb.tabs = tabs.map((e) => e.name);
  fitTabs();
}

// Narrow windows: the tabs that do not fit the bar go, last first, into
// the "More" menu, by the bar's measured width (no fixed count: the
// titles' widths differ); the active tab and a tab with a badge (alerts:
// a red count must not hide under "More") stay in the bar.
function fitTabs() {
  const nav = els.tabs, wrap = el('tabs-more'), menu = el('tabs-more-menu');
  if (!nav) return;
  // The menu holds the bar's tail, in order: put it back, then measure.
  for (const t of [...menu.children]) nav.appendChild(t);
  wrap.hidden = true;
  if (nav.scrollWidth <= nav.clientWidth + 1) return;
  wrap.hidden = false;
  const moved = [];
  const all = () => [...nav.querySelectorAll('.tab, .tabs-off')].filter((t) => !t.classList.contains('active') && !t.querySelector('.badge'));
  while (nav.scrollWidth > nav.clientWidth + 1) {
    const list = all();
    if (!list.length) break;
    const t = list[list.length - 1];
    moved.unshift(t);
    t.remove();
  }
  for (const t of moved) menu.appendChild(t);
}

async function exportCurrent() {
  const btn = el('export-view');
  btn.disabled = true;
  try {
    const n = await exportView({ main: els.main, tab: current ? current.entry.title : 'tfboard', runs: selectedRuns(data.runs) });
    window.__tfb.exported = n;
  } catch (err) {
    window.__tfb.errors.push('export: ' + (err && err.message));
    alertText('Export failed: ' + (err && err.message));
  } finally {
    btn.disabled = false;
  }
}

// A short message in the reload-time slot of the top bar.
function alertText(msg) {
  const t = el('reload-time');
  t.textContent = msg;
  t.classList.add('error');
}

function toggleSidebar() {
  const off = document.body.classList.toggle('sidebar-hidden');
  localStorage.setItem('tfb.sidebar', off ? 'hidden' : 'shown');
  // Charts fill their cards: let them take the freed width.
  window.dispatchEvent(new Event('resize'));
}

// Light / dark: the system's setting until the user picks one, then the
// pick (localStorage 'tfb.theme'). The pages draw again in the new colours.
export function currentTheme() {
  const t = document.documentElement.dataset.theme;
  if (t === 'light' || t === 'dark') return t;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}
function toggleTheme() {
  const next = currentTheme() === 'dark' ? 'light' : 'dark';
  document.documentElement.dataset.theme = next;
  localStorage.setItem('tfb.theme', next);
  retheme();
  // Canvases painted by the pages (heat maps, plain charts) take their
  // colours when drawn: draw the page again.
  if (current && !current.broken) {
    const keep = current;
    current = null;
    if (keep.mod.unmount) { try { keep.mod.unmount(); } catch (err) { window.__tfb.errors.push(String(err && err.message)); } }
    clear(els.main);
    clear(els.settings);
    choosePage();
  }
}

// The main area when a page cannot be shown: which dashboard, and why.
function renderPageError(e, why) {
  els.main.appendChild(h('div', { class: 'empty load-error', id: 'page-error', role: 'alert' },
    h('h2', null, 'The ' + e.title + ' dashboard could not be shown'),
    h('p', null, why),
    h('p', { class: 'muted' }, 'The other tabs still work. Reload (r) to try again; if it persists, the tfboard server and its web UI files do not match.')));
}

// Picks the page for state.tab (or the first enabled one), mounting it when
// it changed. Returns true when a new page was mounted.
function choosePage() {
  const tabs = enabledPages();
  const want = tabs.find((e) => e.name === state.tab) || tabs[0] || null;
  // A tab picked while its module still loads (the first load's rest):
  // the current page stays until it is in (refreshPage then mounts it).
  if (want && want.load === undefined && data.loaded) return false;
  const wantMod = want && want.load ? want.load.mod || null : null;
  if (want === null && current === null) return false;
  if (want !== null && current !== null && current.entry.name === want.name && current.mod === wantMod) {
    current.entry = want;  // the same page in a newer listing
    return false;
  }
  if (current && !current.broken && current.mod.unmount) {
    try { current.mod.unmount(); } catch (err) { window.__tfb.errors.push(String(err && err.message)); }
  }
  clear(els.main);
  clear(els.settings);
  current = want ? { entry: want, mod: wantMod, broken: !wantMod } : null;
  if (!current) return true;
  if (!wantMod) {
    renderPageError(want, want.load ? want.load.error : 'its module was not loaded');
    return true;
  }
  try {
    wantMod.mount(ctx());
  } catch (err) {
    // A page that throws while mounting must not leave a blank page.
    current.broken = true;
    clear(els.main);
    clear(els.settings);
    renderPageError(want, 'it failed while drawing: ' + (err && err.message ? err.message : String(err)));
    window.__tfb.errors.push(String(err && err.message));
  }
  return true;
}

function renderEmpty() {
  if (current || !data.loaded) return;
  if (data.runs.length) {
    // Runs but no tab: say why rather than show nothing.
    if (!el('listing-error')) {
      clear(els.main);
      els.main.appendChild(h('div', { class: 'empty load-error', id: 'listing-error', role: 'alert' },
        h('h2', null, 'No dashboards'),
        h('p', null, data.listingError || 'The server lists no dashboard with data for these runs.')));
    }
    return;
  }
  clear(els.main);
  const loading = data.progress && !data.progress.done;
  els.main.appendChild(h('div', { class: 'empty', id: 'empty-help' },
    h('h2', null, loading ? 'Loading the log directory…' : 'No data in this log directory yet'),
    h('p', null, 'tfboard shows runs: directories holding TensorBoard event files (', h('code', null, '*tfevents*'),
      '). Log a scalar from your training loop with libtfboard:'),
    h('pre', { class: 'code', id: 'empty-c' },
      '#include <tfboard.h>\n\n' +
      'tfb_writer *w;\n' +
      'tfb_writer_open(&w, "runs/exp1", NULL);\n' +
      'for (int64_t step = 0; step < steps; step++) {\n' +
      '    double loss = train_step();\n' +
      '    tfb_scalar(w, "loss", loss, step);\n' +
      '}\n' +
      'tfb_writer_close(w);'),
    // Python users write what PyTorch users write (README "Python quick
    // start"): the python/ package's SummaryWriter, a drop-in.
    h('p', null, 'Or from Python, with the ', h('code', null, 'tfboard'), ' package (', h('code', null, 'python/'),
      ', a drop-in for PyTorch\'s ', h('code', null, 'SummaryWriter'), '):'),
    h('pre', { class: 'code', id: 'empty-python' },
      'from tfboard import SummaryWriter\n\n' +
      'with SummaryWriter("runs/exp1") as w:\n' +
      '    for step in range(steps):\n' +
      '        loss = train_step()\n' +
      '        w.add_scalar("loss", loss, step)'),
    h('p', null, 'Then point tfboard at the parent directory: ', h('code', null, 'tfboard --logdir runs/'),
      '. Event files written by TensorFlow, PyTorch, tensorboardX, JAX or Keras work too. This page reloads by itself.')));
}

// The banner above every tab: what the loaded pages' banner(ctx) hooks
// give (the health page's non-finite values), in tab order. Its × hides
// it for this tab's session (sessionStorage BANNER_DISMISSED) until what
// it says changes: its text names the count and the first series of the
// selected runs, so another run set, or a new run with a NaN, shows it
// again.
const BANNER_DISMISSED = 'tfb.bannerDismissed';
function renderBanner() {
  const b = els.banner;
  clear(b);
  const parts = [];
  for (const e of enabledPages()) {
    const mod = e.load && e.load.mod;
    if (!mod || !mod.banner) continue;
    try {
      const nodes = mod.banner(ctx());
      if (nodes && nodes.length) parts.push(...nodes);
    } catch (err) { window.__tfb.errors.push(String(err && err.message)); }
  }
  b.append(...parts);
  const said = b.textContent;
  if (parts.length && sessionStorage.getItem(BANNER_DISMISSED) === said) { clear(b); parts.length = 0; }
  b.hidden = !parts.length;
  if (!parts.length) return;
  b.append(h('button', { class: 'icon-btn banner-close', id: 'banner-close', title: 'Dismiss (until what it says changes)', 'aria-label': 'Dismiss',
    onclick: () => { sessionStorage.setItem(BANNER_DISMISSED, said); clear(b); b.hidden = true; } }, '×'));
}

// A logdir in a bucket whose last reload met errors: what the store said
// (the server keeps serving what it loaded), and a way to try again now.
function renderStorageBanner() {
  const b = el('storage-banner');
  clear(b);
  const st = data.env && data.env.storage;
  if (!st || !st.last_error || !st.last_reload || !(st.last_reload.failures > 0)) { b.hidden = true; return; }
  b.hidden = false;
  b.append(h('span', { class: 'banner-icon' }, '⚠'),
    h('span', null, 'The bucket did not answer at the last reload: ', h('code', null, String(st.last_error)),
      '. What was loaded is still shown. '),
    h('a', { href: '#', id: 'storage-retry', onclick: (e) => { e.preventDefault(); reload(true); } }, 'Retry now'));
}

function refreshPage(changed) {
  const mounted = choosePage();
  renderTabs();
  renderBanner();
  renderEmpty();
  if (mounted || !current || current.broken || !current.mod.update) return;
  // disable_reload (TensorBoard's listing): the page does not redraw on a
  // data reload, only on its own state changes.
  if (current.entry.disableReload && changed.length === 1 && changed[0] === 'data') return;
  current.mod.update(ctx(), changed);
}

// The catalog the loaded pages ask for ({key: {route, take}}), each key
// once (the first page's), fetched as optional JSON: key -> take(answer).
async function fetchPageCatalog(entries, have = null) {
  const wanted = new Map();
  for (const e of entries) {
    const cat = e.load && e.load.mod && e.load.mod.catalog;
    if (!cat || typeof cat !== 'object') continue;
    for (const [k, spec] of Object.entries(cat)) if (!wanted.has(k) && !(have && have.has(k)) && spec && spec.route) wanted.set(k, spec);
  }
  const got = await Promise.all([...wanted].map(([k, spec]) => getOptional(spec.route).then(
    (v) => [k, spec.take ? spec.take(v) : v], () => [k, spec.take ? spec.take(null) : null])));
  return got;
}

// The page the frame shows: state.tab's, else the first enabled one
// (choosePage's pick).
function pageToShow(entries) {
  const tabs = entries.filter((e) => e.enabled && !e.noPage);
  return tabs.find((e) => e.name === state.tab) || tabs[0] || null;
}

// How long the rest of the first load waits for the first page's first
// drawing (its `drawn()`) before it starts anyway: a page that never
// draws must not leave the other tabs without their modules.
const FIRST_SCREEN_WAIT_MS = 3000;

// Fetches the catalog. On the page's first load (data.loaded false) only
// what the page shown first needs is awaited: the listing, the run names,
// the environment, that page's module and catalog. What every other tab
// needs (their modules and catalogs, the probes, /data/runs_info: 6.5 MB
// of JSON at 10,000 runs) is left to the function returned (null on
// later loads, which fetch everything before they return), which the
// caller runs once the page is mounted: at 10,000 runs the first chart
// came after all of it (issue 28).
async function fetchCatalog(userAsked) {
  // The listing first: data only grows, so whatever it enables is in the
  // answers asked for after it, and a tab never opens on a page whose runs
  // and tags the catalog does not have yet. The page modules load while the
  // rest of the catalog is fetched.
  const plugins = await getOptional('data/plugins_listing');
  let entries = [];
  let listingError = null;
  try {
    if (plugins === null) throw new Error('this server has no /data/plugins_listing');
    entries = parseListing(plugins);
  } catch (e) {
    listingError = 'The server did not list its dashboards: ' + e.message + '.';
  }
  if (userAsked) retries++;
  const firstLoad = !data.loaded;
  const first = firstLoad ? pageToShow(entries) : null;
  const loadAll = () => Promise.all(entries.map(async (e) => { e.load = e.enabled && !e.noPage ? await loadPage(e) : null; }));
  // The first page's module, when only its needs are awaited: a page that
  // declares `runsInfo` (its first screen reads the run details: the GPU
  // page's runs with a trace, Compare's opening pair) gets them now.
  const firstIn = first ? loadPage(first) : null;
  const base = Promise.all([
    // In natural order (run2 before run10), sorted by the server.
    getJSON('data/runs', { order: 'natural' }),
    !firstLoad ? getOptional('data/runs_info')
      : firstIn ? firstIn.then((l) => (l && l.mod && l.mod.runsInfo ? getOptional('data/runs_info') : data.runsInfo))
        : Promise.resolve(data.runsInfo),
    // A bucket's request counts and faults change at each reload.
    data.env && !data.env.storage ? Promise.resolve(data.env) : getOptional('data/environment'),
  ]);
  // The pages' own catalog as soon as their modules are in.
  const pagesIn = first
    ? firstIn.then(async (l) => { first.load = l; return fetchPageCatalog([first]); })
    : loadAll().then(() => fetchPageCatalog(entries));
  const [[runsList, runsInfo, env], pageCatalog] = await Promise.all([base, pagesIn]);
  data.env = env;
  // Tag names the dashboards recognise runs by, as the server spells them.
  data.tagNames = (env && env.tag_names) || {};
  // Natural order (run2 before run10) on every page: the server's
  // (base/natural.h), checked in one pass (sorting here took seconds at
  // 100,000 runs).
  data.runs = Array.isArray(runsList) ? naturalSorted(runsList.map(String)) : [];
  assignRunColors(data.runs);
  for (const [k, v] of pageCatalog) data[k] = v;
  data.runsInfo = runsInfo;
  data.plugins = plugins;
  data.listingError = listingError;
  await probePages(entries, first ? [first] : entries);
  data.pages = entries;
  data.loaded = true;
  if (!first) return null;
  // The rest of the first load: the other tabs' modules, the catalog keys
  // the first page did not ask for, every probe, the run details.
  const have = new Set(pageCatalog.map(([k]) => k));
  return async () => {
    const [info, more] = await Promise.all([
      getOptional('data/runs_info').catch(() => null),
      loadAll().then(() => fetchPageCatalog(entries, have)),
    ]);
    for (const [k, v] of more) data[k] = v;
    data.runsInfo = info;
    // Every probe, the first page's again: it may read runsInfo (the GPU
    // page's runs with a trace).
    await probePages(entries);
  };
}

// The shown page's first drawing (its optional `drawn()`), at most
// FIRST_SCREEN_WAIT_MS; at once for a page without the hook.
function firstDrawing() {
  const mod = current && !current.broken ? current.mod : null;
  let p = null;
  try { p = mod && mod.drawn ? mod.drawn() : null; } catch (err) { p = null; }
  if (!p) return Promise.resolve();
  return Promise.race([Promise.resolve(p).catch(() => null), new Promise((r) => setTimeout(r, FIRST_SCREEN_WAIT_MS))]);
}

// Reloads the catalog (runs, run details, what the pages ask for) and lets the page refresh its
// charts. Concurrent calls share one reload.
async function reload(userAsked) {
  if (reloading) return reloading;
  reloading = (async () => {
    try {
      // a bucket is listed at long intervals while idle: ask for a listing now
      if (userAsked && data.env && data.env.storage) await getOptional('data/reload').catch(() => null);
      const rest = await fetchCatalog(userAsked);
      renderStorageBanner();
      window.__tfb.reloads++;
      // The word goes in narrow bars (style.css): the tabs need the room.
      clear(el('reload-time')).append(h('span', { class: 'reload-word' }, 'Reloaded '), wallShort(Date.now() / 1000));
      el('reload-time').title = 'Reloaded at ' + wallShort(Date.now() / 1000);
      el('reload-time').classList.remove('error');
      runList.refresh();
      refreshPage(['data']);
      if (rest) {
        // The first page is up: the rest once it drew its first chart.
        await firstDrawing();
        await rest();
        runList.refresh();
        refreshPage(['catalog']);
      }
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
  }
}

// Escape closes the open menus even from inside a text box (the filter).
function onEscape(e) {
  if (e.key === 'Escape') closeMenus();
}

// A link whose `runs=@ID` the server no longer holds (it restarted, or
// evicted it): the pages that can rebuild it from the rest of the URL (the
// HParams brushes) do, else every run is shown and the banner says why.
async function recoverLostSelection() {
  const id = pendingSelection();
  if (!id) return;
  let names = null;
  try { names = await recoverSelection(data.runs); } catch (e) { names = null; }
  if (pendingSelection() !== id) return;
  if (names) { setRunsChecked(data.runs, names); return; }
  setState({ runs: null });
  window.__tfb.selectionLost = id;
  els.banner.after(h('div', { class: 'banner', id: 'selection-banner', role: 'status' },
    'The run selection of this link is no longer on the server (it restarted or forgot it): showing every run.'));
}

async function main() {
  loadFromUrl();
  const resolved = await resolveUrlSelection();
  buildFrame();
  onStateChange((changed) => {
    closeMenus();
    if (changed.includes('auto')) { el('auto-reload').checked = state.auto; scheduleAuto(); }
    if (changed.some((k) => k === 'runs' || k === 'runFilter' || k === 'runWhereHits')) runList.refresh();
    if (changed.includes('data')) runList.recheck();
    refreshPage(changed);
  });
  document.addEventListener('keydown', onKey);
  document.addEventListener('keydown', onEscape);
  scheduleAuto();
  await pollProgress();
  await reload(false);
  if (!resolved) await recoverLostSelection();
}

window.addEventListener('error', (e) => window.__tfb.errors.push(String(e.message)));
main();
