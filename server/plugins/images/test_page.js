// Browser test of the Images tab (issue 22), on a logdir written with
// tfb_image: a row per tag with the runs side by side, each card with its
// own step slider; the global step slider moves every card; images load
// only as their cards scroll into view; click to enlarge; the pixelated
// toggle, brightness and contrast; a damaged image gets the server's
// reason as text.
'use strict';
const fs = require('fs');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_images.js TFBOARD GEN_IMAGES_LOGDIR'); process.exit(2); }

const cardState = (page) => page.$$eval('.images-card', (cs) => cs.map((c) => ({
  tag: c.dataset.tag, run: c.dataset.run, top: Math.round(c.getBoundingClientRect().top),
  label: c.querySelector('.images-step').textContent, src: c.querySelector('img').getAttribute('src'),
})));

T.run(async () => {
  const logdir = T.makeLogdir(gen);
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  const shots = [];
  try {
    await T.step('past MEDIA_CARDS_MAX cards the page builds the first ones and says how to see the rest', async () => {
      await T.openApp(page, srv.url, 'tab=images');
      await T.until(page, () => window.__tfb.pages.images && window.__tfb.pages.images.renders >= 1 && window.__tfb.pages.images.cards > 0, null, 'image cards');
      const cards = await cardState(page);
      T.assertEq(cards.length, 300, 'cards: the first 300 of 2 runs x 152 tags + the broken one');
      T.assertEq(cards[0].tag, 'broken/cut', 'in tag order');
      T.assert(!cards.some((c) => c.tag === 'samples/gradient'), 'tags past the cap are not built');
      const note = await page.$eval('.media-cap', (n) => n.textContent);
      T.assert(/first 300 of 305 cards/.test(note) && /tag filter/.test(note), note);
      shots.push(await T.screenshot(page, 'images_cap'));
    });

    await T.step('the Images tab lists a card per run and tag, runs side by side', async () => {
      // many/t000..t099 (200 cards), the gradient and mask tags, the broken one: 205, under the cap.
      await page.fill('#tag-filter', '^(many/t0|samples|masks|broken)');
      await T.until(page, () => document.querySelectorAll('.images-card').length === 2 * 102 + 1 && !document.querySelector('.media-cap'), null, 'filtered cards');
      const cards = await cardState(page);
      T.assertEq(cards.length, 2 * 102 + 1, 'cards: 2 runs x 102 tags, and the broken one of alpha');
      const grad = cards.filter((c) => c.tag === 'samples/gradient');
      T.assertEq(grad.map((c) => c.run), ['alpha', 'beta'], 'gradient cards');
      T.assertEq(grad[0].top, grad[1].top, 'alpha and beta side by side');
      T.assertEq(grad.map((c) => c.label), ['step 45  (10/10)', 'step 45  (10/10)'], 'last step shown first');
    });

    await T.step('images load lazily as cards scroll into view', async () => {
      await page.evaluate(() => window.scrollTo(0, 0));
      await T.until(page, () => window.__tfb.pages.images.loaded >= 4, null, 'first images');
      const before = await cardState(page);
      const withSrc = before.filter((c) => c.src).length;
      T.assert(withSrc < before.length / 2, `only visible cards load (${withSrc} of ${before.length})`);
      const last = await page.$('.images-card:last-of-type');
      await page.evaluate(() => { const m = document.querySelector('#main') || document.scrollingElement; m.scrollTop = m.scrollHeight; window.scrollTo(0, document.body.scrollHeight); });
      await last.scrollIntoViewIfNeeded();
      await T.until(page, () => { const c = [...document.querySelectorAll('.images-card')].pop(); return c.querySelector('img').getAttribute('src'); }, null, 'last card loads once visible');
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.$eval('.images-card', (c) => c.scrollIntoView());
    });

    await T.step('the PNG written by tfb_image is what the card shows', async () => {
      const card = '.images-card[data-tag="samples/gradient"][data-run="alpha"] img';
      await T.until(page, (s) => { const i = document.querySelector(s); return i && i.complete && i.naturalWidth > 0; }, card, 'gradient image');
      const px = await page.$eval(card, (img) => {
        const c = document.createElement('canvas');
        c.width = img.naturalWidth; c.height = img.naturalHeight;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        return { w: img.naturalWidth, h: img.naturalHeight, p: [...g.getImageData(10, 20, 1, 1).data] };
      });
      // Pixel (x=10, y=20) at step 45 of run alpha: (x*4, y*5, 45*5).
      T.assertEq(px, { w: 64, h: 48, p: [40, 100, 225, 255] }, 'decoded pixel');
    });

    await T.step('the global step slider moves every card; a card slider moves one', async () => {
      await page.$eval('#images-global-step', (s) => { s.value = '22'; s.dispatchEvent(new Event('input')); });
      let cards = await cardState(page);
      const grad = cards.filter((c) => c.tag !== 'broken/cut' && !c.tag.startsWith('many/'));
      T.assert(grad.every((c) => c.label.startsWith('step 20 ')), 'every card at step 20 (last <= 22): ' + JSON.stringify(grad.map((c) => c.label)));
      T.assert(cards.filter((c) => c.tag.startsWith('many/')).every((c) => c.label === 'step 0'), 'one-image cards stay at step 0');
      await page.$eval('.images-card[data-tag="samples/gradient"][data-run="beta"] .images-slider', (s) => { s.value = '1'; s.dispatchEvent(new Event('input')); });
      cards = await cardState(page);
      const a = cards.find((c) => c.tag === 'samples/gradient' && c.run === 'alpha');
      const b = cards.find((c) => c.tag === 'samples/gradient' && c.run === 'beta');
      T.assertEq([a.label, b.label], ['step 20  (5/10)', 'step 5  (2/10)'], 'only beta moved');
      T.assert(/step=5$/.test(b.src), 'beta shows its step 5 image: ' + b.src);
    });

    await T.step('a data reload keeps the global step and the steps picked on cards', async () => {
      const n = await page.evaluate(() => window.__tfb.pages.images.renders);
      await page.click('#reload');
      // The cards are rebuilt once the reload's lists have arrived (slow
      // under ASan): wait for that render, so that the next step does not
      // race it.
      await T.until(page, (k) => window.__tfb.pages.images.renders > k, n, 'cards rebuilt', 30000);
      T.assert(await page.evaluate(() => window.__tfb.pages.images.cards) >= 2 * 102 + 1, 'cards again');
      const cards = await cardState(page);
      const a = cards.find((c) => c.tag === 'samples/gradient' && c.run === 'alpha');
      const b = cards.find((c) => c.tag === 'samples/gradient' && c.run === 'beta');
      T.assertEq([a.label, b.label], ['step 20  (5/10)', 'step 5  (2/10)'], 'steps kept');
    });

    await T.step('pixelated, brightness and contrast apply to every image', async () => {
      await page.check('#images-pixelated');
      await page.$eval('#images-brightness', (s) => { s.value = '1.5'; s.dispatchEvent(new Event('input')); });
      await page.$eval('#images-contrast', (s) => { s.value = '0.5'; s.dispatchEvent(new Event('input')); });
      const st = await page.$eval('.images-card[data-tag="masks/small"] img', (i) => ({ r: getComputedStyle(i).imageRendering, f: i.style.filter }));
      T.assertEq(st, { r: 'pixelated', f: 'brightness(1.5) contrast(0.5)' }, 'styles');
      // Scrolled into view (again on each poll: a data reload may have
      // rebuilt the cards meanwhile, and a rebuilt card loads its image
      // when its observer sees it), the lazy image arrives.
      await T.until(page, () => {
        const c = document.querySelector('.images-card[data-tag="masks/small"]');
        const i = c && c.querySelector('img');
        if (!i) return false;
        if (!(i.complete && i.naturalWidth === 8)) { c.scrollIntoView(); return false; }
        return true;
      }, null, 'mask image', 30000);
      shots.push(await T.screenshot(page, 'images_tab'));
      await page.click('#images-reset');
      const f = await page.$eval('.images-card img', (i) => i.style.filter);
      T.assertEq(f, 'brightness(1) contrast(1)', 'reset');
    });

    await T.step('click enlarges; Escape closes', async () => {
      await page.click('.images-card[data-tag="masks/small"][data-run="alpha"] img');
      await T.until(page, () => !document.getElementById('images-lightbox').hidden, null, 'lightbox');
      const big = await page.$eval('#images-lightbox img', (i) => ({ w: Math.round(i.getBoundingClientRect().width), pix: getComputedStyle(i).imageRendering }));
      T.assert(big.w >= 400, 'enlarged: ' + big.w);
      T.assertEq(big.pix, 'pixelated', 'lightbox keeps pixelated');
      shots.push(await T.screenshot(page, 'images_lightbox'));
      await page.keyboard.press('Escape');
      T.assert(await page.$eval('#images-lightbox', (l) => l.hidden), 'closed');
    });

    await T.step('a damaged image says why, as text; nothing else breaks', async () => {
      await page.fill('#tag-filter', 'broken');
      await T.until(page, () => document.querySelectorAll('.images-card').length === 1, null, 'filtered to the broken tag');
      const note = await T.until(page, () => { const n = document.querySelector('.images-card .error-text'); return n && /cut short/.test(n.textContent) && n.textContent; }, null, 'the reason');
      T.assert(/damaged PNG/.test(note), note);
      shots.push(await T.screenshot(page, 'images_damaged'));
      const problems = page.problems.filter((p) => !/HTTP 422 .*individualImage/.test(p) && !/status of 422/.test(p));
      T.assertEq(problems, [], 'no other errors');
    });
  } finally {
    await browser.close();
    srv.stop();
    const out = '/work/shots/media';
    if (fs.existsSync(out)) for (const s of shots) fs.copyFileSync(s, path.join(out, path.basename(s)));
  }
});
