// The first screen of a sweep (issue 28; the 10,000- and 100,000-run
// figures are tests/bench/bench_first_chart.js's), 2,000 runs:
//   - the first chart comes before what only other tabs need: its
//     /multirun is asked for before /data/runs_info (6.5 MB of JSON at
//     10,000 runs; the frame used to wait for it) and before the other
//     tabs' modules;
//   - the scalar tags come once per distinct tag set (format=sets), not
//     as a map of every run (2 MB at 10,000 runs);
//   - the run names come sorted by the server (order=natural): sorting
//     100,000 names in the browser took seconds;
//   - fewer than 50 requests, the bands chart over every run;
//   - nothing is lost: the run details arrive after the chart (the run
//     list's status badges), every tab's module loads, and the run list,
//     its filter and the runs table work at this size.
// It never asserts on time.
'use strict';
const { execFileSync } = require('child_process');
const T = require('./lib.js');

const [tfboard, genSweep] = process.argv.slice(2);
if (!tfboard || !genSweep) { console.error('usage: test_first_screen.js TFBOARD GEN_SWEEP_LOGDIR'); process.exit(2); }
const RUNS = 2000;
const STEPS = 50;
// The sets form names each run and its set's index: about 20 bytes a run
// here ("trial-00000":0,); the per-run map was about 200.
const TAGS_BYTES_PER_RUN = 40;

async function loaded(url) {
  const t0 = Date.now();
  for (;;) {
    const p = await (await fetch(url + 'data/plugin/core/progress')).json();
    if (p.done) return;
    if (Date.now() - t0 > 60000) throw new Error('the logdir did not load in 60 s: ' + JSON.stringify(p));
    await new Promise((r) => setTimeout(r, 100));
  }
}

