// Browser test of the HParams page (issue 27 item 4, "HParams that reads
// true") against the real tfboard, on gen_charts_logdir's sweep:
//  - sweep/no_bs lacks batch_size: its line goes through that axis's
//    "missing" tick and still reaches the metric axes (drawn: the lines
//    canvas has ink at the tick);
//  - momentum is 0.9 in every run: one tick, in the middle of its axis;
//  - at 800 px no two labels (axis titles, tick labels) overlap;
//  - the scatter keeps sweep/diverged (its loss is NaN), marked on the
//    plot's edge, and puts the loss (0.012 .. 40) on a log axis.
'use strict';
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_page.js TFBOARD GEN_CHARTS_LOGDIR'); process.exit(2); }

// The parallel coordinates' summary once drawn with every run.
const pcSummary = (page) => T.until(page, () => {
  const p = window.__tfb.pages.parcoords;
  return p && p.runs === 9 ? p : null;
}, null, 'the parallel coordinates with 9 runs');

// Every label's box in page px: the axis titles (DOM) and the tick labels
// (drawn on the canvas; their boxes from the page's measureText).
const labelBoxes = (page) => page.evaluate(() => {
  const wrap = document.querySelector('#parcoords');
  const r = wrap.getBoundingClientRect();
  const titles = [...wrap.querySelectorAll('.pc-title')].map((e) => {
    const b = e.getBoundingClientRect();
    return { text: e.textContent, x0: b.left, x1: b.right, y0: b.top, y1: b.bottom };
  });
  const ticks = window.__tfb.pages.parcoords.tickBoxes.map((b) => ({ text: b.text, x0: r.left + b.x0, x1: r.left + b.x1, y0: r.top + b.y0, y1: r.top + b.y1 }));
  return { titles, ticks, width: r.width };
});
function overlaps(boxes) {
  const out = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5) out.push(`"${a.text}" / "${b.text}"`);
    }
  }
  return out;
}

async function main() {
  const logdir = T.makeLogdir(gen);
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  try {
    const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
    await T.openApp(page, srv.url, 'tab=hparams');

    await T.step('a run missing batch_size goes through its "missing" tick to the metrics', async () => {
      const pc = await pcSummary(page);
      const bs = pc.axes.find((a) => a.key === 'hp:batch_size');
      T.assert(bs, 'a batch_size axis: ' + pc.axes.map((a) => a.key));
      T.assertEq(bs.missing, 1, 'one run without batch_size');
      T.assert(bs.missingY > bs.bottom, `the missing tick (${bs.missingY}) below the axis's end (${bs.bottom})`);
      const route = pc.routes['sweep/no_bs'];
      T.assert(route, 'sweep/no_bs has a route: ' + Object.keys(pc.routes));
      T.assertEq(route.length, pc.axes.length, 'a point on every axis');
      const a = pc.axes.indexOf(bs);
      T.assertEq(route[a], [bs.x, bs.missingY], 'through the missing tick');
      const last = pc.axes[pc.axes.length - 1];
      T.assert(last.key.startsWith('metric:'), 'the last axis is a metric');
      T.assertEq(route[route.length - 1][0], last.x, 'it reaches the last metric axis');
      T.assert(route[route.length - 1][1] <= last.bottom, 'at a value, not a missing tick');
      // Drawn: the lines canvas has ink where the line meets the tick.
      const ink = await page.evaluate(([x, y]) => {
        const c = document.querySelector('#parcoords canvas.pc-lines');
        const k = c.width / c.clientWidth;
        const d = c.getContext('2d').getImageData(Math.round(x * k) - 2, Math.round(y * k) - 2, 5, 5).data;
        let m = 0;
        for (let i = 3; i < d.length; i += 4) m = Math.max(m, d[i]);
        return m;
      }, [bs.x, bs.missingY]);
      T.assert(ink > 0, 'a line is drawn into the missing tick');
      // The diverged run (loss NaN) goes through the loss axis's tick.
      const loss = pc.axes.find((x) => x.key === 'metric:loss');
      T.assert(loss.missing >= 1 && pc.routes['sweep/diverged'], 'sweep/diverged through the loss axis\'s missing tick');
    });

    await T.step('an axis of one value has it in the middle, one tick', async () => {
      const pc = await pcSummary(page);
      const m = pc.axes.find((a) => a.key === 'hp:momentum');
      T.assert(m.single, 'momentum is a one-value axis');
      T.assertEq(m.ticks.map((t) => t.label), ['0.9'], 'its one tick');
      T.assert(Math.abs(m.ticks[0].y - (m.top + m.bottom) / 2) < 1, `centred: ${m.ticks[0].y} vs ${(m.top + m.bottom) / 2}`);
    });

    await T.step('the scatter keeps the diverged run, marked, on a log loss axis', async () => {
      const hp = await T.until(page, () => {
        const p = window.__tfb.pages.hparams;
        return p && p.y === 'loss' && p.points.length ? p : null;
      }, null, 'the scatter of loss');
      T.assertEq(hp.scales, { x: 'logarithmic', y: 'logarithmic' }, 'log axes for the learning rate and the loss');
      T.assertEq(hp.diverged.map((d) => [d.run, d.value]), [['sweep/diverged', 'NaN']], 'the diverged run is drawn');
      T.assertEq(hp.points.length, 8, 'the 8 finite runs');
      const box = await page.evaluate(() => {
        const r = document.querySelector('.hp-scatter canvas').getBoundingClientRect();
        return { w: r.width, h: r.height };
      });
      const d = hp.diverged[0];
      T.assert(d.px > 0 && d.px < box.w && d.py > 0 && d.py < box.h / 4, 'marked at the top edge: ' + JSON.stringify(d));
      await page.evaluate(() => document.querySelector('.hp-scatter').scrollIntoView({ block: 'center' }));
      await T.screenshot(page, 'hparams_scatter_1440');
      await page.evaluate(() => window.scrollTo(0, 0));
    });

    await T.step('no two labels overlap at 1440 and at 800 px', async () => {
      await T.screenshot(page, 'hparams_1440');
      let b = await labelBoxes(page);
      T.assertEq(overlaps([...b.titles, ...b.ticks]), [], 'overlaps at 1440 px');
      await page.setViewportSize({ width: 800, height: 1000 });
      await T.until(page, (w) => {
        const p = window.__tfb.pages.parcoords;
        const wrap = document.querySelector('#parcoords');
        return p && wrap && wrap.clientWidth < w - 100 && p.tickBoxes.length ? true : null;
      }, 1440, 'redrawn at 800 px');
      await page.waitForTimeout(300);
      b = await labelBoxes(page);
      T.assertEq(overlaps([...b.titles, ...b.ticks]), [], 'overlaps at 800 px');
      // Every title names its axis (cut with an ellipsis by CSS, the full
      // name in its title attribute).
      const full = await page.evaluate(() => [...document.querySelectorAll('#parcoords .pc-title')].map((e) => e.title));
      T.assert(full.includes('weight_decay_regularisation_strength'), 'full names as titles: ' + full);
      await T.screenshot(page, 'hparams_800');
    });

    await T.step('no console error or failed request', async () => T.assertEq(page.problems, [], 'problems'));
  } finally {
    await browser.close();
    srv.stop();
  }
}

T.run(main);
