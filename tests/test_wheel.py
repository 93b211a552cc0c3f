"""A non-editable install finds kernels/*.cl and the interactive figures'
style and script: build a wheel, install it in a separate folder and run the
section 6 program and a player from outside the repository."""

import os
import pathlib
import subprocess
import sys
import zipfile

from test_section6 import DOCUMENT_LINE, ROOT, run_program


def test_wheel_ships_kernels_and_runs_section6(tmp_path):
    dist, target = tmp_path / "dist", tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
         "--no-build-isolation", "-w", str(dist), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    (wheel,) = dist.glob("netcl_lite-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    kernels = sorted(n for n in names if n.endswith(".cl"))
    on_disk = sorted((ROOT / "kernels").glob("*.cl"))
    assert len(kernels) == len(on_disk) > 0, kernels
    assert {"netcl_lite/viz/static/player.css",
            "netcl_lite/viz/static/player.js"} <= set(names), names
    # the site's scripts (site/_static) are the site build's, not the library's
    assert not [n for n in names if n.endswith(".js") and "player" not in n], names
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--target", str(target), str(wheel)],
        check=True, capture_output=True, timeout=300,
    )
    env = dict(os.environ, PYTHONPATH=str(target))
    where = subprocess.run(
        [sys.executable, "-c", "import netcl_lite; print(netcl_lite.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert pathlib.Path(where).is_relative_to(target), where
    out = run_program(sys.executable, tmp_path, env)
    assert DOCUMENT_LINE in out.splitlines()
    html = subprocess.run(
        [sys.executable, "-c", "from netcl_lite.viz import player\n"
         "p = player(lambda fig, k: fig.add_subplot(), {'k': [0, 1]}, "
         "name='w', figsize=(1, 1), dpi=20)\nprint(p.html())"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout
    assert "<style>\n.nl-player{" in html and "addEventListener" in html
