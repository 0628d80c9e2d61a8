// Browser test of the GPU page's memory view and NVML charts (issue 13
// items 2 and 3), on runs written by tests/integration/gpu_memory_gen.py:
//  train: a trace with memory events on two devices, steps, NVTX ranges,
//         and the NVML scalars: memory section (step line with the peak,
//         live-at-peak table, churn per step) and the NVML charts; wheel
//         zoom on the memory chart asks the server for the window and
//         moves the utilization chart's x range with it;
//  oom:   a trace that ends while allocating: the OOM post-mortem;
//  nvml:  NVML scalars only, no trace: the GPU tab shows the NVML charts.
'use strict';
const { execFileSync } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_gpu_memory_page.js TFBOARD GPU_MEMORY_GEN_PY'); process.exit(2); }

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-gpumem-');
  execFileSync('python3', [gen, logdir], { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1400, height: 2600 } });
  const ranges = () => page.evaluate(() => {
    const x = (id) => { const c = window.Chart.getChart(document.getElementById(id)); return [c.scales.x.min, c.scales.x.max]; };
    return { mem: x('gpu-memory-chart'), util: x('gpu-util-chart') };
  });
  const sameWindow = (r, shift, what) => {
    // (the utilization chart never shows time before its own origin:
    // page.js alignUtil clamps at 0)
    const want = r.mem.map((v) => Math.max(0, v + (shift || 0)));
    T.assert(Math.abs(r.util[0] - want[0]) < 1e-9 && Math.abs(r.util[1] - want[1]) < 1e-9, `${what}: utilization ${JSON.stringify(r.util)}, memory ${JSON.stringify(r.mem)} + ${shift} s`);
  };
  try {
    await T.step('a traced run: memory view and NVML charts', async () => {
      await T.openApp(page, srv.url, 'tab=gpu&run=train');
      const g = await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === 'train' && window.__tfb.pages.gpu.nvml && window.__tfb.pages.gpu, null, 'the GPU page with NVML charts', 60000);
      const m = await page.evaluate(() => window.__tfb.pages.gpuMemory);
      T.assertEq([g.traced, g.devices, m.devices, m.postMortem], [true, 2, 2, []], 'traced, devices, memory devices, post-mortem');
      T.assert(m.points.every((n) => n > 100), 'step line points: ' + JSON.stringify(m.points));
      T.assert(m.live === 96 && m.churn === 80, 'live rows and churn rows: ' + JSON.stringify(m));
      T.assertEq(g.nvml.charts, 5, 'NVML charts');
      const peak = await page.textContent('.mem-peak');
      T.assert(/^Peak 13\.54 GiB on GPU 0 at \+\S+ m?s from the first memory event, 48 allocations live/.test(peak), 'peak sentence: ' + peak);
      // One number for one peak (issue 27): the page writes its time as the
      // text report does, from the same origin, in the same format.
      const rep = execFileSync(tfboard, ['report', '--logdir', logdir, '--run', '^train$'], { encoding: 'utf8', timeout: 60000 });
      const inReport = rep.match(/GPU 0: peak (\S+ \S+) at \+(\S+ \S+),/);
      T.assert(inReport, 'the report\'s peak line: ' + rep);
      T.assertEq(peak.match(/^Peak (\S+ \S+) on GPU 0 at \+(\S+ \S+) from/).slice(1), inReport.slice(1), 'the peak as the report writes it');
      const first = await page.textContent('.mem-live-table tbody tr');
      T.assert(first.includes('6 GiB') && first.includes('0x7f0000000000'), 'largest live block first: ' + first);
      const ctxRow = await page.locator('.mem-live-table tbody tr', { hasText: 'gemm_fwd' }).first().textContent();
      T.assert(ctxRow.includes('gemm_fwd') && ctxRow.includes('forward step 40'), 'kernel and NVTX range: ' + ctxRow);
      // The same window of time: the memory chart counts from the first
      // memory event when it comes before the first kernel (no negative
      // time, issue 27), `shift` seconds from the utilization chart's origin.
      const r = await ranges();
      sameWindow(r, m.shift, 'memory and utilization charts share the window');
      T.assertEq(await page.locator('#gpu-postmortem').count(), 0, 'no post-mortem for a run that ended normally');
      await T.screenshot(page, 'gpu_memory_train');
    });

    await T.step('zoom the memory chart: a window fetch, the utilization chart follows', async () => {
      const before = await ranges();
      const box = await page.locator('#gpu-memory-chart').boundingBox();
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
      for (let i = 0; i < 6; i++) await page.mouse.wheel(0, -120);
      const w = await T.until(page, () => window.__tfb.pages.gpuMemoryWindow && window.__tfb.pages.gpuMemoryWindow.view && window.__tfb.pages.gpuMemoryWindow, null, 'the window fetch', 15000);
      const after = await ranges();
      T.assert(after.mem[1] - after.mem[0] < 0.5 * (before.mem[1] - before.mem[0]), 'zoomed in: ' + JSON.stringify([before, after]));
      sameWindow(after, (await page.evaluate(() => window.__tfb.pages.gpuMemory)).shift, 'utilization chart follows the zoom');
      T.assert(w.points.every((n) => n > 2), 'window points: ' + JSON.stringify(w));
      await T.screenshot(page, 'gpu_memory_zoomed');
      await page.dblclick('#gpu-memory-chart');
      await T.until(page, () => window.__tfb.pages.gpuMemoryWindow.view === null, null, 'reset', 15000);
    });

    await T.step('a run that died allocating: the OOM post-mortem', async () => {
      await page.selectOption('#gpu-run', 'oom');
      const m = await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === 'oom' && window.__tfb.pages.gpu.nvml && window.__tfb.pages.gpuMemory, null, 'oom run', 60000);
      T.assertEq(m.postMortem, [0, 1], 'post-mortem devices');
      const text = await page.textContent('#gpu-postmortem');
      T.assert(text.includes('OOM post-mortem') && text.includes('memory still growing') && text.includes('90%'), 'post-mortem card: ' + text.slice(0, 300));
      const rows = await page.locator('.mem-postmortem-table tbody tr').count();
      T.assertEq(rows, 60, 'last allocations of two devices');
      await page.locator('#gpu-postmortem').scrollIntoViewIfNeeded();
      await T.screenshot(page, 'gpu_memory_oom');
    });

    await T.step('a run with NVML metrics only: the GPU tab shows them', async () => {
      await page.selectOption('#gpu-run', 'nvml');
      const g = await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === 'nvml' && window.__tfb.pages.gpu, null, 'nvml run', 30000);
      T.assertEq([g.traced, g.nvml.charts, g.nvml.devices], [false, 5, 2], 'NVML only');
      T.assert((await page.textContent('#gpu-no-trace')).includes('no GPU trace'), 'no-trace note');
      const titles = await page.$$eval('.nvml-chart', (els) => els.map((e) => e.dataset.title));
      T.assertEq(titles, ['SM utilization', 'Memory used / total', 'Power', 'Temperature', 'SM clock'], 'chart titles');
      await page.evaluate(() => window.scrollTo(0, 0));
      await T.screenshot(page, 'gpu_nvml_only');
    });

    await T.step('no console errors or failed requests', async () => {
      T.assertEq(page.problems, [], 'problems');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
