#!/usr/bin/env python3
"""test_check_layers.py - shows that check_layers.py can fail: it compiles
small planted trees (two files that call each other, a three-file cycle,
core calling a plugin (and so its folder calling up), one plugin calling
another, a plugin including a report header, a header included without its
folder, one name defined twice, two folders that reach each other with no
loop between files, a folder in no layer, a plugin including a trace
header past trace.h) into objects in a temporary
folder, with a compile_commands.json like meson's, and runs the checker on
each; a clean tree must pass and each planted fault must be named.

usage: test_check_layers.py CHECKER [CC] [NM]
"""
import json
import os
import subprocess
import sys
import tempfile

CHECKER = sys.argv[1]
CC = sys.argv[2] if len(sys.argv) > 2 else os.environ.get('CC', 'cc')
NM = sys.argv[3] if len(sys.argv) > 3 else os.environ.get('NM', 'nm')

# A clean layered tree: cli -> report -> plugin -> core -> collector -> base.
CLEAN = {
    'base/b.c': 'int base_f(void); int base_f(void) { return 1; }\n',
    'collector/c.c': 'int base_f(void); int col_f(void);\n'
                     'int col_f(void) { return base_f(); }\n',
    'server/core/k.c': 'int col_f(void); int core_f(void);\n'
                       'int core_f(void) { return col_f(); }\n',
    'server/core/k.h': 'int core_f(void);\n',
    'server/plugins/x/p.c': '#include "core/k.h"\nint plug_f(void);\n'
                            'int plug_f(void) { return core_f(); }\n',
    'server/report/r.c': 'int plug_f(void); int rep_f(void);\n'
                         'int rep_f(void) { return plug_f(); }\n',
    'server/report/r.h': 'int rep_f(void);\n',
    'server/cli.c': '#include "report/r.h"\nint cli_f(void);\n'
                    'int cli_f(void) { return rep_f(); }\n',
}

PLANTS = {
    'mutual': ({
        'server/core/a.c': 'int b_f(void); int a_f(int);\n'
                           'int a_f(int n) { return n ? b_f() : 0; }\n',
        'server/core/b.c': 'int a_f(int); int b_f(void);\n'
                           'int b_f(void) { return a_f(0); }\n',
    }, 'mutual server/core/a.c <-> server/core/b.c'),
    'cycle': ({
        'collector/l1.c': 'int l2(int); int l1(int);\n'
                          'int l1(int n) { return n ? l2(n - 1) : 0; }\n',
        'collector/l2.c': 'int l3(int); int l2(int);\n'
                          'int l2(int n) { return n ? l3(n - 1) : 0; }\n',
        'collector/l3.c': 'int l1(int); int l3(int);\n'
                          'int l3(int n) { return n ? l1(n - 1) : 0; }\n',
    }, 'cycle collector/l1.c collector/l2.c collector/l3.c'),
    'up': ({
        'server/core/up.c': 'int plug_f(void); int up_f(void);\n'
                            'int up_f(void) { return plug_f(); }\n',
    }, ['up server/core/up.c -> server/plugins/x/p.c',
        'folder-up server/core -> server/plugins/x']),
    'plugin': ({
        'server/plugins/y/q.c': 'int plug_f(void); int q_f(void);\n'
                                'int q_f(void) { return plug_f(); }\n',
    }, 'plugin server/plugins/y/q.c -> server/plugins/x/p.c'),
    'include': ({
        'server/plugins/y/inc.c': '#include "r.h"\nint inc_f(void);\n'
                                  'int inc_f(void) { return 0; }\n',
    }, 'include server/plugins/y/inc.c -> server/report/r.h'),
    'folder': ({
        'server/plugins/x/bare.c': '#include "k.h"\nint bare_f(void);\n'
                                   'int bare_f(void) { return 0; }\n',
    }, 'folder server/plugins/x/bare.c -> server/core/k.h'),
    # collector -> objstore -> collector through three different files:
    # no file loop, a folder loop.
    'folder-loop': ({
        'collector/cx.c': 'int oy(void); int cx(void);\n'
                          'int cx(void) { return oy(); }\n',
        'objstore/oy.c': 'int cz(void); int oy(void);\n'
                         'int oy(void) { return cz(); }\n',
        'collector/cz.c': 'int base_f(void); int cz(void);\n'
                          'int cz(void) { return base_f(); }\n',
    }, 'folder-mutual collector <-> objstore'),
    # a new folder nobody placed in the layers
    'folder-layer': ({
        'server/unplaced/q.c': 'int core_f(void); int q_f(void);\n'
                               'int q_f(void) { return core_f(); }\n',
    }, 'folder-layer server/unplaced'),
    # past the trace layer's front door
    'front': ({
        'server/trace/trace.h': 'int tr_f(void);\n',
        'server/trace/trace_internal.h': 'int tr_g(void);\n',
        'server/plugins/x/fd.c': '#include "trace/trace_internal.h"\n'
                                 'int fd_f(void);\n'
                                 'int fd_f(void) { return 0; }\n',
    }, 'front server/plugins/x/fd.c -> server/trace/trace_internal.h'),
    'dup': ({
        'server/core/dup.c': 'int col_f(void);\n'
                             'int col_f(void) { return 2; }\n',
    }, 'dup col_f collector/c.c server/core/dup.c'),
}


