// Browser test of comparing runs (issue 12) against the real tfboard and a
// logdir from gen_compare_logdir: hparam columns in the Runs table (sort,
// filter; the filter is the selection of every page and lives in the URL),
// a grouped scalar chart with its band (means checked against the server's
// rule), a multi-tag chart, the layout saved to the logdir and read back,
// and the HParams tab's scatter.
'use strict';
const fs = require('fs');
const path = require('path');
const T = require('./lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_compare.js TFBOARD GEN_COMPARE_LOGDIR'); process.exit(2); }

const RUNS = ['lr=0.1,seed=1', 'lr=0.1,seed=2', 'lr=0.01,seed=1', 'lr=0.01,seed=2'];
const near = (a, b) => Math.abs(a - b) < 1e-5;

T.run(async () => {
  const logdir = T.makeLogdir(gen);
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  const pages = () => page.evaluate(() => window.__tfb.pages);
  try {
    await T.step('runs table: one column per hparam, sortable', async () => {
      await T.openApp(page, srv.url, 'tab=runs');
      await T.until(page, () => window.__tfb.pages.runs && window.__tfb.pages.runs.rows.length === 4 &&
        window.__tfb.pages.runs.hparams.length === 3, null, 'runs rows with hparams');
      const p = (await pages()).runs;
      T.assertEq(p.hparams, ['lr', 'seed', 'act'], 'hparam columns (experiment order)');
      const heads = await page.$$eval('.runs-table th', (ths) => ths.map((t) => t.textContent.replace(/[▲▼]/g, '').trim()));
      T.assert(heads.includes('lr') && heads.includes('seed') && heads.includes('act') && heads.includes('Status'), 'headers ' + heads);
      // One status column: the run's state, with the hparams session folded in (no separate State).
      T.assert(heads.filter((x) => x === 'Status' || x === 'State').length === 1, 'one status column: ' + heads);
      const row = p.rows.find((r) => r.run === 'lr=0.1,seed=2');
      T.assertEq(row.hp, { lr: 0.1, seed: 2, act: 'relu' }, 'row hparams');
      T.assertEq(row.status, 'success', 'status');
      await page.click('.runs-table th:has-text("lr")');
      let order = await page.$$eval('.runs-table tbody tr', (trs) => trs.map((tr) => tr.dataset.run));
      T.assert(order[0].startsWith('lr=0.1,') && order[3].startsWith('lr=0.01,'), 'lr descending first: ' + order);
      await page.click('.runs-table th:has-text("lr")');
      order = await page.$$eval('.runs-table tbody tr', (trs) => trs.map((tr) => tr.dataset.run));
      T.assert(order[0].startsWith('lr=0.01,') && order[3].startsWith('lr=0.1,'), 'lr ascending: ' + order);
      const cell = await page.$eval('.runs-table tbody tr[data-run="lr=0.01,seed=2"]', (tr) => tr.textContent);
      T.assert(cell.includes('0.01') && cell.includes('tanh'), 'cells show values: ' + cell);
    });

    await T.step('runs table: an hparam filter keeps the rows and selects those runs everywhere (in the URL)', async () => {
      await page.fill('input.hp-filter[data-hparam="lr"]', '=0.1');
      await T.until(page, () => window.__tfb.pages.runs.rows.length === 2, null, 'two rows after the filter');
      await T.until(page, () => !document.querySelector('#run-list input[data-run="lr=0.01,seed=1"]').checked &&
        document.querySelector('#run-list input[data-run="lr=0.1,seed=2"]').checked, null, 'sidebar selection follows');
      const u = decodeURIComponent(page.url());
      T.assert(u.includes('hpFilter={"lr":"=0.1"}'), 'filter in URL: ' + u);
      T.assert(u.includes('runs=["lr=0.1,seed=1","lr=0.1,seed=2"]'), 'selection in URL: ' + u);
      await page.fill('input.hp-filter[data-hparam="act"]', 'rel');
      await T.until(page, () => window.__tfb.pages.runs.rows.length === 2, null, 'still two rows (regex on text)');
      await T.screenshot(page, 'compare_runs_hparams');
      // a range over a number column, and a bad regex flagged
      await page.fill('input.hp-filter[data-hparam="act"]', '');
      await page.fill('input.hp-filter[data-hparam="lr"]', '0..0.05');
      await T.until(page, () => window.__tfb.pages.runs.rows.length === 2 &&
        window.__tfb.pages.runs.rows.every((r) => r.hp.lr === 0.01), null, 'range filter');
      await page.fill('input.hp-filter[data-hparam="act"]', '(');
      await T.until(page, () => document.querySelector('input.hp-filter[data-hparam="act"]').classList.contains('invalid'), null, 'invalid regex flagged');
      await page.fill('input.hp-filter[data-hparam="act"]', '');
      await page.fill('input.hp-filter[data-hparam="lr"]', '');
      await T.until(page, () => window.__tfb.pages.runs.rows.length === 4 &&
        [...document.querySelectorAll('#run-list input[data-run]')].every((i) => i.checked), null, 'cleared: all runs again');
    });

    await T.step('scalars: runs grouped by hparam lr, mean with a min-max band, NaN left out', async () => {
      await T.openApp(page, srv.url, 'tab=scalars&group=hparam:lr');
      const c = await T.until(page, () => { const x = window.__tfb.charts['scalars:loss/train']; return x && x.grouped ? x : null; }, null, 'grouped chart');
      T.assertEq(c.groups.map((g) => g.key), ['0.01', '0.1'], 'group keys (numeric order)');
      T.assertEq(c.groups[1].runs, ['lr=0.1,seed=1', 'lr=0.1,seed=2'].filter((r) => c.groups[1].runs.includes(r)), 'members');
      const g = c.groups[1];
      T.assertEq(g.points, 21, 'grid = union of the steps 0,5,..,100');
      // step 0: seed 1 only; step 5: seed 1 carried (1.0) and seed 2
      // (2.05); step 45: seed 2 is NaN: left out; step 100: seed 2 ended.
      T.assert(near(g.mean[0], 1.0), 'mean at 0: ' + g.mean[0]);
      T.assert(near(g.mean[1], 1.525), 'mean at 5: ' + g.mean[1]);
      T.assert(near(g.low[1], 1.0) && near(g.high[1], 2.05), 'band at 5');
      T.assert(near(g.mean[9], 1.4), 'mean at 45 without the NaN: ' + g.mean[9]);
      T.assert(near(g.mean[10], 1.5), 'mean at 50: seed 2 carries its NaN from 45, left out again: ' + g.mean[10]);
      T.assert(near(g.mean[20], 2.0), 'mean at 100: ' + g.mean[20]);
      const g0 = c.groups[0];
      T.assert(near(g0.mean[5], 11.5) && near(g0.low[5], 10.5) && near(g0.high[5], 12.5), 'aligned group at step 50');
      const status = await page.$eval('.card[data-tag="loss/train"] .card-status', (e) => e.textContent);
      T.assert(status.includes('2 groups') && status.includes('2 non-finite'), 'status: ' + status);
      await T.screenshot(page, 'compare_groups_minmax');
      await page.selectOption('#group-band', 'std');
      const s = await T.until(page, () => { const x = window.__tfb.charts['scalars:loss/train']; return x && x.band === 'std' ? x : null; }, null, 'std band');
      T.assert(near(s.groups[0].low[5], 10.5) && near(s.groups[0].high[5], 12.5), 'std band of two values 1 apart is mean ± 1');
      T.assert(near(s.groups[1].low[1], 1.525 - 0.525) && near(s.groups[1].high[1], 1.525 + 0.525), 'std band at 5');
      T.assert(decodeURIComponent(page.url()).includes('band=std'), 'band in URL');
      await T.screenshot(page, 'compare_groups_std');
    });

    await T.step('scalars: group means smoothed like lines, colours of their own, bands visible in light and dark', async () => {
      // TensorBoard's debiased EMA over the finite means, as the lines get it.
      const ema = (ys, w) => { let last = 0, n = 0; return ys.map((y) => { if (y === null || !Number.isFinite(y)) return y; last = last * w + (1 - w) * y; n++; return last / (1 - Math.pow(w, n)); }); };
      const rgb = (c) => { const m = /^#(..)(..)(..)$/.exec(c); if (m) return [1, 2, 3].map((i) => parseInt(m[i], 16)); return c.match(/[\d.]+/g).slice(0, 3).map(Number); };
      const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
      for (const scheme of ['light', 'dark']) {
        const p2 = await T.newPage(browser, { colorScheme: scheme });
        await T.openApp(p2, srv.url, 'tab=scalars&group=hparam:lr&smoothing=0.8');
        const c = await T.until(p2, () => { const x = window.__tfb.charts['scalars:loss/train']; return x && x.grouped ? x : null; }, null, 'grouped chart (' + scheme + ')');
        // What Chart.js draws: per group its band's upper edge (filled) and
        // its mean line, labelled "<key> (N runs)".
        const drawn = await p2.evaluate(() => window.Chart.getChart(document.querySelector('.card[data-tag="loss/train"] canvas')).data.datasets
          .map((d) => ({ label: d.label, y: d.data.map((q) => q.y), border: d.borderColor, fill: d.backgroundColor })));
        for (const g of c.groups) {
          const line = drawn.find((d) => d.label.startsWith(g.key + ' (') && / runs?\)$/.test(d.label));
          const want = ema(g.mean, 0.8);
          T.assert(line.y.every((v, i) => (v === null && want[i] === null) || near(v, want[i])), `${g.key}: the drawn mean ${line.y} is the raw mean ${g.mean} smoothed at 0.8: ${want}`);
          g.color = line.border;
          g.bandFill = drawn.find((d) => d.label === g.key + ' (high)').fill;
        }
        // No group colour is near a run colour (any run's, core/colors.js).
        const runColors = await p2.evaluate(async () => (await import('./js/core/colors.js')).RUN_PALETTE);
        for (const g of c.groups) T.assert(runColors.every((rc) => dist(rgb(rc), rgb(g.color)) >= 60), `group ${g.key}'s colour ${g.color} is at least 60 from every run colour: ${runColors.map((rc) => rc + ' ' + dist(rgb(rc), rgb(g.color)).toFixed(0))}`);
        // The band's fill over the card's background stands out from it.
        const bg = rgb(await p2.$eval('.card[data-tag="loss/train"]', (e) => getComputedStyle(e).backgroundColor));
        for (const g of c.groups) {
          const f = g.bandFill.match(/[\d.]+/g).map(Number);
          const over = [0, 1, 2].map((i) => f[3] * f[i] + (1 - f[3]) * bg[i]);
          T.assert(dist(over, bg) >= 45, `${scheme}: group ${g.key}'s band ${g.bandFill} over ${bg} differs by ${dist(over, bg).toFixed(1)} (at least 45)`);
        }
        await T.screenshot(p2, 'compare_groups_smoothed_' + scheme);
        T.assertEq(p2.problems, [], 'problems (' + scheme + ')');
        await p2.context().close();
      }
    });

    await T.step('scalars: runs grouped by a regex capture over the name', async () => {
      await page.selectOption('#group-by', 'regex');
      await page.fill('#group-regex', 'seed=([0-9])');
      await page.press('#group-regex', 'Enter');
      const c = await T.until(page, () => { const x = window.__tfb.charts['scalars:loss/train']; return x && x.groupBy === 'regex:seed=([0-9])' ? x : null; }, null, 'regex groups');
      T.assertEq(c.groups.map((g) => g.key), ['1', '2'], 'keys from the capture');
      T.assertEq(c.groups[0].runs.length, 2, 'two runs per seed');
    });

    await T.step('scalars: a multi-tag chart of loss/(train|val), kept in the URL and saved to the logdir', async () => {
      await T.openApp(page, srv.url, 'tab=scalars&runs=' + encodeURIComponent(JSON.stringify(['lr=0.1,seed=1'])));
      await page.fill('#multi-input', 'loss/(train|val)');
      await page.click('#multi-add');
      const c = await T.until(page, () => window.__tfb.charts['scalars:multi:loss/(train|val)'], null, 'multi chart');
      T.assertEq(Object.keys(c.runs).sort(), ['loss/train', 'loss/val'], 'two lines: both tags of the one run');
      T.assertEq(c.runs['loss/val'].points, 6, 'loss/val points');
      T.assert(decodeURIComponent(page.url()).includes('multi=["loss/(train|val)"]'), 'multi in URL');
      await page.evaluate(() => document.querySelector('#multi-section').scrollIntoView());
      await T.screenshot(page, 'compare_multitag');
      await page.click('#layout-save');
      await T.until(page, () => document.querySelector('#layout-msg').textContent.includes('saved'), null, 'saved message');
      const saved = JSON.parse(fs.readFileSync(path.join(logdir, 'tfboard_layout.json'), 'utf8'));
      T.assertEq(saved.multi, ['loss/(train|val)'], 'layout file');
      // a fresh view without multi in the URL takes the shared layout
      const p2 = await T.newPage(browser);
      const asked = [];
      p2.on('request', (r) => { if (r.url().includes('/data/plugin/scalars/')) asked.push(new URL(r.url())); });
      await T.openApp(p2, srv.url, 'tab=scalars');
      // The layout's charts open in their own section, collapsed (issue 27).
      await T.until(p2, () => document.querySelector('#multi-section [data-tag="multi:loss/(train|val)"]'), null, 'layout applied in a fresh view');
      T.assert(await p2.evaluate(() => !document.querySelector('#multi-section').open), 'the layout\'s section is collapsed at first');
      await p2.click('#multi-section > summary');
      await T.until(p2, () => window.__tfb.charts['scalars:multi:loss/(train|val)'], null, 'the layout\'s chart drawn once opened');
      // Raw and smoothed lines come batched, one /multirun per tag (shared
      // by the one-tag cards and the multi-tag chart when their widths
      // agree); nothing per series.
      const multi = asked.filter((u) => u.pathname.endsWith('/multirun')).map((u) => u.searchParams.get('tag'));
      T.assert(multi.includes('loss/train') && multi.includes('loss/val'), 'a /multirun per tag: ' + multi);
      const perSeries = asked.filter((u) => u.pathname.endsWith('/scalars/scalars'));
      T.assertEq(perSeries.map((u) => u.search), [], 'no per-series request');
      T.assertEq(p2.problems, [], 'no errors in the second page');
      await p2.context().close();
    });

    await T.step('hparams tab: scatter of lr against the metric loss/val', async () => {
      await T.openApp(page, srv.url, 'tab=hparams');
      const p = await T.until(page, () => window.__tfb.pages.hparams && window.__tfb.pages.hparams.points.length ? window.__tfb.pages.hparams : null, null, 'scatter');
      T.assertEq(p.x, 'lr', 'x');
      T.assertEq(p.y, 'loss/val', 'y: the experiment metric');
      T.assertEq(p.points.length, 4, 'one point per run');
      const pt = p.points.find((q) => q.run === 'lr=0.01,seed=2');
      T.assert(pt.x === 0.01 && near(pt.y, 13.0), 'last loss/val of lr=0.01,seed=2: ' + JSON.stringify(pt));
      await T.screenshot(page, 'compare_hparams_tab');
    });

    await T.step('no console errors or failed requests', async () => {
      T.assertEq(page.problems, [], 'problems');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
