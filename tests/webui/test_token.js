// Browser test of a shared server's token (issue 19): the URL with
// ?token= opens the app, whose every page, module and /data request then
// goes with the cookie (HttpOnly, SameSite=Strict), and the address bar
// no longer shows the token; also when the URL is a link on another site
// (a chat message); without the token the page is a 401.
'use strict';
const T = require('./lib.js');

const [tfboard, gen] = process.argv.slice(2);
if (!tfboard || !gen) { console.error('usage: test_token.js TFBOARD GEN_LOGDIR'); process.exit(2); }
const TOKEN = 'webui-team-token-93f1';

T.run(async () => {
  const logdir = T.makeLogdir(gen);
  const srv = await T.startServer(tfboard, logdir, ['--token', TOKEN, '--reload_interval', '0']);
  const browser = await T.launch();
  try {
    await T.step('without the token the page is a 401', async () => {
      const page = await T.newPage(browser);
      const r = await page.goto(srv.url);
      T.assertEq(r.status(), 401, 'status');
      await page.context().close();
    });
    await T.step('the URL with ?token= opens the app; the token leaves the address bar', async () => {
      const page = await T.newPage(browser);
      await T.openApp(page, srv.url + '?token=' + TOKEN);
      T.assertEq(page.url(), srv.url, 'address after the redirect');
      const cookies = await page.context().cookies();
      T.assertEq(cookies.length, 1, 'one cookie');
      T.assert(cookies[0].httpOnly && cookies[0].sameSite === 'Strict', JSON.stringify(cookies[0]));
      T.assert(!JSON.stringify(cookies).includes(TOKEN), 'the cookie is not the token');
      T.assertEq(await page.evaluate(() => document.cookie), '', 'not readable from scripts');
      const runs = await page.evaluate(() => fetch('data/runs').then((r) => r.status));
      T.assertEq(runs, 200, '/data/runs from the page');
      await page.waitForTimeout(500);
      T.assertEq(page.problems, [], 'no failed request or error');
      await T.screenshot(page, 'token_app');
      await page.context().close();
    });
    await T.step('a link on another site opens the app too', async () => {
      const page = await T.newPage(browser);
      // a page of no site of ours, with the link
      await page.setContent('<a href="' + srv.url + '?token=' + TOKEN + '">tfboard</a>');
      const tokenAnswers = [];
      page.on('response', (r) => { if (r.url().includes('token=')) tokenAnswers.push(r.status()); });
      await page.click('a');
      await page.waitForURL(srv.url);
      // the browser said cross-site: a page of ours took it on (200), not a
      // redirect, whose target would have gone without the cookie
      T.assertEq(tokenAnswers, [200], 'answers to the URL with the token');
      await page.waitForFunction(() => window.__tfb && window.__tfb.ready, null, { timeout: 20000 });
      T.assertEq(page.url(), srv.url, 'address after the redirect');
      await page.waitForTimeout(500);
      T.assertEq(page.problems, [], 'no failed request or error');
      await page.context().close();
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
