// Shared harness of the browser tests: finds playwright-core and Chromium
// (exit 77 = skip, with the reason, when either is missing), writes a
// logdir with the generator, starts the real tfboard on 127.0.0.1 with an
// ephemeral port, collects console errors, takes screenshots, and always
// stops the server.
'use strict';
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

function skip(why) {
  console.log('SKIP: ' + why);
  process.exit(77);
}

let playwright;
try {
  playwright = require(path.join(__dirname, 'node_modules', 'playwright-core'));
} catch (e) {
  skip('playwright-core is not installed: run `npm ci` in tests/webui');
}
const CHROMIUM = process.env.TFB_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) skip(CHROMIUM + ' not found (apt-get install chromium)');

const children = new Set();
const deaths = [];
const tmpdirs = new Set();
function cleanup() {
  for (const c of children) { try { c.kill('SIGKILL'); } catch (e) { /* gone */ } }
  children.clear();
  for (const d of tmpdirs) { try { fs.rmSync(d, { recursive: true, force: true }); } catch (e) { /* best effort */ } }
  tmpdirs.clear();
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { cleanup(); process.exit(1); });

function tmpdir(prefix) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tmpdirs.add(d);
  return d;
}

// Runs the generator into a fresh directory and returns it.
function makeLogdir(gen) {
  const d = tmpdir('tfb-webui-');
  execFileSync(gen, [d], { stdio: 'inherit', timeout: 60000 });
  return d;
}

// Starts tfboard and resolves with {url, proc, stop} once it printed its URL.
function startServer(tfboard, logdir, extra = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(tfboard, ['--logdir', logdir, '--host', '127.0.0.1', '--port', '0', ...extra],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    let out = '';
    const timer = setTimeout(() => reject(new Error('tfboard did not print its URL in 15 s: ' + out)), 15000);
    const onData = (b) => {
      out += b.toString();
      const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: 'http://127.0.0.1:' + m[1] + '/',
          proc,
          stop() { children.delete(proc); proc.kill('SIGTERM'); },
        });
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', (b) => { out += b.toString(); process.stderr.write(b); });
    proc.on('exit', (code, sig) => {
      clearTimeout(timer);
      const wasStopped = !children.has(proc);
      children.delete(proc);
      if (!out.includes('http://')) reject(new Error('tfboard exited ' + code + ': ' + out));
      // A server that dies under the test fails every later step at once,
      // with the reason, instead of a cascade of timeouts.
      else if (!wasStopped) deaths.push(`tfboard exited (code ${code}, signal ${sig}) during the test`);
    });
  });
}

async function launch() {
  return playwright.chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in CI containers cannot use Chromium's sandbox.
    args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [],
  });
}

// A page that records console errors, uncaught exceptions, failed requests
// and dialogs (an XSS payload calling alert() would show up here).
async function newPage(browser, opts = {}) {
  const context = await browser.newContext({
    viewport: opts.viewport || { width: 1400, height: 1000 },
    colorScheme: opts.colorScheme || 'light',
    acceptDownloads: true,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10000);
  page.problems = [];
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push('console: ' + m.text()); });
  page.on('pageerror', (e) => page.problems.push('pageerror: ' + e.message));
  page.on('response', (r) => { if (r.status() >= 400) page.problems.push('HTTP ' + r.status() + ' ' + r.url()); });
  page.on('dialog', (d) => { page.problems.push('dialog: ' + d.message()); d.dismiss().catch(() => {}); });
  return page;
}

const SHOTS = path.join(process.env.TFB_BUILD_ROOT || path.join(__dirname, '..', '..', 'build'), 'screenshots');
async function screenshot(page, name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, name + '.png');
  await page.screenshot({ path: file, fullPage: false });
  console.log('# screenshot ' + file);
  return file;
}

// Waits for the app's first catalog load.
async function openApp(page, url, hash = '') {
  await page.goto(url + (hash ? '#' + hash : ''));
  await page.waitForFunction(() => window.__tfb && window.__tfb.ready, null, { timeout: 20000 });
}

// Polls fn in the page until it returns a truthy value.
async function until(page, fn, arg, what, timeout = 15000) {
  try {
    const h = await page.waitForFunction(fn, arg, { timeout, polling: 100 });
    return await h.jsonValue();
  } catch (e) {
    throw new Error('timed out waiting for ' + what);
  }
}

let failures = 0;
let count = 0;
async function step(name, fn) {
  count++;
  try {
    if (deaths.length) throw new Error(deaths.join('; '));
    await fn();
    console.log(`ok ${count} - ${name}`);
  } catch (e) {
    failures++;
    console.log(`not ok ${count} - ${name}\n  ${String(e && e.stack || e).split('\n').slice(0, 4).join('\n  ')}`);
  }
}

// The dashboards of a plugins.list (path from the repository root), in
// its order: what the listing must answer.
function pluginList(file) {
  return fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8').split('\n')
    .map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
}

// A copy of the web files as the server serves them, for --webui_dir: the
// frame (webui/) plus each dashboard's page and helpers from its plugin
// folder (server/plugins/meson.build: page.js as js/pages/<name>.js,
// another file f as js/lib/<name>_<f>; the folder's test_*.js are tests).
function stageWebui(dir) {
  const root = path.join(__dirname, '..', '..');
  fs.cpSync(path.join(root, 'webui'), dir, { recursive: true });
  const plugins = path.join(root, 'server', 'plugins');
  for (const p of fs.readdirSync(plugins)) {
    const d = path.join(plugins, p);
    if (!fs.statSync(d).isDirectory()) continue;
    for (const f of fs.readdirSync(d)) {
      if (!f.endsWith('.js') || f.startsWith('test_')) continue;
      const to = f === 'page.js' ? path.join(dir, 'js', 'pages', p + '.js') : path.join(dir, 'js', 'lib', p + '_' + f);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(path.join(d, f), to);
    }
  }
  return dir;
}

function assert(cond, msg) { if (!cond) throw new Error('assertion failed: ' + msg); }
function assertEq(a, b, msg) {
  const x = JSON.stringify(a), y = JSON.stringify(b);
  if (x !== y) throw new Error(`${msg}: got ${x}, want ${y}`);
}

// Runs main with an overall time bound; exit 1 on any failed step.
function run(main, limitMs = 150000) {
  const t = setTimeout(() => { console.log('not ok - overall time limit reached'); cleanup(); process.exit(1); }, limitMs);
  main().then(() => {
    clearTimeout(t);
    console.log(`1..${count}`);
    cleanup();
    process.exit(failures ? 1 : 0);
  }, (e) => {
    clearTimeout(t);
    console.log('not ok - ' + (e && e.stack || e));
    cleanup();
    process.exit(1);
  });
}

module.exports = { skip, makeLogdir, tmpdir, stageWebui, pluginList, startServer, launch, newPage, screenshot, openApp, until, step, assert, assertEq, run };
