"""The converging learner's later options (issue 33): history baseline, alpha decay, weighted averaging.

- the fused CPU kernels compute bitwise what the torch path computes, for every arm, with budgets, snapshots
  and runs restored one by one, runs with their own step sizes, on both games;
- a run's numbers do not depend on its batch (the options read each run's own iteration count);
- at their defaults the options change nothing, and a schedule's record (and so a task's digest and the
  operating point's) is the one it was before they existed;
- the baseline's corrections are right: with the exact values under pi_t as the table, every corrected
  branch return is exactly Q(I, a) (the sampled hidden card, public card and actions all cancel), and with
  any table they leave the mean return unchanged.
"""
from dataclasses import replace

import numpy as np
import pytest
import torch

from oscc_core.exact.deal_values import deal_values
from oscc_core.games import NO_PUBLIC_CARD, get_game
from oscc_core.learning import baseline as bl
from oscc_core.learning.ledger import FIELDS
from oscc_core.learning.loop import LATER_DEFAULTS, Learners, RunSpec, Schedule
from oscc_core.learning.operating_point import study_operating_point
from oscc_core.learning.study import Task

ARMS = ["cp_grpo", "independent", "uniform", "grpo", "ppo"]
FAST = dict(decision_law="counterfactual", proximal_alpha=1.0, proximal_kappa=0.05, baseline="history",
            baseline_floor=0.2, alpha_decay="inverse_sqrt", alpha_horizon=3.0, average_power=2)


