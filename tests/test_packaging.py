"""The wheel a user builds (``python -m build``) holds the package, its templates and typing
marker, declares the extras the README names, and installs and imports on its own."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = {"frame", "report", "plot", "verify", "docs", "dev", "spark", "all"}


@pytest.mark.slow
def test_wheel_contents_metadata_and_install(tmp_path: Path) -> None:
    pytest.importorskip("build")
    pytest.importorskip("hatchling")
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                    "--outdir", str(dist), str(ROOT)], check=True, capture_output=True)
    (wheel,) = dist.glob("dpcert-*-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = z.read(meta_name).decode()
        entry = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    for needed in ("dpcert/__init__.py", "dpcert/py.typed", "dpcert/cli/main.py",
                   "dpcert/report/templates/report.html.j2", "dpcert/mechanisms/rappor_bloom.py"):
        assert needed in names, needed
    assert not any(n.startswith(("tests/", "docs/", "examples/")) for n in names)
    declared = {line.split(":", 1)[1].strip() for line in meta.splitlines()
                if line.startswith("Provides-Extra:")}
    assert declared >= EXTRAS, EXTRAS - declared
    assert "Requires-Dist: polars>=1.0; extra == 'frame'" in meta
    assert "Requires-Dist: jinja2>=3.1; extra == 'report'" in meta
    assert "dpcert = dpcert.cli.main:main" in entry
    # installs on its own (no dependencies fetched: they are this interpreter's) and imports
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--quiet", "--target", str(target), str(wheel)], check=True,
                   capture_output=True)
    code = ("import dpcert, dpcert.report.html as h; from importlib import resources; "
            "print(dpcert.__file__); "
            "print(resources.files('dpcert.report').joinpath('templates/report.html.j2')"
            ".is_file())")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
                         cwd=tmp_path).stdout.split()
    assert out[0].startswith(str(target)) and out[1] == "True"
