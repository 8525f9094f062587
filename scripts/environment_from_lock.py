"""Write environment.yml from requirements.lock, so that conda users get exactly the locked versions.

    python scripts/environment_from_lock.py            # rewrite environment.yml
    python scripts/environment_from_lock.py --check    # exit 1 when environment.yml is not the lock's

The lock (`requirements.lock`) is made by pip-tools from pyproject.toml (`make lock`); this script
only copies its pins, in its order, into the pip section of a conda environment on Python 3.11.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
ENVIRONMENT = ROOT / "environment.yml"
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)$")
#: torch's CPU build (the '+cpu' local version) is served by PyTorch's own index, not by PyPI.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

HEADER = """\
# Conda environment with exactly the versions of requirements.lock (written by
# scripts/environment_from_lock.py: do not edit by hand; `make lock` refreshes both).
#   conda env create -f environment.yml && conda activate oscc
# `make book` / `make test` install the same lock into .venv instead.
name: oscc
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - pip:
      - --extra-index-url {index}
"""


def lock_pins(text: str) -> list[str]:
    """The 'name==version' lines of a pip-tools lock, in its order (comments and blank lines dropped)."""
    return [line.strip() for line in text.splitlines() if PIN.match(line.strip())]


def environment_text(pins: list[str]) -> str:
    """The environment.yml that installs exactly `pins` and then the package itself, editable."""
    body = "".join(f"      - {pin}\n" for pin in pins)
    return HEADER.format(index=TORCH_CPU_INDEX) + body + "      # the package itself, editable, from the repository root\n      - -e .\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    want = environment_text(lock_pins(LOCK.read_text(encoding="utf-8")))
    if args.check:
        if ENVIRONMENT.read_text(encoding="utf-8") != want:
            print("environment.yml does not carry requirements.lock's pins: run scripts/environment_from_lock.py.")
            return 1
        return 0
    ENVIRONMENT.write_text(want, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