def _assert_identical(a: Learners, b: Learners) -> None:
    for name in ("logits", "values", "magnet", "baseline_values", "baseline_counts", "spent"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and torch.equal(x.view(torch.int64) if x.dtype == torch.float64 else x,
                                                  y.view(torch.int64) if y.dtype == torch.float64 else y), name
    assert np.array_equal(a.cumulative.view(np.int64), b.cumulative.view(np.int64))
    assert np.array_equal(a.average_tables(), b.average_tables())
    for f in FIELDS:
        assert torch.equal(a.ledger.counts[f], b.ledger.counts[f]), f


def _train(engine, game, runs, schedule, iterations, restore_at=2):
    """`iterations` steps; after step `restore_at` a snapshot is taken, one more step taken and undone, then half
    the runs put back one by one after another step (as a study's budgets do)."""
    learners = Learners(game, runs, schedule, engine=engine)
    assert learners.engine == engine
    for i in range(iterations):
        learners.step()
        if i == restore_at:
            snap = learners.snapshot()
            learners.step()
            learners.restore(snap)
            snap = learners.snapshot()
            learners.step()
            for r in range(0, len(runs), 2):
                learners.restore_run(Learners.run_part(snap, r), r)
    return learners


@pytest.mark.parametrize("game", ["leduc", "kuhn"])
@pytest.mark.parametrize("options", [dict(baseline="history"), dict(baseline="policy", baseline_floor=0.5),
                                     dict(alpha_decay="inverse_sqrt", alpha_horizon=2.0), dict(average_power=1), FAST],
                         ids=["baseline", "policy_baseline", "alpha_decay", "average", "all"])
def test_each_option_on_the_fused_kernels_is_bitwise_the_torch_path(game, options):
    runs = [RunSpec(arm, seed, None if seed == 13 else 6.0) for arm in ARMS for seed in (13, 17)]
    sched = Schedule(iterations=8, decision_points=12, epochs=2, learning_rate=4.0, group_size=3,
                     **{**dict(decision_law="counterfactual", proximal_alpha=0.5, proximal_kappa=0.1), **options})
    a, b = (_train(engine, game, runs, sched, 6) for engine in ("torch", "fused"))
    _assert_identical(a, b)
    if sched.baseline != "none":
        assert a.baseline_counts.sum() > 0 and a.baseline_values.abs().max() > 0


@pytest.mark.parametrize("game", ["leduc", "kuhn"])
def test_the_options_with_budgets_that_stop_runs_mid_iteration(game):
    runs = [RunSpec(arm, seed) for arm in ("cp_grpo", "independent", "grpo") for seed in (3, 5, 7)]
    sched = Schedule(iterations=10, decision_points=16, epochs=2, learning_rate=8.0, group_size=3, budget=230,
                     **FAST)
    a, b = (_train(engine, game, runs, sched, 10, restore_at=1) for engine in ("torch", "fused"))
    _assert_identical(a, b)
    assert bool(a.spent.any()) and int(a.ledger.counts["physical_calls"].max()) <= 230


def test_a_run_under_the_options_is_the_run_trained_alone():
    """The options read each run's own iteration count, so a run restored by a study (one iteration behind the
    batch) goes on exactly as alone."""
    sched = Schedule(iterations=8, decision_points=16, epochs=2, learning_rate=8.0, group_size=3, **FAST)
    runs = [RunSpec("cp_grpo", 3), RunSpec("independent", 4, 16.0), RunSpec("grpo", 5)]
    batch = Learners("leduc", runs, sched, engine="fused")
    for i in range(5):
        snap = batch.snapshot()
        batch.step()
        if i == 2:                                   # run 1 loses this iteration (a budget cut it short)
            batch.restore_run(Learners.run_part(snap, 1), 1)
    for r, run in enumerate(runs):
        alone = Learners("leduc", [RunSpec(run.arm, run.seed)],
                         replace(sched, learning_rate=run.learning_rate or sched.learning_rate), engine="torch")
        # the batch's group ids per step; run 1 kept the draws of steps 0, 1, 3 and 4 (step 2 was undone)
        kept = [0, 1, 3, 4] if r == 1 else list(range(5))
        assert int(batch.ledger.counts["iterations"][r]) == len(kept)
        groups = torch.zeros(1, dtype=torch.int64)
        for t in kept:
            alone.step(groups + t * sched.decision_points)
        assert torch.equal(alone.logits[0], batch.logits[r]), run
        assert torch.equal(alone.baseline_values[0], batch.baseline_values[r]), run
        assert np.array_equal(alone.cumulative[0], batch.cumulative[r]), run


def test_at_their_defaults_the_options_leave_every_record_as_it_was():
    s = Schedule(iterations=5, learning_rate=2.0, decision_law="counterfactual", proximal_alpha=0.5)
    assert set(s.as_dict()) == {"iterations", "decision_points", "epochs", "epsilon", "learning_rate", "group_size",
                                "budget", "gae_lambda", "value_rate", "decision_law", "proximal_alpha",
                                "proximal_kappa"}
    assert Schedule(**s.as_dict()) == s
    fast = replace(s, **FAST)
    assert {k: fast.as_dict()[k] for k in LATER_DEFAULTS} == {k: FAST[k] for k in LATER_DEFAULTS}
    assert Schedule(**fast.as_dict()) == fast
    task = Task.make("leduc", "converging", "cp_grpo", (1,), s, [100])
    assert not set(LATER_DEFAULTS) & {k for k, _ in task.schedule}
    op = study_operating_point("leduc", s, "converging", {"cp_grpo": {"eta": 2.0, "alpha": 0.5, "kappa": 0.0}}, {})
    assert not set(LATER_DEFAULTS) & set(op.record()["schedule"])


def test_at_their_defaults_the_fused_kernels_give_the_bits_they_gave():
    """The kernels always weigh the average by a per-run weight and pull with a per-run alpha: 1.0 and the
    schedule's alpha leave every bit as the torch path's unweighted, scalar arithmetic."""
    sched = Schedule(iterations=4, decision_points=16, epochs=2, learning_rate=4.0, decision_law="counterfactual",
                     proximal_alpha=0.7, proximal_kappa=0.1)
    runs = [RunSpec("cp_grpo", 3), RunSpec("ppo", 4)]
    a, b = (_train(e, "leduc", runs, sched, 4) for e in ("torch", "fused"))
    _assert_identical(a, b)
    assert a.baseline_values.shape == (2, 0)


@pytest.mark.parametrize("bad", [dict(baseline="value"), dict(baseline="History"), dict(baseline_floor=0.0), dict(baseline_floor=1.5),
                                 dict(alpha_decay="linear"), dict(alpha_horizon=0.0), dict(average_power=5),
                                 dict(average_power=1.0), dict(average_power=True)])
def test_bad_options_are_refused(bad):
    with pytest.raises(ValueError):
        Schedule(**bad)


def test_average_weights_and_alphas():
    s = Schedule(proximal_alpha=2.0, alpha_decay="inverse_sqrt", alpha_horizon=4.0, average_power=2)
    assert s.average_weights(np.array([0, 1, 9])).tolist() == [1.0, 4.0, 100.0]
    assert s.alphas(np.array([0, 12])).tolist() == [2.0, 1.0]
    assert Schedule(proximal_alpha=2.0).alphas(np.array([0, 50])).tolist() == [2.0, 2.0]


# ----- the corrections themselves ---------------------------------------------------------------------------------
def _exact_table(game, table):
    """The history values under `table` in the baseline's cells (player 0's chips): a round-one history's value is
    the mean over the public cards left."""
    v = deal_values(game, table)
    c, nodes = game.num_cards, game.tree.num_nodes
    out = np.zeros(bl.table_size(game))
    deals = game.deals
    for d, (c0, c1, p) in enumerate(deals.tolist()):
        for node in range(nodes):
            public = p if (p != NO_PUBLIC_CARD and game.tree.round[node] >= 2) else NO_PUBLIC_CARD
            share = 1.0 if public == p else 1.0 / sum((deals[:, 0] == c0) & (deals[:, 1] == c1))
            out[bl.cell(game, node, c0, c1, public)] += share * v[d, node]
    return out


@pytest.mark.parametrize("game", ["leduc", "kuhn"])
@pytest.mark.parametrize("arm", ["cp_grpo", "independent", "grpo"])
def test_with_the_exact_values_every_corrected_return_is_q(game, arm, monkeypatch):
    """B = the history values under pi_t: the corrections telescope, and each branch's return is Q(I, a)."""
    g = get_game(game)
    sched = Schedule(iterations=3, decision_points=64, epochs=1, learning_rate=3.0, group_size=3,
                     decision_law="counterfactual", baseline="history")
    learners = Learners(g, [RunSpec(arm, 11)], sched, engine="torch")
    learners.step()                                  # a policy that is not uniform
    table = learners.last_tables()[0]
    learners.baseline_values[0] = torch.as_tensor(_exact_table(g, table))
    seen = []
    original = Learners._corrected

    def spy(self, ctx, lanes, run, out, trace, behaviour):
        values = original(self, ctx, lanes, run, out, trace, behaviour)
        player = ctx.points.player.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]
        info = ctx.points.infostate.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]
        seen.append((info, lanes.action, player, values))
        return values
    monkeypatch.setattr(Learners, "_corrected", spy)
    learners.step()
    info, action, player, values = seen[0]
    q = _exact_q(g, table)
    sign = 1.0 - 2.0 * player.double()
    expected = torch.as_tensor(q[info.numpy(), action.numpy()])
    assert torch.allclose(sign * values, expected, atol=1e-9, rtol=0)
    assert len(values) > 60


