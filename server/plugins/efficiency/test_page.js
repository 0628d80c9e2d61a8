// Browser test of the Efficiency tab (issue 29) on the logdir of
// eff_page_gen.py: the run with a known peak shows MFU 40 % with its source
// and dtype, the goodput stacked bar (one bar per run, six parts, exact
// seconds on hover) and the per-step charts; the unknown device says
// "peak unknown" (no MFU chart) and "power×time"; a rank's collectives
// table marks the all-reduce far below a 100 GB/s link; the Ranks table
// gains MFU, energy and bus bandwidth; a logdir without step timing shows
// the empty state. Screenshots at 1440 and 800 px, light and dark
// (TFB_SHOTS=DIR keeps them there too).
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_page.js TFBOARD'); process.exit(2); }

async function shot(page, name) {
  const dir = process.env.TFB_SHOTS;
  if (dir) {
    fs.mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, name + '.png'), fullPage: true });
  }
  return T.screenshot(page, name);
}

const effOf = (page, run) => T.until(page, (r) => {
  const e = window.__tfb.pages.efficiency;
  return e && e.run === r && e;
}, run, 'the efficiency page of ' + run, 30000);

T.run(async () => {
  const logdir = T.tmpdir('tfb-webui-eff-');
  execFileSync('python3', [path.join(__dirname, 'eff_page_gen.py'), logdir], { stdio: 'inherit', timeout: 60000 });
  const empty = T.tmpdir('tfb-webui-eff-empty-');
  execFileSync('python3', ['-c', 'import sys; sys.path.insert(0, sys.argv[1]); import eff_page_gen as eff_gen, os; ' +
    'eff_gen.write_run(os.path.join(sys.argv[2], "plain"), [(eff_gen.T0 + 1 + s, s, eff_gen.scalars_summary([("train/loss", 1.0)])) for s in range(3)])',
  __dirname, empty], { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir, ['--grid_gco2_per_kwh', '400', '--link_gbps', '100']);
  const srvEmpty = await T.startServer(tfboard, empty);
  const browser = await T.launch();
  try {
    for (const [width, scheme] of [[1440, 'light'], [800, 'light'], [1440, 'dark'], [800, 'dark']]) {
      const page = await T.newPage(browser, { viewport: { width, height: 1100 }, colorScheme: scheme });
      const tag = `${width}_${scheme}`;
      await T.step(`${tag}: a known peak: MFU, goodput bar, series`, async () => {
        await T.openApp(page, srv.url, 'tab=efficiency&run=eff_known');
        const e = await effOf(page, 'eff_known');
        T.assertEq(e.mfu, 40, 'MFU = 400 / 1000 TFLOP/s');
        T.assert(e.notes.some((n) => n.includes('opts')) && e.notes.includes('bf16'), 'notes: ' + e.notes);
        T.assertEq(e.steps, 20, 'one row a step');
        T.assert(e.peakKnown, 'the MFU chart is drawn');
        const stat = await page.textContent('#efficiency-mfu');
        T.assert(stat.includes('40') && stat.includes('1000 TFLOP/s peak (opts)'), 'MFU stat: ' + stat);
        const energy = await page.textContent('#efficiency-energy');
        T.assert(energy.includes('1400 J') && energy.includes('gCO2'), 'energy: ' + energy);
        // The goodput bar: one bar per run, six parts, exact values on hover.
        const bar = await page.evaluate(() => {
          const c = window.Chart && window.Chart.getChart(document.getElementById('efficiency-goodput-bar'));
          return c && { labels: c.data.labels, sets: c.data.datasets.map((d) => d.label) };
        });
        T.assert(bar && bar.labels.includes('eff_known') && bar.labels.includes('eff_unknown'), 'bars: ' + JSON.stringify(bar));
        T.assertEq(bar.sets, ['Productive steps', 'Input wait', 'Exposed comm', 'Before first step', 'Gaps between steps', 'Checkpoints'], 'parts');
        if (width === 1440 && scheme === 'light') {
          const box = await page.locator('#efficiency-goodput-bar').boundingBox();
          const i = bar.labels.indexOf('eff_known');
          const y = box.y + box.height * 0.2 + ((box.height * 0.6) / bar.labels.length) * (i + 0.5);
          await page.mouse.move(box.x + box.width * 0.3, y);
          await page.waitForTimeout(300);
          const tip = await page.evaluate(() => {
            const c = window.Chart.getChart(document.getElementById('efficiency-goodput-bar'));
            const a = c.tooltip && c.tooltip.getActiveElements();
            return a && a.length ? c.tooltip.body.map((b) => b.lines.join(' ')).join('|') : '';
          });
          T.assert(/ s \(.*% of .* s\)/.test(tip), 'tooltip with seconds and share: ' + tip);
        }
        await shot(page, `efficiency_known_${tag}`);
      });
      await T.step(`${tag}: unknown device: peak unknown, power×time`, async () => {
        await page.selectOption('#efficiency-run', 'eff_unknown');
        const e = await effOf(page, 'eff_unknown');
        T.assertEq(e.mfu, null, 'no MFU');
        T.assert(e.notes.includes('peak unknown') && e.notes.includes('bf16 assumed'), 'notes: ' + e.notes);
        T.assert(await page.isVisible('#efficiency-peak-unknown'), 'the MFU chart says peak unknown');
        const stat = await page.textContent('#efficiency-mfu');
        T.assert(stat.includes('peak unknown'), 'MFU stat: ' + stat);
        T.assert((await page.textContent('#efficiency-runs')).includes('power×time'), 'power×time said in the table');
      });
      await T.step(`${tag}: collectives far below the link are marked`, async () => {
        await page.selectOption('#efficiency-run', 'effjob/rank-00000');
        const e = await effOf(page, 'effjob/rank-00000');
        T.assert(e.collectives >= 1 && e.below >= 1, 'rows ' + e.collectives + ', below ' + e.below);
        const t = await page.textContent('#efficiency-collectives');
        T.assert(t.includes('all_reduce') && t.includes('far below the link'), 'table: ' + t);
        await shot(page, `efficiency_collectives_${tag}`);
      });
      await T.step(`${tag}: the Ranks table gains MFU, energy and bus bandwidth`, async () => {
        await T.openApp(page, srv.url, 'tab=ranks');
        await T.until(page, () => window.__tfb.pages.ranks && window.__tfb.pages.ranks.job === 'effjob', null, 'the ranks page');
        const head = await page.textContent('#ranks-table thead');
        T.assert(head.includes('MFU') && head.includes('Energy J') && head.includes('Bus GB/s'), 'headers: ' + head);
        const body = await page.textContent('#ranks-table tbody');
        T.assert(body.includes('45 %') && body.includes('35 %'), 'MFU per rank: ' + body);
        await shot(page, `ranks_efficiency_${tag}`);
      });
      await T.step(`${tag}: no selected run with step timing: the empty state`, async () => {
        await T.openApp(page, srv.url, 'tab=efficiency&runFilter=' + encodeURIComponent('^plain$'));
        await T.until(page, () => window.__tfb.pages.efficiency && window.__tfb.pages.efficiency.runs === 0, null, 'the empty state');
        T.assert((await page.textContent('#efficiency-empty')).includes('No selected run has step timing'), 'empty text');
        // A logdir where no run has it: no tab, and the bar names it among
        // the dashboards without data.
        await T.openApp(page, srvEmpty.url, 'tab=efficiency');
        T.assert(!(await page.$('#tab-efficiency')), 'no Efficiency tab without data');
        T.assert((await page.getAttribute('#tabs-off', 'title')).includes('Efficiency'), 'named as without data');
      });
      if (width === 1440 && scheme === 'light') {
        await T.step('the html report and compare pages draw the efficiency sections', async () => {
          const html = path.join(T.tmpdir('tfb-webui-eff-report-'), 'report.html');
          execFileSync(tfboard, ['report', '--logdir', logdir, '--run', '^eff_', '--format', 'html', '--output', html, '--quiet'], { timeout: 120000 });
          await page.goto('file://' + html);
          await T.until(page, () => document.body.getAttribute('data-rendered') === '1', null, 'the report drawn');
          const text = await page.textContent('main');
          T.assert(text.includes('Efficiency') && text.includes('40 % of 1000 TFLOP/s') && text.includes('peak unknown'), 'report: ' + text.slice(0, 300));
          const cmp = path.join(path.dirname(html), 'compare.html');
          execFileSync(tfboard, ['report', '--logdir', logdir, '--compare', 'eff_known', 'eff_unknown', '--format', 'html', '--output', cmp, '--quiet'], { timeout: 120000 });
          await page.goto('file://' + cmp);
          await T.until(page, () => document.getElementById('runs') && document.getElementById('runs').textContent.includes('Efficiency'), null, 'the compare page drawn');
          const ct = await page.textContent('#runs');
          T.assert(ct.includes('MFU %') && ct.includes('peak unknown') && ct.includes('J/token'), 'compare: ' + ct.slice(0, 300));
          await shot(page, 'efficiency_compare_report');
        });
      }
      T.assertEq(page.problems, [], 'no console errors or failed requests');
      await page.context().close();
    }
  } finally {
    await browser.close();
    srv.stop();
    srvEmpty.stop();
  }
});
