// Browser test of the Audio tab (issue 31), on a logdir of
// gen_av_logdir.py: a card per run and tag with an <audio> player and its
// own step slider; the global step slider moves every card; a clip's label
// is shown as text; the browser decodes the WAV the server sends (its
// duration); a clip whose WAV header lies shows the server's reason. Then
// the Images tab animates the GIF that add_video's encoder writes.
'use strict';
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
if (!tfboard) { console.error('usage: test_page.js TFBOARD'); process.exit(2); }

const cards = (page) => page.$$eval('.audio-card', (cs) => cs.map((c) => ({
  tag: c.dataset.tag, run: c.dataset.run,
  step: c.querySelector('.audio-step').textContent,
  label: c.querySelector('.audio-label').textContent,
  src: c.querySelector('audio').getAttribute('src'),
})));

T.run(async () => {
  const logdir = T.tmpdir('tfb_audio_page_');
  execFileSync('python3', [path.join(__dirname, 'gen_av_logdir.py'), logdir], { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser, { viewport: { width: 1440, height: 900 } });
  try {
    await T.step('the Audio tab has a card per tag, last step first, labels as text', async () => {
      await T.openApp(page, srv.url, 'tab=audio');
      await T.until(page, () => window.__tfb.pages.audio && window.__tfb.pages.audio.cards === 3, null, 'audio cards');
      const c = await cards(page);
      T.assertEq(c.map((x) => x.tag), ['sound/labelled', 'sound/liar', 'sound/tone'], 'tags');
      T.assert(c.every((x) => x.step === 'step 40  (5/5)'), 'last step shown: ' + JSON.stringify(c.map((x) => x.step)));
      T.assertEq(c[0].label, 'clip <4> of the labelled tag', 'the label, as text');
      T.assertEq(await page.$$eval('.audio-label b', (b) => b.length), 0, 'no HTML from a label');
    });

    await T.step('the browser decodes the WAV the server sends', async () => {
      const d = await page.$eval('.audio-card[data-tag="sound/tone"] audio', (a) => new Promise((resolve) => {
        a.addEventListener('loadedmetadata', () => resolve(a.duration), { once: true });
        a.addEventListener('error', () => resolve('error ' + (a.error && a.error.code)), { once: true });
        a.load();
      }));
      T.assert(typeof d === 'number' && Math.abs(d - 0.5) < 0.01, 'duration of the 0.5 s clip: ' + d);
    });

    await T.step('the global step slider moves every card; a card slider moves one', async () => {
      await page.$eval('#audio-global-step', (s) => { s.value = '25'; s.dispatchEvent(new Event('input')); });
      let c = await cards(page);
      T.assert(c.every((x) => x.step === 'step 20  (3/5)'), 'every card at step 20: ' + JSON.stringify(c.map((x) => x.step)));
      T.assertEq(c[0].label, 'clip <2> of the labelled tag', 'its label follows');
      await page.$eval('.audio-card[data-tag="sound/tone"] .audio-slider', (s) => { s.value = '0'; s.dispatchEvent(new Event('input')); });
      c = await cards(page);
      T.assertEq(c.map((x) => x.step), ['step 20  (3/5)', 'step 20  (3/5)', 'step 0  (1/5)'], 'only tone moved');
      T.assert(/step=0$/.test(c[2].src), 'tone plays its step 0 clip: ' + c[2].src);
    });

    await T.step('a clip whose WAV header lies shows the server\'s reason', async () => {
      await page.$eval('.audio-card[data-tag="sound/liar"] audio', (a) => a.load());
      const note = await T.until(page, () => {
        const n = document.querySelector('.audio-card[data-tag="sound/liar"] .audio-note');
        return n && /channels/.test(n.textContent) && n.textContent;
      }, null, 'the reason');
      T.assert(/claims 200 channels/.test(note), note);
      await T.screenshot(page, 'audio_tab_1440');
      await page.setViewportSize({ width: 800, height: 900 });
      await page.emulateMedia({ colorScheme: 'dark' });
      await T.screenshot(page, 'audio_tab_800_dark');
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    await T.step('the Images tab animates add_video\'s GIF', async () => {
      await T.openApp(page, srv.url, 'tab=images');
      const sel = '.images-card[data-tag="clip/video"] img';
      await T.until(page, (s) => { const i = document.querySelector(s); return i && i.complete && i.naturalWidth > 0; }, sel, 'the GIF');
      // The frame shown changes while the page is left alone: red, green,
      // blue, white at 4 fps. A canvas would only ever get the first frame
      // (HTML's rule for drawImage of an animation), so the test looks at
      // what is on the screen: the image's pixels in screenshots, until
      // three different frames were seen.
      const img = await page.$(sel);
      const seen = new Set();
      for (let i = 0; i < 100 && seen.size < 3; i++) {
        const png = await img.screenshot();
        seen.add(require('crypto').createHash('sha256').update(png).digest('hex'));
        await page.waitForTimeout(100);
      }
      T.assert(seen.size >= 3, 'the GIF shows ' + seen.size + ' different frames');
      await T.screenshot(page, 'images_gif_1440');
      const problems = page.problems.filter((p) => !/HTTP 422 .*individualAudio/.test(p) && !/status of 422/.test(p));
      T.assertEq(problems, [], 'no other errors');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
