"""The selector notebook's parameters: every one checked before any computation or file write.

`validate(mapping)` reads the declared names from the notebook's globals,
raises `ParameterError` naming the first bad one, and returns the checked
values with the resolved continuation policy, both root policies and the
record the results file keeps.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from oscc_core.games import LEDUC
from oscc_core.reporting import params

from .pools import NOISE_WEIGHTS
from .root_policy import RootPolicy, resolve_root_policy

#: The notebook's parameter names, in the order of its parameters cell.
NAMES = ("root", "root_policy", "binary_root", "binary_root_policy", "continuation", "cfr_iterations", "seed",
         "calibration_groups", "eval_groups", "pilot_groups", "block_size", "bound_quantile", "score_bound", "delta",
         "cost_weight", "sweep_sizes", "sweep_repetitions", "scan_step", "root_policy_floor", "noise_weights",
         "device", "output_dir")


@dataclass(frozen=True)
class Parameters:
    """Checked parameters (units as in the notebook's parameters cell) and what they resolve to."""

    root: str
    root_policy: object                 # as given: a list of probabilities, "uniform" or "cfr_plus"
    binary_root: str
    binary_root_policy: object
    continuation: object                # the results file's record of the continuation source
    cfr_iterations: int
    seed: int
    calibration_groups: int
    eval_groups: int
    pilot_groups: int
    block_size: int
    bound_quantile: float
    score_bound: float
    delta: float
    cost_weight: float
    sweep_sizes: list
    sweep_repetitions: int
    scan_step: float
    root_policy_floor: float
    noise_weights: str
    device: str                         # as given ("auto", "cpu", "cuda"): what the collector is told
    torch_device: object                # the device it resolves to (recorded in the manifest)
    out_dir: Path
    continuation_policy: object         # "uniform" or a tabular policy: continuation and behaviour policy
    pi3: RootPolicy                     # root policy at `root`
    pi2: RootPolicy                     # root policy at `binary_root`
    game: str = LEDUC

    @property
    def record(self) -> dict:
        """The parameters as the results file's manifest records them."""
        keys = ("root", "root_policy", "binary_root", "binary_root_policy", "continuation", "cfr_iterations", "seed",
                "calibration_groups", "eval_groups", "pilot_groups", "block_size", "bound_quantile", "score_bound",
                "delta", "cost_weight", "sweep_sizes", "sweep_repetitions", "scan_step", "root_policy_floor",
                "noise_weights", "game")
        return {k: getattr(self, k) for k in keys}


def validate(mapping: Mapping) -> Parameters:
    """Check every parameter in `mapping` (the notebook's globals); ParameterError names the first bad one."""
    missing = [n for n in NAMES if n not in mapping]
    if missing:
        raise params.ParameterError(f"the parameters {missing} are not defined (run the parameters cell first).")
    v = {n: mapping[n] for n in NAMES}
    seed = params.check_int("seed", v["seed"], 0, 2**63 - 1)
    cfr_iterations = params.check_int("cfr_iterations", v["cfr_iterations"], 1, 100_000)
    block_size = params.check_int("block_size", v["block_size"], 1, 4096)
    calibration_groups = params.check_size("calibration_groups", v["calibration_groups"], block_size)
    eval_groups = params.check_size("eval_groups", v["eval_groups"], 1000)
    pilot_groups = params.check_size("pilot_groups", v["pilot_groups"], 1000)
    bound_quantile = params.check_float("bound_quantile", v["bound_quantile"], 0.0, 1.0, open_low=True)
    score_bound = params.check_float("score_bound", v["score_bound"], 0.0, 1e6)
    delta = params.check_float("delta", v["delta"], 0.0, 0.5, open_low=True)
    cost_weight = params.check_float("cost_weight", v["cost_weight"], 0.0, 1e3)
    sweep_sizes = sorted(params.check_ints("sweep_sizes", v["sweep_sizes"], block_size))
    sweep_repetitions = params.check_int("sweep_repetitions", v["sweep_repetitions"], 10, 10_000)
    scan_step = params.check_float("scan_step", v["scan_step"], 0.01, 0.25)
    floor = params.check_float("root_policy_floor", v["root_policy_floor"], 0.0, 0.1, open_low=True)
    noise_weights = params.check_choice("noise_weights", v["noise_weights"], NOISE_WEIGHTS)
    params.check_memory("max(sweep_sizes) x sweep_repetitions", max(sweep_sizes) * sweep_repetitions,
                        params.GROUP_BYTES)
    torch_device = params.check_device("device", v["device"])
    out_dir = params.check_output_dir("output_dir", v["output_dir"])
    for name, n in [("calibration_groups", calibration_groups)] + [("sweep_sizes", s) for s in sweep_sizes]:
        if n % block_size:
            raise params.ParameterError(f"{name} must be a multiple of block_size ({block_size}), got {n}.")
    if abs(round(1 / scan_step) * scan_step - 1) > 1e-9:
        raise params.ParameterError(f"scan_step must divide 1 into whole steps (0.05, 0.1, ...), got {scan_step!r}.")
    source = params.check_policy_source("continuation", v["continuation"])
    policy = params.resolve_continuation("continuation", source, cfr_iterations)
    root = params.check_root("root", v["root"], policy)
    binary_root = params.check_root("binary_root", v["binary_root"], policy)
    pi3 = resolve_root_policy("root_policy", v["root_policy"], root, policy, cfr_iterations, floor=floor)
    pi2 = resolve_root_policy("binary_root_policy", v["binary_root_policy"], binary_root, policy, cfr_iterations,
                              floor=floor)
    if len(pi3.actions) != 3:
        raise params.ParameterError(f"root must have three legal actions, {root!r} has {pi3.actions}.")
    if len(pi2.actions) != 2:
        raise params.ParameterError(f"binary_root must have two legal actions, {binary_root!r} has {pi2.actions}.")
    return Parameters(root, v["root_policy"], binary_root, v["binary_root_policy"],
                      params.policy_source_record(v["continuation"]),  # a file enters the manifest by its SHA-256
                      cfr_iterations, seed, calibration_groups, eval_groups, pilot_groups, block_size, bound_quantile,
                      score_bound, delta, cost_weight, sweep_sizes, sweep_repetitions, scan_step, floor,
                      noise_weights, v["device"], torch_device, out_dir, policy, pi3, pi2)
