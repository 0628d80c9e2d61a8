// Browser test of the GPU page's step window selector (issue 34, item 4):
// on the runs test_gpu_window.py writes, the page shows the whole trace
// (7 kernels) by default; choosing "Steps but the last" reloads the views
// with window=steps_but_last (4 kernels: a, b, c, e), says which window
// is in use, and keeps the choice in the URL, so a reload shows it again.
// The memory view of run mem shows the window's peak.
'use strict';
const { execFileSync } = require('child_process');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_window_page.js TFBOARD'); process.exit(2); }

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-gpu-window-');
  execFileSync('python3', [path.join(__dirname, 'test_gpu_window.py'), '--write', logdir], { stdio: 'inherit', timeout: 120000 });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
  const gpuOf = (mode) => T.until(page, (m) => {
    const g = window.__tfb.pages.gpu;
    return g && g.run === 'steps' && g.window && g.window.requested === m && g.hta ? g : null;
  }, mode, 'the GPU page in window ' + mode, 60000);
  try {
    await T.step('the whole trace by default', async () => {
      await T.openApp(page, srv.url, 'tab=gpu&run=steps');
      const g = await gpuOf('all');
      T.assertEq(g.kernels, 7, 'distinct kernels');
      T.assertEq(g.hta.launches, 7, 'launches');
      T.assertEq(await page.inputValue('#gpu-window'), 'all', 'selector');
      T.assert((await page.textContent('#gpu-window-note')).includes('the whole trace'), 'the note says the whole trace');
    });
    await T.step('steps but the last', async () => {
      await page.selectOption('#gpu-window', 'steps_but_last');
      const g = await gpuOf('steps_but_last');
      T.assertEq(g.kernels, 4, 'kernels launched in steps 1 and 2');
      T.assertEq(g.hta.launches, 4, 'launches in the window');
      const note = await page.textContent('#gpu-window-note');
      T.assert(note.includes('Steps but the last') && note.includes('2 ProfilerSteps') && note.includes('200 µs'), 'the note: ' + note);
      const names = await page.$$eval('.kernel-table tbody tr td:first-child', (tds) => tds.map((td) => td.textContent).sort());
      T.assertEq(names, ['a', 'b', 'c', 'e'], 'kernel rows');
      T.assert(page.url().includes('gpuWindow=steps_but_last'), 'the URL keeps it: ' + page.url());
    });
    await T.step('the URL brings it back', async () => {
      await page.reload();
      const g = await gpuOf('steps_but_last');
      T.assertEq(g.kernels, 4, 'kernels after reload');
      T.assertEq(await page.inputValue('#gpu-window'), 'steps_but_last', 'selector after reload');
      await T.screenshot(page, 'gpu_window_steps_but_last');
    });
    await T.step('the memory view follows the window', async () => {
      // Run mem (test_gpu_window.py): peak 9000 B over the whole trace,
      // 5000 B in the steps, 1500 B without the last step.
      const peakOf = (want) => T.until(page, (w) => {
        const m = window.__tfb.pages.gpuMemory;
        return m && m.peaks && m.peaks[0] === w ? m : null;
      }, want, 'a memory peak of ' + want, 60000);
      await T.openApp(page, srv.url, 'tab=gpu&run=mem');
      await peakOf(9000);
      await page.selectOption('#gpu-window', 'steps');
      await peakOf(5000);
      await page.selectOption('#gpu-window', 'steps_but_last');
      await peakOf(1500);
    });
    await T.step('a trace without steps says so', async () => {
      await T.openApp(page, srv.url, 'tab=gpu&run=nosteps&gpuWindow=steps');
      const g = await T.until(page, () => {
        const x = window.__tfb.pages.gpu;
        return x && x.run === 'nosteps' && x.window ? x : null;
      }, null, 'the nosteps run', 60000);
      T.assertEq(g.kernels, 2, 'kernels');
      T.assertEq(g.window.mode, 'all', 'mode in use');
      T.assert((await page.textContent('#gpu-window-note')).includes('no ProfilerStep annotations'), 'the note');
    });
    T.assertEq(page.problems, [], 'no console errors or failed requests');
  } finally {
    await browser.close();
    srv.stop();
  }
});
