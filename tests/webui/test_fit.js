// Issue 27, "the last mile" of the page, on the demo (examples/demo.sh with
// NO_SERVE=1, as test_newcomer.js) at 1440 and 800 px, with bounding boxes
// instead of eyes:
//  - tooltips at the cursor: the GPU timeline's and a band chart's (a
//    sweep of more than 200 runs from gen_sweep_logdir) lie within
//    NEAR_PX of the pointer, never under it, inside the window;
//  - the ⤓ download menu closes on a click outside, Escape, a filter
//    change and a tab change; the NaN banner's × keeps it dismissed
//    across a reload until the selected runs change;
//  - tables that fit: the Runs table's Start ... Max headers, Ranks' "vs
//    median" and the Alerts feed's "What" inside the window; durations
//    are not "0.0s";
//  - tabs by width: at 1440 px HParams, Compare, PR Curves and Alerts are
//    in the bar; a tab with a badge never goes under "More";
//  - a section of one card: the card spans the row;
//  - the Ranks heat map has HEAT_TICKS_MIN to HEAT_TICKS_MAX step labels;
//    no GPU time tick reads negative;
//  - words: the GPU idle bar's legend says "% of idle (% of span)" and its
//    busy part is the busy share of the bar; the Alerts "When" is the
//    event's step and the wall time logged with it; Compare opens on the
//    best run against the one with the most alerts, then on the user's
//    last pick.
// TFB_DEMO_LOGDIR=DIR uses a demo logdir written before (UI work without
// running demo.sh again; the test adds a run "diverge_again" to it);
// TFB_SHOTS=DIR keeps screenshots there.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('./lib.js');

const [tfboard, genSweep] = process.argv.slice(2);
if (!tfboard || !genSweep) { console.error('usage: test_fit.js TFBOARD GEN_SWEEP_LOGDIR'); process.exit(2); }
const EX = path.join(process.env.TFB_BUILD_ROOT || '', 'examples');
const SRC = process.env.TFB_SOURCE_ROOT || path.join(__dirname, '..', '..');
const DEMO = process.env.TFB_DEMO_LOGDIR || '';
{
  for (const p of ['mlp_train', 'pipeline_train', 'ddp_train', 'spiky_train', 'gpu_sample_trace']) {
    if (!fs.existsSync(path.join(EX, p))) T.skip(path.join(EX, p) + ' not built');
  }
}
// A tooltip's nearest edge is at most this far from the pointer (core/
// tooltip.js puts it TIP_OFFSET = 12 px away; 4 px for rounding).
const NEAR_PX = 16;
// The band chart's runs: past the scalars page's 200-run line threshold.
const SWEEP_RUNS = 240;
const WIDTHS = [1440, 800];

function demoLogdir() {
  if (DEMO) return DEMO;
  const d = T.tmpdir('tfb-webui-fit-');
  execFileSync('bash', [path.join(SRC, 'examples', 'demo.sh')], {
    env: { ...process.env, NO_SERVE: '1', LOGDIR: d, BUILD: process.env.TFB_BUILD_ROOT },
    stdio: ['ignore', 'ignore', 'inherit'], timeout: 600000,
  });
  return d;
}

async function shot(page, name) {
  const dir = process.env.TFB_SHOTS;
  if (!dir) return T.screenshot(page, 'fit-' + name);
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name + '.png') });
  return null;
}

async function settle(page) {
  await page.waitForLoadState('networkidle', { timeout: 15000 }).catch(() => {});
  await page.waitForTimeout(300);
}

async function openTab(page, name) {
  const inMenu = await page.$('#tabs-more-menu #tab-' + name);
  if (inMenu) await page.click('#tabs-more-btn');
  await page.click('#tab-' + name);
  await T.until(page, (n) => !!document.querySelector('#tab-' + n + '.active'), name, 'tab ' + name + ' active');
  await settle(page);
}

// Where a shown tooltip is relative to the pointer at (x, y): its box, how
// far its nearest edge is from the pointer (the larger of the horizontal
// and vertical gaps), whether the pointer is inside it.
async function tipPlace(page, sel, x, y) {
  const b = await page.$eval(sel, (t) => { const r = t.getBoundingClientRect(); return { l: r.left, t: r.top, r: r.right, b: r.bottom, hidden: t.hidden }; });
  const dx = Math.max(b.l - x, 0, x - b.r), dy = Math.max(b.t - y, 0, y - b.b);
  return { ...b, dist: Math.max(dx, dy), under: x >= b.l && x <= b.r && y >= b.t && y <= b.b };
}

