// Browser test of the html report's first screen (issue 20) on a demo-like
// logdir written by the examples: a healthy and a diverging MLP run
// (examples/mlp_train), an input-bound and a balanced pipeline
// (examples/pipeline_train) and a 4-rank job whose rank 2 computes 30 %
// slower (examples/ddp_train), with demo.sh's flags and fewer steps.
// `tfboard report --format html` is opened from a file:// URL: the page
// starts with the summary (a row per run with its status badges and
// headline scalar, linked to its section; the findings ranked; each piece
// of advice once with its runs), the straggler is only the straggler, and
// each run's pipeline section lists its advice titles with its own figures.
// Screenshots: report_summary.png (1440 px), report_summary_800.png.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('./lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_report_page.js TFBOARD [GEN_LOGDIR]'); process.exit(2); }
const EX = path.join(process.env.TFB_BUILD_ROOT || '', 'examples');
for (const e of ['mlp_train', 'pipeline_train', 'ddp_train']) {
  if (!fs.existsSync(path.join(EX, e))) T.skip(path.join(EX, e) + ' not built');
}

function ex(name, args) {
  execFileSync(path.join(EX, name), args, { stdio: 'ignore', timeout: 120000 });
}

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-report-');
  ex('mlp_train', ['--logdir', logdir, '--name', 'healthy', '--steps', '120', '--hist-every', '60']);
  try {
    ex('mlp_train', ['--logdir', logdir, '--name', 'diverge', '--steps', '200', '--lr', '5', '--hist-every', '100']);
  } catch (e) { /* it exits non-zero when it diverges, as in demo.sh */ }
  ex('pipeline_train', ['--logdir', logdir, '--run', 'input_bound', '--steps', '40', '--loaders', '1',
    '--prefetch', '1', '--loader-ms', '12', '--step-ms', '4']);
  ex('pipeline_train', ['--logdir', logdir, '--run', 'balanced', '--steps', '60', '--loaders', '2',
    '--prefetch', '16', '--loader-ms', '1', '--step-ms', '8']);
  ex('ddp_train', ['--logdir', logdir, '--job', 'ddp', '--ranks', '4', '--steps', '100',
    '--compute-ms', '8', '--slow-rank', '2', '--slow-factor', '1.3']);
  const file = path.join(T.tmpdir('tfb-webui-report-out-'), 'report.html');
  execFileSync(tfboard, ['report', '--logdir', logdir, '--format', 'html', '--output', file, '--quiet'],
    { timeout: 120000 });

  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
  try {
    await page.goto('file://' + file);
    await T.until(page, () => document.body.getAttribute('data-rendered') === '1', null, 'report rendered');

    await T.step('the summary comes first: a row per run, status and headline', async () => {
      const first = await page.$eval('#runs > section', (s) => s.id);
      T.assertEq(first, 'summary', 'first section');
      const rows = await page.$$eval('#summary table.summary-runs tbody tr', (trs) => trs.map((tr) => ({
        run: tr.cells[0].textContent,
        href: tr.cells[0].querySelector('a').getAttribute('href'),
        badges: [...tr.cells[3].querySelectorAll('.badge')].map((b) => b.textContent),
        headline: tr.cells[4].textContent,
      })));
      const runs = rows.map((r) => r.run);
      T.assertEq(runs.length, 8, 'rows: ' + runs);
      const by = Object.fromEntries(rows.map((r) => [r.run, r]));
      T.assertEq(by.diverge.badges, ['diverged'], 'diverge');
      T.assertEq(by.diverge.headline, 'loss NaN', 'diverge headline');
      T.assertEq(by['ddp/rank-00002'].badges, ['straggler'], 'the straggler is only the straggler');
      T.assertEq(by.input_bound.badges, ['input-bound'], 'input_bound');
      for (const r of ['healthy', 'balanced', 'ddp/rank-00000', 'ddp/rank-00001', 'ddp/rank-00003']) {
        T.assertEq(by[r].badges, ['ok'], r);
      }
      T.assert(/^loss [\d.e+-]+$/.test(by.healthy.headline), 'healthy headline ' + by.healthy.headline);
      // Each row links to its run's section.
      for (const r of rows) {
        const title = await page.$eval(r.href, (s) => s.querySelector('h2').textContent);
        T.assertEq(title, 'Run ' + r.run, 'link of ' + r.run);
      }
    });

    await T.step('the findings, ranked, and the advice once with its runs', async () => {
      const f = await page.$$eval('#summary ol.findings li', (lis) => lis.map((li) => li.textContent));
      T.assert(/^diverge \u2014 diverged: /.test(f[0]), 'first finding: ' + f[0]);
      T.assert(/^ddp\/rank-00002 \u2014 straggler: rank 2 is \d+ % slower/.test(f[1]), 'second: ' + f[1]);
      const ib = f.filter((t) => / \u2014 input-bound: /.test(t));
      T.assertEq(ib.map((t) => t.split(' \u2014 ')[0]), ['input_bound'], 'input-bound runs');
      const adv = await page.$$eval('#summary ul.advice li', (lis) => lis.map((li) => li.textContent));
      T.assertEq(new Set(adv).size, adv.length, 'advice once each');
      const raise = adv.filter((t) => t.startsWith('Raise loader throughput'));
      T.assertEq(raise.length, 1, 'one loader-throughput line');
      T.assert(raise[0].endsWith('\u2014 runs input_bound'), raise[0]);
      const nb = adv.filter((t) => t.startsWith('Input is not the bottleneck'));
      T.assertEq(nb.length, 1, 'one not-the-bottleneck line');
      for (const r of ['ddp/rank-00000', 'ddp/rank-00001', 'ddp/rank-00002', 'ddp/rank-00003']) {
        T.assert(nb[0].includes(r), r + ' in ' + nb[0]);
      }
      await T.screenshot(page, 'report_summary');
    });

    await T.step("each run's section: its advice titles with its figures, not the advice again", async () => {
      const sec = await page.evaluate(() => {
        const s = [...document.querySelectorAll('section.run')].find((x) => x.querySelector('h2').textContent === 'Run input_bound');
        return [...s.querySelectorAll('ul.recs li')].map((li) => li.textContent);
      });
      T.assert(/^Raise loader throughput: steps wait [\d.]+ ms of [\d.]+ ms/.test(sec[0]), 'input_bound advice: ' + sec[0]);
      T.assert(!sec.some((t) => t.includes('CPU cores permitting')), 'advice words not repeated: ' + sec);
    });

    await T.step('at 800 px, dark', async () => {
      const p2 = await T.newPage(browser, { viewport: { width: 800, height: 1000 }, colorScheme: 'dark' });
      await p2.goto('file://' + file);
      await T.until(p2, () => document.body.getAttribute('data-rendered') === '1', null, 'report rendered');
      const w = await p2.$eval('#summary', (s) => s.scrollWidth <= s.clientWidth + 1);
      T.assert(w, 'the summary fits 800 px');
      await T.screenshot(p2, 'report_summary_800');
      T.assertEq(p2.problems, [], 'page problems at 800 px');
      await p2.close();
    });

    await T.step('no page errors', async () => {
      T.assertEq(page.problems, [], 'page problems');
    });
  } finally {
    await browser.close();
  }
});
