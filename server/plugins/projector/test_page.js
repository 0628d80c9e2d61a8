// Browser test of the Projector tab on PyTorch's own add_embedding files
// (testdata torch_more/embed_1: a 300 x 16 tensor with two metadata
// columns and sprites, and a 300 x 9 one under the tag with a slash, one
// column, no sprite). PCA from the server in 3-D with its explained
// variance, colour by a column, search by regex, k nearest neighbours by
// cosine and Euclidean distance (checked against the same computation
// done here on tensors.tsv), t-SNE stopped mid-way and UMAP run to the
// end in the Web Worker, the second tensor, dark theme at 800 px.
'use strict';
const fs = require('fs');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
const logdir = path.join(process.env.TFB_TESTDATA || '', 'torch_more');
const embed = path.join(logdir, 'embed_1', '00000', 'features');
if (!fs.existsSync(embed)) T.skip('no testdata torch_more (TFB_TESTDATA)');

// What the files say, read here independently of the server and the page.
const rows = fs.readFileSync(path.join(embed, 'tensors.tsv'), 'utf8').trim().split('\n').map((l) => l.split('\t').map(Number));
const metaLines = fs.readFileSync(path.join(embed, 'metadata.tsv'), 'utf8').trim().split('\n').map((l) => l.split('\t'));
const header = metaLines[0];
const meta = metaLines.slice(1);

function nearest(s, metric, k) {
  const f32 = rows.map((r) => Float32Array.from(r));
  const norm = (v) => Math.sqrt(v.reduce((a, x) => a + x * x, 0));
  const out = [];
  for (let i = 0; i < f32.length; i++) {
    if (i === s) continue;
    let d;
    if (metric === 'cosine') {
      let dot = 0;
      for (let c = 0; c < f32[s].length; c++) dot += f32[s][c] * f32[i][c];
      d = 1 - dot / (norm(f32[s]) * norm(f32[i]));
    } else {
      let ss = 0;
      for (let c = 0; c < f32[s].length; c++) ss += (f32[s][c] - f32[i][c]) ** 2;
      d = Math.sqrt(ss);
    }
    out.push({ i, d });
  }
  out.sort((a, b) => a.d - b.d || a.i - b.i);
  return out.slice(0, k).map((x) => [meta[x.i][0], x.d.toFixed(4)]);
}

const pub = () => window.__tfb.pages.projector;

// Pixels of the WebGL canvas that differ from its background.
async function litPixels(page) {
  return page.evaluate(() => {
    const c = document.getElementById('prj-canvas');
    const t = document.createElement('canvas');
    t.width = c.width; t.height = c.height;
    const x = t.getContext('2d');
    x.drawImage(c, 0, 0);
    const d = x.getImageData(0, 0, t.width, t.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - d[0]) + Math.abs(d[i + 1] - d[1]) + Math.abs(d[i + 2] - d[2]) > 30) n++;
    return n;
  });
}

async function knnList(page) {
  return page.$$eval('#prj-knn li', (els) => els.map((li) => [li.querySelector('.prj-nb-label').textContent, li.querySelector('.prj-dist').textContent]));
}

