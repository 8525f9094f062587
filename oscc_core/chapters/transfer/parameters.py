"""The transfer notebook's parameters: every one checked before any computation or file write.

The learner hyperparameters carry the same names and defaults as the solver
chapter's (`learning.operating_point.FIELDS`; a test keeps the two
notebooks' defaults equal), so both chapters build the same operating point
and print the same digest unless a parameter changes it.  The converging
learner's operating point is read from the Leduc learning study's file
(`leduc_study`); the Kuhn study that applies it has its own seeds, budgets,
committed file and Dask cluster (`study_*`, `workers`, `scheduler`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from oscc_core.engine.roots import parse_root
from oscc_core.games import KUHN, LEDUC
from oscc_core.learning.loop import Schedule
from oscc_core.learning.operating_point import budget_schedule
from oscc_core.reporting import params

NAMES = ("seeds", "decision_points", "epochs", "epsilon", "group_size", "budget", "gae_lambda", "value_rate",
         "eta_grid", "dev_seeds", "learning_rate", "opponent", "contrast_root", "contrast_groups",
         "update_replicates", "leduc_cfr_iterations", "kuhn_contrast_root", "bound_search_points",
         "selector_blocks", "selector_large_blocks", "selector_block_size", "selector_delta", "leduc_study",
         "study_seeds", "study_multiples", "study_file", "study_store", "workers", "scheduler", "device",
         "output_dir")
#: Parameters that name places or machines (paths, a cluster): they never change a number and stay out of the record.
NOT_RECORDED = ("device", "output_dir", "leduc_study", "study_file", "study_store", "workers", "scheduler")
SEED_LIST_MAX = 64
MAX_BUDGET = 10_000_000


@dataclass(frozen=True)
class Parameters:
    """Checked parameters (units as in the notebook's parameters cell)."""

    seeds: list
    decision_points: int
    epochs: int
    epsilon: float
    group_size: int
    budget: int
    gae_lambda: float
    value_rate: float
    eta_grid: list
    dev_seeds: list
    learning_rate: float
    opponent: str
    contrast_root: str
    contrast_groups: int
    update_replicates: int
    leduc_cfr_iterations: int
    kuhn_contrast_root: str
    bound_search_points: int
    selector_blocks: int
    selector_large_blocks: int
    selector_block_size: int
    selector_delta: float
    leduc_study: str                # the Leduc learning study's file (its converging choices and design)
    study_seeds: list               # seeds of the Kuhn study (the live rerun's, when study_file is given)
    study_multiples: list           # budgets of the Kuhn study, as multiples of budget
    study_file: str                 # the committed Kuhn study to show ("": run the whole study here)
    study_store: str                # directory keeping every finished run ("": a fresh temporary one)
    workers: int
    scheduler: str
    device: str
    torch_device: object
    out_dir: Path
    source_game: str = LEDUC
    target_game: str = KUHN

    def schedule(self, learning_rate: float) -> Schedule:
        """The matched-budget schedule at `learning_rate` (`learning.operating_point.budget_schedule`)."""
        return budget_schedule(self, learning_rate)

    def base_schedule(self) -> Schedule:
        """The hyperparameters every learner run shares (N, E, clip, G, GAE, value rate), as the solver chapter
        builds them; eta and the decision law are the learner's and the arm's
        (`learning.study_design.learner_schedule`)."""
        return Schedule(decision_points=self.decision_points, epochs=self.epochs, epsilon=self.epsilon,
                        group_size=self.group_size, gae_lambda=self.gae_lambda, value_rate=self.value_rate)

    @property
    def record(self) -> dict:
        keys = [n for n in NAMES if n not in NOT_RECORDED] + ["source_game", "target_game"]
        return {k: getattr(self, k) for k in keys}


def _seeds(name: str, value) -> list:
    seeds = params.check_seeds(name, value)
    if len(seeds) > SEED_LIST_MAX or len(set(seeds)) != len(seeds) or len(seeds) < 2:
        raise params.ParameterError(f"{name} must list 2 to {SEED_LIST_MAX} distinct seeds, got {value!r}.")
    return seeds


def _root(name: str, value, game: str) -> str:
    if not isinstance(value, str):
        raise params.ParameterError(f"{name} must be a public history string such as '', got {value!r}.")
    try:
        parse_root(game, value)
    except ValueError as exc:
        raise params.ParameterError(f"{name}: {exc}") from None
    return value


def _check_study(v: dict) -> None:
    """The Kuhn study's parameters and the Leduc study's file, in place in `v`."""
    v["study_seeds"] = _seeds("study_seeds", v["study_seeds"])
    if not isinstance(v["leduc_study"], str) or not Path(v["leduc_study"]).is_file():
        raise params.ParameterError(f"leduc_study must be the Leduc learning study's results file (its converging "
                                    f"choices), but {v['leduc_study']!r} is not a file.")
    params.check_study(v, MAX_BUDGET)


def validate(mapping: Mapping) -> Parameters:
    """Check every parameter in `mapping` (the notebook's globals); ParameterError names the first bad one."""
    v = params.declared(mapping, NAMES)
    v["seeds"] = _seeds("seeds", v["seeds"])
    v["dev_seeds"] = params.check_seeds("dev_seeds", v["dev_seeds"])
    if set(v["seeds"]) & set(v["dev_seeds"]):
        raise params.ParameterError(f"dev_seeds must be disjoint from seeds (eta is chosen on them), but "
                                    f"{sorted(set(v['seeds']) & set(v['dev_seeds']))} appear in both.")
    v["decision_points"] = params.check_int("decision_points", v["decision_points"], 2, 65_536)
    v["epochs"] = params.check_int("epochs", v["epochs"], 1, 100)
    v["epsilon"] = params.check_float("epsilon", v["epsilon"], 0.0, 1.0, open_low=True)
    v["group_size"] = params.check_int("group_size", v["group_size"], 2, 64)
    v["budget"] = params.check_int("budget", v["budget"], 1_000, MAX_BUDGET)
    v["gae_lambda"] = params.check_float("gae_lambda", v["gae_lambda"], 0.0, 1.0)
    v["value_rate"] = params.check_float("value_rate", v["value_rate"], 0.0, 1.0, open_low=True)
    grid = v["eta_grid"]
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__iter__") or not list(grid):
        raise params.ParameterError(f"eta_grid must be a non-empty list of numbers in (0, 1000], got {grid!r}.")
    v["eta_grid"] = [params.check_float("eta_grid entries", x, 0.0, 1_000.0, open_low=True) for x in grid]
    if len(set(v["eta_grid"])) != len(v["eta_grid"]):
        raise params.ParameterError(f"eta_grid must not repeat a value, got {grid!r}.")
    v["learning_rate"] = params.check_float("learning_rate", v["learning_rate"], 0.0, 1_000.0)
    v["opponent"] = params.check_choice("opponent", v["opponent"], ("uniform",))
    v["contrast_root"] = _root("contrast_root", v["contrast_root"], LEDUC)
    v["kuhn_contrast_root"] = _root("kuhn_contrast_root", v["kuhn_contrast_root"], KUHN)
    v["contrast_groups"] = params.check_size("contrast_groups", v["contrast_groups"], 100)
    v["update_replicates"] = params.check_int("update_replicates", v["update_replicates"], 2, 4_096)
    v["leduc_cfr_iterations"] = params.check_int("leduc_cfr_iterations", v["leduc_cfr_iterations"], 1, 100_000)
    v["bound_search_points"] = params.check_int("bound_search_points", v["bound_search_points"], 0, 1_000_000)
    v["selector_blocks"] = params.check_int("selector_blocks", v["selector_blocks"], 2, 100_000)
    v["selector_large_blocks"] = params.check_int("selector_large_blocks", v["selector_large_blocks"], 2, 100_000)
    v["selector_block_size"] = params.check_int("selector_block_size", v["selector_block_size"], 1, 100_000)
    v["selector_delta"] = params.check_float("selector_delta", v["selector_delta"], 0.0, 1.0, open_low=True)
    _check_study(v)
    torch_device = params.check_device("device", v["device"])
    out_dir = params.check_output_dir("output_dir", v["output_dir"])
    return Parameters(**{n: v[n] for n in NAMES if n != "output_dir"}, torch_device=torch_device, out_dir=out_dir)
