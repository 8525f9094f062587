"""The chapter's notebook parameters: declared names, their checks, and the record the results file keeps.

`validate` reads exactly the declared names from the notebook's namespace,
checks each one (a bad value raises `ParameterError` naming it, before any
computation or file write) and returns the checked values.  Sizes are counts
of comparison groups, the margin is in chips; the `update_*` parameters set
the one learner step behind each ablation arm's update variance (replicate
iterations, decision points N, epochs E and step size eta in logits), and
``update_eta_readings`` the step sizes under which each update variance is
compared (`check_eta_readings`).  ``seed_groups`` is the groups per seed under
both readings of the five-seed table (all roots pooled, and the audited root
alone), so it is at least the pooled audit's floor `MIN_POOLED_GROUPS`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from oscc_core.chapters.covariance.pooled import MIN_ROOT_GROUPS, contrast_roots
from oscc_core.chapters.covariance.strata import ACTION_ROOTS, ROUND_ROOTS
from oscc_core.games import LEDUC
from oscc_core.method.pooling import WEIGHTINGS
from oscc_core.reporting import params
from oscc_core.reporting.params import ParameterError

#: Fewest groups of the pooled audit: the floor of groups at each of its roots.
MIN_POOLED_GROUPS = MIN_ROOT_GROUPS * len(contrast_roots(LEDUC))
#: Arms that take the learner step behind the update variances (every seed, every replicate).
UPDATE_ARMS = 4
#: The notebook's parameters, in the order of its parameters cell.
DECLARED = ("n_groups", "seed", "root", "continuation", "cfr_iterations", "device", "output_dir", "n_bootstrap",
            "equivalence_margin", "seeds", "seed_groups", "budgets", "budget_groups", "update_replicates",
            "update_decision_points", "update_epochs", "update_learning_rate", "update_eta_readings", "pooled_groups",
            "pooled_weighting")
#: Most step sizes of the update-variance readings (each costs one learner step per arm, seed and replicate).
MAX_ETA_READINGS = 5


@dataclass(frozen=True)
class Parameters:
    """Checked parameters; `policy` is the resolved continuation, `continuation` its manifest record."""

    n_groups: int
    seed: int
    root: str
    continuation: object           # "uniform", "cfr_plus" or {"source": "file", "sha256": ...}
    policy: object                 # "uniform" or a tabular policy dict
    cfr_iterations: int
    device: str                    # as given ("auto", "cpu", "cuda", "cuda:N")
    torch_device: object           # the resolved torch.device
    output_dir: Path
    n_bootstrap: int
    equivalence_margin: float      # chips
    seeds: list
    seed_groups: int
    budgets: list
    budget_groups: int
    update_replicates: int
    update_decision_points: int
    update_epochs: int
    update_learning_rate: float    # eta, logits per unit of the surrogate's gradient
    update_eta_readings: list      # the step sizes of the update-variance readings (the chapter's eta among them)
    pooled_groups: int             # groups per arm over all roots of the pooled audit
    pooled_weighting: str          # how the pooled audit weighs its roots (`method.pooling.WEIGHTINGS`)
    game: str = LEDUC

    @property
    def record(self) -> dict:
        """The parameters as the results file's manifest records them."""
        return {"n_groups": self.n_groups, "seed": self.seed, "root": self.root, "continuation": self.continuation,
                "cfr_iterations": self.cfr_iterations, "n_bootstrap": self.n_bootstrap,
                "equivalence_margin": self.equivalence_margin, "seeds": self.seeds, "seed_groups": self.seed_groups,
                "budgets": self.budgets, "budget_groups": self.budget_groups,
                "update_replicates": self.update_replicates, "update_decision_points": self.update_decision_points,
                "update_epochs": self.update_epochs, "update_learning_rate": self.update_learning_rate,
                "update_eta_readings": self.update_eta_readings, "pooled_groups": self.pooled_groups,
                "pooled_weighting": self.pooled_weighting, "game": self.game}


