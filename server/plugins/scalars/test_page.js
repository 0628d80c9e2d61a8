// Browser test of the Scalars dashboard against the real tfboard: series
// and point counts, smoothing (the server's full-history EMA, unchanged by
// zoom), run and tag filters, x axis modes, log y,
// zoom, tooltip, downloads, URL state, keys, non-finite markers, and a tag
// that looks like HTML shown as text.
'use strict';
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_scalars.js TFBOARD GEN_LOGDIR'); process.exit(2); }
const XSS_TAG = '<img src=x onerror="window.__xss=1">';

const chart = (page, tag) => page.evaluate((t) => window.__tfb.charts['scalars:' + t] || null, tag);
const waitChart = (page, tag, pred, what) => T.until(page, ([t, p]) => {
  const c = window.__tfb.charts['scalars:' + t];
  // eslint-disable-next-line no-new-func
  return c && new Function('c', 'return ' + p)(c) ? c : null;
}, [tag, pred], what);

// GET the scalars route from the page (same origin); rows as JSON.
const scalars = (page, q) => page.evaluate(async (params) => {
  const res = await fetch('data/plugin/scalars/scalars?' + new URLSearchParams(params), { cache: 'no-store' });
  if (!res.ok) throw new Error('HTTP ' + res.status);
  return res.json();
}, q);
// step -> value of the finite rows of a scalars answer.
const stepMap = (rows) => new Map(rows.filter((r) => typeof r[2] === 'number').map((r) => [r[1], r[2]]));
// Every [step, value] pair matches want.get(step) within 1e-9 relative.
function assertNear(pairs, want, what) {
  for (const [st, v] of pairs) {
    const w = want.get(st);
    T.assert(w !== undefined, `${what}: step ${st} missing`);
    T.assert(Math.abs(v - w) <= 1e-9 * Math.max(1e-12, Math.abs(w)), `${what}: step ${st}: ${v} vs ${w}`);
  }
}
// Runs act() while recording the charts' data requests (the per-series
// and the batched scalars routes); returns them as URLs.
async function chartRequests(page, act) {
  const asked = [];
  const on = (r) => {
    const u = new URL(r.url());
    if (/\/data\/plugin\/scalars\/(scalars|multirun)$/.test(u.pathname)) asked.push(u);
  };
  page.on('request', on);
  try { await act(); } finally { page.off('request', on); }
  return asked;
}
// One chart, one request: exactly one request was made for `tag`, to
// /multirun, with the given smoothing (null: none) and step window (null:
// none); and none to the per-series route.
function assertOneRequest(asked, tag, smoothing, win, what) {
  const shown = asked.map((u) => u.pathname.replace(/.*\/scalars\//, '') + u.search).join(', ');
  T.assertEq(asked.filter((u) => u.pathname.endsWith('/scalars/scalars')).length, 0, `${what}: no per-series request (${shown})`);
  const mine = asked.filter((u) => u.searchParams.get('tag') === tag);
  T.assertEq(mine.length, 1, `${what}: one request for ${tag} (${shown})`);
  const p = mine[0].searchParams;
  T.assert(mine[0].pathname.endsWith('/scalars/multirun'), `${what}: the batched route: ${shown}`);
  T.assertEq(p.get('summary'), 'lines', `${what}: lines`);
  T.assertEq(p.get('smoothing'), smoothing === null ? null : String(smoothing), `${what}: smoothing`);
  T.assertEq(p.get('min_step'), win ? String(win[0]) : null, `${what}: min_step`);
  T.assertEq(p.get('max_step'), win ? String(win[1]) : null, `${what}: max_step`);
}

// TensorBoard's browser-side smoothing (debiased EMA) of the given points,
// used only to show that smoothing downsampled points gives other values.
function emaOf(values, w) {
  let last = 0, n = 0;
  return values.map((v) => {
    if (typeof v !== 'number') return v;
    last = last * w + (1 - w) * v;
    n++;
    return last / (1 - Math.pow(w, n));
  });
}

T.run(async () => {
  const logdir = T.makeLogdir(gen);
  const srv = await T.startServer(tfboard, logdir);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  try {
    await T.step('train/loss draws every run that has it, with every point', async () => {
      let c;
      const asked = await chartRequests(page, async () => {
        await T.openApp(page, srv.url, 'tab=scalars&tagFilter=' + encodeURIComponent('^train/loss$'));
        c = await waitChart(page, 'train/loss', 'Object.keys(c.runs).length === 3', 'train/loss with 3 runs');
      });
      // Three runs, smoothed and raw lines: one request.
      assertOneRequest(asked, 'train/loss', 0.6, null, 'first draw');
      T.assertEq(Object.keys(c.runs).sort(), ['alpha', 'beta', 'diverge'], 'runs drawn');
      T.assertEq(c.runs.alpha.points, 500, 'alpha points');
      T.assertEq(c.runs.beta.points, 300, 'beta points');
      T.assertEq(c.runs.diverge.points, 400, 'diverge points');
      // Smoothing 0.6 by default: a smoothed and a faint raw line per run.
      T.assertEq(c.datasets.length, 6, 'datasets (smoothed + raw per run)');
      T.assertEq(c.view.smoothing, 0.6, 'default smoothing');
      T.assert(c.runs.alpha.lastSmoothed !== c.runs.alpha.lastRaw, 'smoothed differs from raw');
      const cards = await page.$$eval('.card', (els) => els.map((e) => e.dataset.tag));
      T.assertEq(cards, ['train/loss'], 'only the filtered card');
      await T.screenshot(page, 'scalars_loss');
    });

    await T.step('non-finite points are marked, not dropped and not in the line', async () => {
      const c = await chart(page, 'train/loss');
      T.assertEq(c.runs.diverge.nonfinite, { nan: 1, pos_inf: 1, neg_inf: 1 }, 'diverge markers');
      T.assertEq(c.runs.diverge.line, 397, 'finite points in the line');
      const status = await page.$eval('.card[data-tag="train/loss"] .card-status', (e) => e.textContent);
      T.assert(/3 non-finite points/.test(status), 'card says 3 non-finite points: ' + status);
    });

    await T.step('smoothing slider changes what is drawn and goes into the URL', async () => {
      let c;
      const asked = await chartRequests(page, async () => {
        await page.fill('#smoothing-value', '0');
        await page.press('#smoothing-value', 'Enter');
        c = await waitChart(page, 'train/loss', 'c.view.smoothing === 0', 'smoothing 0');
      });
      assertOneRequest(asked, 'train/loss', null, null, 'smoothing 0');
      T.assertEq(c.datasets.length, 3, 'one line per run without smoothing');
      T.assertEq(c.runs.alpha.lastSmoothed, c.runs.alpha.lastRaw, 'unsmoothed = raw');
      T.assert(page.url().includes('smoothing=0'), 'URL holds smoothing: ' + page.url());
      let c2;
      const asked2 = await chartRequests(page, async () => {
        await page.fill('#smoothing-value', '0.95');
        await page.press('#smoothing-value', 'Enter');
        c2 = await waitChart(page, 'train/loss', 'c.view.smoothing === 0.95', 'smoothing 0.95');
      });
      assertOneRequest(asked2, 'train/loss', 0.95, null, 'smoothing 0.95');
      T.assertEq(c2.datasets.length, 6, 'smoothed again');
      T.assert(Math.abs(c2.runs.alpha.lastSmoothed - c2.runs.alpha.lastRaw) > 1e-6, 'heavy smoothing moves the last value');
    });

    await T.step('unticking a run removes it from the chart; the run regex filters', async () => {
      await page.click('#run-list input[data-run="beta"]');
      let c = await waitChart(page, 'train/loss', '!("beta" in c.runs) && Object.keys(c.runs).length === 2', 'beta removed');
      T.assertEq(Object.keys(c.runs).sort(), ['alpha', 'diverge'], 'runs after untick');
      T.assert(decodeURIComponent(page.url()).includes('runs=["alpha","diverge","gpu","pipeline"]'), 'URL holds the selected runs (natural order): ' + page.url());
      await page.fill('#run-filter', '^al');
      c = await waitChart(page, 'train/loss', 'Object.keys(c.runs).join() === "alpha"', 'only alpha');
      await page.fill('#run-filter', '');
      await page.click('#runs-all');
      c = await waitChart(page, 'train/loss', 'Object.keys(c.runs).length === 3', 'all runs back');
    });

    await T.step('the tag filter (regex) picks the cards', async () => {
      await page.fill('#tag-filter', 'accuracy$');
      await T.until(page, () => {
        const p = window.__tfb.pages.scalars;
        return p && p.tags.length === 1 && p.tags[0] === 'train/accuracy';
      }, null, 'tag filter applied');
      const c = await waitChart(page, 'train/accuracy', 'Object.keys(c.runs).length === 2', 'accuracy chart');
      T.assertEq(c.runs.alpha.points, 500, 'alpha accuracy points');
      await page.fill('#tag-filter', '(');
      await T.until(page, () => document.getElementById('tag-filter').classList.contains('invalid'), null, 'an invalid regex flagged');
      const empty = await page.$eval('main', (e) => e.textContent);
      T.assert(empty.includes('No scalar tag matches the filter.'), 'an invalid regex matches nothing and says so');
    });

    await T.step('a long series is downsampled to ~2 points per pixel, keeping its spike', async () => {
      await page.fill('#tag-filter', '^train/big$');
      const c = await waitChart(page, 'train/big', 'c.runs.alpha', 'train/big');
      const width = await page.$eval('.card[data-tag="train/big"] canvas', (e) => e.clientWidth);
      T.assert(c.runs.alpha.points < 20000, 'fewer points than stored: ' + c.runs.alpha.points);
      T.assert(c.runs.alpha.points <= Math.max(200, Math.round(width * 2)) + 2, `about 2 points per pixel (${c.runs.alpha.points} for ${width} px)`);
      T.assertEq(c.runs.alpha.max, 1000, 'the spike survives downsampling');
    });

    await T.step('zooming in asks the server again for the visible steps', async () => {
      const box = await page.$eval('.card[data-tag="train/big"] canvas', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      const before = await page.evaluate(() => window.__tfb.charts['scalars:train/big']);
      let c;
      const asked = await chartRequests(page, async () => {
        await page.mouse.move(box.x + box.w * 0.55, box.y + box.h * 0.4);
        await page.mouse.down();
        await page.mouse.move(box.x + box.w * 0.58, box.y + box.h * 0.45, { steps: 4 });
        await page.mouse.up();
        c = await waitChart(page, 'train/big', 'c.zoomed && c.window', 'dense window');
      });
      const [a, b] = c.window.range;
      // The window, raw and smoothed, in one request; the overview around
      // it is the one already drawn.
      assertOneRequest(asked, 'train/big', c.view.smoothing, [a, b], 'zoom');
      T.assert(b - a < 5000, 'a narrow step window: ' + [a, b]);
      // Every step in the window fits in the samples, so each one came back.
      T.assertEq(c.window.points, b - a + 1, 'full density inside the window');
      T.assert(c.runs.alpha.points > before.runs.alpha.points, 'more points after the zoom');
      await page.mouse.dblclick(box.x + box.w * 0.5, box.y + box.h * 0.5);
      const c2 = await waitChart(page, 'train/big', '!c.zoomed && !c.window', 'zoom reset');
      T.assertEq(c2.runs.alpha.points, before.runs.alpha.points, 'back to the overview series');
    });

    // The smoothed line is the server's smoothing=W answer: TensorBoard's
    // debiased EMA over the whole series, then downsampled. TensorBoard
    // smooths the downsampled points instead, so its curve changes with
    // zoom and sample count; these steps check that ours does not.
    let overview = null;   // [step, smoothed] of the unzoomed line
    await T.step('the smoothed line is the server\'s full-history smoothing answer', async () => {
      const c = await waitChart(page, 'train/big', '!c.zoomed && c.drawn && c.view.smoothing > 0', 'train/big smoothed');
      const W = c.view.smoothing, N = c.drawn.samples;
      T.assertEq(c.drawn.weight, W, 'the drawn weight is the view\'s');
      const answer = await scalars(page, { run: 'alpha', tag: 'train/big', samples: N, smoothing: W });
      const finite = answer.filter((r) => typeof r[2] === 'number').map((r) => [r[1], r[2]]);
      T.assert(finite.length > 100, 'a downsampled answer: ' + finite.length);
      T.assertEq(c.runs.alpha.smoothed, finite, 'line = the smoothing=' + W + ' answer, point for point');
      // Every drawn value is the EMA at its step over all 20000 points.
      const full = stepMap(await scalars(page, { run: 'alpha', tag: 'train/big', smoothing: W }));
      T.assertEq(full.size, 20000, 'full-resolution answer');
      assertNear(c.runs.alpha.smoothed, full, 'overview vs full history');
      // The check can fail: smoothing the downsampled raw points (what
      // TensorBoard does) gives other values.
      const raw = await scalars(page, { run: 'alpha', tag: 'train/big', samples: N });
      const tb = emaOf(raw.map((r) => r[2]), W);
      let worst = 0;
      raw.forEach((r, i) => { worst = Math.max(worst, Math.abs(tb[i] - full.get(r[1])) / Math.max(1e-12, Math.abs(full.get(r[1])))); });
      T.assert(worst > 1e-3, 'smoothing after downsampling would differ (worst relative ' + worst + ')');
      overview = c.runs.alpha.smoothed;
    });

    let zoomedLine = null;
    await T.step('a drag-zoom keeps the smoothed values at the same steps', async () => {
      const box = await page.$eval('.card[data-tag="train/big"] canvas', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      await page.mouse.move(box.x + box.w * 0.6, box.y + box.h * 0.4);
      await page.mouse.down();
      await page.mouse.move(box.x + box.w * 0.64, box.y + box.h * 0.42, { steps: 4 });
      await page.mouse.up();
      const c = await waitChart(page, 'train/big', 'c.zoomed && c.window', 'dense window');
      const [a, b] = c.window.range;
      const inWin = c.runs.alpha.smoothed.filter(([st]) => st >= a && st <= b);
      T.assertEq(inWin.length, b - a + 1, 'every step of the window is on the smoothed line');
      const full = stepMap(await scalars(page, { run: 'alpha', tag: 'train/big', smoothing: c.view.smoothing }));
      assertNear(inWin, full, 'window vs full history');
      const zoomedAt = new Map(inWin);
      const same = overview.filter(([st]) => zoomedAt.has(st));
      T.assert(same.length >= 10, 'overview points inside the window: ' + same.length);
      assertNear(same, zoomedAt, 'overview vs zoomed at the same steps');
      zoomedLine = inWin;
    });

    await T.step('moving the slider while zoomed is one request, and changes the line', async () => {
      let c;
      const asked = await chartRequests(page, async () => {
        await page.fill('#smoothing', '0.5');
        c = await waitChart(page, 'train/big', 'c.view.smoothing === 0.5 && c.zoomed && c.window', 'smoothing 0.5 while zoomed');
      });
      const [a, b] = c.window.range;
      assertOneRequest(asked, 'train/big', 0.5, [a, b], 'slider while zoomed');
      const inWin = c.runs.alpha.smoothed.filter(([st]) => st >= a && st <= b);
      T.assertEq(inWin.length, b - a + 1, 'the window is still dense');
      assertNear(inWin, stepMap(await scalars(page, { run: 'alpha', tag: 'train/big', smoothing: 0.5 })), 'weight 0.5 vs full history');
      const before = new Map(zoomedLine);
      const moved = inWin.filter(([st, v]) => Math.abs(v - before.get(st)) > 1e-6 * Math.max(1, Math.abs(v))).length;
      T.assert(moved > inWin.length / 2, `the slider changed the smoothed values (${moved} of ${inWin.length})`);
      await T.screenshot(page, 'scalars_smoothed_zoom');
      const box = await page.$eval('.card[data-tag="train/big"] canvas', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      await page.mouse.dblclick(box.x + box.w * 0.5, box.y + box.h * 0.5);
      await waitChart(page, 'train/big', '!c.zoomed && !c.window', 'zoom reset');
    });

    await T.step('settings: the robust y range (default) leaves the spike out; unticked it sets the range; enlarge widens the card', async () => {
      const before = await chart(page, 'train/big');
      T.assert(before.scales.y[1] < 10 && before.scales.y[1] > 0.9, 'by default the sine fits and the spike is left out: ' + before.scales.y);
      T.assert(before.outliers && before.outliers.above > 0, 'the spike is counted: ' + JSON.stringify(before.outliers));
      await page.click('#settings-btn');
      await page.uncheck('#ignore-outliers');
      await waitChart(page, 'train/big', 'c.scales.y[1] >= 1000', 'outliers in the range');
      await page.check('#ignore-outliers');
      const c = await waitChart(page, 'train/big', 'c.scales.y[1] < 10', 'outliers ignored again');
      T.assert(c.scales.y[1] > 0.9, 'the sine still fits: ' + c.scales.y);
      await page.keyboard.press('Escape');
      // A card alone in its section already takes the row (style.css,
      // issue 27): there, enlarging makes it taller; beside others, wider.
      const size = () => page.$eval('.card[data-tag="train/big"]', (e) => ({ w: e.clientWidth, h: e.clientHeight, alone: e.parentElement.children.length === 1 }));
      const s0 = await size();
      await page.click('.card[data-tag="train/big"] button.enlarge');
      const s1 = await size();
      if (s0.alone) T.assert(s1.w >= s0.w && s1.h > s0.h * 1.2, `enlarged from ${s0.w}×${s0.h} to ${s1.w}×${s1.h} px`);
      else T.assert(s1.w > s0.w * 1.5, `enlarged from ${s0.w} to ${s1.w} px`);
      await page.click('.card[data-tag="train/big"] button.enlarge');
    });

    await T.step('x axis: relative and wall time; log y', async () => {
      await page.fill('#tag-filter', '^train/loss$');
      await waitChart(page, 'train/loss', 'Object.keys(c.runs).length === 3', 'loss again');
      await page.check('#x-axis input[value="relative"]');
      let c = await waitChart(page, 'train/loss', 'c.view.x === "relative"', 'relative x');
      // alpha's last point is 249.5 s after its first.
      T.assert(c.scales.x[1] >= 249.5 && c.scales.x[1] < 400, 'relative x range ends near 249.5 s: ' + c.scales.x[1]);
      T.assert(page.url().includes('x=relative'), 'URL holds x axis');
      await page.check('#x-axis input[value="wall"]');
      c = await waitChart(page, 'train/loss', 'c.view.x === "wall"', 'wall x');
      T.assert(c.scales.x[0] >= 1.6e9 && c.scales.x[0] <= 1700000000, 'wall x starts at the first wall time: ' + c.scales.x[0]);
      await page.check('#x-axis input[value="step"]');
      await page.check('#log-y');
      c = await waitChart(page, 'train/loss', 'c.scales.yType === "logarithmic"', 'log y');
      await page.uncheck('#log-y');
      await waitChart(page, 'train/loss', 'c.scales.yType === "linear"', 'linear y');
    });

    await T.step('hover shows every run at that step, sorted by value', async () => {
      const box = await page.$eval('.card[data-tag="train/loss"] canvas', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      await page.mouse.move(box.x + box.w * 0.5, box.y + box.h * 0.5);
      await page.waitForSelector('.card[data-tag="train/loss"] .chart-tooltip:not([hidden])', { timeout: 5000 });
      const rows = await page.$$eval('.card[data-tag="train/loss"] .chart-tooltip tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
      T.assertEq(rows.length, 3, 'one tooltip row per run');
      const vals = rows.map((r) => parseFloat(r[2]));
      for (let i = 1; i < vals.length; i++) T.assert(vals[i - 1] >= vals[i], 'sorted by value: ' + vals);
      // Smoothed and raw values are the server's at the row's step.
      const W = (await chart(page, 'train/loss')).view.smoothing;
      T.assert(W > 0, 'smoothing on for the tooltip check');
      for (const r of rows) {
        const st = parseFloat(r[4]);
        const sm = stepMap(await scalars(page, { run: r[1], tag: 'train/loss', smoothing: W })).get(st);
        const raw = stepMap(await scalars(page, { run: r[1], tag: 'train/loss' })).get(st);
        T.assert(Math.abs(parseFloat(r[2]) - sm) <= 1e-3 * Math.abs(sm), `${r[1]} smoothed at step ${st}: ${r[2]} vs ${sm}`);
        T.assert(Math.abs(parseFloat(r[3]) - raw) <= 1e-3 * Math.abs(raw), `${r[1]} raw at step ${st}: ${r[3]} vs ${raw}`);
      }
      await T.screenshot(page, 'scalars_tooltip');
      await page.mouse.move(0, 0);
    });

    await T.step('drag a box to zoom, double-click to reset', async () => {
      const box = await page.$eval('.card[data-tag="train/loss"] canvas', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      const before = (await chart(page, 'train/loss')).scales.x;
      await page.mouse.move(box.x + box.w * 0.35, box.y + box.h * 0.3);
      await page.mouse.down();
      await page.mouse.move(box.x + box.w * 0.55, box.y + box.h * 0.5, { steps: 5 });
      await page.mouse.up();
      const c = await waitChart(page, 'train/loss', 'c.zoomed', 'zoomed');
      T.assert(c.scales.x[1] - c.scales.x[0] < (before[1] - before[0]) * 0.5, 'x range narrowed: ' + c.scales.x);
      await T.screenshot(page, 'scalars_zoomed');
      await page.mouse.dblclick(box.x + box.w * 0.5, box.y + box.h * 0.5);
      const c2 = await waitChart(page, 'train/loss', '!c.zoomed', 'zoom reset');
      T.assertEq(c2.scales.x, before, 'x range restored');
    });

    await T.step('download menu links to the API as CSV and JSON', async () => {
      await page.click('.card[data-tag="train/loss"] button.download');
      const links = await page.$$eval('.card[data-tag="train/loss"] .card-menu a', (as) => as.map((a) => a.getAttribute('href')));
      T.assertEq(links.length, 6, 'CSV and JSON per run');
      const csvHref = links.find((l) => l.includes('format=csv') && l.includes('run=alpha'));
      T.assert(csvHref, 'a CSV link for alpha');
      const res = await page.request.get(new URL(csvHref, srv.url).href);
      const body = await res.text();
      T.assert(body.startsWith('Wall time,Step,Value'), 'CSV header: ' + body.slice(0, 40));
      T.assertEq(body.trim().split('\n').length, 501, 'CSV rows: header + 500 points');
      await page.click('.card[data-tag="train/loss"] button.download');
    });

    await T.step('a tag holding HTML is shown as text and runs no script', async () => {
      await page.fill('#tag-filter', '');
      await T.until(page, (t) => window.__tfb.pages.scalars.tags.includes(t), XSS_TAG, 'all tags');
      const titles = await page.$$eval('.card-title', (els) => els.map((e) => e.textContent));
      T.assert(titles.includes(XSS_TAG), 'title text equals the raw tag');
      const imgs = await page.$$eval('main img', (els) => els.length);
      T.assertEq(imgs, 0, 'no <img> element created');
      await page.waitForTimeout(300);
      T.assertEq(await page.evaluate(() => window.__xss === undefined), true, 'no script ran');
      await page.$eval('.card[data-tag^="<img"]', (e) => e.scrollIntoView());
      await waitChart(page, XSS_TAG, 'c.runs.alpha && c.runs.alpha.points === 50', 'the HTML-named tag is charted');
      await T.screenshot(page, 'scalars_html_tag');
    });

    await T.step('the exported view names the HTML tag as text and runs no script offline', async () => {
      await page.click('#settings-btn');
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-view')]);
      const file = require('path').join(T.tmpdir('tfb-export-'), 'view.html');
      await dl.saveAs(file);
      const html = require('fs').readFileSync(file, 'utf8');
      T.assert(!html.includes('<img src=x'), 'the tag is not markup in the file');
      const ctx = await page.context().browser().newContext();
      const off = await ctx.newPage();
      await off.route('**/*', (r) => (/^(file|data):/.test(r.request().url()) ? r.continue() : r.abort()));
      await off.goto('file://' + file);
      await T.until(off, () => window.__export && window.__export.ready, null, 'the export drawn');
      const titles = await off.$$eval('.card-title', (els) => els.map((e) => e.textContent));
      T.assert(titles.includes(XSS_TAG), 'the title is the raw tag, as text: ' + titles);
      T.assertEq(await off.$$eval('main img:not(.export-img)', (els) => els.length), 0, 'no <img> element from the tag');
      T.assertEq(await off.evaluate(() => window.__xss === undefined), true, 'no script ran');
      await ctx.close();
    });

    await T.step('the URL reproduces the view after a reload', async () => {
      await page.fill('#smoothing-value', '0.3');
      await page.press('#smoothing-value', 'Enter');
      await page.fill('#tag-filter', 'loss');
      await T.until(page, () => location.hash.includes('tagFilter=loss') && location.hash.includes('smoothing=0.3'), null, 'URL updated');
      const url = page.url();
      await page.goto('about:blank');
      await T.openApp(page, url.split('#')[0], url.split('#')[1]);
      const c = await waitChart(page, 'train/loss', 'c.view.smoothing === 0.3', 'state restored');
      T.assertEq(await page.$eval('#tag-filter', (e) => e.value), 'loss', 'tag filter restored');
      T.assertEq(await page.$eval('#smoothing', (e) => e.value), '0.3', 'slider restored');
      T.assert(c.runs.alpha, 'chart drawn');
    });

    await T.step('keys: / focuses the tag filter, r reloads', async () => {
      await page.click('main');
      await page.keyboard.press('/');
      T.assertEq(await page.evaluate(() => document.activeElement && document.activeElement.id), 'tag-filter', 'focus');
      await page.click('main');
      const before = await page.evaluate(() => window.__tfb.reloads);
      await page.keyboard.press('r');
      await T.until(page, (b) => window.__tfb.reloads > b, before, 'reload by key');
      T.assert(/Reloaded \d\d:\d\d:\d\d/.test(await page.$eval('#reload-time', (e) => e.textContent)), 'reload time shown');
    });

    await T.step('dark theme follows the system setting', async () => {
      const dark = await T.newPage(browser, { colorScheme: 'dark' });
      await T.openApp(dark, srv.url, 'tab=scalars&tagFilter=' + encodeURIComponent('^train/'));
      await T.until(dark, () => window.__tfb.charts['scalars:train/loss'], null, 'dark chart');
      const bg = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
      T.assertEq(bg, 'rgb(21, 23, 26)', 'dark background');
      await T.screenshot(dark, 'scalars_dark');
      T.assertEq(dark.problems, [], 'no console errors (dark page)');
      await dark.context().close();
    });

    await T.step('no console errors, failed requests or dialogs', async () => {
      T.assertEq(page.problems, [], 'problems');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
