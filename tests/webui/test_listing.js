// Browser test of the frame's plugin loading: the tabs are the enabled
// entries of /data/plugins_listing in its order, titled with tab_name; the
// page module the listing names is import()ed (and the modules of disabled
// dashboards are not); a reload fetches the listing again, so tabs appear
// when data arrives; #tab= in the URL picks the page; a module that cannot
// be loaded or is no page gets a message in the main area, and a reload the
// user asks for tries it again.
'use strict';
const fs = require('fs');
const path = require('path');
const T = require('./lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_listing.js TFBOARD GEN_LOGDIR'); process.exit(2); }

// The listing as the page's own origin answers it.
function listing(page) {
  return page.evaluate(() => fetch('data/plugins_listing', { cache: 'no-store' }).then((r) => r.json()));
}
// The built-in dashboards in tab order (server/plugins/plugins.list), and
// a set of them in that order.
const LIST = T.pluginList('server/plugins/plugins.list');
const inOrder = (names) => LIST.filter((n) => names.includes(n));
const enabledNames = (l) => Object.keys(l).filter((k) => l[k].enabled);
const tabIds = (page) => page.$$eval('#tabs .tab', (as) => as.map((a) => a.id.replace('tab-', '')));
// Tab labels without a badge's count.
const tabTitles = (page) => page.$$eval('#tabs .tab', (as) => as.map((a) => a.firstChild.textContent));
const activeTab = (page) => page.$eval('#tabs .tab.active', (a) => a.id.replace('tab-', ''));
// The page modules the browser fetched, as paths under the page root.
const pageModulesFetched = (page) => page.evaluate(() => [...new Set(performance.getEntriesByType('resource')
  .map((r) => new URL(r.name)).filter((u) => u.pathname.startsWith('/js/pages/')).map((u) => u.pathname.slice(1)))].sort());

// Presses the reload button until fn(page) is true (the server rescans
// the logdir every second here); bounded, never a wall-time assertion.
async function reloadUntil(page, fn, what) {
  for (let i = 0; i < 60; i++) {
    const n = await page.evaluate(() => window.__tfb.reloads);
    await page.click('#reload');
    await page.waitForFunction((k) => window.__tfb.reloads > k, n);
    if (await fn(page)) return;
    await page.waitForTimeout(250);
  }
  throw new Error('timed out waiting for ' + what);
}

