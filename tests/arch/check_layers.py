#!/usr/bin/env python3
"""check_layers.py - the house rules of docs/ARCHITECTURE.md, checked from
the build's object files, so a new loop fails the test suite.

Reads BUILD/compile_commands.json to map every object file back to its
source file, lists each object's global symbols with `nm` (defined and
undefined), and draws an edge A -> B between two source files when A uses
a symbol that B defines (a call or a reference to B's data). Only the
product code counts: base/, collector/ and server/ (tests, examples and
benchmarks link everything and are not layers).

It fails (exit 1) on:
  cycle   two or more files that reach each other through their calls
          (the pairs that call each other directly are named first);
  folder-cycle, folder-mutual
          the same between folders (a file's folder: base/, objstore/,
          collector/, server/store/, server/core/, server/trace/,
          server/analysis/, each server/plugins/<name>/, server/report/,
          and server/ itself for the command line): folders that reach
          each other through their files' calls, even when no two files
          form a loop;
  folder-layer
          a folder of the product that is in no layer (a new folder gets
          its place in LAYERS below and in docs/ARCHITECTURE.md first);
  folder-up
          a folder that uses a folder of a layer above its own (each such
          pair once; the file-level `up` findings name the files);
  up      a file that uses a file of a layer above its own; the layers,
          lowest first:
              base/ < objstore/ < collector/ < server/store/ < server/core/
                    < server/trace/ < server/analysis/ < server/query/
                    < server/plugins/
                    < server/report/ < server/cli.c,main.c,watch.c
  plugin  a file of one plugin folder (server/plugins/<name>/) that uses
          another plugin folder (only the table, server/plugins/registry.c,
          names the plugins);
  dup     one global name defined in two files (the linker picks one);
  include a file that includes a header of a layer above its own (textual,
          `#include "..."`; e.g. anything under server/plugins/ that
          includes a header from server/report/);
  front   a file outside server/trace/ that includes a header of the trace
          layer other than its front door, trace/trace.h (builder, loaders
          and cache internals are behind trace_internal.h);
  folder  a product header included without its folder ("vec.h" for
          "base/vec.h"; server headers from server/: "store/store.h",
          "trace/trace.h"), so every include names the layer it reaches
          into; only the public include/tfboard.h is included bare.

Findings listed in the known-violations file (--known; one finding key a
line, '#' comments) are printed as KNOWN and do not fail; a listed key that
no longer occurs fails as STALE, so the list only shrinks and stays true
(a key naming a source file this build does not compile is not judged).

usage: check_layers.py --build DIR [--source-root DIR] [--known FILE]
                       [--nm NM] [--verbose]
"""
import argparse
import json
import os
import re
import subprocess
import sys

# Folder prefix -> (rank, layer name). Longest prefix wins.
LAYERS = [
    ('base/', 0, 'base'),
    # The S3 client: it uses base/ alone (the error table lives there).
    ('objstore/', 1, 'objstore'),
    ('collector/', 2, 'collector'),
    ('server/store/', 3, 'store'),
    ('server/core/', 4, 'core'),
    ('server/trace/', 5, 'trace'),
    # Run-level analyses that several dashboards and the report share.
    ('server/analysis/', 6, 'analysis'),
    # SQL over the store (issue 30): virtual tables over store, trace and
    # analysis; the plugins, report and command line query through it.
    ('server/query/', 7, 'query'),
    ('server/plugins/', 8, 'plugins'),
    ('server/report/', 9, 'report'),
    ('server/cli.c', 10, 'cli'),
    ('server/cli.h', 10, 'cli'),
    ('server/main.c', 10, 'cli'),
    ('server/watch.c', 10, 'cli'),
    ('server/watch.h', 10, 'cli'),
]
PRODUCT = ('base/', 'objstore/', 'collector/', 'server/')
# The trace layer's front door: what code outside the layer may include.
TRACE = 'server/trace/'
TRACE_FRONT = 'server/trace/trace.h'
# The plugin table: the one file allowed to name every plugin.
PLUGIN_TABLE = 'server/plugins/registry.c'