def _exact_q(game, table):
    """[n_info, A] Q(I, a) of the acting player (chips) under self-play `table`, from the history values."""
    from oscc_core.games.deal_tables import acting_infostates
    v = deal_values(game, table)
    ids = acting_infostates(game)
    tree = game.tree
    n_info, a = len(game.infostates), game.num_actions
    num, den = np.zeros((n_info, a)), np.zeros(n_info)
    from oscc_core.exact.sequence_form import sequence_form
    from oscc_core.learning.visitation import realisation_plans
    x = realisation_plans(sequence_form(game), table[None])[0]
    sf = sequence_form(game)
    for d in range(len(game.deals)):
        for node in np.flatnonzero(tree.player >= 0):
            i = ids[d, node]
            p = tree.player[node]
            # the opponent's reach of this history (its sequences are the other player's parents)
            opp = _opponent_reach(game, sf, x, table, d, node, 1 - p)
            sign = 1.0 if p == 0 else -1.0
            for act in range(a):
                child = tree.child[node, act]
                if child >= 0:
                    num[i, act] += opp * sign * v[d, child]
            den[i] += opp
    return num / np.where(den > 0, den, 1.0)[:, None]


def _opponent_reach(game, sf, x, table, d, node, opponent):
    """The probability that `opponent` takes its actions on the path to `node` under `table` in deal d."""
    tree = game.tree
    from oscc_core.games.deal_tables import acting_infostates
    ids = acting_infostates(game)
    reach, child = 1.0, node
    while tree.parent[child] >= 0:
        parent = tree.parent[child]
        if tree.player[parent] == opponent:
            act = int(np.flatnonzero(tree.child[parent] == child)[0])
            reach *= table[ids[d, parent], act]
        child = parent
    return reach


