"""Selector-stress continuation maps: marginal preservation, covariance sign per regime, default unchanged."""
import numpy as np
import pytest
import torch

from oscc_core import chance_maps, collect, rng
from oscc_core.exact import arm_moments, infostate_moments

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
    plain = collect("leduc", "", "full", 20_000, seed=3, device="cpu")
    named = collect("leduc", "", "full", 20_000, seed=3, device="cpu", continuation_map="semantic")
    assert plain.digest == named.digest
    assert torch.equal(plain.returns, named.returns)
    assert plain.parameters == named.parameters


def test_keep_draws_adds_up_to_the_physical_ledger():
    for mp in chance_maps.MAPS:
        col = collect("leduc", "2", "continuation_only", 5_000, seed=4, device="cpu", continuation_map=mp,
                      keep_draws=True)
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
    ref = arm_moments("leduc", "2")["independent"]
    for mp in chance_maps.MAPS:
        for arm, m in arm_moments("leduc", "2", continuation_map=mp).items():
            np.testing.assert_allclose(m.mean, ref.mean, atol=1e-12)
            np.testing.assert_allclose(np.diag(m.cov), np.diag(ref.cov), atol=1e-12)


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
    rel = arm_moments("leduc", "", continuation_map="relabelled")
    np.testing.assert_allclose(rel["continuation_only"].cov, rel["independent"].cov, atol=1e-12)
    np.testing.assert_allclose(rel["full"].cov, rel["root_only"].cov, atol=1e-12)


def test_custom_chance_map_and_named_map_cannot_be_combined():
    with pytest.raises(ValueError, match="not both"):
        collect("leduc", "", "full", 10, seed=1, device="cpu", continuation_map="antithetic",
                chance_map=lambda u, lanes: u)
    with pytest.raises(ValueError, match="continuation_map"):
        collect("leduc", "", "full", 10, seed=1, device="cpu", continuation_map="mirror")