T.run(async () => {
  // Full logdir from the generator; the served one starts with the
  // pipeline run alone (scalars but no histograms, text, gradients or GPU
  // trace), and the gpu run is moved in later.
  const full = T.makeLogdir(gen);
  const logdir = T.tmpdir('tfb-listing-');
  fs.renameSync(path.join(full, 'pipeline'), path.join(logdir, 'pipeline'));
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '1']);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  try {
    await T.step('tabs are the enabled listing entries, in its order, titled by tab_name', async () => {
      await T.openApp(page, srv.url);
      const l = await listing(page);
      T.assertEq(Object.keys(l), LIST, 'listing keys');
      T.assertEq(enabledNames(l), inOrder(['scalars', 'runs', 'health', 'pipeline', 'efficiency', 'alerts', 'query']), 'enabled for a pipeline-only logdir (step timing: Efficiency too)');
      T.assertEq(await tabIds(page), enabledNames(l), 'tab ids');
      T.assertEq(await tabTitles(page), enabledNames(l).map((k) => l[k].tab_name), 'tab titles');
      T.assertEq(await activeTab(page), 'scalars', 'the first tab is shown');
    });

    await T.step('the listed module is import()ed and mounted; disabled ones are not loaded', async () => {
      await T.until(page, () => window.__tfb.charts['scalars:pipeline/step_ms'], null, 'a scalar chart');
      const l = await listing(page);
      const want = enabledNames(l).map((k) => l[k].loading_mechanism.module_path).sort();
      T.assertEq(want, ['js/pages/alerts.js', 'js/pages/efficiency.js', 'js/pages/health.js', 'js/pages/pipeline.js', 'js/pages/query.js', 'js/pages/runs.js', 'js/pages/scalars.js'], 'module paths');
      T.assertEq(await pageModulesFetched(page), want, 'page modules fetched');
      T.assertEq(await page.evaluate(() => window.__tfb.modules),
        { scalars: 'loaded', runs: 'loaded', health: 'loaded', pipeline: 'loaded', efficiency: 'loaded', alerts: 'loaded', query: 'loaded' }, 'module states');
      await T.screenshot(page, 'listing_subset');
    });

    await T.step('every module_path of the listing is served as JavaScript', async () => {
      const l = await listing(page);
      const res = await page.evaluate((paths) => Promise.all(paths.map((p) => fetch(p).then((r) => [p, r.status, r.headers.get('content-type')]))),
        Object.values(l).filter((e) => e.loading_mechanism.type !== 'NONE').map((e) => e.loading_mechanism.module_path));
      for (const [p, status, type] of res) {
        T.assertEq(status, 200, p);
        T.assert(String(type).startsWith('text/javascript'), p + ' content type ' + type);
      }
    });

    await T.step('a tab click mounts its page and keeps #tab= in the URL', async () => {
      await page.click('#tab-pipeline');
      await T.until(page, () => window.__tfb.pages.pipeline, null, 'pipeline page');
      T.assertEq((await page.evaluate(() => window.__tfb.pages.pipeline)).run, 'pipeline', 'pipeline run');
      T.assert(page.url().includes('tab=pipeline'), 'URL: ' + page.url());
      T.assertEq(await activeTab(page), 'pipeline', 'active tab');
    });

    await T.step('a reload fetches the listing again: the GPU tab appears when a trace arrives', async () => {
      fs.renameSync(path.join(full, 'gpu'), path.join(logdir, 'gpu'));
      await reloadUntil(page, async (p) => (await tabIds(p)).includes('gpu'), 'the GPU tab');
      const l = await listing(page);
      T.assertEq(enabledNames(l), inOrder(['scalars', 'runs', 'health', 'gpu', 'pipeline', 'compare', 'efficiency', 'alerts', 'query']), 'enabled after the trace (two runs: compare)');
      T.assertEq(await tabIds(page), enabledNames(l), 'tabs follow the new listing, in its order');
      T.assertEq(await activeTab(page), 'pipeline', 'the page shown stays');
      T.assert((await pageModulesFetched(page)).includes('js/pages/gpu.js'), 'gpu.js loaded on the reload');
      await T.screenshot(page, 'listing_after_data');
      await page.click('#tab-gpu');
      await T.until(page, () => window.__tfb.pages.gpu, null, 'gpu page');
      T.assertEq((await page.evaluate(() => window.__tfb.pages.gpu)).run, 'gpu', 'gpu run');
    });

    await T.step('#tab= opens that page; an unknown tab falls back to the first', async () => {
      const p2 = await T.newPage(browser);
      try {
        await T.openApp(p2, srv.url, 'tab=gpu');
        await T.until(p2, () => window.__tfb.pages.gpu, null, 'gpu page from the URL');
        T.assertEq(await activeTab(p2), 'gpu', 'active tab from the URL');
        await T.openApp(p2, srv.url, 'tab=nope');
        await T.until(p2, () => window.__tfb.charts['scalars:pipeline/step_ms'], null, 'scalars as the fallback');
        T.assertEq(await activeTab(p2), 'scalars', 'fallback tab');
        T.assertEq(p2.problems, [], 'no console errors');
      } finally {
        await p2.context().close();
      }
    });

    await T.step('no console errors, failed requests or dialogs', async () => {
      T.assertEq(page.problems, [], 'problems');
    });

    await T.step('a module that fails to load or is no page gets a message; a reload retries it', async () => {
      // The server's own listing, with web UI files where pipeline.js is
      // missing and health.js exports no page.
      const ui = T.stageWebui(T.tmpdir('tfb-webui-copy-'));
      const pipelineJs = path.join(ui, 'js', 'pages', 'pipeline.js');
      const kept = fs.readFileSync(pipelineJs);
      fs.rmSync(pipelineJs);
      fs.writeFileSync(path.join(ui, 'js', 'pages', 'health.js'), 'export default { title: "not a page" };\n');
      const srv3 = await T.startServer(tfboard, logdir, ['--webui-dir', ui]);
      const p3 = await T.newPage(browser);
      try {
        await T.openApp(p3, srv3.url, 'tab=pipeline');
        await p3.waitForSelector('#page-error');
        let msg = await p3.textContent('#page-error');
        T.assert(msg.includes('Input pipeline') && msg.includes('js/pages/pipeline.js'), 'names the page and module: ' + msg);
        T.assert(await p3.$eval('#tab-pipeline', (a) => a.classList.contains('broken')), 'the tab is marked');
        await T.screenshot(p3, 'listing_load_error');
        await p3.click('#tab-health');
        await T.until(p3, () => { const e = document.getElementById('page-error'); return e && e.textContent.includes('Health'); }, null, 'health error');
        msg = await p3.textContent('#page-error');
        T.assert(msg.includes('does not export a page'), 'says why: ' + msg);
        await p3.click('#tab-scalars');
        await T.until(p3, () => window.__tfb.charts['scalars:pipeline/step_ms'], null, 'other tabs still work');
        T.assertEq(await p3.$$eval('#page-error', (e) => e.length), 0, 'message gone on a working page');
        // The only problems are the missing module's 404 (and Chromium's
        // console line for it, which does not name the URL).
        T.assert(p3.problems.some((x) => x.includes('404') && x.includes('/js/pages/pipeline.js')) &&
          p3.problems.every((x) => x.includes('/js/pages/pipeline.js') || x === 'console: Failed to load resource: the server responded with a status of 404 (Not Found)'),
        'problems: ' + JSON.stringify(p3.problems));
        fs.writeFileSync(pipelineJs, kept);
        await p3.click('#tab-pipeline');
        await p3.waitForSelector('#page-error');
        await p3.click('#reload');
        await T.until(p3, () => window.__tfb.pages.pipeline, null, 'pipeline page after the retry');
        T.assertEq(await p3.$$eval('#page-error', (e) => e.length), 0, 'message gone after the retry');
        T.assert(!(await p3.$eval('#tab-pipeline', (a) => a.classList.contains('broken'))), 'tab no longer marked');
      } finally {
        await p3.context().close();
        srv3.stop();
      }
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