T.run(async () => {
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 900 } });
  try {
    await T.step('the embedding opens in 3-D: PCA from the server, sprites as points', async () => {
      await T.openApp(page, srv.url, 'tab=projector');
      await T.until(page, () => window.__tfb.pages.projector && window.__tfb.pages.projector.projected, null, 'a projection');
      const st = await page.evaluate(() => {
        const p = window.__tfb.pages.projector;
        return { run: p.run, tensor: p.tensor, points: p.points, dims: p.dims, columns: p.columns, sprite: p.sprite, shown: p.spritesShown, method: p.method, dim: p.dim, pca: p.pca, visible: p.visible };
      });
      T.assertEq([st.run, st.tensor, st.points, st.dims, st.method, st.dim, st.visible], ['embed_1', 'features:00000', rows.length, rows[0].length, 'pca', 3, rows.length], 'embedding and view');
      T.assertEq(st.columns, header, 'metadata columns from the header');
      // 144 x 144 px of 8 x 8 images: 18 a row.
      T.assertEq(st.sprite, [18, 18, 18], 'sprite grid');
      T.assert(st.shown, 'sprites drawn as points');
      T.assertEq(await page.$$eval('#prj-tensor option', (o) => o.map((e) => e.value)), ['features:00000', 'features/hidden_1:00004'], 'both tensors, the slash kept');
      T.assertEq(st.pca.components, 3, 'three components');
      T.assert(st.pca.ratio.every((r) => r > 0 && r < 1) && st.pca.ratio[0] >= st.pca.ratio[1] && st.pca.ratio[1] >= st.pca.ratio[2], 'explained variance ratios, largest first: ' + st.pca.ratio);
      const txt = await page.$eval('#prj-pca', (e) => e.textContent);
      T.assert(/Explained variance: \d+\.\d % in 3 components/.test(txt) && txt.includes('PC1 ') && txt.includes('PC3 '), 'explained variance shown: ' + txt);
      T.assert(await litPixels(page) > 2000, 'points drawn');
      await T.screenshot(page, 'projector_pca_3d');
    });

    await T.step('coloured by a metadata column, with its legend', async () => {
      await page.selectOption('#prj-color', '1');
      const counts = new Map();
      for (const r of meta) counts.set(r[1], (counts.get(r[1]) || 0) + 1);
      const want = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([v, c]) => `${v} (${c})`);
      await T.until(page, (w) => JSON.stringify(window.__tfb.pages.projector.legend) === w, JSON.stringify(want), 'legend of split');
      T.assertEq(await page.$eval('.prj-legend-title', (e) => e.textContent), header[1] + ':', 'legend title');
    });

    await T.step('search by label regex', async () => {
      const want = meta.filter((r) => /^class_(0|2)$/i.test(r[0])).length;
      await page.fill('#prj-search', '^class_(0|2)$');
      await T.until(page, (w) => window.__tfb.pages.projector.matches === w, want, want + ' matches');
      T.assertEq(await page.$eval('#prj-match-count', (e) => e.textContent), `${want} points match “^class_(0|2)$”`, 'match count');
      await page.fill('#prj-search', 'class_(');
      await T.until(page, () => window.__tfb.pages.projector.matches === 0 && document.getElementById('prj-search').classList.contains('invalid'), null, 'an invalid regex flagged, matching nothing');
      await page.fill('#prj-search', '');
      await T.until(page, () => window.__tfb.pages.projector.matches === 0 && !document.getElementById('prj-match-count'), null, 'search cleared');
    });

    await T.step('a clicked point lists its nearest neighbours, cosine then Euclidean', async () => {
      const target = 17;
      const [x, y] = await page.evaluate((i) => window.__tfb.pages.projector.screenOf(i), target);
      const box = await page.$eval('#prj-overlay', (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top]; });
      await page.mouse.click(box[0] + x, box[1] + y);
      const s = await T.until(page, () => window.__tfb.pages.projector.selected >= 0 && window.__tfb.pages.projector.selected, null, 'a picked point');
      await T.until(page, () => document.querySelectorAll('#prj-knn li').length === 10, null, '10 neighbours listed');
      T.assertEq(await knnList(page), nearest(s, 'cosine', 10), `cosine neighbours of point ${s}`);
      await page.selectOption('#prj-metric', 'euclidean');
      const want = nearest(s, 'euclidean', 10);
      await T.until(page, (w) => JSON.stringify([...document.querySelectorAll('#prj-knn li')].map((li) => [li.querySelector('.prj-nb-label').textContent, li.querySelector('.prj-dist').textContent])) === w, JSON.stringify(want), 'Euclidean neighbours');
      await page.fill('#prj-k', '3');
      await page.press('#prj-k', 'Enter');
      await T.until(page, () => document.querySelectorAll('#prj-knn li').length === 3, null, 'k = 3');
      T.assertEq(await knnList(page), want.slice(0, 3), 'the first 3');
      await T.screenshot(page, 'projector_knn');
    });

    await T.step('t-SNE in the worker shows progress and stops on Stop', async () => {
      await page.selectOption('#prj-dim', '2');
      await page.selectOption('#prj-method', 'tsne');
      // Seen iterating and stopped in one task of the page, so 300 points
      // cannot finish in between however fast the worker is.
      const seen = await T.until(page, () => {
        const p = window.__tfb.pages.projector;
        if (!(p.running && p.iterations > 0)) return false;
        const vis = (id) => { const e = document.getElementById(id); return !e.hidden && e.getClientRects().length > 0; };
        const r = { progress: vis('prj-progress'), stop: vis('prj-stop'), status: document.getElementById('prj-status').textContent };
        document.getElementById('prj-stop').click();
        return r;
      }, null, 't-SNE iterating');
      T.assert(seen.progress && seen.stop, 'progress bar and Stop shown');
      T.assert(/^t-SNE of 300 points: iteration \d+ of 500$/.test(seen.status), 'progress text: ' + seen.status);
      const st = await page.evaluate(() => { const p = window.__tfb.pages.projector; return { running: p.running, stopped: p.stopped, it: p.iterations, visible: p.visible, dim: p.dim }; });
      T.assertEq([st.running, st.stopped, st.dim, st.visible], [false, true, 2, 300], 'stopped, its last layout kept');
      T.assert(st.it > 0 && st.it < 500, 'stopped mid-way at ' + st.it);
      T.assert(!(await page.isVisible('#prj-progress')), 'progress gone');
      T.assertEq(await page.$eval('#prj-status', (e) => e.textContent), `Stopped after ${st.it} iterations.`, 'status');
    });

    await T.step('UMAP in the worker runs to the end', async () => {
      await page.selectOption('#prj-method', 'umap');
      await T.until(page, () => { const p = window.__tfb.pages.projector; return p.method === 'umap' && !p.running && p.iterations === 300; }, null, 'UMAP done', 60000);
      T.assertEq(await page.$eval('#prj-status', (e) => e.textContent), 'UMAP of 300 points: done, 300 epochs', 'status');
      T.assert(await litPixels(page) > 2000, 'points drawn');
      await T.screenshot(page, 'projector_umap_2d');
    });

    await T.step('the tensor under the tag with a slash: one column, no sprite', async () => {
      await page.selectOption('#prj-method', 'pca');
      await page.selectOption('#prj-tensor', 'features/hidden_1:00004');
      await T.until(page, () => { const p = window.__tfb.pages.projector; return p.tensor === 'features/hidden_1:00004' && p.projected; }, null, 'second tensor projected');
      const st = await page.evaluate(() => { const p = window.__tfb.pages.projector; return [p.points, p.dims, p.columns, p.sprite, p.spritesShown, p.pca && p.pca.components]; });
      T.assertEq(st, [300, 9, ['label'], null, false, 2], 'shape, columns, no sprite, 2-D PCA');
      T.assert(!(await page.isVisible('#prj-sprites')), 'no sprite switch');
      await page.fill('#prj-search', '^p1$');
      await T.until(page, () => window.__tfb.pages.projector.matches > 0, null, 'p1 found');
      const want = fs.readFileSync(path.join(logdir, 'embed_1', '00004', 'features%2fhidden_1', 'metadata.tsv'), 'utf8').trim().split('\n').filter((l) => l === 'p1').length;
      T.assertEq(await page.evaluate(() => window.__tfb.pages.projector.matches), want, 'rows labelled p1');
      T.assertEq(page.problems, [], 'no errors');
    });

    await T.step('dark theme at 800 px', async () => {
      const p2 = await T.newPage(browser, { viewport: { width: 800, height: 900 }, colorScheme: 'dark' });
      await T.openApp(p2, srv.url, 'tab=projector&prjColor=1');
      await T.until(p2, () => window.__tfb.pages.projector && window.__tfb.pages.projector.projected, null, 'a projection');
      T.assert(await litPixels(p2) > 1000, 'points drawn');
      await T.screenshot(p2, 'projector_dark_800');
      T.assertEq(p2.problems, [], 'no errors');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
