"""The ledger notebook's parameters: where the results files are read and where the ledger is written.

`validate` reads exactly the declared names from the notebook's namespace and
checks them before anything is read or written; a bad value raises
`ParameterError` naming it.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from oscc_core.reporting import params
from oscc_core.reporting.params import ParameterError

#: The notebook's parameters, in the order of its parameters cell.
DECLARED = ("results_dir", "output_dir")


@dataclass(frozen=True)
class Parameters:
    """Checked parameters: the directory of the chapters' results files and the output directory."""

    results_dir: Path
    output_dir: Path

    @property
    def record(self) -> dict:
        """The parameters as the results file's manifest records them (no paths: they are not portable)."""
        return {}


def check_results_dir(name: str, value) -> Path:
    """A directory that holds at least one chapter results file (`<stem>.json`)."""
    if not isinstance(value, str) or not value:
        raise ParameterError(f"{name} must be a directory path string, got {value!r}.")
    path = Path(value)
    if not path.is_dir():
        raise ParameterError(f"{name} must be an existing directory of results files, but {value!r} is not one.")
    if not any(path.glob("*.json")):
        raise ParameterError(f"{name} must hold the chapters' results files (*.json), but {value!r} holds none.")
    return path


def validate(namespace: Mapping) -> Parameters:
    """Check every declared parameter in `namespace` (the notebook's globals) and return the checked values."""
    missing = [name for name in DECLARED if name not in namespace]
    if missing:
        raise ParameterError(f"the notebook must define the parameters {missing}.")
    return Parameters(results_dir=check_results_dir("results_dir", namespace["results_dir"]),
                      output_dir=params.check_output_dir("output_dir", namespace["output_dir"]))
