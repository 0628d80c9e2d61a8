#!/usr/bin/env python3
"""The README's static link line works: a small C program
(static_link_prog.c) is built with exactly the command the README shows
(its `cc` replaced by this build's compiler), against this build's
uninstalled tfboard.pc (build/meson-uninstalled: libtfboard.a and
include/), then run with no library path: it writes an event file and
reads its scalar back. The program must not need libtfboard.so: its
dynamic section names no libtfboard (readelf), which is what a plain
-ltfboard would give. No network.
Arguments: the C compiler (a command line), pkg-config and readelf (""
when missing), the program's source.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

CC, PKG_CONFIG, READELF, SOURCE = sys.argv[1:5]
BUILD = os.environ["TFB_BUILD_ROOT"]
SRC = os.environ["TFB_SOURCE_ROOT"]


def readme_command():
    """The README's static link command (the one with -l:libtfboard.a),
    its continuation lines joined."""
    with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^ +(cc [^\n]*\\\n(?: +[^\n]*\\\n)* +[^\n]*)$", text, re.M)
    while m and "-l:libtfboard.a" not in m.group(1):
        m = re.search(r"^ +(cc [^\n]*\\\n(?: +[^\n]*\\\n)* +[^\n]*)$",
                      text[m.end():], re.M)
    assert m, "no static link command in README.md"
    cmd = re.sub(r"\\\n\s*", " ", m.group(1))
    assert "pkg-config --static --libs tfboard" in cmd, cmd
    return cmd


def main():
    if not PKG_CONFIG:
        print("pkg-config not found: skipped")
        sys.exit(77)
    cmd = readme_command()
    with tempfile.TemporaryDirectory(prefix="tfb_static_") as tmp:
        exe = os.path.join(tmp, "train")
        # the README's line, for this source, output and compiler
        cc = CC
        sanitize = os.environ.get("TFB_SANITIZE", "none")
        if sanitize not in ("", "none"):  # the archive's objects need it
            cc += " -fsanitize=" + sanitize
        shell = cmd.replace("cc -o train train.c",
                            "%s -o %s %s" % (cc, shlex.quote(exe),
                                             shlex.quote(SOURCE)), 1)
        assert shell != cmd, cmd
        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = os.path.join(BUILD, "meson-uninstalled")
        env["PATH"] = os.path.dirname(PKG_CONFIG) + os.pathsep + env["PATH"]
        env.pop("LD_LIBRARY_PATH", None)
        p = subprocess.run(["sh", "-c", shell], env=env, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, (shell, p.stdout, p.stderr[-3000:])
        if READELF:
            dyn = subprocess.run([READELF, "-d", exe], capture_output=True,
                                 text=True, check=True).stdout
            needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dyn)
            assert not [n for n in needed if "tfboard" in n], needed
            print("needs: " + " ".join(needed))
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        out_dir = os.path.join(tmp, "run")
        p = subprocess.run([exe, out_dir], env=env, capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0, (p.returncode, p.stderr)
        assert p.stdout.startswith("ok "), p.stdout
        files = os.listdir(out_dir)
        assert any(f.startswith("events.out.tfevents.") for f in files), files
    print("ok   static link (%s)" % p.stdout.strip())


main()
