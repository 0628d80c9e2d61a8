// Browser test: a text too long to render as Markdown (issue 32 item 5:
// cmark took seconds on 360 KB of "![[]()" repeated, on every visit) is
// shown whole as preformatted plain text, with the server's reason above
// it; a short one beside it is still rendered.
'use strict';
const path = require('path');
const { execFileSync } = require('child_process');
const T = require('../../../tests/webui/lib.js');

const [tfboard] = process.argv.slice(2);
const REPEAT = 20000;
const LONG = '![[]()'.repeat(REPEAT); // 120,000 bytes, over the 64 KiB bound

// The run's event file, written with the integration tests' encoder.
const GEN = `
import os, sys
sys.path.insert(0, sys.argv[2])
from tfevents_py import event, key, ld, record, varint

def text_value(tag, s):
    t = key(1, 0) + varint(7) + ld(2, b"") + ld(8, s.encode())
    return ld(1, ld(1, tag.encode()) + ld(9, ld(1, ld(1, b"text"))) +
              ld(8, t))

d = os.path.join(sys.argv[1], "r")
os.makedirs(d)
with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
    f.write(record(event(1.0, file_version="brain.Event:2")))
    f.write(record(event(2.0, 0, summary=text_value(
        "long", "![[]()" * int(sys.argv[3])))))
    f.write(record(event(2.0, 0, summary=text_value("short",
                                                    "# Short\\n\\n*fine*"))))
`;

T.run(async () => {
  const logdir = T.tmpdir('tfb-longtext-');
  execFileSync('python3', ['-c', GEN, logdir, path.join(__dirname, '..', '..', '..', 'tests', 'integration'), String(REPEAT)],
    { stdio: 'inherit', timeout: 60000 });
  const srv = await T.startServer(tfboard, logdir, ['--reload_interval', '0']);
  const browser = await T.launch();
  const page = await T.newPage(browser);
  try {
    await T.step('a long text as plain text, saying so; a short one rendered', async () => {
      await T.openApp(page, srv.url, 'tab=text');
      await T.until(page, () => document.querySelector('.card[data-tag="long"] .text-entry') &&
        document.querySelector('.card[data-tag="short"] .markdown'), null, 'both cards');
      const st = await page.evaluate(() => {
        const long = document.querySelector('.card[data-tag="long"]');
        const short = document.querySelector('.card[data-tag="short"]');
        const note = long.querySelector('.text-note');
        return {
          note: note ? note.textContent : null,
          pre: (long.querySelector('pre.text-body') || {}).textContent,
          markdown: long.querySelectorAll('.markdown').length,
          h1: (short.querySelector('.markdown h1') || {}).textContent,
          shortNote: short.querySelectorAll('.text-note').length,
        };
      });
      T.assert(st.note && st.note.startsWith('Shown as plain text: ') && st.note.includes('64 KiB'), 'the reason: ' + st.note);
      T.assertEq(st.pre, LONG, 'the whole text, preformatted');
      T.assertEq(st.markdown, 0, 'no Markdown rendering of the long text');
      T.assertEq(st.h1, 'Short', 'the short text rendered');
      T.assertEq(st.shortNote, 0, 'no note on the short text');
      T.assertEq(page.problems, [], 'no errors');
    });
  } finally {
    await browser.close();
    srv.stop();
  }
});
