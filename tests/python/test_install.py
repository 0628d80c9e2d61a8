"""The README's Python install recipe for Debian 12 (PEP 668: no pip into
the system's Python): a virtual environment that sees Debian's NumPy and
torch (--system-site-packages), the package pip-installed into it from
./python without network (--no-build-isolation --no-deps --no-index), then
imported from the venv (not from the source tree) and used against the
library built here."""
import os
import shutil
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")


def run(cmd, env=None, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env, cwd=cwd)
    assert p.returncode == 0, (cmd, p.stdout[-2000:], p.stderr[-2000:])
    return p.stdout


def test_venv_install_recipe(tmp_path):
    try:
        import ensurepip  # noqa: F401  (Debian's python3-venv)
    except ImportError:
        pytest.skip("python3-venv is not installed (tests/run.sh installs it)")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    # pip builds in the source folder: a copy keeps the tree clean.
    src = tmp_path / "python"
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns("__pycache__", "build",
                                                            "*.egg-info"))
    pip = str(venv / "bin" / "pip")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    run([pip, "install", "--no-build-isolation", "--no-deps", "--no-index", str(src)],
        env=env)
    logdir = tmp_path / "runs"
    out = run([str(venv / "bin" / "python"), "-c",
               "import sys, tfboard\n"
               "w = tfboard.SummaryWriter(sys.argv[1])\n"
               "w.add_scalar('loss', 0.5, 1)\n"
               "w.close()\n"
               "print(tfboard.__file__)\n"
               "print(tfboard.__version__)\n", str(logdir)],
              env=env, cwd=str(tmp_path))
    where, version = out.split()[:2]
    assert where.startswith(str(venv)), where  # the installed copy, not ./python
    assert version and version[0].isdigit(), version
    files = [f for f in os.listdir(logdir) if f.startswith("events.out.tfevents.")]
    assert len(files) == 1 and os.path.getsize(logdir / files[0]) > 0, files
