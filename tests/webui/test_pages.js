// Browser test of every other dashboard against the real tfboard: Runs
// table, Histograms, Distributions, Text, Health (+ banner and click to the
// chart), Gradients, Input pipeline, tabs shown only with data, and the help
// text of an empty logdir.
'use strict';
const { execFileSync } = require('child_process');
const T = require('./lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_pages.js TFBOARD GEN_LOGDIR'); process.exit(2); }

T.run(async () => {
  const logdir = T.makeLogdir(gen);
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  const pages = () => page.evaluate(() => window.__tfb.pages);
  try {
    await T.step('tabs: one per dashboard with data, Health with a red count badge', async () => {
      await T.openApp(page, srv.url, 'tab=runs');
      // Every enabled dashboard's tab, in the bar or in its "More" menu.
      const tabs = await page.evaluate(() => window.__tfb.tabs);
      T.assertEq(tabs, ['scalars', 'runs', 'histograms', 'distributions', 'text', 'health', 'gradients', 'gpu', 'pipeline', 'compare', 'efficiency', 'alerts', 'query'], 'tabs');
      T.assertEq(await page.$eval('#tab-health .badge', (e) => e.textContent), '1', 'health badge count');
    });

    await T.step('runs table: one row per run with steps, duration and values of the chosen tag', async () => {
      await T.until(page, () => window.__tfb.pages.runs && window.__tfb.pages.runs.rows.length === 5, null, 'runs rows');
      const p = (await pages()).runs;
      T.assertEq(p.tag, 'train/loss', 'default tag');
      const byRun = Object.fromEntries(p.rows.map((r) => [r.run, r]));
      T.assertEq(byRun.alpha.steps, 19999, 'alpha steps (largest step of any tag)');
      T.assertEq(byRun.alpha.points, 500, 'alpha train/loss points');
      T.assertEq(byRun.alpha.duration, 249.5, 'alpha duration');
      T.assertEq(byRun.diverge.nonfinite, 3, 'diverge non-finite');
      T.assertEq(byRun.pipeline.last, null, 'pipeline has no train/loss');
      const dom = await page.$$eval('.runs-table tbody tr', (trs) => trs.map((tr) => tr.dataset.run));
      T.assertEq(dom.length, 5, 'rows in the DOM');
      await T.screenshot(page, 'runs');
    });

    await T.step('runs table sorts by a column and row clicks select runs', async () => {
      await page.click('.runs-table th:has-text("Steps")');
      let order = await page.$$eval('.runs-table tbody tr', (trs) => trs.map((tr) => tr.dataset.run));
      T.assertEq(order[0], 'alpha', 'most steps first');
      T.assertEq(order[3], 'pipeline', 'fewest steps last (gpu has none: missing values last)');
      T.assertEq(order[4], 'gpu', 'a run without steps sorts last');
      await page.click('.runs-table th:has-text("Steps")');
      order = await page.$$eval('.runs-table tbody tr', (trs) => trs.map((tr) => tr.dataset.run));
      T.assertEq(order[0], 'pipeline', 'ascending after a second click');
      await page.click('.runs-table tbody tr[data-run="beta"] td:nth-child(2)');
      await T.until(page, () => !document.querySelector('#run-list input[data-run="beta"]').checked, null, 'sidebar follows the row');
      T.assert(decodeURIComponent(page.url()).includes('"alpha","diverge","gpu","pipeline"'), 'URL holds the selection (natural order)');
      await page.click('.runs-table tbody tr[data-run="beta"] td:nth-child(2)');
      await T.until(page, () => document.querySelector('#run-list input[data-run="beta"]').checked, null, 'beta selected again');
      await page.selectOption('#runs-tag', 'train/accuracy');
      await T.until(page, () => window.__tfb.pages.runs.tag === 'train/accuracy', null, 'tag switch');
      const acc = (await pages()).runs.rows.find((r) => r.run === 'beta');
      T.assertEq(acc.points, 300, 'beta accuracy points');
    });

    await T.step('histograms: one card per run and tag, every step drawn', async () => {
      await page.click('#tab-histograms');
      await T.until(page, () => window.__tfb.charts['histograms:alpha:weights/dense1'] && window.__tfb.charts['histograms:beta:weights/dense1'], null, 'histogram cards');
      const a = await page.evaluate(() => window.__tfb.charts['histograms:alpha:weights/dense1']);
      const b = await page.evaluate(() => window.__tfb.charts['histograms:beta:weights/dense1']);
      T.assertEq([a.steps, a.drawn], [20, 20], 'alpha steps');
      T.assertEq([b.steps, b.drawn], [10, 10], 'beta steps');
      const painted = await page.$eval('.card[data-run="alpha"] canvas', (c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return n / (d.length / 4);
      });
      T.assert(painted > 0.05, 'the ridges cover the canvas: ' + painted);
      await T.screenshot(page, 'histograms');
    });

    await T.step('distributions: percentile bands over steps, median follows the data', async () => {
      await page.click('#tab-distributions');
      await T.until(page, () => window.__tfb.charts['distributions:alpha:weights/dense1'], null, 'distribution chart');
      const d = await page.evaluate(() => window.__tfb.charts['distributions:alpha:weights/dense1']);
      T.assertEq(d.steps, 20, 'one x per step');
      T.assertEq(d.datasets, 9, 'nine percentile lines');
      // Generated values are centred at 0.1 * step (steps 0..19).
      T.assert(Math.abs(d.median[0]) < 0.15, 'first median near 0: ' + d.median[0]);
      T.assert(Math.abs(d.median[19] - 1.9) < 0.15, 'last median near 1.9: ' + d.median[19]);
      await T.screenshot(page, 'distributions');
    });

    await T.step('text: entries shown as text, markup not interpreted', async () => {
      await page.click('#tab-text');
      await T.until(page, () => window.__tfb.pages.text && window.__tfb.pages.text['alpha:notes'] === 2, null, 'text entries');
      const bodies = await page.$$eval('.text-body', (els) => els.map((e) => e.textContent));
      T.assert(bodies.includes('<b>not bold</b> & <script>window.__xss=2</script>'), 'markup shown verbatim: ' + JSON.stringify(bodies));
      T.assert(bodies.includes('second note\nwith two lines'), 'newlines kept');
      T.assertEq(await page.$$eval('main b, main script', (els) => els.length), 0, 'no element from the data');
      T.assertEq(await page.evaluate(() => window.__xss === undefined), true, 'no script ran');
      await T.screenshot(page, 'text');
    });

    await T.step('health: the alert table, and the banner on every page', async () => {
      await page.click('#tab-health');
      await T.until(page, () => window.__tfb.pages.health, null, 'health page');
      T.assertEq((await pages()).health.rows, [{ run: 'diverge', tag: 'train/loss', first_step: 300 }], 'alerts');
      const cells = await page.$$eval('.alerts-table tbody td', (tds) => tds.map((t) => t.textContent));
      T.assertEq(cells.slice(5, 9), ['1', '1', '1', '3'], 'NaN, +Inf, -Inf, events');
      T.assert(await page.isVisible('#banner'), 'banner shown');
      T.assert((await page.textContent('#banner')).includes('train/loss'), 'banner names the tag');
      await T.screenshot(page, 'health');
    });

    await T.step('clicking an alert opens the scalar chart at that step', async () => {
      await page.click('.alerts-table tbody tr');
      await T.until(page, () => window.__tfb.charts['scalars:train/loss'] && window.__tfb.charts['scalars:train/loss'].view.focusStep === 300, null, 'focused chart');
      const c = await page.evaluate(() => window.__tfb.charts['scalars:train/loss']);
      T.assertEq(Object.keys(c.runs), ['diverge'], 'only the alerting run');
      T.assert(page.url().includes('tab=scalars') && page.url().includes('step=300'), 'URL: ' + page.url());
      await T.screenshot(page, 'health_to_chart');
    });

    await T.step('the banner hides when no selected run has alerts', async () => {
      await page.click('#runs-all');
      await page.click('#run-list input[data-run="diverge"]');
      await T.until(page, () => document.getElementById('banner').hidden, null, 'banner hidden');
      await page.click('#runs-all');
      await T.until(page, () => !document.getElementById('banner').hidden, null, 'banner back');
    });

    await T.step('gradients: heat map of layers × steps with flags, and the global norm', async () => {
      await page.click('#tab-gradients');
      await T.until(page, () => window.__tfb.pages.gradients, null, 'gradients page');
      const g = (await pages()).gradients;
      T.assertEq([g.run, g.layers, g.steps, g.global], ['alpha', 3, 100, 100], 'layers, steps, global points');
      T.assert(g.flags >= 101, 'vanishing "out" at every step + exploding dense2 at 70: ' + g.flags);
      const box = await page.$eval('#grad-heatmap', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width }; });
      await page.mouse.move(box.x + 155 + 3, box.y + 5);
      await page.waitForSelector('.heat-wrap .chart-tooltip:not([hidden])', { timeout: 5000 });
      const tip = await page.textContent('.heat-wrap .chart-tooltip');
      T.assert(tip.includes('dense1') && tip.includes('step 0'), 'hover names layer and step: ' + tip);
      await T.screenshot(page, 'gradients');
    });

    await T.step('input pipeline: verdict in words and numbers, stats, stacked bars', async () => {
      await page.click('#tab-pipeline');
      await T.until(page, () => window.__tfb.pages.pipeline, null, 'pipeline page');
      const p = (await pages()).pipeline;
      T.assertEq([p.run, p.verdict, p.steps, p.bars], ['pipeline', 'highly', 200, 200], 'pipeline');
      const v = await page.textContent('#pipeline-verdict');
      T.assert(v.includes('Highly input-bound') && v.includes('40.0 %'), 'verdict text: ' + v);
      T.assert(p.recommendations > 0, 'recommendations listed');
      await T.screenshot(page, 'pipeline');
    });

    await T.step('GPU: device numbers, utilization, kernel table with sort and search, copies', async () => {
      await page.click('#tab-gpu');
      await T.until(page, () => window.__tfb.pages.gpu && window.__tfb.pages.gpuTimeline, null, 'gpu page and timeline');
      const g = (await pages()).gpu;
      T.assertEq([g.run, g.devices, g.kernels, g.memcpy], ['gpu', 1, 3, 1], 'run, devices, kernels, copy rows');
      T.assertEq(g.utilPoints, [300], 'utilization buckets drawn');
      const names = await page.$$eval('.kernel-table tbody tr td:first-child', (tds) => tds.map((t) => t.textContent));
      T.assertEq(names, ['void gemm<float, 128>(float const*, float*)', 'reduce', 'relu'], 'kernels by total time, names as text');
      await page.click('.kernel-table th:has-text("Calls")');
      await page.click('.kernel-table th:has-text("Kernel")');
      const sorted = await page.$$eval('.kernel-table tbody tr td:first-child', (tds) => tds.map((t) => t.textContent));
      T.assertEq(sorted[0], 'reduce', 'sorted by name');
      await page.fill('#kernel-search', 'rel');
      await T.until(page, () => window.__tfb.pages.gpu.kernelsShown === 1, null, 'search filters');
      T.assertEq(await page.$$eval('.kernel-table tbody tr', (t) => t.length), 1, 'one row left');
      await page.fill('#kernel-search', '');
      const copy = await page.$$eval('.memcpy-table tbody td', (tds) => tds.map((t) => t.textContent));
      T.assertEq(copy.slice(1, 4), ['HtoD', '200', '200 MiB'], 'HtoD copies');
      const busy = await page.textContent('#gpu-devices');
      // Busy is the union of kernels, copies and memsets (the one
      // definition, server/trace/trace.h): 116 ms of the 199.6 ms span.
      T.assert(busy.includes('58.1 %'), 'busy fraction shown: ' + busy);
      await T.screenshot(page, 'gpu');
    });

    await T.step('GPU timeline: one lane per stream, wheel zoom asks for the visible window', async () => {
      const t0 = (await pages()).gpuTimeline;
      T.assertEq(t0.lanes, ['GPU 0 stream 7', 'GPU 0 stream 13'], 'lanes');
      T.assertEq(t0.total, 800, 'all 800 spans in the full window');
      // The device cards above may push it below the fold: the wheel must
      // land on it.
      await page.$eval('#gpu-timeline', (e) => e.scrollIntoView({ block: 'center' }));
      const box = await page.$eval('#gpu-timeline', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      await page.mouse.move(box.x + box.w * 0.6, box.y + 10);
      for (let i = 0; i < 12; i++) await page.mouse.wheel(0, -120);
      const t1 = await T.until(page, (f) => window.__tfb.pages.gpuTimeline.fetches > f && window.__tfb.pages.gpuTimeline.total < 800 && window.__tfb.pages.gpuTimeline, t0.fetches, 'zoomed fetch');
      T.assert(t1.view[1] - t1.view[0] < (t0.view[1] - t0.view[0]) / 5, 'window narrowed');
      T.assert(t1.total > 0 && !t1.merged, 'spans of the window, unmerged: ' + JSON.stringify(t1));
      // "Download this window": trace.json of the visible window.
      const href = await page.getAttribute('#gpu-download', 'href');
      T.assert(href.includes('start_ns=' + Math.floor(t1.view[0])) && href.includes('end_ns='), 'download link names the window: ' + href);
      const tr = await page.evaluate(async (u) => (await fetch(u)).json(), href);
      const spans = tr.traceEvents.filter((e) => e.ph === 'X' && e.cat !== 'cuda_runtime').length;
      T.assert(tr.otherData.truncated === false && spans === t1.total, 'window trace: ' + spans + ' of ' + t1.total);
      await page.mouse.move(box.x + box.w * 0.6, box.y + 12);
      await T.screenshot(page, 'gpu_timeline_zoomed');
      await page.mouse.dblclick(box.x + box.w * 0.5, box.y + 10);
      await T.until(page, () => window.__tfb.pages.gpuTimeline.total === 800, null, 'reset to the full trace');
    });

    await T.step('no console errors, failed requests or dialogs', async () => {
      T.assertEq(page.problems, [], 'problems');
    });

    await T.step('an empty logdir shows help with the logging call', async () => {
      const empty = T.tmpdir('tfb-empty-');
      const srv2 = await T.startServer(tfboard, empty);
      const p2 = await T.newPage(browser);
      try {
        await T.openApp(p2, srv2.url);
        await p2.waitForSelector('#empty-help', { timeout: 10000 });
        const t = await p2.textContent('#empty-help');
        T.assert(t.includes('tfb_scalar(w, "loss", loss, step);'), 'help names the call');
        // ... and the Python one next to it (issue 27): the package's
        // SummaryWriter, as Python users write it, and Python that parses.
        const py = await p2.textContent('#empty-python');
        T.assert(py.includes('from tfboard import SummaryWriter') && py.includes('w.add_scalar("loss", loss, step)'),
          'the Python example: ' + py);
        execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], { input: py, timeout: 30000 });
        const [bc, bp] = [await p2.locator('#empty-c').boundingBox(), await p2.locator('#empty-python').boundingBox()];
        T.assert(bc && bp && bp.height > 40 && bp.y >= bc.y + bc.height, 'both examples shown, Python after C: ' + JSON.stringify([bc, bp]));
        T.assertEq(await p2.$$eval('#tabs .tab', (a) => a.length), 0, 'no tabs without data');
        await T.screenshot(p2, 'empty_logdir');
        T.assertEq(p2.problems, [], 'no console errors');
      } finally {
        srv2.stop();
        await p2.context().close();
      }
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
