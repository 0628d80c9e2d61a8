#!/usr/bin/env python3
"""The README's parts for each language are siblings (issue 27 item 9):
"## Logging from C" and "## Python quick start" are both level-2 sections,
and nothing about the C API sits inside the Python part (no ```c block,
no tfb_writer_* call): C sections (robustness, distributed jobs) belong
under "Logging from C".

usage: check_readme.py README.md
"""
import re
import sys


def sections(text):
    """(level, title, body) for every heading outside code fences."""
    out, fence, cur = [], False, None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            cur = [len(m.group(1)), m.group(2).strip(), ""]
            out.append(cur)
        elif cur is not None:
            cur[2] += line
    return out


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    secs = sections(text)
    errors = []
    top = {t: lvl for lvl, t, _ in secs if lvl <= 2}
    for want in ("Logging from C", "Python quick start"):
        if top.get(want) != 2:
            errors.append("no level-2 section '%s'" % want)
    inside = False
    for lvl, title, body in secs:
        if lvl <= 2:
            inside = title == "Python quick start"
        if not inside:
            continue
        if "```c\n" in body:
            errors.append("a C code block inside the Python part, under '%s'" % title)
        if re.search(r"\btfb_writer_\w+", body):
            errors.append("the C API (tfb_writer_*) inside the Python part, under '%s'" % title)
    for e in errors:
        print("README: " + e)
    print("ok" if not errors else "%d problem(s)" % len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
