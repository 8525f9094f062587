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
    choices: tuple = ()                # ((arm, ((name, value), ...)), ...): every per-arm choice (eta, alpha, kappa)

    def eta(self, arm: str) -> float:
        """The arm's step size (the schedule's for an arm without its own, e.g. the uniform policy)."""
        return dict(self.step_sizes).get(arm, self.schedule.learning_rate)

    def runs(self, arms, seeds) -> list[RunSpec]:
        """Every (arm, seed) run at the arm's step size, arms outermost."""
        return [RunSpec(arm, int(seed), self.eta(arm)) for arm in arms for seed in seeds]

    def record(self) -> dict:
        """The canonical JSON-ready record the digest is taken of."""
        return {"source_game": self.source_game, "schedule": self.schedule.as_dict(),
                "step_size_rule": dict(self.step_size_rule), "step_sizes": dict(self.step_sizes),
                "choices": {arm: dict(c) for arm, c in self.choices},
                "arms": [dict(a) for a in self.arms], "evaluation": dict(self.evaluation), "solver": dict(self.solver)}

    def arm_choices(self) -> dict:
        """{arm: {"eta", "alpha", "kappa"}}: the per-arm choices of a study's learner."""
        return {arm: dict(c) for arm, c in self.choices}

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
    one number for every arm, or {arm: eta}, each learned arm's own (recorded in its step sizes, and so in its
    digest; the schedule then carries CP-GRPO's)."""
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
         ("reference_iterations", p.leduc_cfr_iterations)),
        step_sizes=tuple(sorted(etas.items())))


def study_operating_point(source_game: str, base: Schedule, learner: str, choices: dict, rule: dict
                          ) -> OperatingPoint:
    """The frozen operating point of one learner of a learning study (`reporting.learning_study`): the shared
    schedule `base` with the learner's decision law and pull (`learning.study_design.learner_schedule`, at
    CP-GRPO's choices), every arm's choices (eta, alpha, kappa), the rule that chose them (`rule`: grids,
    development seeds, budgets) and the evaluation protocol (exact exploitability of the average policy at the
    study's budgets)."""
    from oscc_core.learning.study_design import learner_schedule

    cp = choices["cp_grpo"]
    schedule = learner_schedule(learner, base, cp["eta"], cp.get("alpha", 0.0), cp.get("kappa", 0.0))
    arms = tuple(tuple(sorted(asdict(LEARNER_ARMS[name]).items())) for name in ARM_NAMES)
    picked = tuple(sorted((arm, tuple(sorted((k, float(v)) for k, v in c.items()))) for arm, c in choices.items()))
    return OperatingPoint(
        source_game, schedule, tuple(sorted((k, json_ready(v)) for k, v in rule.items())), arms,
        (("checkpoint", "average policy at each budget, last iterate beside it"),
         ("evaluation", "exact exploitability (NashConv / 2), whole game")),
        (("name", "none: the study's learners are evaluated exactly"),),
        tuple(sorted((arm, float(c["eta"])) for arm, c in choices.items())), picked)


def json_ready(value):
    """Lists and tuples as tuples (hashable, and JSON lists in the record)."""
    return tuple(json_ready(v) for v in value) if isinstance(value, (list, tuple)) else value
