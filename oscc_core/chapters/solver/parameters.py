"""The solver notebook's parameters: every one checked before any computation or file write.

`validate(mapping)` reads the declared names from the notebook's globals,
raises `ParameterError` naming the first bad one, and returns the checked
values with the learners' schedules and the record the results file keeps.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from oscc_core.engine.roots import parse_root
from oscc_core.games import LEDUC
from oscc_core.learning import study_design as design
from oscc_core.learning.loop import Schedule
from oscc_core.learning.operating_point import budget_schedule
from oscc_core.reporting import params

#: The notebook's parameter names, in the order of its parameters cell.
NAMES = ("diagnostic_seeds", "policy_seeds", "dev_seeds", "sensitivity_seeds", "iterations", "decision_points",
         "epochs", "epsilon", "group_size", "learning_rate", "eta_grid", "budget", "gae_lambda", "value_rate",
         "update_replicates", "contrast_root", "contrast_groups", "scale_iterations", "scale_seeds",
         "scale_decay", "kuhn_cfr_iterations", "leduc_cfr_iterations", "calibration_labels", "frozen_comparisons",
         "frozen_epsilon", "frozen_z", "opponent", "study_seeds", "study_multiples", "converging_options", "curve_per_decade", "anchors_file", "study_file",
         "study_store",
         "workers", "scheduler", "device", "output_dir")
SEED_LIST_MAX = 64
#: Upper estimate of one replicate run's memory in the update-variance pass (logits, plans, lanes).
REPLICATE_BYTES = 1 << 20
MAX_BUDGET = 10_000_000
MAX_SCALE_ITERATIONS = 100_000
#: The most recorded budgets per decade (each costs an exact evaluation of every run and a kept state).
MAX_PER_DECADE = 64


@dataclass(frozen=True)
class Parameters:
    """Checked parameters (units as in the notebook's parameters cell) and the schedules they make."""

    diagnostic_seeds: list
    policy_seeds: list
    dev_seeds: list
    sensitivity_seeds: list
    iterations: int
    decision_points: int
    epochs: int
    epsilon: float
    group_size: int
    learning_rate: float            # 0: chosen on dev_seeds from eta_grid
    eta_grid: list
    budget: int
    gae_lambda: float
    value_rate: float
    update_replicates: int
    contrast_root: str
    contrast_groups: int
    scale_iterations: int
    scale_seeds: list
    scale_decay: float
    kuhn_cfr_iterations: int
    leduc_cfr_iterations: int
    calibration_labels: list
    frozen_comparisons: int
    frozen_epsilon: float
    frozen_z: float
    opponent: str
    study_seeds: list
    study_multiples: list
    converging_options: str         # the converging learner's named option set (`study_design.CONVERGING_OPTIONS`)
    curve_per_decade: int           # the study's recorded budgets per decade (curves and calls-to-threshold)
    anchors_file: str               # the committed MCCFR anchors shown beside the study ("": run them here)
    study_file: str                 # "": run the whole study; else the committed study to show (a path)
    study_store: str                # directory of finished runs ("": a fresh temporary one)
    workers: int
    scheduler: str
    device: str
    torch_device: object
    out_dir: Path
    game: str = LEDUC

    def schedule(self, learning_rate: float, budget: int | None = None, iterations: int | None = None
                 ) -> Schedule:
        """The learners' schedule at `learning_rate`: the operating point's matched-budget schedule
        (`learning.operating_point.budget_schedule`) when `budget` is given, else T = `iterations` (default:
        the diagnostic's `self.iterations`) with no budget."""
        if budget is not None:
            if budget != self.budget:
                raise ValueError(f"the matched budget is the parameter budget ({self.budget}), not {budget}.")
            return budget_schedule(self, learning_rate)
        return Schedule(iterations=self.iterations if iterations is None else iterations,
                        decision_points=self.decision_points, epochs=self.epochs, epsilon=self.epsilon,
                        learning_rate=learning_rate, group_size=self.group_size, gae_lambda=self.gae_lambda,
                        value_rate=self.value_rate)

    def base_schedule(self) -> Schedule:
        """The hyperparameters every learner run shares (N, E, clip, G, GAE, value rate); eta and the decision law
        are the learner's and the arm's (`learning.study_design.learner_schedule`)."""
        return Schedule(decision_points=self.decision_points, epochs=self.epochs, epsilon=self.epsilon,
                        group_size=self.group_size, gae_lambda=self.gae_lambda, value_rate=self.value_rate)

    @property
    def record(self) -> dict:
        """The parameters as the results file's manifest records them (no paths, no cluster address: they are
        not portable and do not change a number)."""
        keys = [n for n in NAMES if n not in ("device", "output_dir", "study_store", "workers", "scheduler",
                                              "study_file")] + ["game"]
        return {k: getattr(self, k) for k in keys}


def _seeds(name: str, value, minimum: int = 1) -> list:
    seeds = params.check_seeds(name, value)
    if not minimum <= len(seeds) <= SEED_LIST_MAX or len(set(seeds)) != len(seeds):
        raise params.ParameterError(f"{name} must list {minimum} to {SEED_LIST_MAX} distinct seeds, got {value!r}.")
    return seeds


def _floats(name: str, value, low: float, high: float) -> list:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") or not list(value):
        raise params.ParameterError(f"{name} must be a non-empty list of numbers in ({low}, {high}], got {value!r}.")
    out = [params.check_float(f"{name} entries", x, low, high, open_low=True) for x in value]
    if len(set(out)) != len(out):
        raise params.ParameterError(f"{name} must not repeat a value, got {value!r}.")
    return out


def _check_study(v: dict) -> None:
    """The learning study's parameters, in place in `v`."""
    v["study_seeds"] = _seeds("study_seeds", v["study_seeds"], minimum=2)
    v["converging_options"] = params.check_choice("converging_options", v["converging_options"],
                                                  tuple(design.CONVERGING_OPTIONS))
    v["curve_per_decade"] = params.check_int("curve_per_decade", v["curve_per_decade"], 1, MAX_PER_DECADE)
    params.check_study(v, MAX_BUDGET)
    if v["study_file"]:
        _check_shown_options(v["study_file"], _shown_design(v["study_file"]), v["converging_options"])
    v["anchors_file"] = _check_anchors(v["anchors_file"])


def _check_anchors(path) -> str:
    """The anchors file shown beside the study: '' (run them here) or a file that holds OpenSpiel's MCCFR runs."""
    import json

    if not isinstance(path, str):
        raise params.ParameterError(f"anchors_file must be a path to the MCCFR anchors file or '', got {path!r}.")
    if path:
        try:
            body = json.loads(Path(path).read_text(encoding="utf-8"))
            if not {"es_mccfr", "os_mccfr"} <= set(body["runs"]):
                raise KeyError
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            raise params.ParameterError(f"anchors_file must be the MCCFR anchors' results file (with runs of "
                                        f"es_mccfr and os_mccfr) or '', but {path!r} is not one.") from None
    return path


def _shown_design(path: str) -> dict:
    """The design record of the study file at `path`; ParameterError when the file is not a study's."""
    import json

    try:
        shown = json.loads(Path(path).read_text(encoding="utf-8"))["design"]
        if not isinstance(shown, dict):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise params.ParameterError(f"study_file must be a learning study's results file (with its design) or '', "
                                    f"but {path!r} is not one.") from None
    return shown


def _check_shown_options(path: str, shown: dict, options: str) -> None:
    """A committed study is shown beside a live rerun of part of it, compared record by record, so the rerun must
    run the learner the study ran: the same converging options (the recorded budgets may differ: only the records
    both hold are compared)."""
    recorded = shown.get("converging_options", design.DEFAULT_OPTIONS)
    if recorded != options:
        raise params.ParameterError(f"converging_options must be {recorded!r}, the options of the study shown "
                                    f"({path}), got {options!r}; set study_file to '' to run a study with other "
                                    f"options.")


def validate(mapping: Mapping) -> Parameters:
    """Check every parameter in `mapping` (the notebook's globals); ParameterError names the first bad one."""
    v = params.declared(mapping, NAMES)
    for name in ("diagnostic_seeds", "policy_seeds", "dev_seeds", "sensitivity_seeds", "scale_seeds",
                 "calibration_labels"):
        v[name] = _seeds(name, v[name])
    reporting = set(v["diagnostic_seeds"]) | set(v["policy_seeds"]) | set(v["sensitivity_seeds"]) | set(
        v["scale_seeds"])
    if reporting & set(v["dev_seeds"]):
        raise params.ParameterError(f"dev_seeds must be disjoint from the reporting seeds (eta is chosen on them), "
                                    f"but {sorted(reporting & set(v['dev_seeds']))} appear in both.")
    v["iterations"] = params.check_int("iterations", v["iterations"], 1, 100_000)
    v["decision_points"] = params.check_int("decision_points", v["decision_points"], 2, 65_536)
    v["epochs"] = params.check_int("epochs", v["epochs"], 1, 100)
    v["epsilon"] = params.check_float("epsilon", v["epsilon"], 0.0, 1.0, open_low=True)
    v["group_size"] = params.check_int("group_size", v["group_size"], 2, 64)
    v["learning_rate"] = params.check_float("learning_rate", v["learning_rate"], 0.0, 1_000.0)
    v["eta_grid"] = _floats("eta_grid", v["eta_grid"], 0.0, 1_000.0)
    v["budget"] = params.check_int("budget", v["budget"], 1_000, MAX_BUDGET)
    v["gae_lambda"] = params.check_float("gae_lambda", v["gae_lambda"], 0.0, 1.0)
    v["value_rate"] = params.check_float("value_rate", v["value_rate"], 0.0, 1.0, open_low=True)
    v["update_replicates"] = params.check_int("update_replicates", v["update_replicates"], 2, 4_096)
    if not isinstance(v["contrast_root"], str):
        raise params.ParameterError(f"contrast_root must be a public history string such as '' or '2', "
                                    f"got {v['contrast_root']!r}.")
    try:
        parse_root(LEDUC, v["contrast_root"])
    except ValueError as exc:
        raise params.ParameterError(f"contrast_root: {exc}") from None
    v["contrast_groups"] = params.check_size("contrast_groups", v["contrast_groups"], 100)
    v["scale_iterations"] = params.check_int("scale_iterations", v["scale_iterations"], 1, MAX_SCALE_ITERATIONS)
    v["scale_decay"] = params.check_float("scale_decay", v["scale_decay"], 0.0, 1.0)
    v["kuhn_cfr_iterations"] = params.check_int("kuhn_cfr_iterations", v["kuhn_cfr_iterations"], 1, 1_000_000)
    v["leduc_cfr_iterations"] = params.check_int("leduc_cfr_iterations", v["leduc_cfr_iterations"], 1, 100_000)
    v["frozen_comparisons"] = params.check_size("frozen_comparisons", v["frozen_comparisons"], 2)
    v["frozen_epsilon"] = params.check_float("frozen_epsilon", v["frozen_epsilon"], 0.0, 1.0, open_low=True)
    v["frozen_z"] = params.check_float("frozen_z", v["frozen_z"], 0.0, 10.0)
    v["opponent"] = params.check_choice("opponent", v["opponent"], ("uniform",))
    _check_study(v)
    params.check_memory("update_replicates x policy_seeds", v["update_replicates"] * len(v["policy_seeds"]),
                        REPLICATE_BYTES, unit="replicate run")
    torch_device = params.check_device("device", v["device"])
    out_dir = params.check_output_dir("output_dir", v["output_dir"])
    return Parameters(**{n: v[n] for n in NAMES if n != "output_dir"}, torch_device=torch_device, out_dir=out_dir)

