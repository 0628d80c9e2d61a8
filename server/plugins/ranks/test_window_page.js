// Browser test of the Ranks page's step window (issue 34, item 4): on the
// job of test_ranks_window.py, choosing "Steps but the last" changes the
// per-rank figures (compute 50 -> 20 µs a rank: 100 -> 40 µs in all),
// says which window is in use, and is kept in the URL (a reload keeps it).
'use strict';
const { execFileSync } = require('child_process');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_window_page.js TFBOARD'); process.exit(2); }

const gpuOf = (page, mode) => T.until(page, (m) => {
  const r = window.__tfb.pages.ranks;
  return r && r.job === 'job' && typeof r.gpu === 'object' && r.gpu && r.gpu.window === m && r.gpu;
}, mode, 'the GPU figures of window ' + mode, 60000);

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-ranks-window-');
  execFileSync('python3', [path.join(__dirname, 'test_ranks_window.py'), '--write', logdir], { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  try {
    await T.step('all: the whole trace', async () => {
      await T.openApp(page, srv.url, 'tab=ranks');
      const g = await gpuOf(page, 'all');
      T.assertEq(g.computeNs, 100000, 'compute of both ranks, whole trace');
      const note = await page.textContent('#ranks-window-note');
      T.assert(note.includes('All') && note.includes('whole trace'), 'note: ' + note);
    });
    await T.step('steps but the last: other figures, said, in the URL', async () => {
      await page.selectOption('#ranks-window', 'steps_but_last');
      const g = await gpuOf(page, 'steps_but_last');
      T.assertEq(g.computeNs, 40000, 'compute of both ranks in steps 1 and 2');
      T.assertEq(g.traceStraggler, null, '2 collectives: too few to tell');
      const v = await page.textContent('#ranks-verdict');
      T.assert(v.includes('No straggler (from the traces)') && !v.includes('null'), 'verdict: ' + v);
      const note = await page.textContent('#ranks-window-note');
      T.assert(note.includes('Steps but the last') && note.includes('2 ProfilerSteps'), 'note: ' + note);
      T.assert(page.url().includes('ranksWindow=steps_but_last'), 'URL: ' + page.url());
      await T.screenshot(page, 'ranks_window');
    });
    await T.step('a reload keeps the window', async () => {
      await page.reload();
      const g = await gpuOf(page, 'steps_but_last');
      T.assertEq(g.computeNs, 40000, 'after the reload');
      T.assertEq(await page.inputValue('#ranks-window'), 'steps_but_last', 'the selector');
    });
    T.assertEq(page.problems, [], 'no console errors or failed requests');
  } finally {
    await browser.close();
    srv.stop();
  }
});
