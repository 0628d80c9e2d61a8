// Browser test of the Ranks view's straggler from the traces (issue 34,
// item 4): a job of Kineto traces without step times (written by
// test_ranks_trace_straggler.py) shows the traces' verdict: rank 2, last
// in 3 of 4 collectives, and says the verdict comes from the traces.
'use strict';
const { execFileSync } = require('child_process');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_trace_straggler_page.js TFBOARD'); process.exit(2); }

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-ranks-strag-');
  execFileSync('python3', [path.join(__dirname, 'test_ranks_trace_straggler.py'), '--write', logdir], { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  try {
    await T.step('a job without step times: the traces name the straggler', async () => {
      await T.openApp(page, srv.url, 'tab=ranks');
      await page.selectOption('#ranks-job', 'late');
      const g = await T.until(page, () => window.__tfb.pages.ranks && window.__tfb.pages.ranks.job === 'late' && typeof window.__tfb.pages.ranks.gpu === 'object' && window.__tfb.pages.ranks.gpu, null, 'the GPU figures', 60000);
      T.assertEq(g.traceStraggler, 2, 'straggler from the traces: ' + JSON.stringify(g));
      const v = await page.textContent('#ranks-verdict');
      T.assert(v.includes('1 straggler (from the traces)'), 'verdict: ' + v);
      T.assert(v.includes('Rank 2') && v.includes('3 of 4'), 'sentence: ' + v);
      T.assert(v.includes('No step times'), 'says where the verdict comes from: ' + v);
      await T.screenshot(page, 'ranks_trace_straggler');
    });
    await T.step('ranks that start together: no straggler', async () => {
      await page.selectOption('#ranks-job', 'even');
      await T.until(page, () => window.__tfb.pages.ranks && window.__tfb.pages.ranks.job === 'even' && window.__tfb.pages.ranks.gpu && window.__tfb.pages.ranks.gpu.traceStraggler === null, null, 'the even job', 60000);
      const v = await page.textContent('#ranks-verdict');
      T.assert(v.includes('No straggler (from the traces)'), 'verdict: ' + v);
    });
    T.assertEq(page.problems, [], 'no console errors or failed requests');
  } finally {
    await browser.close();
    srv.stop();
  }
});
