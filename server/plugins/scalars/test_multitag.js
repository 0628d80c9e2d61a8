// Browser test of the Scalars page's multi-tag charts (issue 27 item 3,
// "charts a user would open first") against the real tfboard, on
// gen_charts_logdir's runs whose custom-scalars layout holds a chart of
// loss and accuracy and one of 25 gradient tags:
//  - the layout's charts are in their own section, collapsed at first: the
//    first view is the one-tag cards;
//  - the tag filter applies to them (a chart whose tags it hides leaves);
//  - loss and accuracy get an axis each (accuracy on the right);
//  - the 25-tag chart's legend is capped ("+N more") and no taller than
//    its plot;
//  - a run has one colour in the sidebar, a one-tag chart and a multi-tag
//    chart, before and after a run filter and a tag filter are typed.
'use strict';
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_multitag.js TFBOARD GEN_CHARTS_LOGDIR'); process.exit(2); }

const LOSS_ACC = 'multi:^(loss|accuracy)$';
const chart = (page, key) => page.evaluate((k) => window.__tfb.charts['scalars:' + k] || null, key);
const gradKey = (page) => page.evaluate(() => Object.keys(window.__tfb.charts).find((k) => k.startsWith('scalars:multi:^(grad')) || null);

// (The one-tag card used is accuracy: the first section, in view.)
// Colours as the page shows them: the sidebar's swatch of each visible run
// (computed background, rgb()) and a chart's run -> colour (hex).
const sidebarColors = (page) => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#run-list li')].filter((li) => li.querySelector('.swatch'))
  .map((li) => [li.dataset.run, getComputedStyle(li.querySelector('.swatch')).backgroundColor])));
function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}
// run -> colour of a chart summary: a one-tag chart's runs are run names,
// a multi-tag chart's are "run · tag".
function chartColors(c) {
  const out = {};
  for (const [label, r] of Object.entries(c.runs)) {
    const run = label.split(' · ')[0];
    if (out[run] && out[run] !== r.color) out[run] = 'two colours: ' + out[run] + ' and ' + r.color;
    else out[run] = r.color;
  }
  return out;
}

async function openMulti(page) {
  await page.click('#multi-section > summary');
  await page.evaluate(() => document.querySelector('#multi-section').scrollIntoView());
}

