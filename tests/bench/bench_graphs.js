// The Graphs tab on a large graph (issue 31): tests/bench/gen_graph_logdir.py
// writes 20,000 nodes in 300 scopes (and step stats); tfboard serves it;
// headless Chromium opens the tab. Prints, never asserts:
//   - open: the click on the tab to the graph drawn (fetch of the pbtxt,
//     parse, model, layout of the top level, SVG), and its parts;
//   - expand: opening a block (its layers closed) and a layer (its ~70
//     nodes), each the page's own time for layout + redraw (median of 5);
//   - search: a node deep in the graph revealed (groups opened, drawn,
//     selected).
// Goals (the plugin's API.md "The Graphs tab"): open <= 1 s, expand <= 200 ms.
// usage: node bench_graphs.js TFBOARD [NODES [SCOPES]]
// Needs playwright-core in tests/webui/node_modules and Chromium (exits 77
// without them, as the browser tests do).
'use strict';
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('../webui/lib.js');

T.run(async () => {
  const [tfboard, nodes = '20000', scopes = '300'] = process.argv.slice(2);
  if (!tfboard) { console.error('usage: bench_graphs.js TFBOARD [NODES [SCOPES]]'); process.exit(2); }
  const dir = T.tmpdir('tfb-bench-graphs-');
  execFileSync('python3', [path.join(__dirname, 'gen_graph_logdir.py'), dir, '--nodes', nodes, '--scopes', scopes], { stdio: 'inherit' });
  const srv = await T.startServer(tfboard, dir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 900 } });
  const G = () => window.__tfb.pages.graphs || {};
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  try {
    await T.openApp(page, srv.url, 'tab=scalars');
    const opens = [];
    for (let r = 0; r < 3; r++) {
      // a fresh page each time: the module, the pbtxt and the parse are cold
      await page.evaluate(() => { if (window.__tfb.pages.graphs) window.__tfb.pages.graphs.openMs = 0; });
      const t0 = Date.now();
      await page.evaluate(() => { location.hash = 'tab=graphs'; });
      await page.waitForFunction(() => window.__tfb.pages.graphs && window.__tfb.pages.graphs.openMs > 0, null, { timeout: 120000, polling: 20 });
      const wall = Date.now() - t0;
      const g = await page.evaluate(G);
      opens.push(g.openMs);
      console.log(`open ${r + 1}: ${wall} ms from the tab click; page: ${g.openMs.toFixed(0)} ms (fetch of graph + step stats ${g.fetchMs.toFixed(0)}, parse+model ${g.parseMs.toFixed(0)}, step stats + layout + draw ${g.drawMs.toFixed(0)}); ${g.nodes} nodes, ${g.scopes} scopes, ${g.drawn} boxes drawn`);
      await page.evaluate(() => { location.hash = 'tab=scalars'; });
      await page.waitForTimeout(300);
    }
    console.log(`open: median ${median(opens).toFixed(0)} ms (goal 1000)`);
    await page.evaluate(() => { location.hash = 'tab=graphs'; });
    await page.waitForFunction(() => window.__tfb.pages.graphs && window.__tfb.pages.graphs.openMs > 0, null, { timeout: 120000 });
    const toggles = async (sel, what) => {
      const ts = [];
      for (let r = 0; r < 5; r++) {
        await page.click(`.graphs-group[data-id="${sel}"] .graphs-toggle`); // open
        const g = await page.evaluate(G);
        ts.push(g.lastToggleMs);
        if (r < 4) await page.click(`.graphs-group[data-id="${sel}"] .graphs-toggle`); // close again
      }
      const g = await page.evaluate(G);
      console.log(`expand ${what}: median ${median(ts).toFixed(1)} ms, max ${Math.max(...ts).toFixed(1)} ms (goal 200); ${g.drawn} boxes drawn after`);
    };
    await toggles('block_0', 'a block (its layers closed)');
    await toggles('block_0/layer_0', 'a layer (its nodes)');
    await page.fill('#graphs-search', 'block_14/layer_18/matmul_30');
    await page.waitForSelector('.graphs-hit');
    await page.click('.graphs-hit >> nth=0');
    const g = await page.evaluate(G);
    console.log(`search reveal of ${g.revealed}: ${g.lastRevealMs.toFixed(1)} ms; ${g.drawn} boxes drawn`);
    if (process.env.TFB_SHOT) await page.screenshot({ path: process.env.TFB_SHOT });
  } finally {
    await browser.close();
    srv.stop();
  }
}, 600000);
