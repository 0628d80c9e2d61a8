// Browser test of the Graphs tab (issue 31), against the real server on
// real files: model_1 (PyTorch's add_graph, TFB_TESTDATA/torch_more), a
// TensorFlow 1 graph (tfevents/morvan_tutorials) and one written by
// tests/bench/gen_graph_logdir.py (scopes, devices, control edges, step
// stats, and what a hostile GraphDef holds):
// - model_1 opens as three closed boxes with the shapes on the edges; a
//   scope opens in place; search opens the groups down to a node, selects
//   it, and the side panel shows its op, attributes, inputs and outputs;
// - control edges are dashed; colour by device and by compute time from
//   the run's step stats;
// - the TensorFlow graph opens; so do a Keras run's graph (tfx_iris_keras)
//   its op graph, and its conceptual graph (the Keras model's layers);
// - names and ops with HTML are text, a cycle, a self input and a missing
//   input are notes, nothing runs; a graph past the server's node bound is
//   its 413 said;
// - screenshots at 1440 and 800 px, light and dark.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_page.js TFBOARD'); process.exit(2); }
const testdata = process.env.TFB_TESTDATA || path.join(__dirname, '..', '..', '..', '..', 'shared', 'testdata');
if (!fs.existsSync(path.join(testdata, 'torch_more', 'model_1'))) T.skip('no ' + testdata + '/torch_more');

function copyDir(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const f of fs.readdirSync(from)) if (fs.statSync(path.join(from, f)).isFile()) fs.copyFileSync(path.join(from, f), path.join(to, f));
}

const G = () => window.__tfb.pages.graphs || {};
const opened = (run) => `window.__tfb.pages.graphs && window.__tfb.pages.graphs.run === ${JSON.stringify(run)} && window.__tfb.pages.graphs.openMs > 0`;

