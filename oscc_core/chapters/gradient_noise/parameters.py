"""The notebook's parameters: every one checked in one call, before any collection or file write.

`validate(globals())` reads exactly the declared names, raises
`ParameterError` (one sentence naming the parameter) on a bad value, and
returns the checked values with what they resolve to (the continuation
policy, the device, the output directory, the matched-cost budget in
physical draws, and the root's geometry) and `.record`, the parameters as
the results file records them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oscc_core.chapters.gradient_noise.calibration import check_pilot_blocks
from oscc_core.chapters.gradient_noise.geometry import WEIGHTINGS, Geometry, geometry
from oscc_core.chapters.gradient_noise.pooled import min_groups
from oscc_core.games import LEDUC
from oscc_core.method import pooling
from oscc_core.method import root_policy as root_policy_mod
from oscc_core.reporting import claims, params
from oscc_core.reporting.params import ParameterError

NAMES = ("n_groups", "seed", "root", "root_policy", "root_policy_floor", "noise_weights", "continuation",
         "cfr_iterations", "epsilon", "epochs", "learning_rate", "behaviour_lag", "lag_grid", "learning_rate_grid",
         "calibration_groups", "block_size", "pilot_blocks", "bound_factor", "delta", "physical_budget",
         "screen_seeds", "screen_iterations", "screen_groups", "screen_learning_rate", "connectivity_seeds",
         "connectivity_batches", "connectivity_decision_points", "connectivity_epochs", "connectivity_learning_rate",
         "connectivity_lag_grid", "connectivity_learning_rate_grid", "connectivity_endpoint", "device", "output_dir",
         "n_bootstrap", "pooled_groups", "pooled_weighting")
#: Names of the connectivity loop's parameters (recorded as they are checked).
LOOP_NAMES = NAMES[NAMES.index("connectivity_seeds"):NAMES.index("device")]
#: Memory per physical draw of the matched-cost frontier (traced collections of every arm, upper estimate).
DRAW_BYTES = 1024
#: Smallest budget of physical draws the matched-cost comparison accepts.
MIN_BUDGET = 1_000
#: Memory per group of the all-roots pool (one root's collections of every arm and their bootstrap, upper estimate).
POOLED_GROUP_BYTES = 4096


def group_bytes(lag_grid, learning_rate_grid) -> int:
    """Upper estimate of the memory per group of the noise audit: collections plus per-group updates of each setting.

    Measured on Leduc: about 4 KiB per group plus about 1 KiB per group for each update setting (the five fixed
    settings and one per lag and per learning rate of the grids).
    """
    return 4096 + 1024 * (5 + len(lag_grid) + len(learning_rate_grid))


def check_root_policy(name: str, value) -> "str | list[float]":
    """`method.root_policy.check_root_policy` as a notebook parameter check (ParameterError)."""
    try:
        return root_policy_mod.check_root_policy(name, value)
    except ValueError as e:
        raise ParameterError(str(e)) from None


def check_floats(name: str, values, low: float, high: float, open_low: bool = False) -> list[float]:
    """A non-empty list of numbers, each in the range (see ``params.check_float``)."""
    if not isinstance(values, (list, tuple)) or not values:
        raise ParameterError(f"{name} must be a non-empty list of numbers, got {values!r}.")
    return [params.check_float(name, v, low, high, open_low) for v in values]


@dataclass(frozen=True)
class Parameters:
    """Checked parameters (the notebook's names) and what they resolve to."""

    n_groups: int
    seed: int
    root: str
    root_policy: "str | list[float]"
    root_policy_floor: float
    noise_weights: str
    continuation: object            # as recorded: "uniform", "cfr_plus" or {"source": "file", "sha256": ...}
    cfr_iterations: int
    epsilon: float
    epochs: int
    learning_rate: float
    behaviour_lag: float
    lag_grid: list
    learning_rate_grid: list
    calibration_groups: int
    block_size: int
    pilot_blocks: int
    bound_factor: float
    delta: float
    physical_budget: int
    screen_seeds: list
    screen_iterations: int
    screen_groups: int
    screen_learning_rate: float
    connectivity_seeds: list
    connectivity_batches: int
    connectivity_decision_points: int
    connectivity_epochs: int
    connectivity_learning_rate: float
    connectivity_lag_grid: list
    connectivity_learning_rate_grid: list
    connectivity_endpoint: str
    device: str
    output_dir: str
    n_bootstrap: int
    pooled_groups: int              # groups per arm of the all-roots pool of the frontier's contrast variances
    pooled_weighting: str           # how the pool weighs its roots (`method.pooling.WEIGHTINGS`)
    # resolved
    budget: int                     # physical draws per arm in the matched-cost comparison
    torch_device: object
    out_dir: Path
    policy: object                  # the continuation policy ("uniform" or a policy table)
    geom: Geometry

    @property
    def record(self) -> dict:
        """The parameters as the results file records them (the budget resolved, the continuation by content)."""
        return {"n_groups": self.n_groups, "seed": self.seed, "root": self.root, "root_policy": self.root_policy,
                "root_policy_floor": self.root_policy_floor, "noise_weights": self.noise_weights,
                "continuation": self.continuation, "cfr_iterations": self.cfr_iterations, "epsilon": self.epsilon,
                "epochs": self.epochs, "learning_rate": self.learning_rate, "behaviour_lag": self.behaviour_lag,
                "lag_grid": self.lag_grid, "learning_rate_grid": self.learning_rate_grid,
                "calibration_groups": self.calibration_groups, "block_size": self.block_size,
                "pilot_blocks": self.pilot_blocks, "bound_factor": self.bound_factor, "delta": self.delta,
                "physical_budget": self.budget, "screen_seeds": self.screen_seeds,
                "screen_iterations": self.screen_iterations, "screen_groups": self.screen_groups,
                "screen_learning_rate": self.screen_learning_rate, "n_bootstrap": self.n_bootstrap, "game": LEDUC,
                "pooled_groups": self.pooled_groups, "pooled_weighting": self.pooled_weighting,
                **{k: getattr(self, k) for k in LOOP_NAMES}}

    def loop_schedule(self):
        """The connectivity loop's schedule: logical batches, decision points, epochs, the clip range."""
        from oscc_core.learning.loop import Schedule

        return Schedule(iterations=self.connectivity_batches, decision_points=self.connectivity_decision_points,
                        epochs=self.connectivity_epochs, epsilon=self.epsilon,
                        learning_rate=self.connectivity_learning_rate)


def check_lags(name: str, values) -> list[int]:
    """A non-empty list of behaviour lags, each an integer number of iterations in [0, 100]."""
    if not isinstance(values, (list, tuple)) or not values:
        raise ParameterError(f"{name} must be a non-empty list of integers, got {values!r}.")
    return [params.check_int(name, x, 0, 100) for x in values]


def check_loop(v: dict) -> None:
    """The connectivity loop's parameters, checked in place."""
    from oscc_core.chapters.gradient_noise.connectivity import ENDPOINTS

    v["connectivity_seeds"] = params.check_seeds("connectivity_seeds", v["connectivity_seeds"])
    if len(set(v["connectivity_seeds"])) < 2:
        raise ParameterError("connectivity_seeds must hold at least two different seeds (the intervals are over "
                             f"seeds), got {v['connectivity_seeds']!r}.")
    v["connectivity_batches"] = params.check_int("connectivity_batches", v["connectivity_batches"], 1, 10_000)
    v["connectivity_decision_points"] = params.check_int("connectivity_decision_points",
                                                         v["connectivity_decision_points"], 1, 100_000)
    v["connectivity_epochs"] = params.check_int("connectivity_epochs", v["connectivity_epochs"], 1, 1_000)
    v["connectivity_learning_rate"] = params.check_float("connectivity_learning_rate",
                                                         v["connectivity_learning_rate"], 0.0, 100.0, open_low=True)
    v["connectivity_lag_grid"] = check_lags("connectivity_lag_grid", v["connectivity_lag_grid"])
    v["connectivity_learning_rate_grid"] = check_floats("connectivity_learning_rate_grid",
                                                        v["connectivity_learning_rate_grid"], 0.0, 100.0,
                                                        open_low=True)
    v["connectivity_endpoint"] = params.check_choice("connectivity_endpoint", v["connectivity_endpoint"], ENDPOINTS)


def validate(namespace) -> Parameters:
    """Check every declared parameter in `namespace` (the notebook's globals); ParameterError on the first bad one."""
    missing = [k for k in NAMES if k not in namespace]
    if missing:
        raise ParameterError(f"the parameter cell must define {', '.join(missing)}.")
    v = {k: namespace[k] for k in NAMES}
    v["lag_grid"] = check_floats("lag_grid", v["lag_grid"], 0.0, 10.0)
    v["learning_rate_grid"] = check_floats("learning_rate_grid", v["learning_rate_grid"], 0.0, 100.0, open_low=True)
    v["n_groups"] = params.check_size("n_groups", v["n_groups"], 100,
                                      bytes_each=group_bytes(v["lag_grid"], v["learning_rate_grid"]))
    v["seed"] = params.check_int("seed", v["seed"], 0, 2**63 - 1)
    v["cfr_iterations"] = params.check_int("cfr_iterations", v["cfr_iterations"], 1, 100_000)
    v["root_policy"] = check_root_policy("root_policy", v["root_policy"])
    v["root_policy_floor"] = params.check_float("root_policy_floor", v["root_policy_floor"], 0.0, 0.5,
                                                open_low=True)
    v["noise_weights"] = params.check_choice("noise_weights", v["noise_weights"], WEIGHTINGS)
    v["epsilon"] = params.check_float("epsilon", v["epsilon"], 0.0, 1.0, open_low=True)
    v["epochs"] = params.check_int("epochs", v["epochs"], 1, 1_000)
    v["learning_rate"] = params.check_float("learning_rate", v["learning_rate"], 0.0, 100.0, open_low=True)
    v["behaviour_lag"] = params.check_float("behaviour_lag", v["behaviour_lag"], 0.0, 10.0)
    v["calibration_groups"] = params.check_size("calibration_groups", v["calibration_groups"], 1_000)
    v["block_size"] = params.check_int("block_size", v["block_size"], 2, 10_000)
    v["pilot_blocks"] = params.check_int("pilot_blocks", v["pilot_blocks"], 1, 100_000)
    v["bound_factor"] = params.check_float("bound_factor", v["bound_factor"], 0.0, 1e6, open_low=True)
    v["delta"] = params.check_float("delta", v["delta"], 0.0, 1.0, open_low=True)
    v["physical_budget"] = params.check_int("physical_budget", v["physical_budget"], 0)
    budget = v["physical_budget"] or int(claims.claim("cost_frontier.independent.physical_calls"))
    if budget < MIN_BUDGET:
        raise ParameterError(f"physical_budget must be 0 or at least {MIN_BUDGET} draws, "
                             f"got {v['physical_budget']!r}.")
    params.check_memory("physical_budget", budget, DRAW_BYTES, unit="physical draw")
    v["screen_seeds"] = params.check_seeds("screen_seeds", v["screen_seeds"])
    v["screen_iterations"] = params.check_int("screen_iterations", v["screen_iterations"], 1, 100_000)
    v["screen_groups"] = params.check_int("screen_groups", v["screen_groups"], 1, 1_000_000)
    v["screen_learning_rate"] = params.check_float("screen_learning_rate", v["screen_learning_rate"], 0.0, 100.0,
                                                   open_low=True)
    check_loop(v)
    v["n_bootstrap"] = params.check_int("n_bootstrap", v["n_bootstrap"], 10, 100_000)
    torch_device = params.check_device("device", v["device"])
    out_dir = params.check_output_dir("output_dir", v["output_dir"])
    policy = params.resolve_continuation("continuation", params.check_policy_source("continuation",
                                                                                    v["continuation"]),
                                         v["cfr_iterations"])
    v["continuation"] = params.policy_source_record(v["continuation"])  # a file enters the manifest by its SHA-256
    v["root"] = params.check_root("root", v["root"], policy)
    v["pooled_weighting"] = params.check_choice("pooled_weighting", v["pooled_weighting"], pooling.WEIGHTINGS)
    v["pooled_groups"] = params.check_size("pooled_groups", v["pooled_groups"], min_groups(policy),
                                           bytes_each=POOLED_GROUP_BYTES)
    geom = geometry(v["root"], policy, v["root_policy"], v["cfr_iterations"], v["root_policy_floor"])
    v["pilot_blocks"] = check_pilot_blocks("pilot_blocks", v["pilot_blocks"], geom, v["calibration_groups"],
                                           v["block_size"])
    return Parameters(**v, budget=budget, torch_device=torch_device, out_dir=out_dir, policy=policy, geom=geom)
