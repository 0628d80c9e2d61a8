// Browser test of the GPU page while a big trace loads and with a trace
// that cannot be read: the page shows the load's progress (the routes
// answer 202 {"loading", "progress"} meanwhile) and then the dashboard;
// a run whose kernel table is a VIEW (an endless recursive query) shows
// the server's error, and the other run keeps working.
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard, genTrace] = process.argv.slice(2);
if (!tfboard || !genTrace) { console.error('usage: test_gpu_page.js TFBOARD GEN_GPU_TRACE'); process.exit(2); }
const KERNELS = process.env.TFB_WEBUI_GPU_KERNELS || '3000000';

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-gpu-');
  fs.mkdirSync(path.join(logdir, 'big'));
  execFileSync(genTrace, [path.join(logdir, 'big', 'report1.sqlite'), KERNELS], { stdio: 'inherit', timeout: 300000 });
  fs.mkdirSync(path.join(logdir, 'hostile'));
  // python3's sqlite3 module (the tests need python3 anyway).
  execFileSync('python3', ['-c', `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
  WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r)
  SELECT 100 AS start, 50 AS "end", 0 AS deviceId, 7 AS streamId,
         i AS correlationId, 'k' AS demangledName FROM r;""")
db.close()`, path.join(logdir, 'hostile', 'rank0.trace.sqlite')], { stdio: 'inherit' });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  try {
    await T.step('a big trace: progress while it loads, then the dashboard', async () => {
      await T.openApp(page, srv.url, 'tab=gpu&run=big');
      const seen = await T.until(page, () => (window.__tfb.pages.gpuLoading || (window.__tfb.pages.gpu && window.__tfb.pages.gpu.kernels)), null, 'loading progress or the page', 60000);
      const g = await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.kernels && window.__tfb.pages.gpu, null, 'the GPU page', 120000);
      T.assertEq([g.run, g.devices, g.kernels], ['big', 1, 50], 'run, devices, kernel names');
      const loading = await page.evaluate(() => window.__tfb.pages.gpuLoading);
      // On a fast machine the trace may load within the server's first
      // wait (1 s): the progress then never shows.
      if (loading) {
        T.assert(loading.run === 'big' && loading.progress >= 0 && loading.progress <= 1, 'progress: ' + JSON.stringify(loading));
      } else {
        console.log('# loaded within the first answer: no progress shown', JSON.stringify(seen));
      }
      await T.until(page, () => window.__tfb.pages.gpuTimeline, null, 'timeline', 60000);
      const t = await page.evaluate(() => window.__tfb.pages.gpuTimeline);
      T.assert(t.merged && t.spans <= 3000, 'merged timeline: ' + JSON.stringify(t));
      T.assert(t.download.includes('run=big') && t.download.includes('start_ns='), 'download link: ' + t.download);
      await T.screenshot(page, 'gpu_big');
    });

    await T.step('a trace that cannot be read: the error, on the page', async () => {
      await page.selectOption('#gpu-run', 'hostile');
      const g = await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === 'hostile' && window.__tfb.pages.gpu, null, 'hostile run', 30000);
      T.assert(g.error && g.error.includes('view') && g.error.includes('rank0.trace.sqlite'), 'error: ' + JSON.stringify(g));
      const text = await page.textContent('#gpu-error');
      T.assert(text.includes('is a view, not a table'), 'error shown: ' + text);
      await T.screenshot(page, 'gpu_error');
      await page.selectOption('#gpu-run', 'big');
      await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === 'big' && window.__tfb.pages.gpu.kernels === 50, null, 'back to the big run', 30000);
    });

    await T.step('no console errors, failed requests only for the unreadable trace', async () => {
      const bad = page.problems.filter((p) => !(p.startsWith('HTTP 500') && p.includes('run=hostile')) &&
        !(p.startsWith('console: Failed to load resource') && p.includes('500')));
      T.assertEq(bad, [], 'problems');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
