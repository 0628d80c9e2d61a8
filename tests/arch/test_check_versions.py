#!/usr/bin/env python3
"""check_versions.py can fail: in a copy of the files it reads, each one in
turn is given another version, and the check must exit 1 naming it; the
untouched copy passes.
usage: test_check_versions.py CHECK_VERSIONS SOURCE_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHECK, ROOT = sys.argv[1:3]
FILES = {  # file: (text that states the version, the version, its place)
    "meson.build": ("version : '%s'", "meson.build"),
    "include/tfboard.h": ('#define TFB_VERSION_STRING "%s"',
                          "TFB_VERSION_STRING"),
    "python/pyproject.toml": ('version = "%s"', "pyproject.toml"),
    "README.md": ("tfboard %s serving", "README.md"),
    "tests/webui/package.json": ('"version": "%s"', "package.json"),
}


def run(root):
    return subprocess.run([sys.executable, CHECK, "--source-root", root],
                          capture_output=True, text=True)


def main():
    with open(os.path.join(ROOT, "meson.build")) as f:
        version = re.search(r"version : '([^']+)'", f.read()).group(1)
    with tempfile.TemporaryDirectory(prefix="tfb_versions_") as tmp:
        for rel in list(FILES) + ["tests/webui/package-lock.json"]:
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)),
                        exist_ok=True)
            shutil.copy(os.path.join(ROOT, rel), os.path.join(tmp, rel))
        p = run(tmp)
        assert p.returncode == 0, p.stdout + p.stderr
        for rel, (fmt, place) in FILES.items():
            path = os.path.join(tmp, rel)
            with open(path) as f:
                text = f.read()
            assert fmt % version in text, (rel, fmt % version)
            with open(path, "w") as f:
                f.write(text.replace(fmt % version, fmt % "9.9.9", 1))
            p = run(tmp)
            assert p.returncode == 1 and "9.9.9" in p.stdout and \
                place in p.stdout, (rel, p.returncode, p.stdout)
            with open(path, "w") as f:
                f.write(text)
    print("ok   check_versions fails on each place")


main()