async function main() {
  const logdir = T.makeLogdir(gen);
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  try {
    const page = await T.newPage(browser, { viewport: { width: 1440, height: 1000 } });
    await T.openApp(page, srv.url, 'tab=scalars');

    await T.step('the custom-scalars layout is applied into its own section, collapsed at first', async () => {
      await T.until(page, (k) => {
        const s = document.querySelector('#multi-section');
        return s && window.__tfb.charts['scalars:accuracy'] ? s.querySelectorAll('.card').length : 0;
      }, LOSS_ACC, 'the multi-tag section and the accuracy card');
      const sec = await page.evaluate(() => {
        const s = document.querySelector('#multi-section');
        return { open: s.open, cards: [...s.querySelectorAll('.card')].map((c) => c.dataset.tag), h: s.getBoundingClientRect().height };
      });
      T.assert(!sec.open, 'the multi-tag section is collapsed at first');
      T.assert(sec.cards.includes(LOSS_ACC), 'the loss/accuracy chart is in it: ' + sec.cards);
      T.assert(sec.h < 80, 'collapsed: only its summary row shows (' + sec.h + ' px)');
      await T.screenshot(page, 'multitag_first_view');
    });

    await T.step('loss and accuracy: an axis each, accuracy on the right; lines in the runs\' colours', async () => {
      await openMulti(page);
      const c = await T.until(page, (k) => {
        const x = window.__tfb.charts['scalars:' + k];
        return x && x.runs && Object.keys(x.runs).length >= 16 ? x : null;
      }, LOSS_ACC, 'the loss/accuracy chart drawn');
      T.assert(c.scales.y1, 'a right axis is shown: ' + JSON.stringify(c.scales));
      T.assertEq(c.scales.titles, { y: 'loss', y1: 'accuracy' }, 'axis titles');
      for (const [label, r] of Object.entries(c.runs)) {
        T.assertEq(r.axis, label.endsWith('· accuracy') ? 'y1' : 'y', 'axis of ' + label);
      }
      // Accuracy (0.5 .. 0.8) fills its own axis rather than a band at the
      // bottom of the loss's.
      T.assert(c.scales.y1[0] >= 0.4 && c.scales.y1[1] <= 1, 'accuracy axis range ' + c.scales.y1);
      await page.evaluate((k) => document.querySelector(`[data-tag="${k}"]`).scrollIntoView({ block: 'center' }), LOSS_ACC);
      await T.screenshot(page, 'multitag_two_axes');
    });

    await T.step('the exported view draws the two axes too', async () => {
      await page.click('#settings-btn');
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-view')]);
      await page.keyboard.press('Escape');
      const file = require('path').join(T.tmpdir('tfb-export-'), 'view.html');
      await dl.saveAs(file);
      const ctx = await page.context().browser().newContext();
      const off = await ctx.newPage();
      await off.route('**/*', (r) => (/^(file|data):/.test(r.request().url()) ? r.continue() : r.abort()));
      await off.goto('file://' + file);
      const ex = await T.until(off, () => window.__export && window.__export.ready ? window.__export : null, null, 'the export drawn');
      const c = ex.charts.find((x) => x.title.includes('loss, accuracy'));
      T.assert(c, 'the loss/accuracy chart is exported: ' + ex.charts.map((x) => x.title));
      T.assert(c.y1 && c.y1.range[0] >= 0.4 && c.y1.range[1] <= 1, 'its accuracy axis: ' + JSON.stringify(c.y1));
      T.assertEq([c.y1.position, c.y1.title], ['right', 'accuracy'], 'on the right, titled');
      await ctx.close();
    });

    await T.step('the 25-tag chart: legend capped with "+N more", no taller than its plot', async () => {
      const key = await T.until(page, () => {
        const k = Object.keys(window.__tfb.charts).find((x) => x.startsWith('scalars:multi:^(grad'));
        return k && window.__tfb.charts[k].legend ? k : null;
      }, null, 'the gradients chart drawn');
      const tag = key.slice('scalars:'.length);
      const box = await page.evaluate((t) => {
        const card = document.querySelector(`[data-tag="${CSS.escape(t)}"]`);
        const leg = card.querySelector('.chart-legend');
        const more = leg.querySelector('.legend-more');
        return { legend: leg.getBoundingClientRect().height, plot: card.querySelector('.chart-wrap').getBoundingClientRect().height,
          more: more ? more.textContent : null, items: leg.querySelectorAll('.legend-item').length };
      }, tag);
      T.assert(box.more && /^\+\d+ more$/.test(box.more), '"+N more": ' + box.more);
      T.assertEq(box.items + parseInt(box.more.slice(1), 10), 25, 'shown + more = the 25 tags');
      T.assert(box.legend <= box.plot, `legend ${box.legend} px <= plot ${box.plot} px`);
      const c = await chart(page, tag);
      T.assertEq(c.legend.items, 25, 'legend entries');
      T.assert(!c.scales.y1, 'one unit (grad): one axis');
    });

    let colors;
    await T.step('a run has one colour in the sidebar, a one-tag chart and a multi-tag chart', async () => {
      const side = await sidebarColors(page);
      const one = chartColors(await chart(page, 'accuracy'));
      const multi = chartColors(await chart(page, LOSS_ACC));
      T.assertEq(Object.keys(one).sort(), Object.keys(side).sort(), 'the accuracy card draws the sidebar\'s runs');
      for (const run of Object.keys(side)) {
        T.assertEq(hexToRgb(one[run]), side[run], 'accuracy card colour of ' + run);
        T.assertEq(hexToRgb(multi[run]), side[run], 'multi-tag colour of ' + run);
      }
      // Different runs, different colours (9 runs, a 20-colour palette).
      T.assertEq(new Set(Object.values(side)).size, Object.keys(side).length, 'distinct colours');
      colors = side;
    });

    await T.step('typing a run filter reshuffles no colour', async () => {
      await page.fill('#run-filter', 'lr=0.0|diverged');
      await T.until(page, () => {
        const c = window.__tfb.charts['scalars:multi:^(loss|accuracy)$'];
        return c && Object.keys(c.runs).every((l) => /lr=0\.0|diverged/.test(l)) && Object.keys(c.runs).length > 0;
      }, null, 'the multi-tag chart redrawn for the filtered runs');
      const side = await sidebarColors(page);
      const multi = chartColors(await chart(page, LOSS_ACC));
      const one = chartColors(await chart(page, 'accuracy'));
      T.assert(Object.keys(side).length >= 3 && Object.keys(side).length < Object.keys(colors).length, 'the filter keeps some runs: ' + Object.keys(side));
      for (const run of Object.keys(side)) {
        T.assertEq(side[run], colors[run], 'sidebar colour of ' + run + ' unchanged');
        T.assertEq(hexToRgb(multi[run]), colors[run], 'multi-tag colour of ' + run + ' unchanged');
        T.assertEq(hexToRgb(one[run]), colors[run], 'accuracy card colour of ' + run + ' unchanged');
      }
      await page.fill('#run-filter', '');
    });

    await T.step('the tag filter applies to the multi-tag charts', async () => {
      await page.fill('#tag-filter', 'accuracy');
      const got = await T.until(page, () => {
        const s = document.querySelector('#multi-section');
        const cards = s ? [...s.querySelectorAll('.card')].map((c) => c.dataset.tag) : null;
        const c = window.__tfb.charts['scalars:multi:^(loss|accuracy)$'];
        return cards && cards.length === 1 && c && Object.keys(c.runs).length && Object.keys(c.runs).every((l) => l.endsWith('· accuracy')) ? { cards, c } : null;
      }, null, 'only the accuracy lines left, the gradients chart gone');
      T.assertEq(got.cards, [LOSS_ACC], 'the 25-tag chart has no tag matching "accuracy"');
      T.assert(!got.c.scales.y1, 'one unit left: one axis');
      const side = await sidebarColors(page);
      for (const [run, col] of Object.entries(chartColors(got.c))) T.assertEq(hexToRgb(col), side[run], 'colour of ' + run + ' after the tag filter');
      await page.fill('#tag-filter', 'nothing-matches-this');
      await T.until(page, () => document.querySelectorAll('#multi-section .card').length === 0, null, 'no multi-tag chart left');
      T.assert(await gradKey(page) === null, 'the gradients chart is gone');
      await page.fill('#tag-filter', '');
    });

    await T.step('no console error or failed request', async () => T.assertEq(page.problems, [], 'problems'));
  } finally {
    await browser.close();
    srv.stop();
  }
}

T.run(main);
