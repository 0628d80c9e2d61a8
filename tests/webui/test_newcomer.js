// The newcomer's path on the demo: examples/demo.sh (NO_SERVE=1) on this
// build writes its sweep, the run that diverges (loss 7.7e28, then NaN at
// step 61), the spiky run, an input-bound and a balanced pipeline run, a
// 4-rank DDP job with a straggler and the GPU sample trace; the test adds a
// run of one step (every series a single point, every distribution one
// step). Then, as a new user would: every tab of /data/plugins_listing
// (all of them enabled) is clicked and
// screenshotted at 1440 px and at 800 px (TFB_SHOTS, else the build's
// screenshots/), and the page is checked for what spoiled the first five
// minutes: no scalar chart whose y range is set by the one diverged run
// (with the "N points above" marker and its "show all"), single-point
// series drawn as markers, tick labels as people write them (no
// "79.93e27", no "-0"), the same colour for a run across two reloads, no
// clipped tab bar at 800 px (the tabs that do not fit are in "More"),
// "Show it" isolating the failing run and zooming to its step, and the
// light/dark toggle persisting.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('./lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_newcomer.js TFBOARD'); process.exit(2); }
const EX = path.join(process.env.TFB_BUILD_ROOT || '', 'examples');
const SRC = process.env.TFB_SOURCE_ROOT || path.join(__dirname, '..', '..');
// A sweep run of the demo, the healthy one the diverged run is compared with.
const HEALTHY = 'sweep/lr0.1_seed1';
for (const p of ['mlp_train', 'pipeline_train', 'ddp_train', 'spiky_train', 'gpu_sample_trace']) {
  if (!fs.existsSync(path.join(EX, p))) T.skip(path.join(EX, p) + ' not built');
}
const SHOTS = process.env.TFB_SHOTS || '';

async function shot(page, name) {
  if (!SHOTS) return T.screenshot(page, 'newcomer-' + name);
  fs.mkdirSync(SHOTS, { recursive: true });
  const f = path.join(SHOTS, name + '.png');
  await page.screenshot({ path: f });
  console.log('# screenshot ' + f);
  return f;
}

// The demo itself (examples/demo.sh with NO_SERVE=1, on this build's
// examples), plus one run of a single step: every series one point and
// every distribution one step.
function writeLogdir() {
  const d = T.tmpdir('tfb-webui-newcomer-');
  execFileSync('bash', [path.join(SRC, 'examples', 'demo.sh')], {
    env: { ...process.env, NO_SERVE: '1', LOGDIR: d, BUILD: process.env.TFB_BUILD_ROOT },
    stdio: ['ignore', 'ignore', 'inherit'], timeout: 600000,
  });
  execFileSync(path.join(EX, 'mlp_train'), ['--logdir', d, '--name', 'first_step', '--steps', '1', '--hist-every', '1'],
    { stdio: 'ignore', timeout: 120000 });
  return d;
}

// Waits until the page has settled: no request in flight for a moment.
async function settle(page) {
  await page.waitForLoadState('networkidle', { timeout: 15000 }).catch(() => {});
  await page.waitForTimeout(400);
}

// Scrolls the main area to its end and back, so every lazily drawn card
// draws.
async function scrollAll(page) {
  for (let i = 0; i < 40; i++) {
    const more = await page.$eval('#main', (m) => { const was = m.scrollTop; m.scrollTop += m.clientHeight * 0.8; return m.scrollTop > was; });
    await page.waitForTimeout(150);
    if (!more) break;
  }
  await settle(page);
  await page.$eval('#main', (m) => { m.scrollTop = 0; });
}

// Clicks a tab, through the "More" menu when it is there.
async function openTab(page, name) {
  const inMenu = await page.$('#tabs-more-menu #tab-' + name);
  if (inMenu) await page.click('#tabs-more-btn');
  await page.click('#tab-' + name);
  await T.until(page, (n) => (location.hash.includes('tab=' + n) || n === window.__tfb.tabs[0]) &&
    !!document.querySelector('#tab-' + n + '.active'), name, 'tab ' + name + ' active');
  await settle(page);
}

// Tick labels that are not how people write numbers: 4 significant digits
// before an exponent ("79.93e27", "526.6e-9"), "100e15", or a signed zero.
function badTick(l) {
  return /^-?\d+\.\d+e-?\d+$/.test(l) && l.replace(/^-/, '').split('e')[0].replace('.', '').length >= 4 ||
    /^-?\d{3}e-?\d+$/.test(l) || /^-0(\.0*)?( %)?$/.test(l);
}

