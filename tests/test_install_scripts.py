"""The two install scripts, run against stand-ins for the commands they may
call (each stand-in writes its arguments to a log):

- tools/ensure_opencl.sh (``make install``): when no OpenCL device
  compiles, it installs Intel's runtime with the environment's pip, says
  how to get Debian's PoCL, and calls neither apt-get nor sudo, as root or
  not;
- tools/system/debian_packages.sh (``make system-deps``): installs the
  missing packages only, with apt-get as root and through sudo otherwise,
  and says what to do where it cannot.
"""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BASH = shutil.which("bash")
LOGGED = '#!{bash}\necho "{name} $*" >> "$STUB_LOG"\n'


def stub_path(tmp_path, *, uid, sudo=True, apt=True, installed=(), python=None):
    """A PATH of stand-ins only: id (prints uid), dpkg-query (knows
    ``installed``), apt-get and sudo (log, then sudo runs the rest)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "id": f'#!{BASH}\necho {uid}\n',
        "dpkg-query": (f'#!{BASH}\ncase " {" ".join(installed)} " in\n'
                       '  *" ${!#} "*) printf "install ok installed" ;;\n'
                       '  *) exit 1 ;;\nesac\n'),
        "env": f'#!{BASH}\nwhile [[ $1 == *=* ]]; do shift; done\nexec "$@"\n',
    }
    if apt:
        scripts["apt-get"] = LOGGED.format(bash=BASH, name="apt-get")
    if sudo:
        scripts["sudo"] = LOGGED.format(bash=BASH, name="sudo") + 'exec "$@"\n'
    if python:
        scripts["python"] = python
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (bin_dir / "dirname").symlink_to(shutil.which("dirname"))
    return bin_dir


def run(script, tmp_path, bin_dir, *args):
    log = tmp_path / "calls.log"
    log.touch()
    env = {"PATH": str(bin_dir), "STUB_LOG": str(log), "HOME": str(tmp_path)}
    res = subprocess.run([BASH, str(ROOT / script), *args], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    return res, log.read_text().splitlines()


# a Python stand-in: the doctor fails until pip has installed [intel]
PYTHON = f"""#!{BASH}
echo "python $*" >> "$STUB_LOG"
case "$*" in
  "-c "*) echo /env ;;
  *"-m pip install"*) : > "$STUB_LOG.intel" ;;
  *"netcl_lite.doctor --check"*) [ -e "$STUB_LOG.intel" ] || exit 1 ;;
esac
"""


@pytest.mark.parametrize("uid", [0, 1000])
def test_make_install_takes_intel_into_the_env_and_never_escalates(tmp_path, uid):
    bin_dir = stub_path(tmp_path, uid=uid, python=PYTHON)
    res, calls = run("tools/ensure_opencl.sh", tmp_path, bin_dir,
                     str(bin_dir / "python"))
    assert res.returncode == 0, res.stderr
    assert not [c for c in calls if c.startswith(("sudo", "apt-get"))], calls
    assert 'python -m pip install --quiet -e .[intel]' in calls, calls
    assert calls[-1] == "python -m netcl_lite.doctor --check", calls
    # what it does, why, and the faster system option with its command
    assert "no OpenCL device here can build a kernel" in res.stderr
    assert "Intel's OpenCL CPU runtime into /env" in res.stderr
    assert "make system-deps" in res.stderr
    assert "apt-get install pocl-opencl-icd" in res.stderr


def test_make_install_does_nothing_when_a_device_compiles(tmp_path):
    bin_dir = stub_path(tmp_path, uid=0, python=f"#!{BASH}\n"
                        'echo "python $*" >> "$STUB_LOG"\n')
    res, calls = run("tools/ensure_opencl.sh", tmp_path, bin_dir,
                     str(bin_dir / "python"))
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert calls == ["python -m netcl_lite.doctor --check"]


PACKAGES = "tools/system/debian_packages.sh"
APT = "apt-get install -y --no-install-recommends"


def test_system_deps_as_root_installs_what_is_missing(tmp_path):
    bin_dir = stub_path(tmp_path, uid=0, sudo=False, installed=["chromium"])
    res, calls = run(PACKAGES, tmp_path, bin_dir)
    assert res.returncode == 0, res.stderr
    assert calls == ["apt-get update", f"{APT} pocl-opencl-icd oclgrind"]
    # each package explained, installed or not
    for name in ("pocl-opencl-icd (to install)", "chromium (installed)",
                 "oclgrind (to install)"):
        assert f"system-deps: {name}: " in res.stdout


def test_system_deps_as_a_user_asks_sudo(tmp_path):
    bin_dir = stub_path(tmp_path, uid=1000, installed=["chromium"])
    res, calls = run(PACKAGES, tmp_path, bin_dir, "oclgrind")
    assert res.returncode == 0, res.stderr
    assert calls == ["sudo apt-get update", "apt-get update",
                     f"sudo env DEBIAN_FRONTEND=noninteractive {APT} oclgrind",
                     f"{APT} oclgrind"]


def test_system_deps_without_root_or_sudo_says_what_to_run(tmp_path):
    bin_dir = stub_path(tmp_path, uid=1000, sudo=False)
    res, calls = run(PACKAGES, tmp_path, bin_dir)
    assert res.returncode == 1 and calls == []
    assert ("not root, and no sudo: as root, run apt-get install "
            "pocl-opencl-icd chromium oclgrind") in res.stderr


def test_system_deps_with_everything_there_needs_no_root(tmp_path):
    bin_dir = stub_path(tmp_path, uid=1000, sudo=False, apt=False,
                        installed=["pocl-opencl-icd", "chromium", "oclgrind"])
    res, calls = run(PACKAGES, tmp_path, bin_dir)
    assert res.returncode == 0 and calls == [], res.stderr
    assert "all installed already" in res.stdout


def test_system_deps_without_apt_names_the_packages(tmp_path):
    bin_dir = stub_path(tmp_path, uid=0, apt=False)
    res, calls = run(PACKAGES, tmp_path, bin_dir, "chromium")
    assert res.returncode == 1 and calls == []
    assert "no apt-get here" in res.stderr and "install chromium" in res.stderr
