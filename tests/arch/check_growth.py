#!/usr/bin/env python3
"""check_growth.py - one way to grow (docs/ARCHITECTURE.md, "Growth and
string tables"), checked on the sources, so a hand-grown array fails the
test suite.

Every growable array of the product code grows through base/vec.h (TFB_VEC,
tfb_vec_need/push/add/setcap, tfb_array_resize; bytes: base/buf.h) and every
string table is a base/strtab. This scans the C files under collector/,
objstore/ and server/ (base/ is where growth lives) with comments and
string literals blanked, and fails (exit 1) on:
  realloc   a call of realloc() or reallocarray(): growth by hand;
  untyped   a call of the untyped tfb_vec_reserve() (element size passed
            by hand, capacity kept apart from the array);
  doubling  a capacity doubled by hand: an expression `X * 2`, `2 * X`,
            `X *= 2`, `X << 1` or `X <<= 1` whose last name holds "cap"
            (`t->cap * 2`, `ncap <<= 1`): a hand-grown array or a
            hand-written hash table's rehash.

The allowlist (--allow) names what may stay, one entry a line:
    PATH-PATTERN  RULE  -- REASON
PATH-PATTERN is a path from the source root, shell wildcards allowed
(`server/*/spike_detect.c` matches the file in either folder); RULE is one
of the rules above; REASON is required. '#' starts a comment. A finding an
entry matches is printed as ALLOWED and does not fail; an entry that
matches no finding fails as STALE (the list only shrinks and stays true);
an entry without a reason or with an unknown rule fails as BAD.

usage: check_growth.py [--source-root DIR] [--allow FILE] [--verbose]
"""
import argparse
import fnmatch
import os
import re
import sys

FOLDERS = ('collector', 'objstore', 'server')
RULES = ('realloc', 'untyped', 'doubling')

# A name chain like `t->cap`, `b.buckets.cap`, `ncap`; group 'last' is its
# last name.
CHAIN = r'(?:[A-Za-z_]\w*\s*(?:\.|->)\s*)*(?P<last>[A-Za-z_]\w*)\b'
PATTERNS = {
    'realloc': [re.compile(r'\b(?:realloc|reallocarray)\s*\(')],
    'untyped': [re.compile(r'\btfb_vec_reserve\s*\(')],
    'doubling': [
        re.compile(CHAIN + r'\s*(?:\*=?\s*2|<<=?\s*1)(?![\w.])'),
        re.compile(r'(?<![\w.])2\s*\*\s*' + CHAIN + r'(?!\s*(?:\(|\[))'),
    ],
}


def blank_comments_and_strings(text):
    """text with comments, string and character literals replaced by
    spaces (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
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
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) +
                       (c if j - 1 > i else ''))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def findings_in(rel, text):
    """(rule, line number, source line) for each finding in one file."""
    clean = blank_comments_and_strings(text)
    raw_lines = text.split('\n')
    found = []
    for lineno, line in enumerate(clean.split('\n'), 1):
        if line.lstrip().startswith('#'):
            continue  # preprocessor lines: macro text, includes
        for rule in RULES:
            for pat in PATTERNS[rule]:
                hit = None
                for m in pat.finditer(line):
                    if rule != 'doubling' or 'cap' in m.group('last').lower():
                        hit = m
                        break
                if hit:
                    found.append((rule, lineno, raw_lines[lineno - 1].strip()))
                    break
    return found


def scan(root):
    """{path: [(rule, line, text)]} over the product sources."""
    out = {}
    for top in FOLDERS:
        for dirpath, dirnames, files in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(files):
                if not name.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, '/')
                with open(path, encoding='utf-8', errors='replace') as f:
                    hits = findings_in(rel, f.read())
                if hits:
                    out[rel] = hits
    return out


def load_allow(path):
    """[(line number, pattern, rule, reason or None)]"""
    entries = []
    if not path:
        return entries
    with open(path, encoding='utf-8') as f:
        for lineno, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            head, sep, reason = line.partition('--')
            parts = head.split()
            pat = parts[0] if parts else ''
            rule = parts[1] if len(parts) > 1 else ''
            reason = reason.strip() if sep else ''
            entries.append((lineno, pat, rule, reason, len(parts)))
    return entries


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--source-root',
                    default=os.path.join(os.path.dirname(__file__), '..',
                                         '..'))
    ap.add_argument('--allow')
    ap.add_argument('--verbose', action='store_true')
    a = ap.parse_args(argv)
    root = os.path.abspath(a.source_root)
    found = scan(root)
    allow = load_allow(a.allow)

    bad = []
    for lineno, pat, rule, reason, nparts in allow:
        if nparts != 2 or rule not in RULES or not reason:
            bad.append('BAD    line %d of %s: want "PATH-PATTERN RULE -- '
                       'REASON", RULE one of %s'
                       % (lineno, a.allow, ', '.join(RULES)))
    used = set()
    new, allowed = [], []
    for rel in sorted(found):
        for rule, line, text in found[rel]:
            match = [e for e in allow
                     if e[2] == rule and fnmatch.fnmatchcase(rel, e[1])]
            item = '%s %s:%d  %s' % (rule, rel, line, text)
            if match:
                used.update(e[0] for e in match)
                allowed.append((item, match[0][3]))
            else:
                new.append(item)
    stale = [e for e in allow if e[0] not in used and e[2] in RULES]

    nfiles = sum(1 for top in FOLDERS
                 for _, _, fs in os.walk(os.path.join(root, top))
                 for f in fs if f.endswith(('.c', '.h')))
    print('check_growth: %d source files under %s'
          % (nfiles, ', '.join(f + '/' for f in FOLDERS)))
    for item, reason in allowed:
        print('ALLOWED  %s' % item)
        if a.verbose:
            print('         (%s)' % reason)
    for item in new:
        print('FAIL   %s' % item)
    for lineno, pat, rule, _, _ in stale:
        print('STALE  %s %s  (line %d of %s: matches nothing; delete the '
              'line)' % (pat, rule, lineno, a.allow))
    for line in bad:
        print(line)
    if new:
        print('Grow arrays with base/vec.h (TFB_VEC, tfb_vec_need/push/add/'
              'setcap, tfb_array_resize; bytes: base/buf.h) and key tables '
              'with base/strtab.h; see docs/ARCHITECTURE.md.')
    print('check_growth: %d new, %d allowed, %d stale, %d bad entries'
          % (len(new), len(allowed), len(stale), len(bad)))
    return 1 if new or stale or bad else 0


if __name__ == '__main__':
    sys.exit(main())
