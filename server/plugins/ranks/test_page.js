// Browser test of the Ranks tab against the real tfboard: a generated job
// of 8 ranks with rank 5 slower (gen_ranks_logdir) plus GPU traces of its
// ranks (ranks_traces.py), and a job with bad input (a repeated rank, world
// sizes that disagree, a rank directory with no events). Checks the
// straggler sentence, the heat map, the per-rank table, the breakdown bars
// and overlap, the skew chart, the notes (as text, no error), and takes
// screenshots (ranks.png, ranks_gpu.png, ranks_bad.png, ranks_report.png),
// and the job's section of the HTML report.
'use strict';
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen, traces] = process.argv.slice(2);
if (!tfboard || !gen || !traces) { console.error('usage: test_ranks.js TFBOARD GEN_RANKS_LOGDIR RANKS_TRACES_PY'); process.exit(2); }

T.run(async () => {
  const logdir = T.makeLogdir(gen);
  execFileSync('python3', [traces, path.join(logdir, 'train'), '8', 'b'], { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const ranks = () => page.evaluate(() => window.__tfb.pages.ranks);
  try {
    await T.step('the Ranks tab is listed after Input pipeline', async () => {
      await T.openApp(page, srv.url, 'tab=ranks');
      const tabs = await page.$$eval('#tabs .tab', (as) => as.map((a) => a.id.replace('tab-', '')));
      T.assert(tabs.includes('ranks'), 'ranks tab: ' + tabs);
      T.assert(!tabs.includes('pipeline') || tabs.indexOf('ranks') === tabs.indexOf('pipeline') + 1, 'after pipeline: ' + tabs);
    });

    await T.step('job view: straggler sentence, heat map, table, GPU breakdown, skew', async () => {
      await T.until(page, () => window.__tfb.pages.ranks && window.__tfb.pages.ranks.gpu && window.__tfb.pages.ranks.gpu !== 'loading', null, 'ranks page with GPU figures');
      const p = await ranks();
      T.assertEq(p.jobs, 2, 'jobs');
      T.assertEq(p.job, 'bad', 'first job by name');
      await page.selectOption('#ranks-job', 'train');
      await T.until(page, () => window.__tfb.pages.ranks.job === 'train' && window.__tfb.pages.ranks.gpu !== 'loading', null, 'train job');
      const q = await ranks();
      T.assertEq(q.ranks, 8, 'ranks');
      T.assertEq(q.stragglers, [5], 'stragglers');
      T.assertEq(q.notes, [], 'no notes');
      T.assertEq(q.heatmap, { rows: 8, cols: 300, metric: 'compute_ms' }, 'heat map shape (own time by default, issue 20)');
      T.assertEq(q.gpu.traced, 8, 'traced ranks');
      T.assert(q.gpu.overlap > 0.5 && q.gpu.overlap < 0.7, 'overlap ' + q.gpu.overlap);
      const sentence = await page.$eval('#ranks-verdict .straggler-sentence', (e) => e.textContent);
      T.assert(/^rank 5 is 2\d % slower than the median rank; the other ranks spend \d+ % of each step waiting in communication$/.test(sentence), sentence);
      const rows = await page.$$eval('#ranks-table tbody tr', (trs) => trs.length);
      T.assertEq(rows, 8, 'table rows');
      const busy = await page.$eval('#ranks-table tbody tr:first-child td:nth-child(11)', (e) => e.textContent);
      T.assertEq(busy, '91.67 %', 'GPU busy of rank 0');
      T.assert(await page.$('#ranks-heatmap'), 'heat map canvas');
      T.assert(await page.$('#ranks-breakdown'), 'breakdown chart');
      T.assert(await page.$('#ranks-skew'), 'skew chart');
      const ov = await page.$eval('#ranks-overlap', (e) => e.textContent);
      T.assert(ov.startsWith('Communication/computation overlap: '), ov);
      // Hovering a heat-map cell names it.
      const box = await (await page.$('#ranks-heatmap')).boundingBox();
      await page.mouse.move(box.x + box.width - 20, box.y + 8);
      const tip = await page.$eval('#ranks-heatmap-tip', (e) => e.textContent);
      T.assert(/^rank 0, step \d+: [\d.]+ ms$/.test(tip), 'tip ' + tip);
      await page.selectOption('#ranks-metric', 'step_ms');
      await T.until(page, () => window.__tfb.pages.ranks.heatmap.metric === 'step_ms', null, 'metric switch');
      await T.until(page, () => window.__tfb.pages.ranks.gpu !== 'loading', null, 'gpu again');
      await T.screenshot(page, 'ranks');
      await page.evaluate(() => document.querySelector('#ranks-gpu').scrollIntoView());
      await T.screenshot(page, 'ranks_gpu');
      // A reload keeps the job and the heat-map metric, and draws again.
      await page.evaluate(() => { window.__tfb.pages.ranks.gpu = 'loading'; });
      await page.keyboard.press('r');
      await T.until(page, () => window.__tfb.pages.ranks.gpu !== 'loading', null, 'redrawn after reload');
      const after = await ranks();
      T.assertEq([after.job, after.heatmap.metric, after.gpu.traced], ['train', 'step_ms', 8], 'after reload');
      T.assert(await page.$('#ranks-breakdown'), 'breakdown chart after reload');
    });

    await T.step('bad input: notes on the page, not an error', async () => {
      await page.selectOption('#ranks-job', 'bad');
      await T.until(page, () => window.__tfb.pages.ranks.job === 'bad' && window.__tfb.pages.ranks.gpu !== 'loading', null, 'bad job');
      const p = await ranks();
      const notes = p.notes.join(' | ');
      T.assert(notes.includes('rank 1 appears more than once'), notes);
      T.assert(notes.includes('disagree on the world size'), notes);
      T.assert(notes.includes('bad/rank-00003 holds no event file'), notes);
      const shown = await page.$$eval('#ranks-notes li', (lis) => lis.map((l) => l.textContent));
      T.assertEq(shown, p.notes, 'notes shown as text');
      T.assertEq(await page.$$eval('.error-text.empty', (e) => e.length), 0, 'no error box');
      T.assertEq(p.stragglers, [], 'no straggler among equal ranks');
      await T.screenshot(page, 'ranks_bad');
    });

    await T.step('HTML report: the job section on its first rank run', async () => {
      const file = path.join(T.tmpdir('tfb-ranks-report-'), 'report.html');
      execFileSync(tfboard, ['report', '--logdir', logdir, '--format', 'html', '--output', file], { timeout: 60000 });
      await page.goto('file://' + file);
      await T.until(page, () => document.body.getAttribute('data-rendered') === '1', null, 'report rendered');
      const text = await page.evaluate(() => document.body.innerText);
      T.assert(text.includes('Distributed job train'), 'job heading');
      T.assert(/rank 5 is 2\d % slower than the median rank/.test(text), 'straggler sentence');
      T.assert(text.includes("Rank 3 of job train; the job's section is under run train/rank-00000."), 'pointer line');
      T.assert(text.includes('Note: rank 1 appears more than once'), 'bad job note');
      T.assert(/job comm\/compute overlap \d+\.\d %/.test(text), 'overlap line');
      await page.evaluate(() => [...document.querySelectorAll('p')].find((e) => e.textContent.startsWith('8 ranks (world size 8)')).previousSibling.scrollIntoView());
      await T.screenshot(page, 'ranks_report');
    });

    await T.step('no page errors', async () => {
      T.assertEq(errors, [], 'page errors');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