# nm -P types of a global definition (text, data, bss, read-only, common,
# weak); 'U' is an undefined reference. Lower-case letters are local.
DEFINED = set('TDBRCVWGSI')


def layer_of(path):
    best = None
    for prefix, rank, name in LAYERS:
        if path.startswith(prefix) and (best is None or
                                        len(prefix) > len(best[0])):
            best = (prefix, rank, name)
    return (best[1], best[2]) if best else (None, None)


def folder_of(path):
    """The folder a product file belongs to (see the top)."""
    parts = path.split('/')
    if parts[0] != 'server':
        return parts[0]
    if len(parts) == 2:
        return 'server'  # cli.c, main.c, watch.c: the command line
    if parts[1] == 'plugins' and len(parts) >= 4:
        return 'server/plugins/' + parts[2]
    return 'server/' + parts[1]


def folder_graph(nodes, edges):
    """{(folder a, folder b): sorted file edges} between two folders."""
    out = {}
    for (a, b) in edges:
        fa, fb = folder_of(a), folder_of(b)
        if fa != fb:
            out.setdefault((fa, fb), []).append('%s -> %s' % (a, b))
    for k in out:
        out[k].sort()
    return out


def folder_findings(nodes, edges):
    out = []
    folders = {}
    for n in nodes:
        folders.setdefault(folder_of(n), []).append(n)
    for f, files in sorted(folders.items()):
        if any(layer_of(x)[0] is None for x in files):
            out.append(('folder-layer %s' % f,
                        'in no layer: give it its place in LAYERS '
                        '(tests/arch/check_layers.py) and docs/ARCHITECTURE.md'))
    fedges = folder_graph(nodes, edges)
    fnodes = set(folders)
    for comp in sccs(fnodes, fedges):
        members = set(comp)
        pairs = sorted((a, b) for (a, b) in fedges
                       if a < b and a in members and b in members
                       and (b, a) in fedges)
        for a, b in pairs:
            out.append(('folder-mutual %s <-> %s' % (a, b),
                        '%s; %s' % (fedges[(a, b)][0], fedges[(b, a)][0])))
        if len(comp) > 2 or not pairs:
            out.append(('folder-cycle %s' % ' '.join(comp),
                        '%d folders reach each other' % len(comp)))
    for (a, b), via in sorted(fedges.items()):
        ra = layer_of(folders[a][0])[0]
        rb = layer_of(folders[b][0])[0]
        if ra is not None and rb is not None and rb > ra:
            out.append(('folder-up %s -> %s' % (a, b),
                        '%s (%d file edges)' % (via[0], len(via))))
    return out


def plugin_folder(path):
    m = re.match(r'server/plugins/([^/]+)/', path)
    return m.group(1) if m else None


def load_objects(build, root):
    """{source path relative to root: [object paths]} for product code."""
    cc_path = os.path.join(build, 'compile_commands.json')
    with open(cc_path) as f:
        entries = json.load(f)
    objs = {}
    for e in entries:
        d = e.get('directory', build)
        src = os.path.normpath(os.path.join(d, e['file']))
        rel = os.path.relpath(src, root)
        if not rel.startswith(PRODUCT) or not rel.endswith('.c'):
            continue
        out = e.get('output')
        if out is None:
            continue
        obj = os.path.normpath(os.path.join(d, out))
        if os.path.exists(obj):
            objs.setdefault(rel, []).append(obj)
    return objs


