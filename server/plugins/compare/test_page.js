// Browser test of the compare dashboard against the real tfboard: two MLP
// runs at learning rates 0.1 and 0.02 (examples/mlp_train, hparams logged),
// each with a PyTorch-profiler trace of known kernels (gemm 30% slower in
// the second). The page shows the pickers from the URL, the scalar changes
// (as the route computes them), the slower kernels highlighted and the one
// differing hparam; changing a picker updates the URL and the tables.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_compare_page.js TFBOARD [GEN_LOGDIR]'); process.exit(2); }
const MLP = path.join(process.env.TFB_BUILD_ROOT || '', 'examples', 'mlp_train');
if (!fs.existsSync(MLP)) T.skip(MLP + ' not built');

const KERNELS = {
  'lr0.1': { gemm_kernel: [100, 100, 100], relu_kernel: [10, 10] },
  'lr0.02': { gemm_kernel: [130, 130, 130], relu_kernel: [10, 10], softmax_kernel: [40] },
};

function writeTrace(dir, kernels) {
  const ev = [];
  let ts = 1000;
  for (const [name, durs] of Object.entries(kernels)) {
    for (const d of durs) { ev.push({ ph: 'X', cat: 'kernel', name, pid: 0, tid: 7, ts, dur: d }); ts += d + 50; }
  }
  fs.writeFileSync(path.join(dir, 'host_1.1700000000000.pt.trace.json'), JSON.stringify({ traceEvents: ev }));
}

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-compare-');
  for (const lr of ['0.1', '0.02']) {
    execFileSync(MLP, ['--logdir', logdir, '--name', 'lr' + lr, '--lr', lr, '--steps', '200', '--hist-every', '1000'],
      { stdio: 'ignore', timeout: 60000 });
    writeTrace(path.join(logdir, 'lr' + lr), KERNELS['lr' + lr]);
  }
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  const api = (p) => page.evaluate((u) => fetch(u).then((r) => r.json()), p);
  try {
    await T.step('compare tab, pickers from the URL, the route\'s figures in the tables', async () => {
      await T.openApp(page, srv.url, 'tab=compare&cmpA=lr0.1&cmpB=lr0.02');
      const tabs = await page.$$eval('#tabs .tab', (as) => as.map((a) => a.id.replace('tab-', '')));
      T.assert(tabs.includes('compare'), 'compare tab: ' + tabs);
      await T.until(page, () => window.__tfb.pages.compare && window.__tfb.pages.compare.b === 'lr0.02', null, 'compare page drawn');
      T.assertEq(await page.$eval('#compare-a', (s) => s.value), 'lr0.1', 'A picker');
      T.assertEq(await page.$eval('#compare-b', (s) => s.value), 'lr0.02', 'B picker');
      const c = await api('data/plugin/compare/compare?a=lr0.1&b=lr0.02');
      const rows = await page.$$eval('#compare-scalars tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      T.assertEq(rows.map((r) => r[0]), c.scalars.map((s) => s.tag), 'one row per shared tag');
      const loss = rows.find((r) => r[0] === 'loss');
      const sl = c.scalars.find((s) => s.tag === 'loss');
      T.assertEq(loss[3], (sl.last_change >= 0 ? '+' : '') + (100 * sl.last_change).toFixed(1) + ' %', 'loss change as the route says');
      T.assert(sl.last_change > 0, 'the smaller rate ends with a higher loss');
    });

    await T.step('kernels: slower ones highlighted; differing hparams', async () => {
      const ks = await page.$$eval('#compare-kernels tbody tr', (trs) => trs.map((tr) => ({
        name: tr.dataset.kernel, slower: tr.classList.contains('slower'), change: tr.children[5].textContent })));
      T.assertEq(ks, [
        { name: 'gemm_kernel', slower: true, change: '+30.0 %' },
        { name: 'softmax_kernel', slower: true, change: 'new' },
        { name: 'relu_kernel', slower: false, change: '+0.0 %' },
      ], 'kernel rows');
      const color = await page.$eval('#compare-kernels tr.slower td', (td) => getComputedStyle(td).color);
      const plain = await page.$eval('#compare-kernels tr:not(.slower) td', (td) => getComputedStyle(td).color);
      T.assert(color !== plain, 'slower rows are coloured: ' + color + ' vs ' + plain);
      const hp = await page.$$eval('#compare-hparams tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      T.assertEq(hp, [['lr', '0.1', '0.02']], 'hparams that differ');
      await T.screenshot(page, 'compare');
    });

    await T.step('swapping the runs goes to the URL and redraws', async () => {
      await page.click('#compare-swap');
      await T.until(page, () => window.__tfb.pages.compare.a === 'lr0.02', null, 'swapped');
      const url = decodeURIComponent(page.url());
      T.assert(url.includes('cmpA=lr0.02') && url.includes('cmpB=lr0.1'), 'URL: ' + url);
      const ks = await page.$$eval('#compare-kernels tbody tr.slower', (trs) => trs.map((tr) => tr.dataset.kernel));
      T.assertEq(ks, [], 'nothing slower the other way round');
      await page.selectOption('#compare-b', 'lr0.02');
      await T.until(page, () => window.__tfb.pages.compare.b === 'lr0.02', null, 'B picked');
      const n = await page.$$eval('#compare-hparams tbody tr', (trs) => trs.length);
      T.assertEq(n, 0, 'a run against itself: no hparams differ');
    });

    await T.step('report --compare --format html draws the same comparison offline', async () => {
      const out = path.join(logdir, 'compare.html');
      execFileSync(tfboard, ['report', '--quiet', '--logdir', logdir, '--compare', 'lr0.1', 'lr0.02', '--format', 'html',
        '--output', out], { stdio: 'inherit', timeout: 60000 });
      const p2 = await T.newPage(browser);
      await p2.goto('file://' + out);
      await T.until(p2, () => document.body.getAttribute('data-rendered') === '1', null, 'html page drawn');
      const c = await api('data/plugin/compare/compare?a=lr0.1&b=lr0.02');
      const tables = await p2.$$eval('section.run table', (ts) => ts.map((t) => t.querySelectorAll('tbody tr').length));
      // The trace diff's table lists the names whose count or time moved
      // (none: no table).
      const moved = c.trace_diff ? c.trace_diff.rows.filter((r) => r.diff_count !== 0 || r.diff_ns !== 0).length : 0;
      // mlp_train times its steps and logs its work (issue 29): the input
      // pipeline's 4 figures and the efficiency's 3 have tables too.
      const pipe = c.pipeline.steps_a || c.pipeline.steps_b ? [4] : [];
      const eff = c.efficiency.has_a || c.efficiency.has_b ? [3] : [];
      T.assert(pipe.length && eff.length, 'both runs have step timings and efficiency figures');
      T.assertEq(tables, [c.scalars.length, ...pipe, ...eff, c.gpu.kernels.length, ...(moved ? [moved] : []), c.hparams.differ.length], 'rows: scalars, pipeline, efficiency, kernels, trace diff, hparams');
      const worse = await p2.$$eval('tr.worse td:first-child', (tds) => tds.map((td) => td.textContent));
      T.assertEq(worse, ['gemm_kernel', 'softmax_kernel'], 'slower kernels marked');
      await T.screenshot(p2, 'compare_report_html');
      T.assertEq(p2.problems, [], 'html page problems');
      await p2.close();
    });

    await T.step('no console errors or failed requests', async () => {
      T.assertEq(page.problems, [], 'problems');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
