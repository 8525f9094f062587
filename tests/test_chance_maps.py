"""Selector-stress continuation maps: marginal preservation, covariance sign per regime, default unchanged."""
import numpy as np
import pytest
import torch

from oscc_core import collect
from oscc_core.engine import chance_maps, rng
from oscc_core.engine.rollout import ChanceEvent
from oscc_core.exact.arm_moments import arm_moments, infostate_moments

N = 150_000
Z = 4.5


def _cov_se(r):
    c = r - r.mean(0)
    return (c[:, :, None] * c[:, None, :]).std(0, ddof=1) / np.sqrt(len(r))


def test_reflection_stays_in_unit_interval_and_swaps_bins():
    m = torch.tensor([0, 1, 2 ** 51 - 1, 2 ** 51, 2 ** 53 - 1], dtype=torch.int64)
    u = m.double() / 2 ** 53
    v = chance_maps.reflect(u)
    assert float(v.max()) < 1.0 and float(v.min()) >= 0.0
    assert torch.equal((v * 4).floor().long(), 3 - (u * 4).floor().long())
    assert torch.equal(chance_maps.reflect(v), u)


def test_relabel_moves_bins_by_the_permutation_and_keeps_the_position():
    u = torch.tensor([0.1, 0.3, 0.6, 0.9], dtype=torch.float64)
    perm = torch.tensor([[2, 0, 3, 1]] * 4)
    v = chance_maps.relabel(u, perm)
    assert torch.equal((v * 4).floor().long(), torch.tensor([2, 0, 3, 1]))
    assert torch.allclose((v * 4) % 1, (u * 4) % 1)


def test_permutations_are_uniform_over_the_24_orders():
    keys = rng.derive_key("chance", run=1, split=0, group=torch.arange(48_000), event=5, rollout=0, branch=0)
    perms = chance_maps.permutations(keys, 4)
    codes = (perms * torch.tensor([64, 16, 4, 1])).sum(1)
    counts = torch.bincount(codes, minlength=256)[torch.unique(codes)]
    assert len(counts) == 24
    assert float(counts.min()) > 0.9 * 2000 and float(counts.max()) < 1.1 * 2000


def test_default_map_is_byte_identical_to_the_collector_without_a_map():
    """The default ("semantic") collection equals one whose chance uniform goes through the identity,
    on the torch engine as on the fused one, and its manifest names no map."""
    default = collect("leduc", "", "full", 20_000, seed=3, device="cpu")
    identity = collect("leduc", "", "full", 20_000, seed=3, device="cpu", engine="torch",
                       chance_map=lambda u, lanes: u)
    for named in (collect("leduc", "", "full", 20_000, seed=3, device="cpu", continuation_map="semantic"),
                  collect("leduc", "", "full", 20_000, seed=3, device="cpu", continuation_map="semantic",
                          engine="torch")):
        assert torch.equal(named.returns, identity.returns) and named.stats == identity.stats
        assert named.digest == default.digest
    assert torch.equal(default.returns, identity.returns)
    assert "continuation_map" not in default.parameters


def _draws_from_the_trace(col, trace, mp: str) -> dict:
    """Physical draws counted from the rollout events alone: one root uniform per group, the hidden
    deal once or per branch, one uniform per distinct chance address in a group (plus, relabelled,
    one uniform per remaining card for each lane's permutation), one per policy action."""
    g_total, b = col.returns.shape
    groups, offset = [], 0
    chance = torch.zeros(g_total, dtype=torch.int64)
    policy = torch.zeros(g_total, dtype=torch.int64)
    for rec in trace:
        g, b_, k = rec["shape"]
        addresses = set()
        for ev in rec["events"]:
            group = ev.lanes // (b_ * k) + offset
            if isinstance(ev, ChanceEvent):
                for gr, key, ctr in zip(group.tolist(), ev.key.tolist(), ev.counter.tolist()):
                    addresses.add((gr, key, ctr))
                if mp == "relabelled":
                    chance += torch.bincount(group, minlength=g_total) * 4
            else:
                policy += torch.bincount(group, minlength=g_total)
        for gr, _, _ in addresses:
            chance[gr] += 1
        offset += g
    hidden = 1 if col.arm in ("root_only", "full") else b
    return {"root": g_total, "hidden": g_total * hidden, "chance": int(chance.sum()), "policy": int(policy.sum()),
            "per_group": 1 + hidden + chance + policy}


@pytest.mark.parametrize("arm", ["continuation_only", "independent"])
def test_keep_draws_adds_up_to_the_physical_ledger(arm):
    for mp in chance_maps.MAPS:
        trace = []
        col = collect("leduc", "2", arm, 3_000, seed=4, device="cpu", continuation_map=mp, keep_draws=True,
                      trace=trace, chunk_size=1_000)
        counted = _draws_from_the_trace(col, trace, mp)
        assert col.physical_draws == {c: counted[c] for c in ("root", "hidden", "chance", "policy")}, mp
        assert torch.equal(col.group_draws, counted["per_group"]), mp
        assert int(col.group_draws.sum()) == sum(col.physical_draws.values())


