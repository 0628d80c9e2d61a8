// Browser test of text as Markdown (issue 22) on PyTorch's own file
// (testdata torch_media): heading, table, list and link rendered; the
// <script> shown as text and never run; the javascript: link not a link.
// And its add_custom_scalars layout opening as multi-tag charts.
'use strict';
const fs = require('fs');
const path = require('path');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
const logdir = path.join(process.env.TFB_TESTDATA || '', 'torch_media');
if (!fs.existsSync(logdir)) T.skip('no testdata torch_media (TFB_TESTDATA)');

T.run(async () => {
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  let shot = null;
  try {
    await T.step('Markdown rendered as TensorBoard does, nothing executed', async () => {
      await page.addInitScript(() => { window.alert = () => { window.__alerted = true; }; });
      await T.openApp(page, srv.url, 'tab=text');
      await T.until(page, () => document.querySelector('.markdown h1'), null, 'rendered markdown');
      const st = await page.$eval('.markdown', (m) => ({
        h1: m.querySelector('h1').textContent,
        th: [...m.querySelectorAll('table th')].map((e) => e.textContent),
        td: [...m.querySelectorAll('table td')].map((e) => e.textContent),
        li: [...m.querySelectorAll('li')].map((e) => e.textContent),
        links: [...m.querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('href')]),
        scripts: document.querySelectorAll('main script').length,
        text: m.textContent,
      }));
      T.assertEq(st.h1, 'Run notes', 'heading');
      T.assertEq(st.th, ['metric', 'value'], 'table header');
      T.assertEq(st.td, ['acc', '0.91', 'loss', '0.23'], 'table cells');
      T.assertEq(st.li, ['item one', 'item two'], 'list');
      T.assertEq(st.links, [['docs', 'https://example.org']], 'only the safe link is a link');
      T.assertEq(st.scripts, 0, 'no script element');
      T.assert(st.text.includes("<script>alert('x')</script>"), 'the script shown as text');
      T.assertEq(await page.evaluate(() => window.__alerted === undefined), true, 'nothing ran');
      shot = await T.screenshot(page, 'text_markdown');
      T.assertEq(page.problems, [], 'no errors');
    });
    await T.step('the custom scalars layout opens as multi-tag charts', async () => {
      const p2 = await T.newPage(browser);
      await T.openApp(p2, srv.url, 'tab=scalars');
      await T.until(p2, () => document.querySelectorAll('#multi-section .card-title').length === 2, null, 'two multi-tag charts');
      const titles = await p2.$$eval('#multi-section .card-title', (els) => els.map((e) => e.textContent));
      T.assertEq(titles, ['tags: loss/train, loss/val', 'tags: acc/mean, acc/low, acc/high'], 'charts of exactly the layout\'s tags');
      T.assertEq(await p2.$eval('#layout-msg', (e) => e.textContent), 'Custom scalars layout of the runs applied (Multi-tag charts, collapsed).', 'message');
      const cs = await T.screenshot(p2, 'custom_scalars');
      if (fs.existsSync('/work/shots/media')) fs.copyFileSync(cs, '/work/shots/media/custom_scalars.png');
      T.assertEq(p2.problems, [], 'no errors');
    });
  } finally {
    await browser.close();
    srv.stop();
    if (shot && fs.existsSync('/work/shots/media')) fs.copyFileSync(shot, '/work/shots/media/text_markdown.png');
  }
});
