"""Running a committed notebook with papermill from the tests (shared by the notebook parameter tests)."""
from pathlib import Path

import papermill as pm
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def run_notebook(stem: str, tmp_path, **parameters):
    """Execute notebooks/<stem>.ipynb into tmp_path, results into tmp_path/results, as CI would."""
    parameters.setdefault("output_dir", str(tmp_path / "results"))
    return pm.execute_notebook(str(NOTEBOOKS / f"{stem}.ipynb"), str(tmp_path / "out.ipynb"),
                               parameters=parameters, cwd=str(NOTEBOOKS), progress_bar=False,
                               kernel_name="python3")


def assert_stops_naming(stem: str, tmp_path, name: str, **parameters) -> None:
    """The validation cell raises ParameterError, and its sentence names the parameter."""
    with pytest.raises(pm.PapermillExecutionError) as info:
        run_notebook(stem, tmp_path, **parameters)
    assert info.value.ename == "ParameterError"
    assert name in info.value.evalue


def runnable_defaults(stem: str) -> dict:
    """`parameter_defaults` with every input file a default names ('../results/....json', read from the notebooks'
    folder as the notebook reads it) made absolute, so that the defaults validate from any working directory."""
    return {k: str((NOTEBOOKS / v).resolve()) if isinstance(v, str) and v.startswith("../") and v.endswith(".json")
            else v for k, v in parameter_defaults(stem).items()}


def parameter_defaults(stem: str) -> dict:
    """The literal defaults of notebooks/<stem>.ipynb's parameters cell, read with ast (nothing is run)."""
    import ast
    import json

    nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    tree = ast.parse("".join(cell["source"]))
    return {node.target.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.AnnAssign)}
