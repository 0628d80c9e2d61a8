// The Projector with 100,000 points x 128 dimensions (slow suite): the
// test writes such an embedding as add_embedding does (tensors.tsv and a
// metadata.tsv of 10 clusters) and opens it in 3-D with PCA from the
// server. It prints the figures (PCA's answer time, frames per second
// while the 3-D view turns, a pick with its 10 neighbours, a search) and
// checks what must hold whatever the machine: every point placed, the
// neighbours listed, the search's count, the view drawing frames. Times
// are printed, never asserted (a loaded 2-core machine is no benchmark).
'use strict';
const fs = require('fs');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
const N = Number(process.env.TFB_PROJECTOR_BIG_N || 100000);
const D = 128;
const CLUSTERS = 10;

// Seeded clusters: point i is in cluster i % 10, around a random centre.
function writeEmbedding(dir) {
  let a = 7;
  const rnd = () => { a = (Math.imul(a, 1664525) + 1013904223) >>> 0; return a / 4294967296; };
  const centres = Array.from({ length: CLUSTERS }, () => Array.from({ length: D }, () => rnd() * 10 - 5));
  const fd = fs.openSync(path.join(dir, 'tensors.tsv'), 'w');
  let buf = [];
  for (let i = 0; i < N; i++) {
    const c = centres[i % CLUSTERS];
    const row = new Array(D);
    for (let j = 0; j < D; j++) row[j] = (c[j] + (rnd() + rnd() + rnd() - 1.5)).toFixed(3);
    buf.push(row.join('\t'));
    if (buf.length === 5000) { fs.writeSync(fd, buf.join('\n') + '\n'); buf = []; }
  }
  if (buf.length) fs.writeSync(fd, buf.join('\n') + '\n');
  fs.closeSync(fd);
  const meta = ['cluster\tindex'];
  for (let i = 0; i < N; i++) meta.push(`cluster_${i % CLUSTERS}\t${i}`);
  fs.writeFileSync(path.join(dir, 'metadata.tsv'), meta.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'projector_config.pbtxt'),
    'embeddings {\n  tensor_name: "big"\n  tensor_path: "tensors.tsv"\n  metadata_path: "metadata.tsv"\n}\n');
}

T.run(async () => {
  // A run folder as add_embedding leaves it: the writer's events file (the
  // store lists a run by it; an empty one is what a writer leaves before
  // its first flush) next to the projector config. A config in the logdir
  // itself is run "." to the projector routes, but the store has no run
  // then and the tab stays disabled.
  const logdir = T.tmpdir('tfb-projector-big-');
  const run = path.join(logdir, 'big');
  fs.mkdirSync(run);
  fs.writeFileSync(path.join(run, 'events.out.tfevents.1.bench'), '');
  let t0 = Date.now();
  writeEmbedding(run);
  console.log(`# wrote ${N} x ${D} in ${Date.now() - t0} ms`);
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(60000);
  try {
    await T.step(`${N} x ${D} opens in 3-D with PCA from the server`, async () => {
      t0 = Date.now();
      await T.openApp(page, srv.url, 'tab=projector');
      await T.until(page, () => window.__tfb.pages.projector && window.__tfb.pages.projector.projected, null, 'a projection', 120000);
      const st = await page.evaluate(() => { const p = window.__tfb.pages.projector; return { points: p.points, visible: p.visible, dim: p.dim, pca: p.pca }; });
      console.log(`# opened in ${Date.now() - t0} ms (tensor ${N * D * 4} bytes); PCA answered in ${st.pca.ms.toFixed(0)} ms (first request: the server reads the TSV, then computes)`);
      T.assertEq([st.points, st.visible, st.dim, st.pca.components], [N, N, 3, 3], 'every point placed in 3-D');
    });

    await T.step('the 3-D view turns; frames per second measured', async () => {
      const fps = await page.evaluate(() => window.__tfb.pages.projector.measureFps(3000));
      const renderer = await page.evaluate(() => { const g = document.createElement('canvas').getContext('webgl'); const x = g && g.getExtension('WEBGL_debug_renderer_info'); return x ? g.getParameter(x.UNMASKED_RENDERER_WEBGL) : 'unknown'; });
      const drawn = await page.evaluate(() => window.__tfb.pages.projector.drawn);
      console.log(`# ${fps.toFixed(1)} frames per second turning ${N} points in 3-D, ${drawn} of them drawn a moving frame (renderer: ${renderer})`);
      T.assert(fps > 0, 'frames drawn');
      // level of detail: a moving frame draws a subset only when every
      // point would not fit the budget, never fewer than LOD_MIN_POINTS
      const lod = await page.evaluate(() => { const l = window.__tfb.pages.projector.lod; return [l.budgetMs, l.minPoints]; });
      T.assert(drawn === N || (drawn >= lod[1] && drawn < N), 'a moving frame: every point or a subset of at least LOD_MIN_POINTS: ' + drawn);
      // once the view is still, the next frame draws every point again
      await page.waitForTimeout(500);
      const after = await page.evaluate(() => window.__tfb.pages.projector.drawnNow());
      T.assertEq(after, N, 'a still frame draws every point');
      await T.screenshot(page, 'projector_big_3d');
    });

    await T.step('a picked point lists its neighbours; a search counts its matches', async () => {
      const [x, y] = await page.evaluate(() => window.__tfb.pages.projector.screenOf(12345 % window.__tfb.pages.projector.points));
      const box = await page.$eval('#prj-overlay', (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top]; });
      t0 = Date.now();
      await page.mouse.click(box[0] + x, box[1] + y);
      await T.until(page, () => document.querySelectorAll('#prj-knn li').length === 10, null, '10 neighbours', 60000);
      console.log(`# pick and 10 cosine neighbours among ${N}: ${Date.now() - t0} ms`);
      const s = await page.evaluate(() => window.__tfb.pages.projector.selected);
      const labels = await page.$$eval('#prj-knn .prj-nb-label', (els) => els.map((e) => e.textContent));
      // Clusters are far apart: every neighbour is in the picked point's.
      T.assertEq(labels, Array(10).fill(`cluster_${s % CLUSTERS}`), 'neighbours from its cluster');
      t0 = Date.now();
      await page.fill('#prj-search', '^cluster_3$');
      await T.until(page, (w) => window.__tfb.pages.projector.matches === w, N / CLUSTERS, 'matches', 60000);
      console.log(`# search over ${N} labels and restyle: ${Date.now() - t0} ms`);
      T.assertEq(page.problems, [], 'no errors');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
}, 600000);
