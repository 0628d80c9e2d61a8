// Browser test of what the GPU page shows of a trace's own metadata and
// of HTA's idle breakdown (issue 34), on tests/integration/hta_traces.py's
// traces: the device's name, SMs, memory and compute capability from
// deviceProperties; the distributedInfo; the per-stream breakdown of a
// two-stream device; the note naming a category the server did not
// understand (an MTIA trace with one, and a trace with device work only in
// one: no device, but the note, never an empty page without a word); and
// the same in the HTML report (`tfboard report --format html`).
'use strict';
const { execFileSync } = require('child_process');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_trace_meta_page.js TFBOARD HTA_TRACES_PY'); process.exit(2); }

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-trace-meta-');
  execFileSync('python3', [gen, logdir], { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir, ['--cache_dir', '']);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
  const open = async (run) => {
    await T.openApp(page, srv.url, 'tab=gpu&run=' + encodeURIComponent(run));
    return T.until(page, (r) => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run === r && window.__tfb.pages.gpu, run, 'GPU page of ' + run, 30000);
  };
  try {
    await T.step('deviceProperties and distributedInfo on the device card', async () => {
      const g = await open('job/rank-00000');
      T.assertEq(g.devices, 1, 'devices (GPU 1 is listed but unused)');
      const title = await page.textContent('#gpu-devices .card-h');
      T.assert(title.includes('GPU 0: Tesla V100-SXM2-32GB'), 'title: ' + title);
      T.assertEq(await page.textContent('#gpu-devices .gpu-props'), '80 SMs · 31.7 GiB · compute capability 7.0', 'properties');
      const dist = await page.textContent('#gpu-distributed');
      T.assert(dist.includes('rank 0 of world size 128, backend nccl, 2 process groups') && dist.includes('default_pg (128 ranks 0-127)'), 'distributed: ' + dist);
      await T.screenshot(page, 'gpu_trace_meta');
    });
    await T.step('two streams: the breakdown per stream', async () => {
      await open('two_streams');
      const rows = await page.$$eval('#gpu-devices table.gpu-streams tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      T.assertEq(rows.length, 2, 'stream rows');
      T.assertEq([rows[0][0], rows[1][0]], ['7', '8'], 'streams');
      const idle = await page.textContent('#gpu-devices .card');
      T.assert(idle.includes('Idle time: 25 µs (41.7 % of the 60 µs span); by stream, summed over 2 streams: 55 µs'), 'idle line: ' + idle);
    });
    await T.step('a category not understood is named, with and without devices', async () => {
      await open('mtia');
      const n = await page.textContent('#gpu-notes');
      T.assert(n.includes('3 events of category "npu_kernel" not understood'), 'mtia note: ' + n);
      const g = await open('unknown_only');
      T.assertEq([g.devices, g.notes], [0, 1], 'no device, one note');
      const u = await page.textContent('#gpu-notes');
      T.assert(u.includes('2 events of category "xla_op" not understood'), 'note: ' + u);
    });
    await T.step('the HTML report: the device by name, distributedInfo, notes', async () => {
      const out = path.join(logdir, 'report.html');
      execFileSync(tfboard, ['report', '--logdir', logdir, '--run', '^(job/rank-00000|mtia)$', '--format', 'html', '--output', out, '--quiet'],
        { stdio: 'inherit', timeout: 120000, env: { ...process.env, XDG_CACHE_HOME: path.join(logdir, 'xdg') } });
      const rp = await T.newPage(browser);
      await rp.goto('file://' + out);
      await rp.waitForSelector('.gpu-note', { timeout: 15000 });
      const body = await rp.textContent('body');
      T.assert(body.includes('Tesla V100-SXM2-32GB, 80 SMs, 31.7 GiB, compute 7.0'), 'device in the report');
      T.assert(body.includes('Distributed: rank 0 of world size 128, backend nccl, 2 process groups'), 'distributed in the report');
      T.assertEq(await rp.textContent('.gpu-note'), 'Trace note: 3 events of category "npu_kernel" not understood: not read as device work', 'note');
      T.assertEq(rp.problems, [], 'report page errors');
      await rp.context().close();
    });
    T.assertEq(page.problems, [], 'console errors, failed requests');
  } finally {
    await browser.close();
    srv.stop();
  }
});
