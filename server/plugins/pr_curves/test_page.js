// Browser test of the PR Curves tab (issue 22), on curves written with
// tfb_pr_curve: one card per tag with a curve per run, a step slider, and
// the threshold and counts of a hovered point.
'use strict';
const fs = require('fs');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_pr_curves.js TFBOARD GEN_IMAGES_LOGDIR'); process.exit(2); }

T.run(async () => {
  const logdir = T.tmpdir('tfb-pr-');
  require('child_process').execFileSync(gen, [logdir, '2'], { stdio: 'inherit' });
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  const shots = [];
  try {
    await T.step('a card per tag, a curve per run, at the last step', async () => {
      await T.openApp(page, srv.url, 'tab=pr_curves');
      await T.until(page, () => window.__tfb.pages.pr_curves && window.__tfb.pages.pr_curves['pr/class0'], null, 'pr card');
      const st = await page.evaluate(() => {
        const c = window.__tfb.charts['pr_curves:pr/class0'];
        return { runs: c.data.datasets.map((d) => d.label), points: c.data.datasets.map((d) => d.data.length), sel: window.__tfb.pages.pr_curves['pr/class0'] };
      });
      // 11 thresholds a curve, less those nothing reaches (TP + FP = 0:
      // no precision to draw)
      const want = await page.evaluate(async () => {
        const out = [];
        for (const run of ['alpha', 'beta']) {
          const l = (await (await fetch('data/plugin/pr_curves/pr_curves?run=' + run + '&tag=pr%2Fclass0')).json())[run];
          const e = l[l.length - 1];
          out.push(e.true_positives.filter((tp, j) => tp + e.false_positives[j] > 0).length);
        }
        return out;
      });
      T.assert(want.every((n) => n >= 5 && n <= 11), 'defined points: ' + want);
      T.assertEq(st, { runs: ['alpha', 'beta'], points: want, sel: { step: 20, runs: [20, 20] } }, 'chart');
      T.assertEq(await page.$$eval('.pr-card', (c) => c.length), 1, 'one card');
    });

    await T.step('the step slider shows each run at that step', async () => {
      await page.$eval('.pr-slider', (s) => { s.value = '1'; s.dispatchEvent(new Event('input')); });
      const sel = await page.evaluate(() => window.__tfb.pages.pr_curves['pr/class0']);
      T.assertEq(sel, { step: 10, runs: [10, 10] }, 'step 10');
      T.assertEq(await page.$eval('.pr-step', (e) => e.textContent), 'step 10', 'label');
    });

    await T.step('hover shows the threshold and the counts', async () => {
      const pos = await page.evaluate(() => {
        const c = window.__tfb.charts['pr_curves:pr/class0'];
        const el = c.getDatasetMeta(1).data[5];
        const r = c.canvas.getBoundingClientRect();
        return { x: r.left + el.x, y: r.top + el.y };
      });
      await page.mouse.move(pos.x, pos.y);
      const text = await T.until(page, () => { const t = document.querySelector('.pr-hover').textContent; return /threshold/.test(t) && t; }, null, 'hover text');
      // The nearest point under the mouse (curves may cross there).
      T.assert(/^(alpha|beta) step 10: threshold [01]\.\d{3}, TP \d+, FP \d+, TN \d+, FN \d+$/.test(text), text);
      const counts = text.match(/\d+/g).slice(-4).map(Number);
      T.assertEq(counts.reduce((a, b) => a + b, 0), 200, 'TP+FP+TN+FN = the 200 examples');
      shots.push(await T.screenshot(page, 'pr_curves_tab'));
      T.assertEq(page.problems, [], 'no errors');
    });
  } finally {
    await browser.close();
    srv.stop();
    const out = '/work/shots/media';
    if (fs.existsSync(out)) for (const s of shots) fs.copyFileSync(s, path.join(out, path.basename(s)));
  }
});
