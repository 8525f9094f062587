"""A chaotic learner run gives the same bits on every machine.

The converging CP-GRPO learner at chapter 06's operating point is chaotic on Kuhn poker: its last iterate
cycles, and a one-unit difference in the last place of one exponential grows into a different trajectory
within about 1e5 physical calls (seed 17 first diverged at 109,257 calls between an AVX-512 and an AVX2
machine when the learners used torch's exp).  This test trains that run past that point and compares it
bit for bit with numbers computed once, on one machine, and written here; `make portability` runs it again
under each emulated CPU.  A change that moves these numbers on purpose (a new learner rule) must say so
and recompute them; a change that moves them by accident breaks reproducibility.
"""
import hashlib

import numpy as np

from oscc_core.learning.loop import Schedule
from oscc_core.learning.study import Task, run_task

#: Chapter 06's frozen converging CP-GRPO schedule for Kuhn (written out: this test must not move with
#: the committed studies, which choose the operating point).
SCHEDULE = Schedule(decision_law="counterfactual", decision_points=128, epochs=4, epsilon=0.2, gae_lambda=0.95,
                    group_size=4, learning_rate=128.0, proximal_alpha=0.5, proximal_kappa=0.1, value_rate=0.5)
SEED = 17
#: Budgets in physical calls: the chapter's marks up to the first one where two machines used to disagree.
BUDGETS = (34_550, 61_440, 109_257)
#: Computed once with the code of this commit (exploitability of the average policy, repr of the float).
EXPECTED_EXPLOITABILITY = {34_550: '0.06713844603083317', 61_440: '0.041204369434517954',
                           109_257: '0.07484613641272496'}
EXPECTED_DECISIONS = {34_550: 21_387, 61_440: 38_978, 109_257: 72_074}
#: SHA-256 of the average policy's float64 bytes at the last budget.
EXPECTED_TABLE_SHA256 = "1a759a11f53e5f95506d7b9547ad3ed54e389921dd4891592a9b455fd46f39e3"


def train() -> dict:
    task = Task.make("kuhn", "converging", "cp_grpo", (SEED,), SCHEDULE, BUDGETS, keep_table=True)
    return run_task(task)


def test_kuhn_converging_run_matches_its_committed_bits_past_the_old_divergence_point():
    out = train()
    records = out["runs"][str(SEED)]
    got = {int(b): repr(r["exploitability_average"]) for b, r in records.items()}
    assert got == EXPECTED_EXPLOITABILITY
    assert {int(b): r["decisions"] for b, r in records.items()} == EXPECTED_DECISIONS
    table = np.asarray(out["tables"][str(SEED)], dtype=np.float64)
    assert hashlib.sha256(table.tobytes()).hexdigest() == EXPECTED_TABLE_SHA256


# ----- the fast converging learner of issue 33 (history baseline, annealed pull, t^2-weighted average) ----------
#: Its recommended schedule (benchmarks/learner_ideas.md), written out for the same reason as SCHEDULE.
FAST_SCHEDULE = Schedule(decision_law="counterfactual", decision_points=128, epochs=4, epsilon=0.2, gae_lambda=0.95,
                         group_size=4, learning_rate=64.0, proximal_alpha=0.5, proximal_kappa=0.003, value_rate=0.5,
                         baseline="history", baseline_floor=0.5, alpha_decay="inverse_sqrt", alpha_horizon=30.0,
                         average_power=2)
#: (game, arm, budgets) -> (exploitability reprs, decisions, SHA-256 of the average policy at the last budget),
#: computed once with the code of the commit that added them (and checked then under both emulated CPUs).
FAST_EXPECTED = {
    ("leduc", "cp_grpo", (61_440, 109_257)): (
        {61_440: '0.28870870332245696', 109_257: '0.16465192862091782'}, {61_440: 77_909, 109_257: 139_595},
        "edce07dfb71edaadd28a44c00723ffd8a7783f8313b36c7c5a9177ff43cf32ee"),
    ("leduc", "independent", (61_440, 109_257)): (
        {61_440: '0.30095003105863877', 109_257: '0.16480992400217687'}, {61_440: 77_881, 109_257: 139_683},
        "532c169c1bd739e17dd1a224e9ddf2aa2da77813a0e25d473b646d1c9eff5971"),
    ("kuhn", "cp_grpo", (34_550, 61_440, 109_257)): (
        {34_550: '0.10614657195261638', 61_440: '0.07371347858058347', 109_257: '0.049292622374541475'},
        {34_550: 20_984, 61_440: 37_544, 109_257: 67_768},
        "725152fe36481a6df5d2ebc1b5f46a4c575b9c087853e5412c7fde9a38d55f65"),
}


def test_the_fast_learner_matches_its_committed_bits():
    for (game, arm, budgets), (exploitability, decisions, table_sha) in FAST_EXPECTED.items():
        out = run_task(Task.make(game, "converging", arm, (SEED,), FAST_SCHEDULE, budgets, keep_table=True))
        records = out["runs"][str(SEED)]
        assert {int(b): repr(r["exploitability_average"]) for b, r in records.items()} == exploitability, (game, arm)
        assert {int(b): r["decisions"] for b, r in records.items()} == decisions, (game, arm)
        table = np.asarray(out["tables"][str(SEED)], dtype=np.float64)
        assert hashlib.sha256(table.tobytes()).hexdigest() == table_sha, (game, arm)