T.run(async () => {
  const logdir = writeLogdir();
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const listing = await (await fetch(srv.url + 'data/plugins_listing')).json();
  const enabled = Object.entries(listing).filter(([, p]) => p.enabled && p.loading_mechanism.type === 'JS_MODULE').map(([k]) => k);
  try {
    let page = await T.newPage(browser, { viewport: { width: 1440, height: 900 } });

    await T.step('every enabled tab opens and is screenshotted at 1440 px', async () => {
      await T.openApp(page, srv.url);
      const off = Object.entries(listing).filter(([, p]) => !p.enabled).map(([k]) => k);
      T.assertEq(off, [], 'the demo enables every dashboard');
      for (const name of enabled) {
        await openTab(page, name);
        await shot(page, name + '-1440');
        const err = await page.$('#page-error');
        T.assert(!err, name + ': the page failed: ' + (err && await err.textContent()));
      }
      T.assertEq(page.problems, [], 'no console errors or failed requests');
    });

    await T.step('projector: each MLP run logs its samples\' hidden layer (tfb_embedding)', async () => {
      const P = srv.url + 'data/plugin/projector/';
      const runs = await (await fetch(P + 'runs')).json();
      T.assert(runs.includes(HEALTHY) && !runs.includes('diverge'), 'projector runs: ' + JSON.stringify(runs));
      const info = await (await fetch(P + 'info?run=' + encodeURIComponent(HEALTHY))).json();
      const e = info.embeddings[0];
      T.assertEq([e.tensorName, e.tensorShape, e.sprite.singleImageDim], ['hidden:00300', [900, 32], [8, 8]], 'the embedding');
      T.assert(!info.tfboardNotes, 'no notes: ' + JSON.stringify(info.tfboardNotes));
      const meta = await (await fetch(P + 'metadata?num_rows=1&run=' + encodeURIComponent(HEALTHY) + '&name=hidden:00300')).text();
      T.assert(/^class\tpredicted\narm 0\tarm \d\n$/.test(meta), 'labels: ' + JSON.stringify(meta));
    });

    await T.step('projector tab: that embedding in 3-D, PCA from the server, coloured by class, swatches as sprites', async () => {
      await openTab(page, 'projector');
      await T.until(page, () => window.__tfb.pages.projector && window.__tfb.pages.projector.projected, null, 'a projection');
      await page.selectOption('#prj-run', HEALTHY);
      await T.until(page, (r) => { const p = window.__tfb.pages.projector; return p.run === r && p.tensor === 'hidden:00300' && p.projected; }, HEALTHY, 'the healthy run\'s embedding');
      const st = await page.evaluate(() => { const p = window.__tfb.pages.projector; return [p.points, p.dims, p.visible, p.columns, p.spritesShown, p.pca && p.pca.components]; });
      T.assertEq(st, [900, 32, 900, ['class', 'predicted'], true, 3], 'points, columns, sprites, PCA');
      await page.selectOption('#prj-color', '0');
      await T.until(page, () => (window.__tfb.pages.projector.legend || []).map((t) => t.replace(/ \(\d+\)$/, '')).sort().join() === 'arm 0,arm 1,arm 2', null, 'the three classes in the legend');
      await shot(page, 'projector-class-1440');
      T.assertEq(page.problems, [], 'no console errors or failed requests');
    });

    await T.step('runs: the table lists every run (its first paint must not leave rows out)', async () => {
      await openTab(page, 'runs');
      const runs = await (await fetch(srv.url + 'data/runs')).json();
      T.assert(runs.length >= 16, 'the demo and first_step: ' + runs.length + ' runs');
      const names = await page.$$eval('.runs-table tbody tr td:nth-child(2)', (ts) => ts.map((t) => t.textContent.trim()));
      T.assertEq(names.length, runs.length, 'every run has its row');
      T.assertEq(names.filter((x) => x.startsWith('sweep/')),
        ['sweep/lr0.03_seed1', 'sweep/lr0.03_seed2', 'sweep/lr0.1_seed1', 'sweep/lr0.1_seed2', 'sweep/lr0.3_seed1', 'sweep/lr0.3_seed2'],
        'sorted by name, numbers by value');
    });

    await T.step('health: what came before the first NaN is said, as text', async () => {
      await openTab(page, 'health');
      const why = await T.until(page, () => window.__tfb.pages.health && window.__tfb.pages.health.explain && window.__tfb.pages.health.explain.diverge, null, 'the explanation');
      T.assert(/^gradient norms grew .* from step \d+ \(.* first\); NaN at 61$/.test(why), 'explain: ' + why);
      const li = await page.textContent('#health-explain li');
      T.assertEq(li.replace(/\s+/g, ' ').trim(), 'diverge: ' + why, 'shown');
    });

    await T.step('text: a tag logged at every step shows its newest 10 entries, the rest on demand', async () => {
      await openTab(page, 'text');
      const card = '.card[data-tag="batch/id"][data-run="spiky"]';
      await T.until(page, () => window.__tfb.pages.text && window.__tfb.pages.text['spiky:batch/id'] === 600, null, 'spiky batch ids');
      T.assertEq(await page.$$eval(card + ' .text-entry', (es) => es.length), 10, 'the newest 10');
      T.assertEq(await page.$eval(card + ' .text-step', (e) => e.textContent), 'step 600', 'newest first');
      await page.click(card + ' .text-more');
      T.assertEq(await page.$$eval(card + ' .text-entry', (es) => es.length), 600, 'all on demand');
    });

    await T.step('audio: the MLP\'s loss tone is a player, one clip per logged step', async () => {
      await openTab(page, 'audio');
      const card = `.audio-card[data-tag="sound/loss_tone"][data-run="${HEALTHY}"]`;
      await T.until(page, (c) => !!document.querySelector(c), card, 'the loss tone card');
      const d = await page.$eval(card + ' audio', (a) => new Promise((resolve) => {
        a.addEventListener('loadedmetadata', () => resolve(a.duration), { once: true });
        a.addEventListener('error', () => resolve('error'), { once: true });
        a.load();
      }));
      T.assert(typeof d === 'number' && Math.abs(d - 0.4) < 0.01, 'the 0.4 s tone: ' + d);
    });

    await T.step('graphs: the MLP opens as its closed scopes with shapes on the edges; a scope opens; the panel', async () => {
      await openTab(page, 'graphs');
      await T.until(page, () => window.__tfb.pages.graphs && window.__tfb.pages.graphs.openMs > 0, null, 'the graph drawn');
      const boxes = await page.$$eval('.graphs-nodes > g', (els) => els.map((e) => e.getAttribute('class') + ' ' + e.dataset.id).sort());
      T.assertEq(boxes, ['fc1', 'fc2', 'fc3', 'input', 'loss'].map((x) => 'graphs-group closed ' + x), 'mlp_train\'s scopes, closed');
      const labels = await page.$$eval('.graphs-edge-label', (els) => els.map((e) => e.textContent).sort());
      T.assertEq(labels, ['?', '?×2', '?×3', '?×32', '?×32'], 'the shapes mlp_train wrote (-1: the batch)');
      await page.click('.graphs-group[data-id="fc1"] .graphs-toggle');
      await page.click('.graphs-node[data-id="fc1/MatMul"]');
      const panel = await page.$eval('#graphs-panel', (p) => ({ hidden: p.hidden, text: p.textContent }));
      T.assert(!panel.hidden && panel.text.includes('MatMul') && panel.text.includes('/device:CPU:0') &&
        panel.text.includes('input/x') && panel.text.includes('fc1/weight') && panel.text.includes('fc1/BiasAdd'), 'the panel: ' + panel.text);
      await shot(page, 'graphs-demo-1440');
    });

    await T.step('scalars: the diverged run does not set any y range; the marker shows all', async () => {
      await openTab(page, 'scalars');
      await scrollAll(page);
      const charts = await T.until(page, () => {
        const c = window.__tfb.charts;
        const ks = Object.keys(c).filter((k) => c[k] && c[k].runs && c[k].runs.diverge);
        return ks.length >= 3 ? ks.map((k) => [k, c[k]]) : null;
      }, null, 'scalar charts with the diverged run');
      let marked = 0;
      for (const [k, c] of charts) {
        const others = Object.entries(c.runs).filter(([r]) => r !== 'diverge').map(([, s]) => Math.max(Math.abs(s.min), Math.abs(s.max)))
          .filter(Number.isFinite);
        const d = c.runs.diverge;
        if (!d.line) continue;   // only non-finite points: drawn as markers
        const dmax = Math.max(Math.abs(d.min), Math.abs(d.max));
        if (!others.length || !(dmax > 1e6 * Math.max(...others))) continue;
        const [lo, hi] = c.scales.y;
        T.assert(Math.max(Math.abs(lo), Math.abs(hi)) < 100 * Math.max(...others),
          `${k}: y range ${lo}..${hi} set by the diverged run (${dmax}) while the others stay under ${Math.max(...others)}`);
        T.assert(c.outliers && c.outliers.above + c.outliers.below > 0, k + ': the outliers are counted');
        marked++;
      }
      T.assert(marked >= 2, 'at least loss and a grad_norm chart have the diverged run\'s extremes: ' + marked);
      // loss: the marker says how many points, and one click shows all.
      const card = '.card[data-tag="loss"]';
      const txt = await page.textContent(card + ' .outlier-marker');
      T.assert(/\d+ points? above/.test(txt), 'marker text: ' + txt);
      await page.click(card + ' .outlier-marker');
      const all = await page.evaluate(() => window.__tfb.charts['scalars:loss'] || Object.values(window.__tfb.charts).find((c) => c.view && c.runs && c.runs.diverge));
      T.assert(all.scales.y[1] >= all.runs.diverge.max, 'show all: the y range reaches the diverged max ' + all.scales.y + ' vs ' + all.runs.diverge.max);
      await page.click(card + ' .outlier-marker');
      // The tooltip at step 200: the diverged run stopped at step 61 and is
      // not listed; the box sits beside the cursor, off the plot area.
      await page.$eval(card, (c) => c.scrollIntoView());
      const geo = await page.$eval(card + ' canvas', (cv) => {
        const ch = cv.$scalarChart.chart, r = cv.getBoundingClientRect(), a = ch.chartArea;
        return { x: r.left + ch.scales.x.getPixelForValue(200), y: r.top + (a.top + a.bottom) / 2,
          area: { left: r.left + a.left, right: r.left + a.right, top: r.top + a.top, bottom: r.top + a.bottom } };
      });
      await page.mouse.move(geo.x, geo.y);
      await page.waitForSelector(card + ' .chart-tooltip:not([hidden])');
      const tip = await page.$eval(card + ' .chart-tooltip', (t) => {
        const r = t.getBoundingClientRect();
        return { runs: [...t.querySelectorAll('tbody .run-name')].map((e) => e.textContent), left: r.left, top: r.top, right: r.right, bottom: r.bottom };
      });
      T.assert(tip.runs.includes(HEALTHY) && !tip.runs.includes('diverge') && !tip.runs.includes('first_step'),
        'runs listed at step 200: ' + tip.runs);
      const a = geo.area;
      const overlap = tip.left < a.right && tip.right > a.left && tip.top < a.bottom && tip.bottom > a.top;
      T.assert(!overlap, 'the tooltip is off the plot area: ' + JSON.stringify({ tip, a }));
      T.assert(tip.left >= geo.x || tip.right <= geo.x, 'beside the cursor');
      await shot(page, 'scalars-tooltip-1440');
      await page.mouse.move(5, 5);
    });

    await T.step('single-point series are drawn as markers; ticks are formatted', async () => {
      const charts = await page.evaluate(() => Object.entries(window.__tfb.charts).filter(([, c]) => c && c.datasets && c.ticks));
      T.assert(charts.length >= 3, 'scalar charts published: ' + charts.length);
      let single = 0;
      for (const [k, c] of charts) {
        for (const d of c.datasets) {
          if (d.n === 1) { single++; T.assert(d.pointRadius >= 2, `${k}: ${d.label} has one point and no marker`); }
        }
        for (const l of c.ticks.y.concat(c.ticks.x)) T.assert(!badTick(String(l)), `${k}: tick label "${l}"`);
      }
      T.assert(single >= 3, 'first_step draws single points: ' + single);
      // A chart of the one-step run alone: its point is drawn on its own.
      await page.evaluate(() => { location.hash = 'tab=scalars&runs=' + encodeURIComponent(JSON.stringify(['first_step'])); });
      await settle(page);
      const one = await T.until(page, () => {
        const c = Object.values(window.__tfb.charts).find((x) => x && x.runs && Object.keys(x.runs).join() === 'first_step');
        return c || null;
      }, null, 'a chart of first_step alone');
      T.assert(one.datasets.some((d) => d.n === 1 && d.pointRadius >= 2), 'one-point chart has a marker');
      await shot(page, 'scalars-single-point-1440');
      await page.evaluate(() => { location.hash = 'tab=distributions'; });
      await settle(page);
      const dist = await T.until(page, () => {
        const k = Object.keys(window.__tfb.charts).find((x) => x.startsWith('distributions:first_step:'));
        return k ? window.__tfb.charts[k] : null;
      }, null, 'a distribution of first_step');
      T.assertEq(dist.steps, 1, 'one step');
      T.assert(dist.drawnPoints === 2, 'the one step is drawn as a band (two x positions): ' + dist.drawnPoints);
      await shot(page, 'distributions-one-step-1440');
      await page.evaluate(() => { location.hash = 'tab=scalars'; });
      await settle(page);
    });

    await T.step('"Show it" isolates the failing run and zooms to the step where it broke', async () => {
      await page.evaluate(() => { location.hash = 'tab=scalars'; });
      await page.waitForSelector('#banner-first');
      await page.click('#banner-first');
      const c = await T.until(page, () => {
        const x = Object.values(window.__tfb.charts).find((v) => v && v.runs && Object.keys(v.runs).join() === 'diverge' && v.zoomed);
        return x || null;
      }, null, 'the diverge chart alone, zoomed');
      const step = c.view.focusStep;
      T.assert(c.scales.x[0] < step && c.scales.x[1] > step, `x range ${c.scales.x} around step ${step}`);
      T.assert(c.scales.x[1] - c.scales.x[0] < 150, 'zoomed in: ' + c.scales.x);
      await settle(page);
      await shot(page, 'show-it-1440');
      await page.evaluate(() => { location.hash = 'tab=scalars'; });
      await settle(page);
    });

    await T.step('compare: curves of both runs per shared tag, the divergence named', async () => {
      await page.evaluate((a) => { location.hash = 'tab=compare&cmpA=' + encodeURIComponent(a) + '&cmpB=diverge'; }, HEALTHY);
      const pg = await T.until(page, () => {
        const c = window.__tfb.pages.compare;
        return c && c.b === 'diverge' && c.charts > 0 && c.drawn === c.charts ? c : null;
      }, null, 'compare curves drawn');
      T.assert(/^B diverged at step \d+: loss NaN$/.test(pg.headline), 'headline: ' + pg.headline);
      T.assertEq(await page.textContent('#compare-headline h2'), pg.headline, 'headline shown');
      const loss = await page.evaluate(() => window.__tfb.charts['compare:loss']);
      T.assertEq(Object.keys(loss.runs).sort(), [HEALTHY, 'diverge'].sort(), 'both runs overlaid on loss');
      T.assert(loss.scales.y[1] < 100, 'loss curves not flattened by the diverged run: ' + loss.scales.y);
      const cell = await page.$eval('#compare-scalars tr[data-tag="loss"] td:nth-child(4)', (td) => [td.textContent, td.className]);
      T.assert(cell[0] === 'B NaN' && /worse/.test(cell[1]), 'a NaN in B is named, in red: ' + cell);
      await settle(page);
      await shot(page, 'compare-demo-diverge-1440');
      await page.evaluate(() => { location.hash = 'tab=scalars'; });
      await settle(page);
    });

    await T.step('"Export this view": one HTML file that draws the same charts offline', async () => {
      await page.evaluate(() => { location.hash = 'tab=scalars&tagFilter=' + encodeURIComponent('^(loss|accuracy|grad_norm/fc1/weight)$'); });
      await settle(page);
      await scrollAll(page);
      const live = await T.until(page, () => {
        const c = window.__tfb.charts;
        const ks = ['loss', 'accuracy', 'grad_norm/fc1/weight'].filter((t) => c['scalars:' + t] && c['scalars:' + t].datasets);
        return ks.length === 3 ? ks.map((t) => [t, c['scalars:' + t]]) : null;
      }, null, 'the three charts drawn');
      await page.click('#settings-btn');
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-view')]);
      const file = path.join(T.tmpdir('tfb-export-'), 'view.html');
      await dl.saveAs(file);
      const html = fs.readFileSync(file, 'utf8');
      T.assert(!/<script[^>]+src=|<link[^>]+href=/i.test(html), 'nothing loaded from elsewhere');
      if (SHOTS) fs.copyFileSync(file, path.join(SHOTS, 'export-scalars.html'));
      // Offline: every request that is not file: or data: is refused.
      const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const off = await ctx.newPage();
      const blocked = [];
      const errors = [];
      await off.route('**/*', (r) => {
        const u = r.request().url();
        if (u.startsWith('file:') || u.startsWith('data:')) return r.continue();
        blocked.push(u);
        return r.abort();
      });
      off.on('pageerror', (e) => errors.push(e.message));
      off.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      await off.goto('file://' + file);
      const ex = await T.until(off, () => window.__export && window.__export.ready ? window.__export : null, null, 'the export drawn');
      T.assertEq(blocked, [], 'the export asked for nothing from the network');
      T.assertEq(errors, [], 'no errors in the export');
      for (const [tag, c] of live) {
        const e = ex.charts.find((x) => x.title === tag);
        T.assert(e, 'exported chart ' + tag + ' in ' + ex.charts.map((x) => x.title));
        T.assertEq(e.datasets, c.datasets.map((d) => ({ label: d.label, n: d.n })), tag + ': the same lines and points');
        T.assertEq(e.y, c.scales.y, tag + ': the same y range');
        T.assertEq(e.ticks.y, c.ticks.y, tag + ': the same y tick labels');
      }
      await off.screenshot({ path: SHOTS ? path.join(SHOTS, 'export-offline-1440.png') : path.join(T.tmpdir('tfb-shot-'), 'x.png') });
      await ctx.close();
      await page.evaluate(() => { location.hash = 'tab=scalars'; });
      await settle(page);
    });

    await T.step('the same colour for a run across two reloads', async () => {
      const colour = () => page.$eval('#run-list', (ul) => {
        const out = {};
        for (const li of ul.querySelectorAll('li')) {
          const sw = li.querySelector('.swatch');
          if (sw) out[li.textContent.trim()] = sw.style.background;
        }
        return out;
      });
      const first = await colour();
      T.assert(Object.keys(first).length >= 5, 'run rows: ' + JSON.stringify(first));
      for (let i = 0; i < 2; i++) {
        await page.reload();
        await page.waitForFunction(() => window.__tfb && window.__tfb.ready);
        await settle(page);
        T.assertEq(await colour(), first, 'colours after reload ' + (i + 1));
      }
      const distinct = new Set(Object.values(first));
      T.assert(distinct.size === Object.keys(first).length, 'every run its own colour: ' + JSON.stringify(first));
    });

    await T.step('light / dark toggle, persisted', async () => {
      const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const before = await bg();
      await page.click('#theme-toggle');
      const after = await bg();
      T.assert(before !== after, 'the toggle changes the page colours');
      await page.reload();
      await page.waitForFunction(() => window.__tfb && window.__tfb.ready);
      T.assertEq(await bg(), after, 'the theme survives a reload');
      await settle(page);
      await shot(page, 'scalars-dark-1440');
      await page.click('#theme-toggle');
      T.assertEq(await bg(), before, 'and toggles back');
    });
    await page.context().close();

    page = await T.newPage(browser, { viewport: { width: 800, height: 900 } });
    await T.step('800 px: no clipped tab bar; every tab reachable; sidebar collapses', async () => {
      await T.openApp(page, srv.url);
      await settle(page);
      const fit = await page.evaluate(() => {
        const nav = document.getElementById('tabs');
        const bar = document.querySelector('.topbar');
        const kids = [...bar.children].filter((e) => !e.hidden && e.offsetParent !== null);
        const right = Math.max(...kids.map((e) => e.getBoundingClientRect().right));
        return { scroll: nav.scrollWidth, client: nav.clientWidth, right, width: window.innerWidth };
      });
      T.assert(fit.scroll <= fit.client + 1, 'tabs overflow their bar: ' + JSON.stringify(fit));
      T.assert(fit.right <= fit.width + 1, 'top bar wider than the window: ' + JSON.stringify(fit));
      const inMenu = await page.$$eval('#tabs-more-menu .tab', (as) => as.map((a) => a.id));
      T.assert(inMenu.length > 0, 'some tabs moved to More at 800 px');
      for (const name of enabled) {
        await openTab(page, name);
        await shot(page, name + '-800');
      }
      const w0 = await page.$eval('#main', (m) => m.clientWidth);
      await page.click('#sidebar-toggle');
      const w1 = await page.$eval('#main', (m) => m.clientWidth);
      T.assert(w1 > w0 + 100, `the main area takes the sidebar's width: ${w0} -> ${w1}`);
      await page.reload();
      await page.waitForFunction(() => window.__tfb && window.__tfb.ready);
      T.assert(await page.$eval('.sidebar', (s) => getComputedStyle(s).display === 'none'), 'collapsed sidebar persists');
      await page.click('#sidebar-toggle');
      T.assertEq(page.problems, [], 'no console errors or failed requests at 800 px');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
// The demo runs inside this bound and every dashboard is opened twice: on
// the shared 2-core machine under load that took 150 s (the default), so
// the bound is meson's timeout for this test (360 s) less a margin.
}, 330000);
