#!/usr/bin/env python3
"""check_plugins.py - the dashboards' house rules (docs/ARCHITECTURE.md, "A
dashboard is a folder"), checked on the sources:

  names-plugin  core and the store name no dashboard: no file under
                server/core/ or server/store/ includes a header of
                server/plugins/, names a descriptor (tfb_plugin_<name>) or
                a dashboard's routes ("/data/plugin/<name>/..."), and no
                module of webui/js/core/ names a dashboard's routes or tab
                (data/plugin/<name>/, tab: '<name>', #tab=<name>) or
                imports a page;
  listed        every folder of server/plugins/ is a line of
                server/plugins/plugins.list, and every line a folder;
  no-page       a dashboard whose descriptor names a page module holds it:
                <folder>/page.js, listed first in its meson.build's
                plugin_js, and the module is js/pages/<name>.js;
  no-api        a dashboard folder holds its API.md (its routes; the build
                collects them);
  page-outside  no page module lives outside its folder
                (webui/js/pages/ is gone).

C sources are read with comments blanked, so a comment may mention a
dashboard; string literals are kept, since a route is one. Exit 1 with one line per finding, 0 when there is none.

usage: check_plugins.py --source-root DIR
"""
import argparse
import os
import re
import sys

def strip_comments(text):
    """C text without its comments (strings kept), lines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text[i] in '"\'':
            q = text[i]
            j = i + 1
            while j < n and text[j] != q and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
        else:
            out.append(text[i])
            i += 1
    return ''.join(out)


def plugin_list(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith('#')]


def files_under(root, top, exts):
    base = os.path.join(root, top)
    for d, _, names in os.walk(base):
        for f in sorted(names):
            if f.endswith(exts):
                yield os.path.relpath(os.path.join(d, f), root)


def names_plugin_c(rel, text, names):
    out = []
    code = strip_comments(text)
    for n, line in enumerate(code.split('\n'), 1):
        if re.search(r'#\s*include\s*"(server/)?plugins/', line):
            out.append('names-plugin %s:%d includes a dashboard header' % (rel, n))
        for name in names:
            if re.search(r'\btfb_plugin_%s\b' % re.escape(name), line):
                out.append('names-plugin %s:%d names tfb_plugin_%s' % (rel, n, name))
            if re.search(r'"/?data/plugin/%s(/|")' % re.escape(name), line):
                out.append('names-plugin %s:%d names the routes of %s' % (rel, n, name))
    return out


def names_plugin_js(rel, text, names):
    out = []
    code = re.sub(r'//[^\n]*', '', text)
    for n, line in enumerate(code.split('\n'), 1):
        if re.search(r'''from\s+['"][^'"]*(pages|plugins)/''', line) or \
                re.search(r'''import\(\s*['"][^'"]*(pages|plugins)/''', line):
            out.append('names-plugin %s:%d imports a page' % (rel, n))
        for name in names:
            e = re.escape(name)
            if re.search(r'data/plugin/%s/' % e, line):
                out.append('names-plugin %s:%d names the routes of %s' % (rel, n, name))
            if re.search(r'''tab\s*:\s*['"]%s['"]''' % e, line) or \
                    re.search(r'#tab=%s\b' % e, line):
                out.append('names-plugin %s:%d names the tab of %s' % (rel, n, name))
    return out


def folder_findings(root, names):
    out = []
    pdir = os.path.join(root, 'server', 'plugins')
    folders = sorted(d for d in os.listdir(pdir)
                     if os.path.isdir(os.path.join(pdir, d)))
    for d in folders:
        if d not in names:
            out.append('listed server/plugins/%s is no line of plugins.list' % d)
    for name in names:
        d = os.path.join(pdir, name)
        rel = 'server/plugins/' + name
        if not os.path.isdir(d):
            out.append('listed %s: plugins.list names no such folder' % rel)
            continue
        if not os.path.exists(os.path.join(d, 'API.md')):
            out.append('no-api %s has no API.md' % rel)
        module = None
        for f in sorted(os.listdir(d)):
            if f.endswith('.c'):
                with open(os.path.join(d, f), errors='replace') as fh:
                    m = re.search(r'\.module\s*=\s*"([^"]*)"',
                                  strip_comments(fh.read()))
                if m:
                    module = m.group(1)
        if module is None:
            continue
        if module != 'js/pages/%s.js' % name:
            out.append('no-page %s: its module is %s, not js/pages/%s.js'
                       % (rel, module, name))
        if not os.path.exists(os.path.join(d, 'page.js')):
            out.append('no-page %s has no page.js (its module is %s)'
                       % (rel, module))
        mb = os.path.join(d, 'meson.build')
        text = open(mb).read() if os.path.exists(mb) else ''
        m = re.search(r"plugin_js\s*=\s*\[\s*'([^']*)'", text)
        if not m or m.group(1) != 'page.js':
            out.append("no-page %s: its meson.build does not list page.js "
                       "first in plugin_js" % rel)
    for rel in files_under(root, 'webui/js/pages', ('.js', '.mjs')):
        out.append('page-outside %s: a page lives in its plugin folder' % rel)
    return out


def findings(root):
    names = plugin_list(os.path.join(root, 'server', 'plugins',
                                     'plugins.list'))
    out = []
    for top in ('server/core', 'server/store'):
        for rel in files_under(root, top, ('.c', '.h')):
            with open(os.path.join(root, rel), errors='replace') as f:
                out += names_plugin_c(rel, f.read(), names)
    for rel in files_under(root, 'webui/js/core', ('.js', '.mjs')):
        with open(os.path.join(root, rel), errors='replace') as f:
            out += names_plugin_js(rel, f.read(), names)
    out += folder_findings(root, names)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--source-root', required=True)
    a = ap.parse_args(argv)
    found = findings(os.path.abspath(a.source_root))
    for f in found:
        print('FAIL   ' + f)
    print('check_plugins: %d findings' % len(found))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
