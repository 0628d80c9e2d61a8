#!/usr/bin/env python3
"""test_check_growth.py - shows that check_growth.py can fail: it writes
small source trees into a temporary folder (a clean one, then one planted
fault each: a realloc, a reallocarray, the untyped tfb_vec_reserve, and
capacities doubled by hand in five spellings) and runs the checker on each.
The clean tree must pass (growth in base/, and realloc or `cap * 2` inside
comments and strings, do not count); each plant must fail naming its file,
line and rule; an allowlist entry (with a wildcard) lets it pass; an entry
that matches nothing fails as STALE, one without a reason as BAD.

usage: test_check_growth.py CHECKER
"""
import os
import subprocess
import sys
import tempfile

CHECKER = sys.argv[1]

CLEAN = {
    # base/ is where growth lives: never judged.
    'base/vec.c': 'void *g(void *p, unsigned long n, unsigned long cap)\n'
                  '{ return realloc(p, n ? n : cap * 2); }\n',
    'collector/ok.c':
        '#include "base/vec.h"\n'
        '/* an old note: realloc(p, cap * 2) grew this by hand */\n'
        'static const char *why = "realloc( and t->cap * 2 in a string";\n'
        'int push(struct v *a, int x)\n'
        '{\n'
        '    // was: ncap <<= 1;\n'
        '    char q = \'"\'; (void)q; (void)why;\n'
        '    return tfb_vec_push(a, x);\n'
        '}\n',
    'server/core/ok.c':
        '#define SEAL(x) realloc_free(x)\n'
        'int f(int n, int cap) { return n * 2 + cap * 3 / 2 + (cap + 1); }\n'
        'int h(int capacity) { return 2 * sizeof(capacity) + capacity; }\n',
    'objstore/ok.h': 'int ok_h(void);\n',
}

# name -> (files added to CLEAN, the FAIL line's start)
PLANTS = {
    'realloc': ({'server/core/grow.c':
                 'void *g(void *p, unsigned long n)\n'
                 '{\n'
                 '    return realloc(p, n);\n'
                 '}\n'},
                'FAIL   realloc server/core/grow.c:3'),
    'reallocarray': ({'collector/grow.c':
                      'void *g(void *p) { return reallocarray(p, 4, 8); }\n'},
                     'FAIL   realloc collector/grow.c:1'),
    'untyped': ({'objstore/grow.c':
                 'int g(int **v, unsigned long *cap, unsigned long n)\n'
                 '{ return tfb_vec_reserve((void **)v, cap, 4, n); }\n'},
                'FAIL   untyped objstore/grow.c:2'),
    'times2': ({'server/plugins/x/tab.c':
                'struct t { int *s; unsigned long cap; };\n'
                'unsigned long g(struct t *t)\n'
                '{ return t->cap ? t->cap * 2 : 64; }\n'},
               'FAIL   doubling server/plugins/x/tab.c:3'),
    'twotimes': ({'server/trace/tab.c':
                  'struct b { unsigned long cap; };\n'
                  'unsigned long g(struct b b) { return 2 * b.cap; }\n'},
                 'FAIL   doubling server/trace/tab.c:2'),
    'timeseq': ({'server/core/tab.h':
                 'static inline void g(unsigned long *kcap)\n'
                 '{\n'
                 '    *kcap *= 2;\n'
                 '}\n'},
                'FAIL   doubling server/core/tab.h:3'),
    'shift': ({'collector/tab.c':
               'unsigned long g(unsigned long ncap) { return ncap << 1; }\n'},
              'FAIL   doubling collector/tab.c:1'),
    'shifteq': ({'server/analysis/tab.c':
                 'void g(unsigned long map_cap)\n'
                 '{\n'
                 '    while (map_cap < 9)\n'
                 '        map_cap <<= 1;\n'
                 '}\n'},
                'FAIL   doubling server/analysis/tab.c:4'),
}


def make_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)


def check(root, allow=None):
    cmd = [sys.executable, CHECKER, '--source-root', root]
    if allow:
        cmd += ['--allow', allow]
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
        make_tree(root, CLEAN)
        rc, out = check(root)
        expect(rc == 0 and '0 new' in out, 'a clean tree passes', out)

        for name, (extra, key) in PLANTS.items():
            root = os.path.join(tmp, name)
            files = dict(CLEAN)
            files.update(extra)
            make_tree(root, files)
            rc, out = check(root)
            expect(rc == 1 and key in out and '1 new' in out,
                   'planted %s fails naming "%s"' % (name, key), out)

            # Allowed by a wildcard entry with a reason, it passes ...
            rel = next(iter(extra))
            pattern = rel.split('/')[0] + '/*' + os.path.splitext(rel)[1]
            rule = key.split()[1]
            allow = os.path.join(tmp, name + '.allow')
            with open(allow, 'w') as f:
                f.write('# planted\n%s  %s  -- a test says so\n'
                        % (pattern, rule))
            rc, out = check(root, allow)
            expect(rc == 0 and 'ALLOWED  %s' % key[7:] in out,
                   'planted %s allowed by "%s %s" passes'
                   % (name, pattern, rule), out)

            # ... but not by an entry for another rule.
            other = 'untyped' if rule != 'untyped' else 'realloc'
            with open(allow, 'w') as f:
                f.write('%s  %s  -- another rule\n' % (pattern, other))
            rc, out = check(root, allow)
            expect(rc == 1 and key in out and 'STALE' in out,
                   'planted %s is not allowed by a "%s" entry'
                   % (name, other), out)

        root = os.path.join(tmp, 'clean')
        allow = os.path.join(tmp, 'stale.allow')
        with open(allow, 'w') as f:
            f.write('server/core/ok.c  realloc  -- it was there once\n')
        rc, out = check(root, allow)
        expect(rc == 1 and 'STALE  server/core/ok.c realloc' in out,
               'an entry that matches nothing fails as stale', out)

        root = os.path.join(tmp, 'realloc')
        with open(allow, 'w') as f:
            f.write('server/core/grow.c  realloc\n')
        rc, out = check(root, allow)
        expect(rc == 1 and 'BAD    line 1' in out,
               'an entry without a reason fails as bad', out)
        with open(allow, 'w') as f:
            f.write('server/core/grow.c  growth  -- no such rule\n')
        rc, out = check(root, allow)
        expect(rc == 1 and 'BAD    line 1' in out,
               'an entry with an unknown rule fails as bad', out)

    print('%d failed' % failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