function checkTip(p, W, H, what) {
  T.assert(!p.hidden, what + ': the tooltip is shown');
  T.assert(p.dist <= NEAR_PX, `${what}: the tooltip is ${p.dist.toFixed(0)} px from the pointer (box ${JSON.stringify(p)}), want <= ${NEAR_PX}`);
  T.assert(!p.under, what + ': the tooltip is not under the pointer');
  T.assert(p.l >= 0 && p.t >= 0 && p.r <= W && p.b <= H, `${what}: the tooltip is inside the ${W}x${H} window: ${JSON.stringify(p)}`);
}

// Moves over the GPU timeline's lanes until its tooltip shows; returns the
// pointer's position or null.
async function hoverTimeline(page) {
  const cv = await page.$('#gpu-timeline');
  await cv.scrollIntoViewIfNeeded();
  const bb = await cv.boundingBox();
  for (let y = bb.y + 30; y < bb.y + bb.height - 4; y += 9) {
    for (let x = bb.x + bb.width * 0.3; x < bb.x + bb.width - 8; x += 31) {
      await page.mouse.move(x, y);
      if (await page.$eval('#timeline-wrap .chart-tooltip', (t) => !t.hidden)) return { x, y };
    }
  }
  return null;
}

// The right edge of header th (by its text) and the window's width.
async function headerRight(page, table, label) {
  return page.$$eval(table + ' thead th', (ths, l) => {
    const th = ths.find((t) => t.textContent.replace(/[\u00a0▲▼]/g, ' ').replace(/\s+/g, ' ').trim() === l);
    if (!th) return null;
    // What of it can be seen: its box cut by every scrolling ancestor.
    const r = th.getBoundingClientRect();
    let right = r.right, left = r.left;
    for (let p = th.parentElement; p; p = p.parentElement) {
      const cs = getComputedStyle(p);
      if (/(auto|scroll|hidden)/.test(cs.overflowX)) { const q = p.getBoundingClientRect(); right = Math.min(right, q.right); left = Math.max(left, q.left); }
    }
    return { right: r.right, visible: right - left >= r.width - 1, win: window.innerWidth };
  }, label);
}