def check_eta_readings(value, eta: float) -> list[float]:
    """The step sizes of the update-variance readings: a list of 1 to `MAX_ETA_READINGS` distinct numbers in
    (0, 1e4] that holds the chapter's step size `eta` (``update_learning_rate``), the book's own reading."""
    name = "update_eta_readings"
    if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_ETA_READINGS:
        raise ParameterError(f"{name} must be a list of 1 to {MAX_ETA_READINGS} step sizes, got {value!r}.")
    etas = [params.check_float(name, e, 0.0, 1e4, open_low=True) for e in value]
    if len(set(etas)) != len(etas):
        raise ParameterError(f"{name} must not repeat a step size, got {value!r}.")
    if eta not in etas:
        raise ParameterError(f"{name} must hold the chapter's step size update_learning_rate = {eta:g}, "
                             f"got {value!r}.")
    return etas


def validate(namespace: Mapping) -> Parameters:
    """Check every declared parameter in `namespace` (the notebook's globals) and return the checked values."""
    missing = [name for name in DECLARED if name not in namespace]
    if missing:
        raise ParameterError(f"the notebook must define the parameters {missing}.")
    v = {name: namespace[name] for name in DECLARED}
    checked = {
        "n_groups": params.check_size("n_groups", v["n_groups"], 100),
        "seed": params.check_int("seed", v["seed"], 0, 2**63 - 1),
        "cfr_iterations": params.check_int("cfr_iterations", v["cfr_iterations"], 1, 100_000),
        "n_bootstrap": params.check_int("n_bootstrap", v["n_bootstrap"], 10, 100_000),
        "equivalence_margin": params.check_float("equivalence_margin", v["equivalence_margin"], 0.0, 13.0,
                                                 open_low=True),
        "seeds": params.check_seeds("seeds", v["seeds"]),
        "seed_groups": params.check_size("seed_groups", v["seed_groups"], MIN_POOLED_GROUPS),
        "budgets": [params.check_int("budgets", k, 1, 64) for k in params.check_ints("budgets", v["budgets"], 1)],
        "budget_groups": params.check_size("budget_groups", v["budget_groups"], 100),
        "update_replicates": params.check_int("update_replicates", v["update_replicates"], 2, 4_096),
        "update_decision_points": params.check_int("update_decision_points", v["update_decision_points"], 1,
                                                   100_000),
        "update_epochs": params.check_int("update_epochs", v["update_epochs"], 1, 100),
        "update_learning_rate": params.check_float("update_learning_rate", v["update_learning_rate"], 0.0, 1e4,
                                                   open_low=True),
        "pooled_groups": params.check_size("pooled_groups", v["pooled_groups"], MIN_POOLED_GROUPS),
        "pooled_weighting": params.check_choice("pooled_weighting", v["pooled_weighting"], WEIGHTINGS),
        "device": v["device"],
        "torch_device": params.check_device("device", v["device"]),
        "output_dir": params.check_output_dir("output_dir", v["output_dir"]),
    }
    checked["update_eta_readings"] = check_eta_readings(v["update_eta_readings"], checked["update_learning_rate"])
    params.check_memory("update_replicates x update_decision_points",
                        checked["update_replicates"] * checked["update_decision_points"] * UPDATE_ARMS
                        * len(checked["seeds"]), params.GROUP_BYTES, unit="decision point")
    source = params.check_policy_source("continuation", v["continuation"])
    policy = params.resolve_continuation("continuation", source, checked["cfr_iterations"])
    root = params.check_root("root", v["root"], policy)
    for stratum_root in {**ROUND_ROOTS, **ACTION_ROOTS}.values():
        params.check_root("continuation (stratum root)", stratum_root, policy)
    return Parameters(root=root, policy=policy, continuation=params.policy_source_record(v["continuation"]),
                      **checked)