def make_tree(root, files):
    build = os.path.join(root, 'build')
    os.makedirs(build, exist_ok=True)
    entries = []
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
    incs = ['-I' + os.path.join(root, d)
            for d in ('server', 'server/core', 'server/report')]
    for rel in files:
        if not rel.endswith('.c'):
            continue
        out = rel.replace('/', '_') + '.o'
        subprocess.run([CC, '-c', '-o', os.path.join(build, out)] + incs +
                       [os.path.join(root, rel)], check=True)
        entries.append({'directory': build, 'file': '../' + rel,
                        'output': out})
    with open(os.path.join(build, 'compile_commands.json'), 'w') as f:
        json.dump(entries, f)
    return build


def check(build, root, known=None):
    cmd = [sys.executable, CHECKER, '--build', build, '--source-root', root,
           '--nm', NM]
    if known:
        cmd += ['--known', known]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    failures = 0

    def expect(cond, what, out):
        nonlocal failures
        if not cond:
            failures += 1
            print('FAILED: %s\n%s' % (what, out))
        else:
            print('ok: %s' % what)

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, 'clean')
        rc, out = check(make_tree(root, CLEAN), root)
        expect(rc == 0 and '0 new' in out, 'a clean layered tree passes', out)

        for name, (extra, keys) in PLANTS.items():
            keys = keys if isinstance(keys, list) else [keys]
            key = keys[0]
            root = os.path.join(tmp, name)
            files = dict(CLEAN)
            files.update(extra)
            build = make_tree(root, files)
            rc, out = check(build, root)
            for k in keys:
                expect(rc == 1 and ('FAIL   ' + k) in out,
                       'planted %s fails naming "%s"' % (name, k), out)

            # Listed as known, it is reported but does not fail ...
            known = os.path.join(tmp, name + '.known')
            with open(known, 'w') as f:
                f.write('# planted\n')
                for line in out.splitlines():
                    if line.startswith('FAIL   '):
                        f.write(line[7:].split('  ')[0] + '\n')
            rc, out2 = check(build, root, known)
            expect(rc == 0 and ('KNOWN  ' + key) in out2,
                   'planted %s listed as known passes' % name, out2)

        # ... and a known entry that no longer occurs fails as stale.
        root = os.path.join(tmp, 'clean')
        known = os.path.join(tmp, 'stale.known')
        with open(known, 'w') as f:
            f.write('mutual collector/c.c <-> server/core/k.c\n')
        rc, out = check(os.path.join(root, 'build'), root, known)
        expect(rc == 1 and 'STALE  mutual collector/c.c' in out,
               'a known entry that is gone fails as stale', out)
        # One about a file this build does not compile is not judged.
        with open(known, 'w') as f:
            f.write('mutual server/core/a.c <-> server/core/b.c\n')
        rc, out = check(os.path.join(root, 'build'), root, known)
        expect(rc == 0 and 'STALE' not in out,
               'a known entry about files not built is not stale', out)

    print('%d failed' % failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