def symbols(nm, obj):
    """(defined globals, undefined references) of one object file."""
    r = subprocess.run([nm, '-P', obj], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit('check_layers: %s failed on %s: %s'
                         % (nm, obj, r.stderr.strip()))
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == 'U':
            undefined.add(name)
        elif kind in DEFINED:
            defined.add(name)
    return defined, undefined


def build_graph(objs, nm):
    defs = {}   # symbol -> set of files defining it
    uses = {}   # file -> set of undefined symbols
    for src, paths in objs.items():
        d_all, u_all = set(), set()
        for p in paths:
            d, u = symbols(nm, p)
            d_all |= d
            u_all |= u
        uses[src] = u_all - d_all
        for s in d_all:
            defs.setdefault(s, set()).add(src)
    edges = {}  # (a, b) -> sorted symbols a uses from b
    for a, us in uses.items():
        # a file in no layer (a folder-layer finding) ranks as the lowest
        ra = layer_of(a)[0]
        ra = -1 if ra is None else ra
        for s in us:
            owners = defs.get(s, set()) - {a}
            # A name defined twice (a finding of its own, see dups()):
            # the user means the copy of its own layer or the nearest one
            # below it, which is also the one its program links.
            def rank(b):
                r = layer_of(b)[0]
                return -1 if r is None else r
            below = [b for b in owners if rank(b) <= ra]
            if len(owners) > 1 and below:
                top = max(rank(b) for b in below)
                owners = {b for b in below if rank(b) == top}
            for b in owners:
                edges.setdefault((a, b), []).append(s)
    for k in edges:
        edges[k].sort()
    dup = {s: sorted(f) for s, f in defs.items() if len(f) > 1}
    return set(objs), edges, dup


def sccs(nodes, edges):
    """Strongly connected components (Tarjan, iterative)."""
    succ = {n: [] for n in nodes}
    for a, b in edges:
        succ[a].append(b)
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(succ[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(succ[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def header_index(root):
    """{header basename: [paths relative to root]} of the product code."""
    idx = {}
    for top in ('base', 'objstore', 'collector', 'server', 'include'):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith('.h'):
                    rel = os.path.relpath(os.path.join(d, f), root)
                    idx.setdefault(f, []).append(rel)
    return idx


def resolve_include(root, src, name, idx):
    """The product header that `#include "name"` in src names, or None.
    Same folder first (as the compiler does), then a path relative to a
    product folder, then the header's basename when it is unique."""
    here = os.path.normpath(os.path.join(os.path.dirname(src), name))
    if os.path.exists(os.path.join(root, here)):
        return here
    for base in ('', 'server/', 'include/'):
        cand = os.path.normpath(base + name)
        if os.path.exists(os.path.join(root, cand)):
            return cand
    hits = idx.get(os.path.basename(name), [])
    if len(hits) == 1 and hits[0].endswith(name):
        return hits[0]
    return None


def include_findings(root):
    idx = header_index(root)
    out = []
    for top in ('base', 'objstore', 'collector', 'server'):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(('.c', '.h')):
                    continue
                src = os.path.relpath(os.path.join(d, f), root)
                rank, _ = layer_of(src)
                if rank is None:
                    continue
                with open(os.path.join(root, src), errors='replace') as fh:
                    text = fh.read()
                for name in INCLUDE_RE.findall(text):
                    hdr = resolve_include(root, src, name, idx)
                    if hdr is None:
                        continue
                    canon = (hdr[len('server/'):] if hdr.startswith('server/')
                             else hdr)
                    if not hdr.startswith('include/') and name != canon:
                        out.append(('folder %s -> %s' % (src, hdr),
                                    '(write it as "%s")' % canon))
                    hrank, _ = layer_of(hdr)
                    if hrank is not None and hrank > rank:
                        out.append(('include %s -> %s' % (src, hdr), ''))
                    if (hdr.startswith(TRACE) and not src.startswith(TRACE)
                            and hdr != TRACE_FRONT):
                        out.append(('front %s -> %s' % (src, hdr),
                                    '(outside the trace layer, include '
                                    'trace/trace.h only)'))
                    pa, pb = plugin_folder(src), plugin_folder(hdr)
                    if pa and pb and pa != pb:
                        out.append(('include %s -> %s' % (src, hdr),
                                    '(another plugin folder)'))
    return out


def findings(nodes, edges, dup, root, with_includes=True):
    """[(key, detail)]: key is stable (used by the known list)."""
    out = []
    # One global name defined by two files: which one a caller gets
    # depends on link order, so the graph (and the program) is ambiguous.
    for s, files in sorted(dup.items()):
        out.append(('dup %s %s' % (s, ' '.join(files)),
                    'one global name, two definitions'))
    comps = sccs(nodes, edges)
    for comp in comps:
        members = set(comp)
        pairs = sorted((a, b) for (a, b) in edges
                       if a < b and a in members and b in members
                       and (b, a) in edges)
        for a, b in pairs:
            out.append(('mutual %s <-> %s' % (a, b),
                        '%s uses %s; %s uses %s' % (
                            a, ', '.join(edges[(a, b)][:4]),
                            b, ', '.join(edges[(b, a)][:4]))))
        if len(comp) > 2 or not pairs:
            out.append(('cycle %s' % ' '.join(comp),
                        '%d files reach each other' % len(comp)))
    for (a, b), syms in sorted(edges.items()):
        ra, la = layer_of(a)
        rb, lb = layer_of(b)
        if ra is not None and rb is not None and rb > ra:
            out.append(('up %s -> %s' % (a, b),
                        '%s calls up into %s: %s' % (la, lb,
                                                     ', '.join(syms[:4]))))
        pa, pb = plugin_folder(a), plugin_folder(b)
        if pa and pb and pa != pb:
            out.append(('plugin %s -> %s' % (a, b),
                        'plugin %s uses plugin %s: %s' % (
                            pa, pb, ', '.join(syms[:4]))))
    out.extend(folder_findings(nodes, edges))
    if with_includes:
        out.extend(include_findings(root))
    # One line per key.
    seen, uniq = set(), []
    for k, d in out:
        if k not in seen:
            seen.add(k)
            uniq.append((k, d))
    return uniq


def load_known(path):
    known = {}
    if not path or not os.path.exists(path):
        return known
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if line:
                known[' '.join(line.split())] = n
    return known


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--source-root')
    ap.add_argument('--known')
    ap.add_argument('--nm', default=os.environ.get('NM', 'nm'))
    ap.add_argument('--no-includes', action='store_true')
    ap.add_argument('--verbose', action='store_true')
    ap.add_argument('--folders', action='store_true',
                    help='print who uses whom between folders')
    a = ap.parse_args(argv)
    root = os.path.abspath(a.source_root or os.path.join(a.build, '..'))
    objs = load_objects(os.path.abspath(a.build), root)
    if not objs:
        print('check_layers: no product objects found under %s '
              '(build first)' % a.build)
        return 2
    nodes, edges, dup = build_graph(objs, a.nm)
    found = findings(nodes, edges, dup, root, not a.no_includes)
    known = load_known(a.known)

    new = [(k, d) for k, d in found if k not in known]
    old = [(k, d) for k, d in found if k in known]
    # A listed finding about a file this build does not compile (e.g. the
    # CUPTI files with -Dcupti=disabled) cannot be seen here: not stale.
    def in_build(key):
        for tok in key.split():
            if '/' not in tok:
                continue
            if tok.endswith('.h'):
                if not os.path.exists(os.path.join(root, tok)):
                    return False
            elif tok not in nodes:
                return False
        return True
    stale = sorted(k for k in set(known) - {k for k, _ in found}
                   if in_build(k))
    print('check_layers: %d source files, %d file-to-file edges'
          % (len(nodes), len(edges)))
    if a.verbose:
        for (x, y), syms in sorted(edges.items()):
            print('  edge %s -> %s: %s' % (x, y, ', '.join(syms)))
    if a.folders:
        # top layer first
        rank = {}
        for n in nodes:
            rank[folder_of(n)] = layer_of(n)[0] or 0
        fedges = folder_graph(nodes, edges)
        for (x, y), via in sorted(fedges.items(),
                                  key=lambda kv: (-rank[kv[0][0]], kv[0])):
            print('  %-30s -> %-26s %4d file edges' % (x, y, len(via)))
    for k, d in old:
        print('KNOWN  %s  %s' % (k, d))
    for k, d in new:
        print('FAIL   %s  %s' % (k, d))
    for k in stale:
        print('STALE  %s  (line %d of %s: no longer found; delete the line)'
              % (k, known[k], a.known))
    print('check_layers: %d new, %d known, %d stale'
          % (len(new), len(old), len(stale)))
    return 1 if new or stale else 0


if __name__ == '__main__':
    sys.exit(main())