T.run(async () => {
  const logdir = T.tmpdir('tfb-first-screen-');
  execFileSync(genSweep, [logdir, String(RUNS), String(STEPS)], { stdio: 'inherit', timeout: 120000 });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
  const requests = [];   // every request's URL, in order
  const sizes = new Map();
  page.on('request', (r) => requests.push(r.url()));
  page.on('response', async (r) => {
    if (r.url().includes('/data/plugin/scalars/tags')) { try { sizes.set(r.url(), (await r.body()).length); } catch (e) { /* gone */ } }
  });
  try {
    await loaded(srv.url);
    const at = (pred) => requests.findIndex(pred);
    await T.step('the first chart: bands over every run, before the run details', async () => {
      await page.goto(srv.url + '#tab=scalars&auto=0');
      const c = await T.until(page, () => Object.values(window.__tfb.charts).find((x) => x.mode === 'bands' && x.runs > 0) || null,
        null, 'a bands chart', 60000);
      T.assertEq(c.runs, RUNS, 'every run in the distribution');
      const multi = at((u) => u.includes('/data/plugin/scalars/multirun'));
      const info = at((u) => u.includes('/data/runs_info'));
      T.assert(multi >= 0, 'a /multirun request');
      T.assert(info < 0 || info > multi, `the chart's /multirun (request ${multi}) before /data/runs_info (request ${info}): ${requests.slice(0, multi + 1).map((u) => new URL(u).pathname).join(' ')}`);
      // The other tabs' page modules come after the chart's request too.
      const other = at((u) => /\/js\/pages\/(?!scalars\.js)/.test(u));
      T.assert(other < 0 || other > multi, `other tabs' modules after the chart's request: request ${other} (${other >= 0 ? requests[other] : ''}) before ${multi}`);
    });
    await T.step('the scalar tags come as tag sets, not a map of every run', async () => {
      const tags = requests.filter((u) => u.includes('/data/plugin/scalars/tags'));
      T.assert(tags.length >= 1, 'a tags request');
      T.assert(tags.every((u) => new URL(u).searchParams.get('format') === 'sets'), 'format=sets: ' + tags.join(' '));
      const bytes = Math.max(...[...sizes.values()]);
      T.assert(bytes < RUNS * TAGS_BYTES_PER_RUN, `the tags answer: ${bytes} bytes for ${RUNS} runs`);
      // The route's shape: every run names a set holding its four tags.
      const ans = await (await fetch(srv.url + 'data/plugin/scalars/tags?format=sets')).json();
      T.assertEq(Object.keys(ans.runs).length, RUNS, 'runs in the sets answer');
      T.assertEq(ans.tag_sets.length, 1, 'one set for the sweep');
      T.assertEq([...ans.tag_sets[0]].sort(), ['accuracy', 'loss/aux', 'loss/train', 'loss/val'], 'the set');
      const bad = await fetch(srv.url + 'data/plugin/scalars/tags?format=%3Cscript%3E');
      T.assertEq(bad.status, 400, 'an unknown format is refused');
    });
    await T.step('the run names come in natural order from the server', async () => {
      const runs = requests.filter((u) => new URL(u).pathname.endsWith('/data/runs'));
      T.assert(runs.length >= 1 && runs.every((u) => new URL(u).searchParams.get('order') === 'natural'), 'order=natural: ' + runs.join(' '));
      const names = await (await fetch(srv.url + 'data/runs?order=natural')).json();
      T.assertEq(names.length, RUNS, 'every run');
      T.assertEq(await page.evaluate(() => [...document.querySelectorAll('#run-list li[data-run]')].slice(0, 3).map((l) => l.dataset.run)), names.slice(0, 3), 'the run list in that order');
      T.assertEq((await fetch(srv.url + 'data/runs?order=%00')).status, 400, 'an unknown order is refused');
    });
    await T.step('fewer than 50 requests, and nothing lost after the chart', async () => {
      await T.until(page, () => window.__tfb.ready && document.querySelectorAll('#run-list .run-state').length > 0, null, 'the run details (status badges in the run list)', 60000);
      await page.waitForTimeout(500);
      console.log(`# first screen: ${requests.length} requests`);
      T.assert(requests.length < 50, `fewer than 50 requests: ${requests.length}`);
      const mods = await page.evaluate(() => window.__tfb.modules);
      T.assert(Object.keys(mods).length >= 3 && Object.values(mods).every((m) => m === 'loaded'), 'every tab\'s module: ' + JSON.stringify(mods));
      T.assert(await page.$$eval('#tabs .tab.broken', (x) => x.length) === 0, 'no broken tab');
      T.assert(await page.$$eval('#run-list li', (x) => x.length) < 200, 'a virtual run list');
    });
    await T.step('the run filter and the runs table work at 2,000 runs', async () => {
      await page.fill('#run-filter', '0$');
      await T.until(page, () => /^200 \/ 2000 selected/.test(document.getElementById('runs-count').textContent), null, 'the filter: 200 of 2,000', 20000);
      await page.click('#tab-runs');
      await T.until(page, () => window.__tfb.pages.runs && window.__tfb.pages.runs.count === 200, null, 'the runs table: 200 rows', 60000);
      T.assert(await page.$$eval('.runs-table tbody tr', (x) => x.length) < 200, 'a virtual runs table');
      // Scrolled, it holds the rows in its box's view and 4 more either
      // side (core/vlist.js), not a window's height and 10 more: each row
      // is a dozen cells laid out and painted per scroll frame (issue 28).
      const fit = await page.evaluate(async () => {
        const c = document.querySelector('.table-card.virtual');
        c.scrollTop = 1400;
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        const top = c.getBoundingClientRect().top + c.querySelector('thead tr').getBoundingClientRect().height + 2;
        const at = document.elementFromPoint(c.getBoundingClientRect().left + 60, top);
        return { rows: document.querySelectorAll('.runs-table tbody tr').length, inView: Math.ceil(c.clientHeight / 28), topRow: at && at.closest('tr') ? at.closest('tr').dataset.run || null : null };
      });
      T.assert(fit.rows >= fit.inView && fit.rows <= fit.inView + 9, `the runs table's rows in the DOM after a scroll: ${fit.rows} for ${fit.inView} in view`);
      T.assert(fit.topRow !== null, 'a run row at the top of the scrolled box');
      // Its Status column has the run details that came after the chart.
      T.assert(await page.$$eval('.runs-table .run-state', (x) => x.length) > 0, 'run states in the table');
      await T.screenshot(page, 'first_screen_runs');
    });
    if (page.problems.length) throw new Error('page problems: ' + page.problems.join('; '));
  } finally {
    await browser.close();
    srv.stop();
  }
}, 240000);
