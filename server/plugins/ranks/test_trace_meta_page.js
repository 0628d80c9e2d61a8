// Browser test of the Ranks view with what the ranks' Kineto traces say of
// the job (issue 34), on tests/integration/hta_traces.py's jobs: the
// world size, backend and process groups of distributedInfo when the rank
// directories do not say them, the ranks' devices by name, and the notes
// of a job whose traces hold a category the server did not understand.
'use strict';
const { execFileSync } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_trace_meta_page.js TFBOARD HTA_TRACES_PY'); process.exit(2); }

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-ranks-meta-');
  execFileSync('python3', [gen, logdir], { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir, ['--cache_dir', '']);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
  try {
    await T.step('world size, backend and process groups from the traces', async () => {
      await T.openApp(page, srv.url, 'tab=ranks');
      await page.selectOption('#ranks-job', 'job');
      await page.waitForSelector('#ranks-distributed', { timeout: 30000 });
      const d = await page.textContent('#ranks-distributed');
      T.assert(d.includes('From the traces: world size 128, backend nccl, 2 process groups') &&
        d.includes('default_pg (0): 128 ranks 0-127, cuda:nccl') && d.includes('tp_group (1): 8 ranks 0-7'), 'distributed: ' + d);
      T.assertEq(await page.textContent('#ranks-world-size'), 'world size 128 (from the traces)', 'the Ranks stat');
      T.assertEq(await page.textContent('#ranks-devices'), 'Devices: 2 × Tesla V100-SXM2-32GB, 80 SMs, compute 7.0', 'devices');
      await T.screenshot(page, 'ranks_trace_meta');
    });
    await T.step('notes on categories not understood', async () => {
      await page.selectOption('#ranks-job', 'jobm');
      await T.until(page, () => [...document.querySelectorAll('#ranks-gpu .note')].some((e) => e.textContent.includes('xla_op')), null, 'the notes', 30000);
      const notes = await page.$$eval('#ranks-gpu .note', (es) => es.map((e) => e.textContent));
      T.assert(notes.includes('rank 0: 3 events of category "npu_kernel" not understood: not read as device work'), 'notes: ' + notes);
      T.assert(notes.includes('rank 1: the trace holds no device work (no kernel, copy or memset read)'), 'notes: ' + notes);
    });
    T.assertEq(page.problems, [], 'console errors, failed requests');
  } finally {
    await browser.close();
    srv.stop();
  }
});
