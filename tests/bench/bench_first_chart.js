// Browser side of the sweep benchmark (issues 18 and 28): a sweep of RUNS
// runs (default 10,000 x 200 steps, written by tests/webui/gen_sweep_logdir)
// served by tfboard, opened in headless Chromium once the server has loaded
// it. Prints every figure next to its goal, never asserts:
//   - the server's time until all data is served (the loader's figure);
//   - the first chart: navigation start to a drawn bands chart (goal
//     <= 2 s, issue 28), and the requests of the first screen (< 50);
//   - where the time to the first chart goes: the page and its modules,
//     each catalog answer and each /multirun (start -> end, bytes), the
//     main thread's script / layout / style time, its long tasks;
//   - fluidity: a keystroke in the run filter to the repaint, a scroll of
//     the run list and of the runs table to the repaint, a brush on the
//     parallel coordinates, a sort of the runs table (ms each);
//   - a selection of any size (issue 27's workflow): "select the matching"
//     runs of a filter keeping about a tenth, the charts drawn over them
//     (a selection the server holds, PUT /data/selection), then all again.
// TFB_SHOT=FILE.png saves a screenshot of the first chart;
// TFB_BENCH_DIR=DIR keeps the generated logdir in DIR/sweep-RUNSxSTEPS and
// reuses it on the next run (100,000 runs take minutes to write).
// usage: node bench_first_chart.js TFBOARD GEN_SWEEP_LOGDIR [RUNS [STEPS]]
//        node bench_first_chart.js --url http://127.0.0.1:PORT/ (a tfboard
//        already serving, e.g. bench_sweep.py --keep-serving)
// Needs playwright-core in tests/webui/node_modules (`npm ci` there) and
// Chromium; exits 77 (skip) without them, as the browser tests do.
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const T = require('../webui/lib.js');

// Issue 28's goals.
const GOAL_FIRST_CHART_MS = 2000;
const GOAL_REQUESTS = 50;        // fewer than this on the first screen
const GOAL_FLUID_MS = 100;       // a reaction the eye takes as immediate

