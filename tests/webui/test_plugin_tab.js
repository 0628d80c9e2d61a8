// Browser test of a dashboard added as a folder and one line of a list (the
// plugin architecture's promise): tfboard_testplug is tfboard with the test
// dashboard of tests/plugin/testplug/ after the built-in ones; its tab
// appears from /data/plugins_listing, clicking it loads the module the
// listing names (its page.js), and the page draws what its routes answer,
// one of them from its own value decoder.
'use strict';
const { execFileSync } = require('child_process');
const path = require('path');
const T = require('./lib.js');

const [testplug] = process.argv.slice(2);
if (!testplug) { console.error('usage: test_plugin_tab.js TFBOARD_TESTPLUG'); process.exit(2); }

// Two runs written by the independent Python event writer; one of them
// logs the tags the test plugin looks for.
function writeLogdir(dir) {
  const py = `
import os, sys
sys.path.insert(0, ${JSON.stringify(path.join(__dirname, '..', 'integration'))})
from tfevents_py import event, f_float, ld, record, scalars_summary
for run, tags in (("plain", ["loss"]), ("marked", ["loss", "testplug/a", "testplug/b", "testplug/c"])):
    d = os.path.join(${JSON.stringify(dir)}, run)
    os.makedirs(d)
    with open(os.path.join(d, "events.out.tfevents.1.t"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for s in range(5):
            f.write(record(event(1.0 + s, s, summary=scalars_summary([(t, s * 0.1) for t in tags]))))
# values of the test dashboard's own kind (its plugin name on the first)
d = os.path.join(${JSON.stringify(dir)}, "decoded")
os.makedirs(d)
with open(os.path.join(d, "events.out.tfevents.1.t"), "wb") as f:
    f.write(record(event(1.0, file_version="brain.Event:2")))
    for s in range(4):
        meta = ld(9, ld(1, ld(1, b"testplug"))) if s == 0 else b""
        f.write(record(event(1.0 + s, s, summary=ld(1, ld(1, b"tp_value") + f_float(2, 1.0) + meta))))
`;
  execFileSync('python3', ['-c', py]);
}

T.run(async () => {
  const logdir = T.tmpdir('tfb-testplug-');
  writeLogdir(logdir);
  const srv = await T.startServer(testplug, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  try {
    await T.step('the registered plugin is a tab, after the built-in ones', async () => {
      await T.openApp(page, srv.url);
      await T.until(page, () => !!document.querySelector('#tab-testplug'), null, 'the testplug tab');
      const ids = await page.$$eval('#tabs .tab', (as) => as.map((a) => a.id.replace('tab-', '')));
      T.assertEq(ids[ids.length - 1], 'testplug', 'last tab');
      T.assertEq(await page.$eval('#tab-testplug', (a) => a.firstChild.textContent), 'Test plugin', 'tab title');
    });
    await T.step('its page module loads and draws its route', async () => {
      await page.click('#tab-testplug');
      await T.until(page, () => document.querySelectorAll('.testplug-run').length > 0, null, 'the plugin page');
      const rows = await page.$$eval('.testplug-run', (ps) => ps.map((p) => p.textContent));
      T.assertEq(rows, ['marked: 3 tags'], 'rows drawn from /data/plugin/testplug/runs');
      await T.until(page, () => document.querySelectorAll('.testplug-values').length > 0, null, 'the decoded values');
      T.assertEq(await page.$$eval('.testplug-values', (ps) => ps.map((p) => p.textContent)), ['decoded: 4 values'],
        'rows drawn from its value decoder (/data/plugin/testplug/values)');
      T.assert((await page.evaluate(() => location.hash)).includes('tab=testplug'), 'tab in the URL');
      const fetched = await page.evaluate(() => performance.getEntriesByType('resource')
        .map((r) => new URL(r.name).pathname).filter((p) => p.endsWith('/testplug.js')));
      T.assertEq(fetched, ['/js/pages/testplug.js'], 'module fetched from the plugin');
      await T.screenshot(page, 'plugin_testplug');
    });
  } finally {
    await browser.close();
    await srv.stop();
  }
});
