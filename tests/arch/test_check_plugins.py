#!/usr/bin/env python3
"""test_check_plugins.py - shows that check_plugins.py can fail: it writes a
small clean tree (two dashboards, one with a page) that must pass, then
plants each violation in a copy and checks that it is named: core or the
store including a dashboard's header, naming its descriptor or its routes;
a web UI core module naming a dashboard's routes or tab or importing a
page; a folder not in the list and a line without a folder; a dashboard
without its page.js, with page.js not first in plugin_js, without API.md;
a page module under webui/js/pages/. A dashboard named in a comment is
not a finding.

usage: test_check_plugins.py CHECKER
"""
import os
import subprocess
import sys
import tempfile

CHECKER = sys.argv[1]

CLEAN = {
    'server/plugins/plugins.list': '# tab order\na\nb\n',
    'server/plugins/a/a.c': 'const int tfb_plugin_a = {.module = "js/pages/a.js"};\n',
    'server/plugins/a/page.js': 'export default { mount() {} };\n',
    'server/plugins/a/meson.build': "plugin_js = ['page.js', 'x.js']\n",
    'server/plugins/a/API.md': '## A\n',
    'server/plugins/b/b.c': 'const int tfb_plugin_b = {.module = NULL};\n',
    'server/plugins/b/meson.build': '\n',
    'server/plugins/b/API.md': '## B\n',
    'server/core/k.c': '/* a comment may name tfb_plugin_a and '
                       '"/data/plugin/a/x" */\nint k(void) { return 0; }\n',
    'server/store/s.c': 'static const char *p = "/data/plugin/core/progress";\n',
    'webui/js/core/app.js': "// the a page's data/plugin/a/tags, tab: 'a'\n"
                            "import { x } from './dom.js';\n",
}

PLANTS = {
    'core-include': ({'server/core/bad.c': '#include "plugins/a/a.h"\n'},
                     'names-plugin server/core/bad.c:1 includes a dashboard header'),
    'store-descriptor': ({'server/store/bad.c': 'extern const int tfb_plugin_b;\n'},
                         'names-plugin server/store/bad.c:1 names tfb_plugin_b'),
    'core-route': ({'server/core/r.c': 'const char *r = "/data/plugin/a/tags";\n'},
                   'names-plugin server/core/r.c:1 names the routes of a'),
    'js-route': ({'webui/js/core/x.js': "getJSON('data/plugin/b/tags');\n"},
                 'names-plugin webui/js/core/x.js:1 names the routes of b'),
    'js-tab': ({'webui/js/core/x.js': "\nsetState({ tab: 'a' });\n"},
               'names-plugin webui/js/core/x.js:2 names the tab of a'),
    'js-import': ({'webui/js/core/x.js': "import p from '../pages/a.js';\n"},
                  'names-plugin webui/js/core/x.js:1 imports a page'),
    'unlisted': ({'server/plugins/c/c.c': '\n'},
                 'listed server/plugins/c is no line of plugins.list'),
    'no-folder': ({'server/plugins/plugins.list': 'a\nb\nd\n'},
                  'listed server/plugins/d: plugins.list names no such folder'),
    'no-page': ({'server/plugins/a/page.js': None},
                'no-page server/plugins/a has no page.js'),
    'page-not-first': ({'server/plugins/a/meson.build': "plugin_js = ['x.js', 'page.js']\n"},
                       'no-page server/plugins/a: its meson.build does not list page.js first'),
    'no-api': ({'server/plugins/b/API.md': None},
               'no-api server/plugins/b has no API.md'),
    'page-outside': ({'webui/js/pages/z.js': 'export default {};\n'},
                     'page-outside webui/js/pages/z.js'),
}


def write(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        if text is None:
            if os.path.exists(path):
                os.remove(path)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)


def check(root):
    r = subprocess.run([sys.executable, CHECKER, '--source-root', root],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    failures = 0

    def expect(cond, what, out):
        nonlocal failures
        print(('ok: ' if cond else 'FAILED: ') + what)
        if not cond:
            failures += 1
            print(out)

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, 'clean')
        write(root, CLEAN)
        rc, out = check(root)
        expect(rc == 0 and '0 findings' in out, 'a clean tree passes', out)
        for name, (extra, key) in PLANTS.items():
            root = os.path.join(tmp, name)
            write(root, CLEAN)
            write(root, extra)
            rc, out = check(root)
            expect(rc == 1 and ('FAIL   ' + key) in out,
                   'planted %s fails naming "%s"' % (name, key), out)
    print('%d failed' % failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