T.run(async () => {
  const logdir = T.tmpdir('tfb-graphs-');
  copyDir(path.join(testdata, 'torch_more', 'model_1'), path.join(logdir, 'model_1'));
  copyDir(path.join(testdata, 'tfevents', 'morvan_tutorials', 'tf15_tensorboard', 'logs'), path.join(logdir, 'morvan'));
  copyDir(path.join(testdata, 'tfevents', 'tfx_iris_keras', 'model_run', '8', 'train'), path.join(logdir, 'iris'));
  execFileSync('python3', [path.join(__dirname, '..', '..', '..', 'tests', 'bench', 'gen_graph_logdir.py'), logdir,
    '--nodes', '400', '--scopes', '10', '--run', 'small', '--hostile'], { stdio: 'inherit' });
  // past the server's TFB_GRAPH_MAX_NODES (100,000): a 413 the page says
  execFileSync('python3', [path.join(__dirname, '..', '..', '..', 'tests', 'bench', 'gen_graph_logdir.py'), logdir,
    '--nodes', '100001', '--scopes', '20', '--run', 'huge'], { stdio: 'inherit' });
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 900 } });
  const shots = [];
  try {
    await T.step('model_1 opens as three closed boxes, edges labelled with shapes', async () => {
      await T.openApp(page, srv.url, 'tab=graphs&graphRun=model_1');
      await page.waitForFunction(opened('model_1'), null, { timeout: 30000 });
      const g = await page.evaluate(G);
      T.assertEq([g.nodes, g.drawn], [67, 3], 'nodes parsed, boxes drawn');
      const boxes = await page.$$eval('.graphs-nodes > g', (els) => els.map((e) => e.getAttribute('class') + ' ' + e.dataset.id));
      T.assertEq(boxes.sort(), ['graphs-group closed SmallNet', 'graphs-group closed input', 'graphs-group closed output'], 'the three boxes');
      const labels = await page.$$eval('.graphs-edge-label', (els) => els.map((e) => e.textContent).sort());
      T.assertEq(labels, ['2×3×14×14', '2×6'], 'edge labels: the shapes PyTorch recorded');
      shots.push(await T.screenshot(page, 'graphs_model1_closed'));
    });

    await T.step('a scope opens in place; only what is open is drawn', async () => {
      await page.click('.graphs-group[data-id="SmallNet"] .graphs-toggle');
      const g = await page.evaluate(G);
      T.assertEq(g.open, ['SmallNet'], 'open groups');
      T.assert(g.drawn > 3 && g.drawn < 67, 'children of SmallNet drawn, its closed scopes as boxes: ' + g.drawn);
      T.assert(await page.$('.graphs-group.closed[data-id="SmallNet/Residual[block]"]'), 'Residual[block] is a closed box inside');
    });

    await T.step('search opens the groups down to a node, selects it, the panel shows it', async () => {
      await page.fill('#graphs-search', 'batchnorm2d[bn]/19');
      await T.until(page, () => document.querySelectorAll('.graphs-hit').length === 2, null, 'two hits');
      await page.click('.graphs-hit >> nth=0');
      const g = await page.evaluate(G);
      T.assertEq(g.selected, 'SmallNet/Residual[block]/BatchNorm2d[bn]/193', 'selected');
      T.assert(g.open.includes('SmallNet/Residual[block]/BatchNorm2d[bn]'), 'its groups opened: ' + g.open);
      T.assert(await page.$('.graphs-node.selected[data-id="SmallNet/Residual[block]/BatchNorm2d[bn]/193"]'), 'the node is drawn, highlighted');
      const panel = await page.$eval('#graphs-panel', (p) => ({ hidden: p.hidden, title: p.querySelector('.graphs-panel-title').textContent, text: p.textContent }));
      T.assert(!panel.hidden, 'panel shown');
      T.assertEq(panel.title, 'SmallNet/Residual[block]/BatchNorm2d[bn]/193', 'panel title');
      T.assert(panel.text.includes('prim::Constant') && panel.text.includes('{ value : 0.1}'), 'op and attribute: ' + panel.text);
      T.assert(panel.text.includes('Outputs (1)') && panel.text.includes('BatchNorm2d[bn]/212'), 'its consumer');
    });

    await T.step('the panel of an op lists its inputs with shapes and jumps to one', async () => {
      await page.click('.graphs-node[data-id="SmallNet/Residual[block]/BatchNorm2d[bn]/212"]');
      const items = await page.$$eval('#graphs-panel .graphs-io:first-of-type li', (l) => l.map((x) => x.textContent));
      T.assert(items.length === 9 && items[0].includes('Conv2d[conv]/input.5') && items[0].includes('2×6×7×7'), 'inputs in order, with the shape: ' + JSON.stringify(items));
      await page.click('#graphs-panel .graphs-jump >> nth=0');
      T.assertEq((await page.evaluate(G)).selected, 'SmallNet/Residual[block]/Conv2d[conv]/input.5', 'jumped to the input');
      await page.click('#graphs-fit');
      shots.push(await T.screenshot(page, 'graphs_model1_search_panel'));
    });

    await T.step('the generated graph: control edges dashed, colour by device and compute time', async () => {
      await page.selectOption('#graphs-run', 'small');
      await page.waitForFunction(opened('small'), null, { timeout: 30000 });
      let g = await page.evaluate(G);
      // the generator times every node but variables and constants: count
      // them in the graph the server answers
      const text = await (await fetch(srv.url + 'data/plugin/graphs/graph?run=small')).text();
      const ops = [...text.matchAll(/^  op: "([^"]*)"/gm)].map((m) => m[1]);
      const timed = ops.filter((o) => o !== 'VariableV2' && o !== 'Const').length;
      T.assert(timed > 200 && ops.length === g.nodes, 'the graph as served: ' + ops.length);
      T.assertEq(g.statsNodes, timed, 'step stats of step_1 on every timed op node');
      await page.click('.graphs-group[data-id="block_0"] .graphs-toggle');
      await page.click('.graphs-group[data-id="block_0/layer_1"] .graphs-toggle');
      const dash = await page.$$eval('path.graphs-edge.control', (ps) => ps.map((p) => getComputedStyle(p).strokeDasharray));
      T.assert(dash.length >= 1 && dash.every((d) => d && d !== 'none'), 'control edges dashed: ' + dash);
      const solid = await page.$eval('path.graphs-edge:not(.control)', (p) => getComputedStyle(p).strokeDasharray);
      T.assertEq(solid, 'none', 'data edges solid');
      await page.selectOption('#graphs-color', 'device');
      const legend = await page.$eval('#graphs-legend', (l) => l.textContent);
      T.assert(legend.includes('/device:GPU:0') && legend.includes('/device:CPU:0'), 'device legend: ' + legend);
      const fills = await page.$$eval('.graphs-nodes .graphs-node rect', (rs) => [...new Set(rs.map((r) => r.style.fill))]);
      T.assert(fills.length >= 2, 'nodes of two devices, two colours: ' + fills);
      await page.selectOption('#graphs-color', 'compute');
      const hsl = await page.$$eval('.graphs-node rect', (rs) => rs.filter((r) => r.style.fill).length);
      T.assert(hsl > 10, 'op nodes coloured by compute time: ' + hsl);
      T.assert(await page.$('#graphs-legend .graphs-ramp'), 'a compute-time scale');
      await page.click('.graphs-node[data-id="block_0/layer_1/matmul_0"]');
      const panel = await page.$eval('#graphs-panel', (p) => p.textContent);
      T.assert(/compute\s*\d/.test(panel) && /memory\s*\d/.test(panel), 'the panel gives compute time and memory: ' + panel);
      shots.push(await T.screenshot(page, 'graphs_small_compute'));
    });

    await T.step('hostile names are text; cycle, self input, missing input are notes', async () => {
      // block_0/layer_1 open pushes the hostile box off the stage: fit first
      await page.click('#graphs-fit');
      await page.click('.graphs-group[data-id="hostile"] .graphs-toggle');
      await page.click('#graphs-fit');
      const labels = await page.$$eval('.graphs-node[data-id^="hostile/"] text', (t) => t.map((x) => x.textContent));
      T.assert(labels.some((t) => t.startsWith('<img src=x')), 'the HTML name shown as text: ' + labels);
      T.assertEq(await page.$$eval('svg img, #graphs-panel img, script:not([src])', (e) => e.length), 0, 'no element made from a name');
      await page.click('.graphs-node[data-id="hostile/<img src=x onerror=alert(1)>"]');
      const op = await page.$eval('#graphs-panel .graphs-kv td', (td) => td.textContent);
      T.assertEq(op, '<script>alert(2)</script>', 'the op as text');
      const notes = await page.$eval('#graphs-notes', (n) => n.textContent);
      T.assert(notes.includes('"hostile/self" names itself') && notes.includes('"hostile/nowhere" of node "hostile/lost" names no node'), 'notes: ' + notes);
      T.assert(await page.$('.graphs-node[data-id="hostile/ping"]') && await page.$('.graphs-node[data-id="hostile/pong"]'), 'the cycle is drawn');
      T.assertEq(page.problems.filter((p) => p.startsWith('dialog')), [], 'no dialog');
    });

    await T.step('a TensorFlow 1 graph (morvan_tutorials) opens', async () => {
      await page.selectOption('#graphs-run', 'morvan');
      await page.waitForFunction(opened('morvan'), null, { timeout: 30000 });
      const g = await page.evaluate(G);
      T.assert(g.nodes > 10 && g.drawn >= 2 && g.drawn < g.nodes, 'scopes drawn closed: ' + JSON.stringify([g.nodes, g.drawn]));
      const first = await page.$eval('.graphs-group.closed', (e) => e.dataset.id);
      await page.click(`.graphs-group[data-id="${first}"] .graphs-toggle`);
      T.assert((await page.evaluate(G)).open.includes(first), 'a scope opens');
      shots.push(await T.screenshot(page, 'graphs_tf1'));
    });

    await T.step('a Keras graph (tfx_iris_keras): the run graph, the op graph of a trace, the conceptual graph', async () => {
      await page.selectOption('#graphs-run', 'iris');
      await page.waitForFunction(opened('iris'), null, { timeout: 30000 });
      let g = await page.evaluate(G);
      T.assert(g.nodes > 10 && g.drawn >= 2 && g.drawn < g.nodes, 'the run graph, scopes closed: ' + JSON.stringify([g.nodes, g.drawn]));
      const opts = await page.$$eval('#graphs-tag option', (os) => os.map((o) => o.value));
      T.assertEq(opts, ['', 'op:batch_2', 'conceptual:keras'], 'the graphs of the run');
      await page.evaluate(() => { window.__tfb.pages.graphs.openMs = 0; });
      await page.selectOption('#graphs-tag', 'op:batch_2');
      await page.waitForFunction(opened('iris'), null, { timeout: 30000 });
      g = await page.evaluate(G);
      const served = await (await fetch(srv.url + 'data/plugin/graphs/graph?run=iris&tag=batch_2&conceptual=false')).text();
      const count = (served.match(/^node \{$/gm) || []).length;
      T.assertEq(g.nodes, count, 'the op graph of batch_2: every node served');
      if (!count) T.assert((await page.textContent('#graphs-message')).includes('no nodes'), 'an empty graph said');
      await page.evaluate(() => { window.__tfb.pages.graphs.openMs = 0; });
      await page.selectOption('#graphs-tag', 'conceptual:keras');
      await page.waitForFunction(opened('iris'), null, { timeout: 30000 });
      // the Keras model's 9 layers (4 inputs, a Concatenate, 4 Dense) in
      // its functional_1 scope, as the server's conceptual graph names them
      g = await page.evaluate(G);
      T.assertEq(g.nodes, 9, 'the conceptual graph: the model\'s 9 layers');
      const top = await page.$$eval('.graphs-nodes > g', (els) => els.map((e) => e.dataset.id));
      T.assertEq(top, ['functional_1'], 'one closed box: the model');
      await page.click('.graphs-group[data-id="functional_1"] .graphs-toggle');
      const layers = await page.$$eval('.graphs-node', (els) => els.map((e) => e.dataset.id).sort());
      T.assertEq(layers, ['concatenate', 'dense', 'dense_1', 'dense_2', 'dense_3', 'petal_length_xf', 'petal_width_xf',
        'sepal_length_xf', 'sepal_width_xf'].map((n) => 'functional_1/' + n), 'the layers once opened');
      shots.push(await T.screenshot(page, 'graphs_keras_conceptual'));
      await page.selectOption('#graphs-tag', '');
    });

    await T.step('a graph past the server\'s bound: its 413 said, then another run opens', async () => {
      await page.selectOption('#graphs-run', 'huge');
      await T.until(page, () => /^Could not load the graph of huge: .*100001 nodes.*100000/.test(document.getElementById('graphs-message').textContent), null, 'the 413 said');
      page.problems = page.problems.filter((p) => !(p.includes('run=huge') || p.includes('status of 413')));
      await page.evaluate(() => { window.__tfb.pages.graphs.openMs = 0; });
      await page.selectOption('#graphs-run', 'model_1');
      await page.waitForFunction(opened('model_1'), null, { timeout: 30000 });
    });

    await T.step('800 px and dark', async () => {
      const dark = await T.newPage(browser, { viewport: { width: 800, height: 900 }, colorScheme: 'dark' });
      await T.openApp(dark, srv.url, 'tab=graphs&graphRun=model_1');
      await dark.waitForFunction(opened('model_1'), null, { timeout: 30000 });
      await dark.click('.graphs-group[data-id="SmallNet"] .graphs-toggle');
      await dark.click('#graphs-fit');
      await dark.click('.graphs-node[data-id="SmallNet/input.1"]');
      const bg = await dark.$eval('.graphs-stage', (e) => getComputedStyle(e).backgroundColor);
      T.assert(bg !== 'rgb(255, 255, 255)', 'dark stage: ' + bg);
      shots.push(await T.screenshot(dark, 'graphs_model1_800_dark'));
      T.assertEq(dark.problems, [], 'no problem at 800 px dark');
    });
    T.assertEq(page.problems, [], 'no console error, failed request or dialog');
  } finally {
    await browser.close();
    srv.stop();
  }
  console.log('# screenshots: ' + shots.join(' '));
}, 170000);
