"""The environment is locked: one lock file, the same pins in environment.yml, and this venv installs them."""
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)$", flags=re.M)


def lock() -> dict:
    return dict(PIN.findall((ROOT / "requirements.lock").read_text(encoding="utf-8")))


def test_every_locked_line_is_an_exact_pin():
    lines = [ln.strip() for ln in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()]
    requirements = [ln for ln in lines if ln and not ln.startswith("#")]
    assert requirements and all(PIN.match(ln) for ln in requirements)


def test_environment_yml_carries_exactly_the_lock():
    pins = dict(re.findall(r"^\s+- ([A-Za-z0-9_.\-]+)==(\S+)$", (ROOT / "environment.yml").read_text(), flags=re.M))
    assert pins == lock()
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "environment_from_lock.py"), "--check"])
    assert check.returncode == 0


def test_the_lock_pins_the_cpu_build_of_the_torch_that_pyproject_asks_for():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    wanted = re.search(r'"torch==([0-9.]+)"', pyproject).group(1)
    assert lock()["torch"] == f"{wanted}+cpu"


def test_the_installed_numeric_packages_are_the_locked_ones():
    pins = lock()
    for name in ("numpy", "numba", "llvmlite", "scipy"):
        assert version(name) == pins[name], f"{name} {version(name)} is installed, the lock says {pins[name]}"
    assert version("torch").split("+")[0] == pins["torch"].split("+")[0]