T.run(async () => {
  const logdir = demoLogdir();
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  try {
    for (const W of WIDTHS) {
      const H = 900;
      const page = await T.newPage(browser, { viewport: { width: W, height: H } });
      await T.openApp(page, srv.url);
      await settle(page);

      await T.step(`${W}: tabs collapse by width; a badge is never under More; at 1440 HParams, Compare, PR Curves, Alerts are in the bar`, async () => {
        const bar = await page.$$eval('#tabs > .tab', (ts) => ts.map((t) => t.id.replace('tab-', '')));
        const menu = await page.$$eval('#tabs-more-menu .tab', (ts) => ts.map((t) => t.id.replace('tab-', '')));
        const badged = await page.$$eval('.tab', (ts) => ts.filter((t) => t.querySelector('.badge')).map((t) => t.id.replace('tab-', '')));
        T.assert(badged.includes('alerts'), 'the demo has alerts: ' + badged);
        for (const b of badged) T.assert(bar.includes(b), `${b} (badge) in the bar: bar ${bar}, menu ${menu}`);
        if (W === 1440) for (const t of ['hparams', 'compare', 'pr_curves', 'alerts']) T.assert(bar.includes(t), `${t} in the bar at 1440: bar ${bar}, menu ${menu}`);
        else T.assert(menu.length > 0, 'at 800 some tabs are under More');
        const clip = await page.$eval('#tabs', (n) => n.scrollWidth - n.clientWidth);
        T.assert(clip <= 1, 'no clipped tab bar: ' + clip);
        await shot(page, `tabs_${W}`);
      });

      await T.step(`${W}: GPU timeline tooltip at the pointer`, async () => {
        await openTab(page, 'gpu');
        await T.until(page, () => window.__tfb.pages.gpuTimeline && window.__tfb.pages.gpuTimeline.spans > 0, null, 'the timeline');
        const at = await hoverTimeline(page);
        T.assert(at, 'some span shows a tooltip');
        checkTip(await tipPlace(page, '#timeline-wrap .chart-tooltip', at.x, at.y), W, H, 'timeline');
        await shot(page, `tooltip_gpu_${W}`);
        // near the window's right edge it flips and stays inside
        const bb = await (await page.$('#gpu-timeline')).boundingBox();
        for (let x = bb.x + bb.width - 12; x > bb.x + bb.width * 0.6; x -= 13) {
          await page.mouse.move(x, at.y);
          if (await page.$eval('#timeline-wrap .chart-tooltip', (t) => !t.hidden)) {
            checkTip(await tipPlace(page, '#timeline-wrap .chart-tooltip', x, at.y), W, H, 'timeline at the right edge');
            break;
          }
        }
        await page.mouse.move(1, 1);
      });

      await T.step(`${W}: GPU idle bar: shares of idle and of the span; the bar is the span`, async () => {
        await page.$eval('#main', (m) => { m.scrollTop = 0; });
        const legend = await page.$$eval('#gpu-devices .legend span[data-part]', (ss) => ss.map((s) => s.textContent));
        const host = legend.find((t) => t.startsWith('Host wait'));
        T.assert(/^Host wait \d+ % of idle \(\d+(\.\d+)? % of span\)$/.test(host || ''), 'host wait label: ' + host);
        const g = await page.evaluate(() => {
          const bar = document.querySelector('#gpu-devices .hbar');
          const busy = bar.querySelector('.gpu-busy-part');
          const parts = [...bar.children].reduce((a, c) => a + c.getBoundingClientRect().width, 0);
          return { bar: bar.clientWidth, busy: busy ? busy.getBoundingClientRect().width : 0, parts };
        });
        const run = await page.evaluate(() => window.__tfb.pages.gpu && window.__tfb.pages.gpu.run);
        const dev = (await (await fetch(srv.url + 'data/plugin/gpu/summary?run=' + encodeURIComponent(run))).json()).devices[0];
        const frac = Number(dev.busy_ns) / Number(dev.span_ns);
        T.assert(Math.abs(g.busy / g.bar - frac) < 0.02, `busy part ${(g.busy / g.bar).toFixed(3)} of the bar, busy ${frac.toFixed(3)} of the span`);
        T.assert(g.parts <= g.bar + 1 && g.parts >= g.bar * 0.97, `the parts fill the span: ${g.parts} of ${g.bar}`);
        await shot(page, `idlebar_gpu_${W}`);
      });

      await T.step(`${W}: GPU time ticks never read negative`, async () => {
        await T.until(page, () => document.querySelector('#gpu-memory canvas'), null, 'the memory chart');
        await page.$eval('#gpu-memory', (m) => m.scrollIntoView());
        await settle(page);
        const ticks = await page.evaluate(() => {
          const out = (window.__tfb.pages.gpuTimeline.ticks || []).slice();
          for (const cv of document.querySelectorAll('#main canvas')) {
            const c = window.Chart.getChart(cv);
            if (c && c.scales.x && c.scales.x.type === 'linear') out.push(...c.scales.x.ticks.map((t) => String(t.label)));
          }
          return out;
        });
        T.assert(ticks.length > 5, 'ticks: ' + ticks);
        const neg = ticks.filter((t) => /^[-−]/.test(t));
        T.assertEq(neg, [], 'negative time ticks');
      });

      await T.step(`${W}: the NaN banner's × keeps it dismissed for this run set`, async () => {
        T.assert(await page.$eval('#banner', (b) => !b.hidden), 'the demo shows the banner');
        await page.click('#banner-close');
        T.assert(await page.$eval('#banner', (b) => b.hidden), 'dismissed');
        await page.reload();
        await page.waitForFunction(() => window.__tfb && window.__tfb.ready);
        await settle(page);
        T.assert(await page.$eval('#banner', (b) => b.hidden), 'still dismissed after a reload');
        await openTab(page, 'scalars');
        T.assert(await page.$eval('#banner', (b) => b.hidden), 'still dismissed on another tab');
      });

      await T.step(`${W}: the ⤓ menu closes on a click outside, Escape, a filter change, a tab change`, async () => {
        await T.openApp(page, srv.url, 'tab=scalars');
        await settle(page);
        const menuSel = '.card .menu-wrap .card-menu';
        const open = async () => {
          await page.click('.card .download');
          T.assert(await page.$eval(menuSel, (m) => !m.hidden), 'the menu opened');
        };
        const closed = (why) => page.$$eval(menuSel, (ms) => ms.every((m) => m.hidden)).then((c) => T.assert(c, 'closed by ' + why));
        await open();
        await shot(page, `menu_open_${W}`);
        await page.mouse.click(W - 40, H - 20);
        await closed('a click outside');
        await open();
        await page.keyboard.press('Escape');
        await closed('Escape');
        await open();
        await page.fill('#run-filter', 'sweep');
        await page.waitForTimeout(300);
        await closed('a filter change');
        await page.fill('#run-filter', '');
        await page.waitForTimeout(300);
        await open();
        await page.evaluate(() => { location.hash = location.hash.replace(/tab=[^&]*/, 'tab=runs'); });
        await T.until(page, () => !!document.querySelector('#tab-runs.active'), null, 'runs tab');
        await closed('a tab change');
      });

      await T.step(`${W}: a section of one card: the card spans the row`, async () => {
        await openTab(page, 'scalars');
        const g = await page.$$eval('.grid', (gs) => gs.filter((x) => x.offsetParent && x.querySelectorAll(':scope > .card').length === 1)
          .map((x) => [x.clientWidth, x.querySelector(':scope > .card').getBoundingClientRect().width]));
        T.assert(g.length > 0, 'the demo has a section of one card');
        for (const [gw, cw] of g) T.assert(cw >= gw - 2, `card ${cw} px in a ${gw} px row`);
      });

      await T.step(`${W}: runs table: Start ... Max in the window, durations not "0.0s"`, async () => {
        await openTab(page, 'runs');
        await shot(page, `runs_${W}`);
        if (W === 1440) {
          for (const l of ['Start', 'Duration', 'Points', 'Last', 'Min', 'Max']) {
            const r = await headerRight(page, '.runs-table', l);
            T.assert(r && r.visible && r.right <= r.win, `${l} visible at ${W}: ${JSON.stringify(r)}`);
          }
        }
        const d = await page.$$eval('.runs-table tbody tr[data-run^="sweep/"] td:nth-child(6)', (ts) => ts.map((t) => t.textContent.trim()));
        T.assert(d.length >= 6, 'sweep rows: ' + d);
        for (const x of d) T.assert(x !== '0.0s' && /^\d+(\.\d+)? ?(ns|µs|ms|s)$|\d+m \d+s$/.test(x), 'a duration: ' + x);
      });

      await T.step(`${W}: Ranks: "vs median" not clipped; heat-map step labels`, async () => {
        await openTab(page, 'ranks');
        await T.until(page, () => document.querySelector('#ranks-heatmap'), null, 'the heat map');
        const ticks = (await page.$eval('#ranks-heatmap', (c) => c.dataset.ticks || '')).split(',').filter((x) => x !== '').map(Number);
        T.assert(ticks.length >= 5 && ticks.length <= 8, 'heat-map step labels: ' + ticks);
        T.assert(ticks.every((t, i) => i === 0 || t > ticks[i - 1]), 'increasing: ' + ticks);
        if (W === 1440) {
          const r = await headerRight(page, '#ranks-table', 'vs median');
          T.assert(r && r.visible && r.right <= r.win, 'vs median visible: ' + JSON.stringify(r));
        }
        await page.$eval('#ranks-table', (t) => t.scrollIntoView());
        await shot(page, `ranks_${W}`);
      });

      await T.step(`${W}: Alerts: "What" in the window; "When" is the step and its logged time`, async () => {
        await openTab(page, 'alerts');
        await T.until(page, () => document.querySelectorAll('.alert-feed tbody tr').length > 0, null, 'the feed');
        const r = await headerRight(page, '.alert-feed', 'What');
        T.assert(r && r.visible && r.right <= r.win, 'What visible: ' + JSON.stringify(r));
        const feed = await (await fetch(srv.url + 'data/plugin/alerts/feed')).json();
        const spike = feed.events.find((e) => e.rule === 'loss_spike' && e.run === 'spiky');
        T.assert(spike && Number.isFinite(Number(spike.step_wall)), 'the spike has its step\'s wall time: ' + JSON.stringify(spike));
        const pts = await (await fetch(srv.url + 'data/plugin/scalars/scalars?run=spiky&tag=loss')).json();
        const at = pts.find((p) => p[1] === spike.step);
        T.assert(at && Math.abs(at[0] - spike.step_wall) < 1e-3, `step_wall ${spike.step_wall} is the wall time of step ${spike.step}: ${JSON.stringify(at)}`);
        const cells = await page.$$eval(`.alert-feed tbody tr[data-rule="loss_spike"][data-run="spiky"] td:first-child .alert-when`,
          (ws) => ws.map((w) => [w.firstChild.textContent, w.lastChild.textContent]));
        const want = await page.evaluate((t) => new Date(t * 1000).toLocaleString(), spike.step_wall).catch(() => null);
        const mine = cells.find((c) => c[0] === 'step ' + spike.step);
        T.assert(mine, `a When cell says step ${spike.step}: ${JSON.stringify(cells)}`);
        T.assert(mine[1] !== '–' && mine[1].length > 5, 'and its wall time: ' + JSON.stringify(mine) + ' ' + want);
        await shot(page, `alerts_${W}`);
      });

      await page.close();
    }

    await T.step('Compare opens on the best run against the one with the most alerts, then on the last pick', async () => {
      const page = await T.newPage(browser, { viewport: { width: 1440, height: 900 } });
      await T.openApp(page, srv.url, 'tab=compare');
      await T.until(page, () => window.__tfb.pages.compare && window.__tfb.pages.compare.b, null, 'compare drawn');
      const [a, b] = await page.evaluate(() => [window.__tfb.pages.compare.a, window.__tfb.pages.compare.b]);
      T.assertEq(b, 'diverge', 'B: the run with the most alerts');
      T.assert(/^sweep\//.test(a), 'A: the best run like it (a sweep run): ' + a);
      const sums = await (await fetch(srv.url + 'data/plugin/scalars/summary?tag=loss')).json();
      const sweep = Object.keys(sums).filter((r) => r.startsWith('sweep/')).sort((x, y) => Number(sums[x].last) - Number(sums[y].last));
      T.assertEq(a, sweep[0], 'the sweep run with the lowest last loss');
      await shot(page, 'compare_1440');
      await page.selectOption('#compare-a', 'spiky');
      await T.until(page, () => window.__tfb.pages.compare.a === 'spiky', null, 'the pick drawn');
      await T.openApp(page, srv.url, 'tab=compare');
      await T.until(page, () => window.__tfb.pages.compare && window.__tfb.pages.compare.a === 'spiky' && window.__tfb.pages.compare.b === 'diverge', null, 'the last pick kept (localStorage)');
      await page.close();
    });

    await T.step('the dismissed NaN banner comes back when the set of NaN runs changes', async () => {
      const page = await T.newPage(browser, { viewport: { width: 1440, height: 900 } });
      await T.openApp(page, srv.url);
      await settle(page);
      await page.click('#banner-close');
      await page.reload();
      await page.waitForFunction(() => window.__tfb && window.__tfb.ready);
      await settle(page);
      T.assert(await page.$eval('#banner', (b) => b.hidden), 'dismissed');
      // a second run diverges (the demo's diverge, under another name)
      execFileSync(path.join(EX, 'mlp_train'), ['--logdir', logdir, '--name', 'diverge_again', '--steps', '100', '--hist-every', '1000', '--lr', '5'],
        { stdio: 'ignore', timeout: 120000 });
      await T.until(page, () => { document.getElementById('reload').click(); return !document.getElementById('banner').hidden; }, null, 'the banner back', 30000);
      await page.close();
    });

    await T.step(`band chart (${SWEEP_RUNS} runs): its tooltip at the pointer`, async () => {
      const d = T.tmpdir('tfb-webui-fit-sweep-');
      execFileSync(genSweep, [d, String(SWEEP_RUNS), '50'], { stdio: 'ignore', timeout: 120000 });
      const s2 = await T.startServer(tfboard, d);
      try {
        for (const W of WIDTHS) {
          const page = await T.newPage(browser, { viewport: { width: W, height: 900 } });
          await T.openApp(page, s2.url, 'tab=scalars');
          await T.until(page, () => document.querySelector('.card .chart-wrap canvas'), null, 'a band chart');
          await settle(page);
          const cv = await page.$('.card .chart-wrap canvas');
          const bb = await cv.boundingBox();
          const at = { x: bb.x + bb.width * 0.5, y: bb.y + bb.height * 0.5 };
          await page.mouse.move(at.x, at.y);
          await T.until(page, () => [...document.querySelectorAll('.card .chart-tooltip')].some((t) => !t.hidden), null, 'the band tooltip');
          const sel = await page.evaluate(() => {
            const ts = [...document.querySelectorAll('.card .chart-tooltip')];
            const i = ts.findIndex((t) => !t.hidden);
            ts[i].id = 'band-tip-under-test';
            return '#band-tip-under-test';
          });
          checkTip(await tipPlace(page, sel, at.x, at.y), W, 900, 'band chart');
          await shot(page, `tooltip_band_${W}`);
          await page.close();
        }
      } finally { s2.stop(); }
    });
  } finally {
    await browser.close();
    srv.stop();
  }
}, 420000);
