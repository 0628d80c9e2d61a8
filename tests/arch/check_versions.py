#!/usr/bin/env python3
"""check_versions.py - every place that states the project's version says
the same one: meson.build's project version, include/tfboard.h
(TFB_VERSION_MAJOR/MINOR/PATCH and TFB_VERSION_STRING, and the example in
tfb_version's comment), python/pyproject.toml, the README's banner
example ("tfboard X serving ..."), tests/webui's package.json and its lock
file, and, given --build, the tfboard.pc files meson wrote. Exits 1 and
lists every place with its version when any two disagree.

usage: check_versions.py [--source-root DIR] [--build DIR]
"""
import argparse
import json
import os
import re
import sys


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def one(pattern, text, where):
    m = re.search(pattern, text, re.M)
    if not m:
        raise SystemExit("check_versions: no version found in %s" % where)
    return m.group(1)


def versions(root, build):
    """[(place, version)]"""
    found = []
    found.append(("meson.build", one(r"^\s*version\s*:\s*'([^']+)'",
                                     read(root, "meson.build"),
                                     "meson.build")))
    h = read(root, "include/tfboard.h")
    parts = [one(r"^#define TFB_VERSION_%s\s+(\d+)" % p, h, "tfboard.h")
             for p in ("MAJOR", "MINOR", "PATCH")]
    found.append(("tfboard.h TFB_VERSION_MAJOR/MINOR/PATCH", ".".join(parts)))
    found.append(("tfboard.h TFB_VERSION_STRING",
                  one(r'^#define TFB_VERSION_STRING\s+"([^"]+)"', h,
                      "tfboard.h")))
    found.append(("tfboard.h tfb_version's comment",
                  one(r'version string, e\.g\. "([^"]+)"', h, "tfboard.h")))
    found.append(("python/pyproject.toml",
                  one(r'^version\s*=\s*"([^"]+)"',
                      read(root, "python/pyproject.toml"), "pyproject.toml")))
    found.append(("README.md banner",
                  one(r"tfboard (\d+\.\d+\.\d+) serving",
                      read(root, "README.md"), "README.md")))
    pkg = json.loads(read(root, "tests/webui/package.json"))
    found.append(("tests/webui/package.json", pkg["version"]))
    lock = json.loads(read(root, "tests/webui/package-lock.json"))
    found.append(("tests/webui/package-lock.json", lock["version"]))
    found.append(("tests/webui/package-lock.json packages['']",
                  lock["packages"][""]["version"]))
    if build:
        for rel in ("meson-private/tfboard.pc",
                    "meson-uninstalled/tfboard-uninstalled.pc"):
            path = os.path.join(build, rel)
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    found.append((rel, one(r"^Version:\s*(\S+)", f.read(),
                                           rel)))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root",
                    default=os.path.join(os.path.dirname(__file__), "..",
                                         ".."))
    ap.add_argument("--build")
    a = ap.parse_args()
    found = versions(a.source_root, a.build)
    if len({v for _, v in found}) == 1:
        print("versions agree: %s (%d places)" % (found[0][1], len(found)))
        return 0
    print("versions disagree:")
    for place, v in found:
        print("  %-45s %s" % (place, v))
    return 1


if __name__ == "__main__":
    sys.exit(main())
