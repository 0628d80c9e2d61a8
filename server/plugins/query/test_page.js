// Browser test of the Query tab and the expression run filter (issue 30
// items 4 and 5) against the real tfboard on gen_webui_logdir's runs:
// the tables and examples listed, a query run from the editor (its rows
// as the store holds them), an error shown with its line and column, a
// scatter chart of two columns, the CSV download, the query kept in the
// URL (a reload runs it again); then the sidebar's filter box as an
// expression over runs_wide: checked as typed, the runs it selects in the
// list and in the scalars page's where= requests, a bad expression's
// error under the box while the last good filter stays. Screenshots at
// 1440 px (light) and 800 px (dark) (TFB_QUERY_SHOTS: also copied there).
'use strict';
const fs = require('fs');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
const SHOTS = process.env.TFB_QUERY_SHOTS || '';

async function shot(page, name) {
  const f = await T.screenshot(page, name);
  if (SHOTS) { fs.mkdirSync(SHOTS, { recursive: true }); fs.copyFileSync(f, path.join(SHOTS, name + '.png')); }
}

const SQL = "SELECT run, max(step) AS last_step, count(*) AS points\nFROM scalars WHERE tag = 'train/loss'\nGROUP BY run ORDER BY run";

T.run(async () => {
  const logdir = T.makeLogdir(gen);
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  // The 400s this test asks for (a bad query, a bad expression) are
  // answers, not problems.
  const expected = (p) => /HTTP 400 .*\/data\/(query|runs_filter)/.test(p) || /status of 400/.test(p);
  try {
    for (const [width, scheme] of [[1440, 'light'], [800, 'dark']]) {
      const page = await T.newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
      const tag = `${width}_${scheme}`;

      await T.step(`${tag}: the Query tab lists the tables and the examples`, async () => {
        await T.openApp(page, srv.url, 'tab=query');
        await T.until(page, () => document.querySelectorAll('#query-tables details').length >= 10, null, 'tables listed');
        const tables = await page.$$eval('#query-tables details', (ds) => ds.map((d) => d.dataset.table));
        for (const t of ['runs', 'runs_wide', 'hparams', 'scalars', 'scalar_stats']) T.assert(tables.includes(t), 'table ' + t + ' in ' + tables);
        const ex = await page.$$eval('#query-examples button', (bs) => bs.map((b) => b.dataset.example));
        T.assertEq(ex.length, 4, 'four examples');
        T.assert(ex.some((e) => /slowest kernels/i.test(e)) && ex.some((e) => /NaN/.test(e)), 'examples named');
      });

      await T.step(`${tag}: a query's rows, in a table, and the query in the URL`, async () => {
        await page.fill('#query-sql', SQL);
        await page.click('#query-run');
        await T.until(page, () => window.__tfb.pages.query && window.__tfb.pages.query.rows === 3, null, 'three rows');
        const cells = await page.$$eval('#query-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
        // gen_webui_logdir: train/loss has 500 points in alpha, 300 in
        // beta, 400 in diverge (NaN and infinities included).
        T.assertEq(cells, [['alpha', '499', '500'], ['beta', '299', '300'], ['diverge', '399', '400']], 'rows');
        const heads = await page.$$eval('#query-table thead th', (ths) => ths.map((t) => t.textContent));
        T.assertEq(heads, ['run', 'last_step', 'points'], 'columns');
        T.assertEq(await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('sql')), SQL, 'the query is in the URL');
        await shot(page, `query_table_${tag}`);
      });

      await T.step(`${tag}: a scatter chart of two columns, and the CSV`, async () => {
        await page.selectOption('#query-view', 'scatter');
        await page.selectOption('#query-x', 'last_step');
        await page.selectOption('#query-y', 'points');
        await T.until(page, () => window.__tfb.pages.query.view === 'scatter' && window.__tfb.pages.query.points === 3 && document.querySelector('#query-chart'), null, 'scatter drawn');
        const h = await page.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.slice(1))));
        T.assert(h.qview === 'scatter' && h.qx === 'last_step' && h.qy === 'points', 'view in the URL: ' + JSON.stringify(h));
        // Every point inside the axes (rows come unsorted by x).
        const r = await page.evaluate(() => window.__tfb.pages.query.range);
        T.assert(r && r.x[0] <= 299 && r.x[1] >= 499 && r.y[0] <= 300 && r.y[1] >= 500, 'axes hold every point: ' + JSON.stringify(r));
        await shot(page, `query_scatter_${tag}`);
        const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#query-csv')]);
        const file = path.join(T.tmpdir('tfb-query-csv-'), 'q.csv');
        await dl.saveAs(file);
        T.assertEq(fs.readFileSync(file, 'utf8'), 'run,last_step,points\r\nalpha,499,500\r\nbeta,299,300\r\ndiverge,399,400\r\n', 'CSV');
      });

      await T.step(`${tag}: a link with the query runs it again`, async () => {
        const url = await page.evaluate(() => location.href);
        await page.goto('about:blank');
        await page.goto(url);
        await page.waitForFunction(() => window.__tfb && window.__tfb.ready);
        await T.until(page, () => window.__tfb.pages.query && window.__tfb.pages.query.points === 3, null, 'rerun from the URL');
        T.assertEq(await page.inputValue('#query-sql'), SQL, 'the editor holds it');
      });

      await T.step(`${tag}: a bad query shows SQLite's message at its line and column`, async () => {
        await page.selectOption('#query-view', 'table');
        await page.fill('#query-sql', 'SELECT run,\n  nosuch FROM runs');
        await page.click('#query-run');
        await T.until(page, () => !document.querySelector('#query-error').hidden, null, 'error shown');
        const msg = await page.textContent('#query-error');
        T.assert(/nosuch/.test(msg) && /line 2, column 3/.test(msg), 'message and position: ' + msg);
        await shot(page, `query_error_${tag}`);
      });

      await T.step(`${tag}: the run filter as an expression over runs_wide`, async () => {
        await page.evaluate(() => { location.hash = 'tab=scalars'; });
        const multirun = [];
        page.on('request', (r) => { if (r.url().includes('/data/plugin/scalars/multirun')) multirun.push(r.url()); });
        await T.until(page, () => document.querySelectorAll('#run-list li[data-run]').length >= 4, null, 'run list');
        T.assertEq(await page.textContent('#run-filter-mode'), 'regex ▾', 'regex by default');
        await page.click('#run-filter-mode');
        T.assertEq(await page.textContent('#run-filter-mode'), 'SQL ▾', 'SQL kind');
        await page.fill('#run-filter', "\"pipeline/step_ms.last\" > 0 OR run = 'beta'");
        await T.until(page, () => {
          const l = [...document.querySelectorAll('#run-list li[data-run]')].map((li) => li.dataset.run);
          return l.length === 2 && l.includes('beta') && l.includes('pipeline');
        }, null, 'the expression\'s runs in the list');
        T.assertEq(await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('runWhere')), "\"pipeline/step_ms.last\" > 0 OR run = 'beta'", 'expression in the URL');
        // The charts in view ask the multi-run route with the same where=
        // (polled: they are drawn as they scroll into view).
        const asked = () => multirun.some((u) => new URL(u).searchParams.get('where') === "\"pipeline/step_ms.last\" > 0 OR run = 'beta'");
        for (let i = 0; i < 150 && !asked(); i++) await page.waitForTimeout(100);
        T.assert(asked(), 'multirun asked with where=: ' + multirun.slice(-3).join(' '));
        await shot(page, `filter_where_${tag}`);
        // A bad expression: the error under the box, the list unchanged.
        await page.fill('#run-filter', "\"pipeline/step_ms.last\" > 0 OR nosuch = 'beta'");
        await T.until(page, () => !document.querySelector('#run-filter-error').hidden, null, 'error shown');
        const err = await page.textContent('#run-filter-error');
        T.assert(/no such column: nosuch/.test(err), 'SQLite\'s message: ' + err);
        T.assertEq(await page.textContent('#run-filter-error .where-at'), 'nosuch', 'the erring token marked');
        T.assert(await page.$eval('#run-filter', (e) => e.classList.contains('invalid')), 'box marked invalid');
        const l = await page.$$eval('#run-list li[data-run]', (lis) => lis.map((li) => li.dataset.run).sort());
        T.assertEq(l, ['beta', 'pipeline'], 'the last good filter stays');
        await shot(page, `filter_error_${tag}`);
        // Back to a regex: every run again.
        await page.click('#run-filter-mode');
        await T.until(page, () => document.querySelectorAll('#run-list li[data-run]').length >= 5, null, 'all runs again');
      });

      await T.step(`${tag}: no unexpected problems`, async () => {
        const left = page.problems.filter((p) => !expected(p));
        T.assertEq(left, [], 'console errors and failed requests');
      });
      await page.context().close();
    }
  } finally {
    await browser.close();
    srv.stop();
  }
}, 240000);
