// Browser test of the GPU page's timeline (issue 20): on the sample trace
// of examples/gpu_sample_trace (Kineto JSON: CPU threads with ops and CUDA
// API calls, NVTX ranges, two GPU streams), the timeline sits above the
// utilization chart, is tall, has lanes for the CPU threads, the NVTX
// ranges and the GPU streams, draws launch -> kernel arrows, says the
// trace is a sample, and zooms (wheel), pans (overview strip) and resets
// (double-click), asking the server again each time. A trace store in
// our collector's schema (tests/integration/timeline_gen.py: NVTX ranges
// and marks, launches, kernels) gets the same CPU-thread and NVTX lanes,
// with arrows from each launch to its kernel paired by correlation id. A
// CPU-only trace (torch.profiler without CUDA) shows its ops: the
// breakdown, the top ops and the timeline, not an empty page.
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard, genSample, genStore] = process.argv.slice(2);
if (!tfboard || !genSample || !genStore) { console.error('usage: test_gpu_timeline.js TFBOARD GPU_SAMPLE_TRACE TIMELINE_GEN_PY'); process.exit(2); }

// A CPU-only Kineto trace: two threads, nested ops, no device events.
function cpuOnlyTrace(file) {
  const ev = [{ ph: 'M', name: 'thread_name', pid: 1, tid: 11, args: { name: 'main' } }];
  let t = 1000;
  for (let step = 0; step < 4; step++) {
    const s0 = t;
    for (const [op, d] of [['aten::linear', 300], ['aten::relu', 40], ['aten::mse_loss', 60]]) {
      ev.push({ ph: 'X', cat: 'cpu_op', name: op, pid: 1, tid: 11, ts: t, dur: d });
      if (op === 'aten::linear') ev.push({ ph: 'X', cat: 'cpu_op', name: 'aten::addmm', pid: 1, tid: 11, ts: t + 10, dur: 250 });
      t += d + 5;
    }
    ev.push({ ph: 'X', cat: 'cpu_op', name: 'ProfilerStep#' + step, pid: 1, tid: 11, ts: s0 - 1, dur: t - s0 + 2 });
    ev.push({ ph: 'X', cat: 'cpu_op', name: 'DataLoader::collate', pid: 1, tid: 12, ts: s0, dur: 200 });
    t += 50;
  }
  fs.writeFileSync(file, JSON.stringify({ schemaVersion: 1, traceEvents: ev }));
}

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-timeline-');
  execFileSync(genSample, ['--out', path.join(logdir, 'gpu_SAMPLE')], { stdio: 'inherit' });
  fs.mkdirSync(path.join(logdir, 'cpu_only'));
  cpuOnlyTrace(path.join(logdir, 'cpu_only', 'host.pt.trace.json'));
  execFileSync('python3', [genStore, 'store', path.join(logdir, 'store')], { stdio: 'inherit' });
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  await page.setViewportSize({ width: 1440, height: 1000 });
  const tl = () => page.evaluate(() => window.__tfb.pages.gpuTimeline);
  try {
    await T.step('sample trace: labelled, timeline near the top with CPU, NVTX and GPU lanes and arrows', async () => {
      await T.openApp(page, srv.url, 'tab=gpu&run=gpu_SAMPLE');
      await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.kernels && window.__tfb.pages.gpuTimeline && window.__tfb.pages.gpuTimeline.hostSpans > 0, null, 'the GPU page and its timeline', 60000);
      const g = await page.evaluate(() => window.__tfb.pages.gpu);
      T.assert(g.sample === true, 'the page knows it is a sample: ' + JSON.stringify(g));
      T.assert((await page.textContent('#gpu-sample')).includes('SAMPLE TRACE'), 'sample banner');
      const t = await tl();
      T.assertEq(t.hostLanes.slice().sort(), ['CPU pt_data_worker', 'CPU python (main)', 'NVTX python (main)'], 'host lanes');
      T.assert(t.lanes.includes('GPU 0 stream 7') && t.lanes.includes('GPU 0 stream 20'), 'GPU lanes: ' + t.lanes);
      T.assert(t.lanes.indexOf('CPU python (main)') < t.lanes.indexOf('GPU 0 stream 7'), 'CPU lanes above the GPU streams');
      T.assert(t.height >= 300, 'tall: ' + t.height);
      const yTl = await page.$eval('#gpu-timeline', (e) => e.getBoundingClientRect().top);
      const yUtil = await page.$eval('#gpu-util-chart', (e) => e.getBoundingClientRect().top);
      T.assert(yTl < yUtil && yTl < 700, `timeline (y ${yTl}) above the utilization chart (y ${yUtil}), on the first screen`);
      await T.screenshot(page, 'gpu_timeline_sample');
    });

    await T.step('zoom into one step: unmerged kernels, launch -> kernel arrows', async () => {
      const t0 = await tl();
      const box = await page.$eval('#gpu-timeline', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      await page.mouse.move(box.x + 170 + (box.w - 178) * 0.1, box.y + 40);
      for (let i = 0; i < 10; i++) await page.mouse.wheel(0, -120);
      const t1 = await T.until(page, ([f, w]) => { const x = window.__tfb.pages.gpuTimeline; return x.fetches > f && x.view[1] - x.view[0] < w / 5 && !x.merged && x.flows > 0 && x; }, [t0.fetches, t0.view[1] - t0.view[0]], 'a narrower window, unmerged, with arrows', 20000);
      T.assert(t1.hostSpans > 0 && t1.hostSpans <= t0.hostTotal, 'host spans of the window: ' + JSON.stringify(t1));
      await T.screenshot(page, 'gpu_timeline_zoomed_arrows');
      // The overview strip moves the window without changing its width.
      const ov = await page.$eval('#gpu-overview', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      await page.mouse.click(ov.x + 170 + (ov.w - 178) * 0.8, ov.y + ov.h / 2);
      const t2 = await T.until(page, (f) => { const x = window.__tfb.pages.gpuTimeline; return x.fetches > f && x; }, t1.fetches, 'fetch after the overview click');
      T.assert(t2.view[0] > t1.view[0], 'window moved right');
      T.assert(Math.abs((t2.view[1] - t2.view[0]) - (t1.view[1] - t1.view[0])) < 2, 'same width');
      await page.mouse.dblclick(box.x + box.w * 0.5, box.y + 40);
      await T.until(page, ([f, v0]) => { const x = window.__tfb.pages.gpuTimeline; return x.fetches > f && x.view[0] === v0; }, [t2.fetches, t0.view[0]], 'reset to the whole trace');
    });

    await T.step('a trace store: CPU-thread and NVTX lanes, launch -> kernel arrows by correlation', async () => {
      await page.selectOption('#gpu-run', 'store');
      const t = await T.until(page, () => { const x = window.__tfb.pages.gpuTimeline; return x && x.run === 'store' && x.flows > 0 && x; }, null, 'the store timeline with arrows', 30000).catch(async (e) => {
        throw new Error(e.message + ': ' + JSON.stringify(await tl()));
      });
      T.assertEq(t.hostLanes.slice().sort(), ['CPU thread 1', 'NVTX thread 1', 'NVTX thread 2'], 'host lanes');
      T.assert(t.lanes.includes('GPU 0 stream 7'), 'GPU lane: ' + t.lanes);
      T.assert(t.lanes.indexOf('NVTX thread 1') < t.lanes.indexOf('CPU thread 1') && t.lanes.indexOf('CPU thread 1') < t.lanes.indexOf('GPU 0 stream 7'), 'NVTX above its thread, above the GPU: ' + t.lanes);
      // 3 steps x 7 kernels, each launched from the main thread.
      T.assertEq(t.flows, 21, 'arrows: ' + JSON.stringify(t.flowPairs.slice(0, 3)));
      const corrs = new Set();
      for (const f of t.flowPairs) {
        T.assert(f.lane === 'CPU thread 1' && f.kernelLane === 'GPU 0 stream 7' && f.call === 'cudaLaunchKernel_v7000' && Number.isInteger(f.corr), 'arrow: ' + JSON.stringify(f));
        corrs.add(f.corr);
      }
      T.assertEq(corrs.size, 21, 'one arrow per correlation id');
      await T.screenshot(page, 'gpu_timeline_store');
    });

    await T.step('a CPU-only trace: breakdown, top ops and timeline, not an empty page', async () => {
      await page.selectOption('#gpu-run', 'cpu_only');
      const g = await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === 'cpu_only' && window.__tfb.pages.gpu, null, 'the cpu_only run', 30000);
      T.assert(g.cpuOnly && g.cpuOps >= 6, 'CPU ops: ' + JSON.stringify(g));
      T.assert((await page.textContent('#gpu-cpu-only')).includes('CPU activity only'), 'says why there is no GPU data');
      const rows = await page.$$eval('.cpu-ops-table tbody tr', (r) => r.map((x) => x.textContent));
      T.assert(rows[0].includes('aten::addmm'), 'most self time first: ' + rows[0]);
      T.assert(await page.$('#cpu-breakdown .hbar div'), 'breakdown bar');
      const t = await T.until(page, () => window.__tfb.pages.gpuTimeline && window.__tfb.pages.gpuTimeline.hostLanes.includes('CPU main') && window.__tfb.pages.gpuTimeline, null, 'CPU timeline').catch(async (e) => {
        throw new Error(e.message + ': ' + JSON.stringify(await tl()) + ' ' + await page.textContent('#timeline-wrap'));
      });
      T.assertEq(t.hostLanes.slice().sort(), ['CPU main', 'CPU thread 12'], 'thread lanes');
      await T.screenshot(page, 'gpu_cpu_only');
    });

    await T.step('no console errors or failed requests', async () => {
      T.assertEq(page.problems, [], 'problems');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
