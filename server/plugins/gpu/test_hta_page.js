// Browser test of the GPU page's HTA panels (issue 34, item 4): on the
// runs test_gpu_launch_queue.py writes, the launch statistics card shows the five
// launches, HTA's cutoffs and the two outliers (largest delay first), and
// the queue card one row per stream with the time stream 9 spent at the
// 1024 limit.
'use strict';
const { execFileSync } = require('child_process');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_hta_page.js TFBOARD'); process.exit(2); }

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-gpu-hta-');
  execFileSync('python3', [path.join(__dirname, 'test_gpu_launch_queue.py'), '--write', logdir], { stdio: 'inherit', timeout: 120000 });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
  try {
    await T.step('launch statistics of the launch run', async () => {
      await T.openApp(page, srv.url, 'tab=gpu&run=launch');
      const g = await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === 'launch' && window.__tfb.pages.gpu.hta && window.__tfb.pages.gpu, null, 'the HTA panels', 60000);
      T.assertEq(g.hta.launches, 5, 'launches');
      T.assertEq(g.hta.outliers, 2, 'outliers listed');
      const card = await page.textContent('#gpu-launches');
      T.assert(card.includes('5 launches'), 'launch count shown: ' + card);
      T.assert(card.includes('1 GPU ops without one'), 'the unmatched memcpy: ' + card);
      const rows = await page.$$eval('.launch-outliers tbody tr', (trs) => trs.map((tr) => tr.textContent));
      T.assertEq(rows.length, 2, 'outlier rows');
      T.assert(rows[0].includes('k5') && rows[0].includes('delay'), 'largest delay first: ' + rows[0]);
      T.assert(rows[1].includes('k3') && rows[1].includes('runtime'), 'the long call: ' + rows[1]);
      await page.locator('#gpu-launches').scrollIntoViewIfNeeded();
      await T.screenshot(page, 'gpu_hta_launches');
    });
    await T.step('queue length of the queue run', async () => {
      await page.selectOption('#gpu-run', 'queue');
      const g = await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === 'queue' && window.__tfb.pages.gpu.hta && window.__tfb.pages.gpu, null, 'the queue run', 60000);
      T.assertEq(g.hta.streams, 2, 'streams');
      const rows = await page.$$eval('.queue-table tbody tr', (trs) => trs.map((tr) => tr.textContent));
      T.assertEq(rows.length, 2, 'queue rows');
      const s9 = rows.find((r) => r.startsWith('0 / 9'));
      T.assert(s9 && /1\D?025/.test(s9) && s9.includes('987'), 'stream 9: max 1025, 987 µs at the limit: ' + s9);
      await page.locator('#gpu-queue').scrollIntoViewIfNeeded();
      await T.screenshot(page, 'gpu_hta_queue');
    });
    T.assertEq(page.problems, [], 'no console errors or failed requests');
  } finally {
    await browser.close();
    srv.stop();
  }
});
