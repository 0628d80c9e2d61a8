// Browser test of run status and alerts (issue 23) against the real
// tfboard: the State column and its filter in the Runs table, the sidebar
// badges, loss-spike markers on the scalar chart, the Alerts tab's feed and
// status table, and a browser notification once the user allowed them.
// Runs: examples/spiky_train (3 recovered spikes; finished), the same with
// --diverge-at 400 (diverged), and a writer SIGKILLed mid-run (crashed).
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync, spawn } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
const BUILD = process.env.TFB_BUILD_ROOT || '';
const SPIKY = path.join(BUILD, 'examples', 'spiky_train');
const WRITER = path.join(BUILD, 'tests', 'integration', 'alerts_writer');
const SHOTS = process.env.TFB_ALERTS_SHOTS || '';

async function shot(page, name) {
  const f = await T.screenshot(page, name);
  if (SHOTS) { fs.mkdirSync(SHOTS, { recursive: true }); fs.copyFileSync(f, path.join(SHOTS, name + '.png')); }
}

T.run(async () => {
  if (!fs.existsSync(SPIKY) || !fs.existsSync(WRITER)) T.skip('spiky_train or alerts_writer not built');
  const logdir = T.tmpdir('tfb_alerts_ui_');
  execFileSync(SPIKY, ['--logdir', logdir, '--name', 'spiky']);
  try { execFileSync(SPIKY, ['--logdir', logdir, '--name', 'blowup', '--diverge-at', '400'], { stdio: 'ignore' }); } catch (_) { /* exits 1: diverged */ }
  const w = spawn(WRITER, [path.join(logdir, 'killed'), '50', '0', 'hang'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => w.stdout.once('data', resolve));
  w.kill('SIGKILL');
  await new Promise((resolve) => w.once('exit', resolve));

  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  await page.context().grantPermissions(['notifications'], { origin: srv.url.replace(/\/$/, '') });
  try {
    await T.step('runs table: the Status column (the run state badge) and its filter', async () => {
      await T.openApp(page, srv.url, 'tab=runs');
      await T.until(page, () => window.__tfb.pages.runs && window.__tfb.pages.runs.rows.length === 3, null, 'runs rows');
      const rows = (await page.evaluate(() => window.__tfb.pages.runs.rows)).map((r) => [r.run, r.runState]);
      T.assertEq(Object.fromEntries(rows), { blowup: 'diverged', killed: 'crashed', spiky: 'finished' }, 'states (run names in natural order)');
      const cells = await page.$$eval('.runs-table tbody .run-state', (es) => es.map((e) => e.textContent).sort());
      T.assertEq(cells, ['crashed', 'diverged', 'finished'], 'state cells');
      const badges = await page.$$eval('#run-list .run-state', (es) => es.map((e) => e.textContent).sort());
      T.assertEq(badges, ['crashed', 'diverged', 'finished'], 'sidebar badges');
      await shot(page, 'runs_status');
      await page.selectOption('#runs-state', 'crashed');
      await T.until(page, () => window.__tfb.pages.runs.rows.length === 1, null, 'filtered rows');
      T.assertEq((await page.evaluate(() => window.__tfb.pages.runs.rows))[0].run, 'killed', 'crashed filter');
      await page.selectOption('#runs-state', '');
    });

    await T.step('scalars: spike markers on the loss chart', async () => {
      await page.evaluate(() => { location.hash = 'tab=scalars&tagFilter=%5Eloss%24'; });
      await T.until(page, () => { const c = window.__tfb.charts['scalars:loss']; return c && c.runs && c.runs.spiky && c.runs.spiky.spikes; }, null, 'loss chart');
      const c = await page.evaluate(() => window.__tfb.charts['scalars:loss'].runs);
      T.assertEq(c.spiky.spikes, [150, 307, 434], 'spiky spikes');
      T.assertEq(c.blowup.spikes, [150, 307, 400], 'blowup spikes');
      await shot(page, 'scalars_spikes');
    });

    await T.step('alerts tab: the feed, the status table and a notification', async () => {
      await page.evaluate(() => { location.hash = 'tab=alerts'; });
      await T.until(page, () => window.__tfb.pages.alerts && window.__tfb.pages.alerts.feed.length >= 8, null, 'feed');
      const a = await page.evaluate(() => window.__tfb.pages.alerts);
      const fired = a.feed.filter((e) => e.event === 'fired').map((e) => e.run + ':' + e.rule + ':' + e.step).sort();
      for (const want of ['spiky:loss_spike:150', 'spiky:loss_spike:307', 'spiky:loss_spike:434',
        'blowup:nonfinite:405', 'blowup:diverged:400', 'killed:crashed:null']) {
        T.assert(fired.includes(want), 'feed has ' + want + ': ' + fired.join(', '));
      }
      T.assertEq(Object.fromEntries(a.status.map((s) => [s.run, s.state])), { spiky: 'finished', blowup: 'diverged', killed: 'crashed' }, 'status table');
      const msgs = await page.$$eval('.alert-feed tbody tr', (trs) => trs.map((tr) => tr.textContent));
      T.assert(msgs.some((m) => m.includes('gradient norms grew')), 'precursors in the feed');
      T.assert(await page.$eval('#tab-alerts .badge', (e) => Number(e.textContent) >= 5), 'active count on the tab');
      T.assertEq(await page.evaluate(() => Notification.permission), 'granted', 'permission');
      T.assert((await page.evaluate(() => window.__tfb.notified || 0)) >= 1, 'a browser notification was raised');
      await shot(page, 'alerts_feed');
    });
    T.assertEq(page.problems, [], 'no console errors or failed requests');
  } finally {
    await browser.close();
    srv.stop();
  }
});