async function loaded(url) {
  const t0 = Date.now();
  for (;;) {
    const p = await (await fetch(url + 'data/plugin/core/progress')).json();
    if (p.done) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function logdirFor(gen, runs, steps) {
  const keep = process.env.TFB_BENCH_DIR;
  const dir = keep ? path.join(keep, `sweep-${runs}x${steps}`) : T.tmpdir('tfb-bench-sweep-');
  const done = path.join(dir, '.generated');
  if (keep && fs.existsSync(done)) { console.log(`logdir ${dir} (kept from an earlier run)`); return dir; }
  if (keep) { fs.rmSync(dir, { recursive: true, force: true }); fs.mkdirSync(dir, { recursive: true }); }
  const g0 = Date.now();
  execFileSync(gen, [dir, runs, steps], { stdio: 'inherit' });
  console.log(`generated ${runs} runs x ${steps} steps in ${Date.now() - g0} ms`);
  if (keep) fs.writeFileSync(done, '');
  return dir;
}

// Runs in the page before its own scripts: the time of the first drawn
// bands chart (polled each frame, so it works on any version of the page)
// and the long tasks of the main thread.
function probe() {
  window.__bench = { firstChart: null, longTasks: [] };
  try {
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__bench.longTasks.push([Math.round(e.startTime), Math.round(e.duration)]);
    }).observe({ type: 'longtask', buffered: true });
  } catch (e) { /* no long task API */ }
  const tick = () => {
    const c = window.__tfb && window.__tfb.charts && Object.values(window.__tfb.charts).find((x) => x && x.mode === 'bands' && x.runs > 0);
    if (c) { window.__bench.firstChart = performance.now(); return; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

function row(label, value, goal) {
  console.log(`  ${label.padEnd(52)} ${String(value).padStart(12)}${goal ? '   goal ' + goal : ''}`);
}

// ms from a change made in the page (fn, run there) to the next frame
// painted after it.
function untilPaint(page, fn, arg) {
  return page.evaluate(async ([src, a]) => {
    const f = new Function('a', 'return (' + src + ')(a)');
    const t = performance.now();
    await f(a);
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t;
  }, [fn.toString(), arg]);
}

T.run(async () => {
  const args = process.argv.slice(2);
  let url;
  let srv = null;
  if (args[0] === '--url') url = args[1];
  else {
    const [tfboard, gen, runs = '10000', steps = '200'] = args;
    if (!tfboard || !gen) { console.error('usage: bench_first_chart.js TFBOARD GEN_SWEEP_LOGDIR [RUNS [STEPS]] | --url URL'); process.exit(2); }
    const dir = logdirFor(gen, runs, steps);
    const t0 = Date.now();
    srv = await T.startServer(tfboard, dir);
    url = srv.url;
    await loaded(url);
    console.log(`tfboard: all data served after ${Date.now() - t0} ms (${runs} runs x ${steps} steps)`);
  }
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
  page.setDefaultTimeout(120000);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.addInitScript(probe);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  try {
    console.log('first screen:');
    // auto=0: the 30 s auto-reload would add its requests.
    await page.goto(url + '#tab=scalars&auto=0');
    await T.until(page, () => window.__bench.firstChart, null, 'a bands chart', 300000);
    const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    const first = await page.evaluate(() => ({
      ms: window.__bench.firstChart,
      chart: Object.values(window.__tfb.charts).find((x) => x && x.mode === 'bands' && x.runs > 0),
      nav: performance.getEntriesByType('navigation')[0].toJSON(),
      res: performance.getEntriesByType('resource').map((e) => ({ name: e.name, start: e.startTime, end: e.responseEnd, bytes: e.decodedBodySize })),
      longTasks: window.__bench.longTasks.slice(),
    }));
    row(`first chart (${first.chart.runs} runs, bands)`, `${Math.round(first.ms)} ms`, `<= ${GOAL_FIRST_CHART_MS} ms`);
    const before = requests.length;
    await page.waitForTimeout(2000);
    row('requests of the first screen (2 s after the chart)', requests.length, `< ${GOAL_REQUESTS}`);
    row('  of them /multirun', requests.filter((u) => u.includes('/multirun')).length);
    row('  made before the first chart', before);
    console.log('where the time to the first chart goes (ms from navigation start):');
    row('index.html received', `${Math.round(first.nav.responseEnd)} ms`);
    row('DOMContentLoaded', `${Math.round(first.nav.domContentLoadedEventEnd)} ms`);
    const shortName = (u) => { const x = new URL(u); return x.pathname.replace(/^\//, '') + (x.search ? '?…' : ''); };
    const assets = first.res.filter((r) => !r.name.includes('/data/') && r.end <= first.ms);
    const assetEnd = Math.max(0, ...assets.map((r) => r.end));
    row(`static files (${assets.length}, ${Math.round(assets.reduce((a, r) => a + r.bytes, 0) / 1024)} KiB)`, `done at ${Math.round(assetEnd)} ms`);
    for (const r of first.res.filter((x) => x.name.includes('/data/') && x.start <= first.ms)) {
      row(`${shortName(r.name)} (${(r.bytes / 1024).toFixed(0)} KiB)`, `${Math.round(r.start)} -> ${Math.round(r.end)}`);
    }
    row('main thread: script', `${Math.round(metrics.ScriptDuration * 1000)} ms`);
    row('main thread: layout + style', `${Math.round((metrics.LayoutDuration + metrics.RecalcStyleDuration) * 1000)} ms`);
    row('main thread: all tasks', `${Math.round(metrics.TaskDuration * 1000)} ms`);
    const lt = first.longTasks.filter(([s]) => s <= first.ms);
    row(`long tasks before the chart (${lt.length})`, `${lt.reduce((a, [, d]) => a + d, 0)} ms`);
    if (lt.length) console.log('    [start, ms]: ' + lt.map((x) => JSON.stringify(x)).join(' '));
    if (process.env.TFB_SHOT) { await page.screenshot({ path: process.env.TFB_SHOT }); console.log('  screenshot ' + process.env.TFB_SHOT); }

    console.log('fluidity:');
    const total = await page.evaluate(() => document.getElementById('runs-count').textContent);
    // A keystroke in the run filter: the list filters at once, the charts
    // follow after the filter's pause (its time is the selection's below).
    const key = await untilPaint(page, () => { const f = document.getElementById('run-filter'); f.focus(); f.value = '0$'; f.dispatchEvent(new Event('input', { bubbles: true })); });
    row(`run filter keystroke to repaint (${total} -> ${await page.evaluate(() => document.getElementById('runs-count').textContent)})`, `${key.toFixed(1)} ms`, `<= ${GOAL_FLUID_MS} ms`);
    const listScroll = await untilPaint(page, () => { const l = document.getElementById('run-list'); l.scrollTop += 5000; });
    row(`run list: scroll 5,000 px to repaint (${await page.$$eval('#run-list li', (x) => x.length)} rows in the DOM)`, `${listScroll.toFixed(1)} ms`, `<= ${GOAL_FLUID_MS} ms`);

    // A selection of a tenth of the runs, by name (issue 27's workflow):
    // none, then "select the matching" of the filter: thousands of names,
    // which the page sends once as a selection the server holds.
    await page.fill('#run-filter', '');
    await page.click('#runs-none');
    await page.fill('#run-filter', '0$');
    const putsBefore = requests.filter((u) => u.includes('/data/selection')).length;
    const t5 = Date.now();
    await page.click('#runs-all');
    const want = await page.evaluate(() => parseInt(/(\d+) \/ \d+ selected/.exec(document.getElementById('runs-count').textContent)[1], 10));
    await T.until(page, (n) => Object.values(window.__tfb.charts).some((x) => x && x.runs === n), want, `a chart over the ${want} selected runs`, 120000);
    row(`select the ${want} matching runs to their chart`, `${Date.now() - t5} ms`);
    row('  requests to /data/selection (held on the server)', requests.filter((u) => u.includes('/data/selection')).length - putsBefore);
    // And back to every run.
    await page.fill('#run-filter', '');
    const t6 = Date.now();
    await page.click('#runs-all');
    const nAll = await page.evaluate(() => parseInt(/\/ (\d+) selected/.exec(document.getElementById('runs-count').textContent)[1], 10));
    await T.until(page, (n) => Object.values(window.__tfb.charts).some((x) => x && x.runs === n), nAll, 'a chart over every run', 120000);
    row(`every run (${nAll}) again to its chart`, `${Date.now() - t6} ms`);

    const tag = first.chart && Object.entries(await page.evaluate(() => window.__tfb.charts)).find(([, v]) => v.mode === 'bands')[0].slice(8);
    const box = await page.$eval(`.card[data-tag="${tag}"] canvas`, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
    const t2 = Date.now();
    await page.mouse.click(box.x + box.w * 0.5, box.y + box.h * 0.6);
    try {
      await T.until(page, (t) => window.__tfb.pages.scalarsPick && window.__tfb.charts['scalars:' + t].lines.some((l) => l.role === 'highlight'), tag, 'the picked runs', 60000);
      row('click on the band to the picked runs drawn', `${Date.now() - t2} ms`);
    } catch (e) {
      // a figure missing, not the rest of them
      row('click on the band to the picked runs drawn', 'not in 60 s: ' + JSON.stringify(await page.evaluate(() => window.__tfb.pages.scalarsPick || null)));
    }
    // Parallel coordinates only where the runs logged hyperparameters.
    if (await page.$('#tab-hparams')) {
      const t7 = Date.now();
      await page.click('#tab-hparams');
      const pc = await T.until(page, () => { const p = window.__tfb.pages.parcoords; return p && p.runs > 0 ? p : null; }, null, 'parallel coordinates', 120000);
      row(`HParams tab to parallel coordinates (${pc.runs} runs)`, `${Date.now() - t7} ms`);
      const ax = pc.axes[0];
      const over = await page.$eval('#parcoords canvas.pc-over', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y }; });
      const t3 = Date.now();
      await page.mouse.move(over.x + ax.x, over.y + ax.top + (ax.bottom - ax.top) * 0.25);
      await page.mouse.down();
      await page.mouse.move(over.x + ax.x + 1, over.y + ax.top + (ax.bottom - ax.top) * 0.5, { steps: 10 });
      await page.mouse.up();
      await T.until(page, (k) => window.__tfb.pages.parcoords.brush[k], ax.key, 'the brush');
      const after = await page.evaluate(() => window.__tfb.pages.parcoords);
      row(`parcoords brush, 10 steps + commit (${after.kept} of ${after.runs} kept)`, `${Date.now() - t3} ms`);
      row('  its last draw', `${JSON.stringify(after.drawMs)} ms`, `<= ${GOAL_FLUID_MS} ms`);
    } else console.log('  no hyperparameters: no parallel coordinates to brush');
    const t8 = Date.now();
    await page.click('#tab-runs');
    await T.until(page, () => window.__tfb.pages.runs && window.__tfb.pages.runs.count > 0, null, 'runs table', 120000);
    const nRows = await page.evaluate(() => window.__tfb.pages.runs.count);
    row(`Runs tab to its table (${nRows} rows)`, `${Date.now() - t8} ms`);
    const ms = await page.evaluate(() => { const th = document.querySelector('.runs-table th[data-key="run"]'); const t = performance.now(); th.click(); return performance.now() - t; });
    row('runs table: sort by name', `${ms.toFixed(1)} ms`, `<= ${GOAL_FLUID_MS} ms`);
    const tScroll = await untilPaint(page, () => { const c = document.querySelector('.table-card.virtual'); c.scrollTop += 5000; });
    row(`runs table: scroll 5,000 px to repaint (${await page.$$eval('.runs-table tbody tr', (x) => x.length)} rows in the DOM)`, `${tScroll.toFixed(1)} ms`, `<= ${GOAL_FLUID_MS} ms`);
    if (page.problems.length) console.log('page problems: ' + page.problems.join('; '));
  } finally {
    await browser.close();
    if (srv) srv.stop();
  }
}, 1800000);