def test_with_any_table_the_corrections_keep_the_mean_return():
    """A random table: corrected and raw returns of many lanes of one state and action agree in mean (the
    corrections have mean zero given the history they start from)."""
    g = get_game("kuhn")
    sched = Schedule(iterations=1, decision_points=4000, epochs=1, learning_rate=0.0, decision_law="uniform",
                     baseline="history")
    raw, corrected = _returns(g, sched, torch.randn(bl.table_size(g), dtype=torch.float64,
                                                     generator=torch.Generator().manual_seed(1)) * 3)
    for key in raw:
        r, c = np.array(raw[key]), np.array(corrected[key])
        if len(r) > 200:
            assert abs(r.mean() - c.mean()) <= 5 * np.sqrt((r.var() + c.var()) / len(r)) + 1e-12, key


def _returns(game, sched, table):
    learners = Learners(game, [RunSpec("independent", 5)], sched, engine="torch")
    learners.baseline_values[0] = table
    raw, corrected = {}, {}
    original = Learners._corrected

    def spy(self, ctx, lanes, run, out, trace, behaviour):
        values = original(self, ctx, lanes, run, out, trace, behaviour)
        player = ctx.points.player.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]
        info = ctx.points.infostate.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]
        sign = 1 - 2 * player
        for i, a, u, v, s in zip(info.tolist(), lanes.action.tolist(), out.utility_p0.tolist(), values.tolist(),
                                 sign.tolist()):
            raw.setdefault((i, a), []).append(s * u)
            corrected.setdefault((i, a), []).append(s * v)
        return values
    Learners._corrected = spy
    try:
        learners.step()
    finally:
        Learners._corrected = original
    return raw, corrected


def test_the_literal_learner_never_takes_the_later_options_and_the_converging_one_takes_the_bases():
    from oscc_core.learning.study_design import CONVERGING, FAST_OPTIONS, LITERAL, learner_schedule
    base = replace(Schedule(iterations=4), **FAST_OPTIONS)
    literal = learner_schedule(LITERAL, base, 4.0)
    assert all(getattr(literal, k) == v for k, v in LATER_DEFAULTS.items())
    assert literal == learner_schedule(LITERAL, Schedule(iterations=4), 4.0)
    converging = learner_schedule(CONVERGING, base, 64.0, 0.5, 0.003)
    assert all(getattr(converging, k) == v for k, v in FAST_OPTIONS.items())
    assert learner_schedule(CONVERGING, Schedule(iterations=4), 8.0, 1.0, 0.01).baseline == "none"
