"""The operating point: everything that defines a learner run, fixed and hashed on Leduc before transfer.

It holds every learner hyperparameter (the schedule with the chosen step
size), the rule that chose the step size, each arm's construction, the
evaluation protocol and its opponent, and the solver of the reference row.
It is one frozen object; its digest is the SHA-256 of its canonical JSON
record, so any change of any field changes the digest, and the solver and
transfer chapters, built from the same parameter defaults, print the same
digest.  Nothing learned on Kuhn can enter it: the Kuhn runs only read it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from oscc_core.digest import digest
from oscc_core.learning.arms import ARM_NAMES, LEARNER_ARMS
from oscc_core.learning.loop import RunSpec, Schedule

#: Parameter names of the solver and transfer notebooks that enter the operating point (same defaults in both).
FIELDS = ("decision_points", "epochs", "epsilon", "group_size", "budget", "gae_lambda", "value_rate", "eta_grid",
          "dev_seeds", "learning_rate", "opponent", "contrast_root", "contrast_groups", "update_replicates",
          "leduc_cfr_iterations")


@dataclass(frozen=True)
class OperatingPoint:
    """The frozen operating point (units: eta in logits per unit gradient, budget in physical calls)."""

    source_game: str
    schedule: Schedule                 # every shared hyperparameter (its learning_rate: CP-GRPO's eta)
    step_size_rule: tuple              # (("grid", ...), ("dev_seeds", ...), ("given", eta or 0))
    arms: tuple                        # each arm's construction, in ARM_NAMES order
    evaluation: tuple                  # (("opponent", ...), ("checkpoint", ...), ...)
    solver: tuple                      # (("name", "CFR+"), ("reference_iterations", n))
    step_sizes: tuple = ()             # ((arm, eta), ...): each learned arm's eta, chosen per arm

    def eta(self, arm: str) -> float:
        """The arm's step size (the schedule's for an arm without its own, e.g. the uniform policy)."""
        return dict(self.step_sizes).get(arm, self.schedule.learning_rate)

    def runs(self, arms, seeds) -> list[RunSpec]:
        """Every (arm, seed) run at the arm's step size, arms outermost."""
        return [RunSpec(arm, int(seed), self.eta(arm)) for arm in arms for seed in seeds]

    def record(self) -> dict:
        """The canonical JSON-ready record the digest is taken of."""
        return {"source_game": self.source_game, "schedule": asdict(self.schedule),
                "step_size_rule": dict(self.step_size_rule), "step_sizes": dict(self.step_sizes),
                "arms": [dict(a) for a in self.arms], "evaluation": dict(self.evaluation), "solver": dict(self.solver)}

    @property
    def digest(self) -> str:
        return digest(self.record())


def budget_schedule(p, eta: float) -> Schedule:
    """The matched-budget schedule of checked parameters `p` at step size eta: every run stops when it has
    spent `p.budget` physical calls (the iteration cap, `p.budget`, never binds: an iteration spends >= 1)."""
    return Schedule(iterations=p.budget, decision_points=p.decision_points, epochs=p.epochs, epsilon=p.epsilon,
                    learning_rate=float(eta), group_size=p.group_size, budget=p.budget, gae_lambda=p.gae_lambda,
                    value_rate=p.value_rate)


def operating_point(p, eta, source_game: str = "leduc") -> OperatingPoint:
    """The operating point of a notebook's checked parameters `p` (attributes named in FIELDS) at step size `eta`:
    one number for every arm, or {arm: eta}, each learned arm's own (the schedule then carries CP-GRPO's)."""
    etas = {arm: float(e) for arm, e in eta.items()} if isinstance(eta, dict) else {}
    schedule = budget_schedule(p, etas.get("cp_grpo", eta) if etas else eta)
    arms = tuple(tuple(sorted(asdict(LEARNER_ARMS[name]).items())) for name in ARM_NAMES)
    return OperatingPoint(
        source_game, schedule,
        (("grid", tuple(p.eta_grid)), ("dev_seeds", tuple(p.dev_seeds)), ("given", float(p.learning_rate)),
         ("criterion", "per arm (or, with one eta, over the learned arms): minimum mean exploitability of the "
                       "average policies on the development seeds at the budget, the grid extended at an edge")),
        arms,
        (("opponent", p.opponent), ("checkpoint", "average policy at T, last iterate beside it"),
         ("evaluation", "exact, whole game and per ordered rank pair"), ("contrast_root", p.contrast_root),
         ("contrast_groups", p.contrast_groups), ("update_replicates", p.update_replicates)),
        (("name", "CFR+ (regret matching+, alternating updates, linear averaging)"),
         ("reference_iterations", p.leduc_cfr_iterations)))
