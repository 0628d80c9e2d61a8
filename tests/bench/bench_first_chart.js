// Browser side of the sweep benchmark (issue 18): a sweep of RUNS runs
// (default 10,000 x 200 steps, written by tests/webui/gen_sweep_logdir)
// served by tfboard, opened in headless Chromium. Prints, never asserts:
//   - the server's time until all data is served;
//   - time to the first chart (page load to a drawn bands chart);
//   - the requests of the first screen, and how many are /multirun;
//   - a click on the band (nearest runs) until the picked runs are drawn;
//   - a brush on the parallel coordinates (10 drag steps and the commit),
//     and a sort of the runs table.
// TFB_SHOT=FILE.png saves a screenshot of the first screen with the pick.
// usage: node bench_first_chart.js TFBOARD GEN_SWEEP_LOGDIR [RUNS [STEPS]]
//        node bench_first_chart.js --url http://127.0.0.1:PORT/ (a tfboard
//        already serving, e.g. bench_sweep.py --keep-serving)
// Needs playwright-core in tests/webui/node_modules (`npm ci` there) and
// Chromium; exits 77 (skip) without them, as the browser tests do.
'use strict';
const { execFileSync } = require('child_process');
const T = require('../webui/lib.js');

async function loaded(url) {
  const t0 = Date.now();
  for (;;) {
    const p = await (await fetch(url + 'data/plugin/core/progress')).json();
    if (p.done) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
  }
}

T.run(async () => {
  const args = process.argv.slice(2);
  let url;
  let srv = null;
  if (args[0] === '--url') url = args[1];
  else {
    const [tfboard, gen, runs = '10000', steps = '200'] = args;
    if (!tfboard || !gen) { console.error('usage: bench_first_chart.js TFBOARD GEN_SWEEP_LOGDIR [RUNS [STEPS]] | --url URL'); process.exit(2); }
    const dir = T.tmpdir('tfb-bench-sweep-');
    const g0 = Date.now();
    execFileSync(gen, [dir, runs, steps], { stdio: 'inherit' });
    console.log(`generated ${runs} runs x ${steps} steps in ${Date.now() - g0} ms`);
    const t0 = Date.now();
    srv = await T.startServer(tfboard, dir);
    url = srv.url;
    await loaded(url);
    console.log(`tfboard: all data served after ${Date.now() - t0} ms`);
  }
  const browser = await T.launch();
  const page = await T.newPage(browser);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  try {
    const t1 = Date.now();
    await page.goto(url + '#tab=scalars');
    const c = await T.until(page, () => Object.values(window.__tfb.charts).find((x) => x.mode === 'bands' && x.runs > 0) || null, null, 'a bands chart', 120000);
    console.log(`time to first chart: ${Date.now() - t1} ms (${c.runs} runs)`);
    await page.waitForTimeout(2000);
    console.log(`first screen: ${requests.length} requests, ${requests.filter((u) => u.includes('/multirun')).length} of them /multirun`);
    const tag = Object.keys(await page.evaluate(() => window.__tfb.charts)).map((k) => k.slice(8))[0];
    const box = await page.$eval(`.card[data-tag="${tag}"] canvas`, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
    const t2 = Date.now();
    await page.mouse.click(box.x + box.w * 0.5, box.y + box.h * 0.6);
    await T.until(page, (t) => window.__tfb.pages.scalarsPick && window.__tfb.charts['scalars:' + t].lines.some((l) => l.role === 'highlight'), tag, 'the picked runs', 60000);
    console.log(`click on the band to the picked runs drawn: ${Date.now() - t2} ms`);
    if (process.env.TFB_SHOT) await page.screenshot({ path: process.env.TFB_SHOT });
    // Parallel coordinates only where the runs logged hyperparameters.
    if (await page.$('#tab-hparams')) {
      await page.click('#tab-hparams');
      const pc = await T.until(page, () => { const p = window.__tfb.pages.parcoords; return p && p.runs > 0 ? p : null; }, null, 'parallel coordinates', 60000);
      const ax = pc.axes[0];
      const over = await page.$eval('#parcoords canvas.pc-over', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y }; });
      const t3 = Date.now();
      await page.mouse.move(over.x + ax.x, over.y + ax.top + (ax.bottom - ax.top) * 0.25);
      await page.mouse.down();
      await page.mouse.move(over.x + ax.x + 1, over.y + ax.top + (ax.bottom - ax.top) * 0.5, { steps: 10 });
      await page.mouse.up();
      await T.until(page, (k) => window.__tfb.pages.parcoords.brush[k], ax.key, 'the brush');
      const after = await page.evaluate(() => window.__tfb.pages.parcoords);
      console.log(`parallel coordinates brush (10 steps + commit): ${Date.now() - t3} ms; ${after.kept} of ${after.runs} runs kept; last draw ${JSON.stringify(after.drawMs)} ms`);
    } else console.log('no hyperparameters: no parallel coordinates to brush');
    await page.click('#tab-runs');
    await T.until(page, () => window.__tfb.pages.runs && window.__tfb.pages.runs.count > 0, null, 'runs table', 60000);
    const ms = await page.evaluate(() => { const th = document.querySelector('.runs-table th[data-key="run"]'); const t = performance.now(); th.click(); return performance.now() - t; });
    console.log(`runs table: sort ${await page.evaluate(() => window.__tfb.pages.runs.count)} rows by name: ${ms.toFixed(1)} ms`);
    if (page.problems.length) console.log('page problems: ' + page.problems.join('; '));
  } finally {
    await browser.close();
    if (srv) srv.stop();
  }
}, 600000);