@pytest.mark.parametrize("mp", ["relabelled", "antithetic"])
def test_maps_change_the_digest_and_are_chunk_invariant(mp):
    a = collect("leduc", "", "full", 20_000, seed=3, device="cpu", continuation_map=mp)
    b = collect("leduc", "", "full", 20_000, seed=3, device="cpu", continuation_map=mp, chunk_size=3_333)
    base = collect("leduc", "", "full", 20_000, seed=3, device="cpu")
    assert a.digest == b.digest and torch.equal(a.returns, b.returns)
    assert a.digest != base.digest


@pytest.mark.parametrize("mp", chance_maps.MAPS)
@pytest.mark.parametrize("arm", ["continuation_only", "full"])
def test_monte_carlo_moments_match_the_exact_moments_of_each_map(mp, arm):
    col = collect("leduc", "", arm, N, seed=21, device="cpu", continuation_map=mp)
    r = col.returns.double().numpy()
    exact = arm_moments("leduc", "", continuation_map=mp)[arm]
    mean_se = r.std(0, ddof=1) / np.sqrt(len(r))
    assert np.all(np.abs(r.mean(0) - exact.mean) <= Z * mean_se)
    assert np.all(np.abs(np.cov(r, rowvar=False) - exact.cov) <= Z * _cov_se(r))


def test_every_map_preserves_each_branch_marginal_exactly():
    """At root "2" every map and arm keeps the enumerated branch laws; Fold is a constant -1 there,
    so any coupling of the marginals has zero covariance with it."""
    pytest.importorskip("pyspiel")
    from test_arm_moments_openspiel import branch_marginals, coupling_covariance_bounds

    laws = branch_marginals("2")
    mean = np.array([sum(p * u for u, p in law.items()) for law in laws])
    var = np.array([sum(p * u * u for u, p in law.items()) for law in laws]) - mean ** 2
    assert laws[0] == {-1.0: pytest.approx(1.0)}
    for mp in chance_maps.MAPS:
        for arm, m in arm_moments("leduc", "2", continuation_map=mp).items():
            np.testing.assert_allclose(m.mean, mean, rtol=0, atol=1e-9)
            np.testing.assert_allclose(np.diag(m.cov), var, rtol=0, atol=1e-9)
            np.testing.assert_allclose(m.cov[0], 0.0, rtol=0, atol=1e-9)
            for i, j in ((0, 1), (0, 2), (1, 2)):
                low, high = coupling_covariance_bounds(laws[i], laws[j])
                assert low - 1e-9 <= m.cov[i, j] <= high + 1e-9, (mp, arm, i, j)


def test_monte_carlo_marginals_do_not_move_under_the_maps():
    """Per-branch means and variances of the mapped collections against the exact (unmapped) marginals."""
    ref = arm_moments("leduc", "")["independent"]
    for mp in ("relabelled", "antithetic"):
        r = collect("leduc", "", "full", N, seed=8, device="cpu", continuation_map=mp).returns.double().numpy()
        se = r.std(0, ddof=1) / np.sqrt(len(r))
        assert np.all(np.abs(r.mean(0) - ref.mean) <= Z * se)
        var_se = np.sqrt(((r - r.mean(0)) ** 2).var(0, ddof=1) / len(r))
        assert np.all(np.abs(r.var(0, ddof=1) - np.diag(ref.cov)) <= Z * var_se)


def _conditional_chance_cov(mp: str, root: str = "") -> float:
    """E_I Cov(R_Call, R_Raise | I) of continuation_only: the covariance the shared chance adds."""
    infos = infostate_moments("leduc", root, continuation_map=mp)
    i, j = (0, 1) if root == "" else (1, 2)
    return sum(x.weight * x.moments["continuation_only"].cov[i, j] for x in infos)


def test_covariance_sign_per_regime():
    assert _conditional_chance_cov("semantic") > 0.5
    assert abs(_conditional_chance_cov("relabelled")) < 1e-12       # exactly the independent law
    assert _conditional_chance_cov("antithetic") < -0.1
    assert _conditional_chance_cov("semantic", "2") > 0.5
    assert _conditional_chance_cov("antithetic", "2") < -0.1


def test_relabelled_chance_is_the_independent_cross_term():
    """Relabelled cards are independent across branches: continuation_only has the enumerated
    covariance of independent, and full that of root_only."""
    pytest.importorskip("pyspiel")
    from test_arm_moments_openspiel import enumerated_moments

    rel = arm_moments("leduc", "", continuation_map="relabelled")
    for arm, same_law in (("continuation_only", "independent"), ("full", "root_only")):
        mean, cov = enumerated_moments("", same_law)
        np.testing.assert_allclose(rel[arm].mean, mean, rtol=0, atol=1e-9)
        np.testing.assert_allclose(rel[arm].cov, cov, rtol=0, atol=1e-9)
        assert abs(cov[0, 1] - enumerated_moments("", arm)[1][0, 1]) > 0.1    # the map does change it


def test_custom_chance_map_and_named_map_cannot_be_combined():
    with pytest.raises(ValueError, match="not both"):
        collect("leduc", "", "full", 10, seed=1, device="cpu", continuation_map="antithetic",
                chance_map=lambda u, lanes: u)
    with pytest.raises(ValueError, match="continuation_map"):
        collect("leduc", "", "full", 10, seed=1, device="cpu", continuation_map="mirror")
