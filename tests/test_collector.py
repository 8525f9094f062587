"""The coupled collector: determinism, exact agreement, and bad input."""
import numpy as np
import pytest
import torch

import oscc_core
from oscc_core.engine.collector import collect
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.policy import uniform_policy

ARMS = ["independent", "root_only", "continuation_only", "full", "policy_namespace"]
N_MC = 200_000
Z = 4.0


@pytest.mark.parametrize("engine", ["torch", "fused"])
def test_chunked_collection_gives_identical_statistics_and_digest(engine):
    one = collect("leduc", "", "full", 20_000, seed=5, device="cpu", engine=engine, chunk_size=20_000)
    chunked = collect("leduc", "", "full", 20_000, seed=5, device="cpu", engine=engine, chunk_size=7_777)
    assert one.stats == chunked.stats
    assert torch.equal(one.returns, chunked.returns)
    assert one.digest == chunked.digest


def test_a_different_seed_changes_the_returns_and_the_digest():
    a = collect("leduc", "", "full", 2_000, seed=5, device="cpu")
    b = collect("leduc", "", "full", 2_000, seed=6, device="cpu")
    again = collect("leduc", "", "full", 2_000, seed=5, device="cpu")
    assert torch.equal(a.returns, again.returns)
    # 2,000 groups of two branches: two seeds agree on a group with probability well below one,
    # so the returns, and with them the sufficient statistics, must move
    assert (a.returns != b.returns).any(1).sum() > 500
    assert a.stats["sum_products"] != b.stats["sum_products"]
    assert a.digest != b.digest


def _mc_cov_se(returns):
    r = returns.double().numpy()
    c = r - r.mean(0)
    n = len(r)
    prod = c[:, :, None] * c[:, None, :]
    return prod.std(0, ddof=1) / np.sqrt(n)


@pytest.mark.parametrize("root", ["", "1", "2"])
@pytest.mark.parametrize("arm", ARMS)
def test_monte_carlo_moments_match_exact_within_four_standard_errors(root, arm):
    col = collect("leduc", root, arm, N_MC, seed=13, device="cpu")
    exact = arm_moments("leduc", root)[arm]
    s = col.summary()
    r = col.returns.double().numpy()
    mean_se = r.std(0, ddof=1) / np.sqrt(len(r))
    means = np.array([s["branch_means"][a] for a in s["actions"]])
    assert np.all(np.abs(means - exact.mean) <= Z * mean_se + 1e-9)
    assert np.all(np.abs(np.array(s["cov"]) - exact.cov) <= Z * _mc_cov_se(col.returns) + 1e-9)


def test_full_coupling_lowers_the_contrast_variance_at_the_first_decision():
    pytest.importorskip("pyspiel")
    from test_arm_moments_openspiel import enumerated_moments

    m = arm_moments("leduc", "")
    expected = {}
    for arm in ("independent", "full"):
        _, cov = enumerated_moments("", arm)                # OpenSpiel tree enumeration, written in the test
        expected[arm] = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    assert expected["full"] < expected["independent"]
    assert m["full"].contrast_var() == pytest.approx(expected["full"], abs=1e-9)
    assert m["independent"].contrast_var() == pytest.approx(expected["independent"], abs=1e-9)


@pytest.mark.parametrize("root", ["", "2"])
def test_branch_marginals_do_not_depend_on_the_arm(root):
    """Every arm is a coupling of the same branch laws: the enumerated means and variances, and a
    covariance that some coupling of those laws can have (between the antitone and the comonotone
    coupling; at root "2" Fold is a constant -1, so its covariances must be exactly zero)."""
    pytest.importorskip("pyspiel")
    from test_arm_moments_openspiel import branch_marginals, coupling_covariance_bounds

    laws = branch_marginals(root)
    mean = np.array([sum(p * u for u, p in law.items()) for law in laws])
    var = np.array([sum(p * u * u for u, p in law.items()) for law in laws]) - mean ** 2
    m = arm_moments("leduc", root)
    for arm in ARMS:
        np.testing.assert_allclose(m[arm].mean, mean, rtol=0, atol=1e-9)
        np.testing.assert_allclose(np.diag(m[arm].cov), var, rtol=0, atol=1e-9)
        for i in range(len(laws)):
            for j in range(i + 1, len(laws)):
                low, high = coupling_covariance_bounds(laws[i], laws[j])
                assert low - 1e-9 <= m[arm].cov[i, j] <= high + 1e-9, (arm, i, j)


def test_summary_contrast_is_first_legal_action_minus_second():
    col = collect("kuhn", "", "full", 5_000, seed=1, device="cpu")
    s = col.summary()
    assert s["actions"] == ["Pass", "Bet"]
    d = (col.returns[:, 0] - col.returns[:, 1]).double()
    assert s["contrast_mean"] == pytest.approx(float(d.mean()), abs=1e-12)
    assert s["contrast_var"] == pytest.approx(float(d.var()), rel=1e-12)


def test_budget_sums_rollouts_and_matches_exact():
    col = collect("leduc", "", "full", 100_000, seed=2, device="cpu", budget=4)
    exact = arm_moments("leduc", "", budget=4)["full"]
    s = col.summary()
    se = s["contrast_var_se"]
    assert abs(s["contrast_var"] - exact.contrast_var()) <= Z * se


def test_tabular_continuation_is_accepted():
    pol = uniform_policy("leduc")
    a = collect("leduc", "", "full", 3_000, seed=4, continuation=pol, device="cpu")
    b = collect("leduc", "", "full", 3_000, seed=4, continuation="uniform", device="cpu")
    assert a.stats == b.stats


def test_counts_separate_logical_keys_from_physical_draws():
    col = collect("leduc", "", "full", 10_000, seed=3, device="cpu")
    assert col.logical_keys["root"] == col.physical_draws["root"] == 10_000
    assert col.logical_keys["hidden"] == 10_000
    assert col.physical_draws["policy"] > col.logical_keys["policy"]
    ind = collect("leduc", "", "independent", 10_000, seed=3, device="cpu")
    assert ind.logical_keys["hidden"] == 20_000


@pytest.mark.parametrize("kwargs, word", [
    (dict(game="chess"), "game"),
    (dict(arm="half"), "arm"),
    (dict(root="0"), "root"),
    (dict(root="1x"), "root"),
    (dict(root="11"), "root"),
    (dict(n_groups=0), "n_groups"),
    (dict(n_groups=-5), "n_groups"),
])
def test_bad_arguments_raise_one_sentence_naming_the_parameter(kwargs, word):
    args = dict(game="leduc", root="", arm="full", n_groups=10, seed=1, device="cpu") | kwargs
    with pytest.raises(ValueError, match=word):
        collect(**args)


def test_continuation_missing_an_information_state_is_rejected():
    pol = uniform_policy("leduc")
    pol.pop(next(iter(pol)))
    with pytest.raises(ValueError, match="continuation is missing information state"):
        collect("leduc", "", "full", 10, seed=1, continuation=pol, device="cpu")


def test_continuation_that_does_not_sum_to_one_is_rejected():
    pol = uniform_policy("leduc")
    key = next(iter(pol))
    pol[key] = [0.0, 0.7, 0.7]
    with pytest.raises(ValueError, match="sums to"):
        collect("leduc", "", "full", 10, seed=1, continuation=pol, device="cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda_is_rejected():
    with pytest.raises(ValueError, match="device"):
        collect("leduc", "", "full", 10, seed=1, device="cuda")


def test_collect_is_exported_at_top_level():
    from oscc_core.engine import collector

    assert oscc_core.collect is collector.collect
    assert "collect" in dir(oscc_core)


@pytest.mark.parametrize("flush_every", [1, 2])
def test_folding_the_running_sums_every_few_chunks_changes_nothing(monkeypatch, flush_every):
    from oscc_core.engine import collector
    kwargs = {"device": "cpu", "engine": "fused", "keep_draws": True, "budget": 2}
    folded_at_end = collect("leduc", "2", "independent", 3_000, seed=9, chunk_size=700, **kwargs)
    monkeypatch.setattr(collector, "chunks_per_flush", lambda *args: flush_every)
    folded_often = collect("leduc", "2", "independent", 3_000, seed=9, chunk_size=700, **kwargs)
    assert folded_often.stats == folded_at_end.stats and folded_often.digest == folded_at_end.digest
    assert folded_often.logical_keys == folded_at_end.logical_keys
    assert folded_often.physical_draws == folded_at_end.physical_draws


def _chunk_of(returns: list[list[int]]) -> dict:
    counts = {"root": len(returns), "hidden": len(returns), "chance": torch.tensor(1), "policy": torch.tensor(2)}
    return {"returns": torch.tensor(returns, dtype=torch.int64), "codes": torch.zeros(len(returns), dtype=torch.int8),
            "_keys": dict(counts), "_draws": dict(counts)}


def test_the_accumulator_folds_its_int64_sums_before_they_could_overflow():
    from oscc_core.engine import gather
    big = 1 << 14        # contrast 2**15: four groups' fourth powers make 2**62, sixteen overflow int64
    acc = gather.Accumulator(2, flush_every=1)
    for _ in range(4):
        acc.add(_chunk_of([[big, -big]] * 4))
    stats = acc.stats()
    assert stats["contrast"]["0-1"] == [16 * (2 * big) ** p for p in (1, 2, 3, 4)]   # the last exact: 2**64
    assert stats["n"] == 16 and acc.logical == {"root": 16, "hidden": 16, "chance": 4, "policy": 8}
    assert acc.codes == [16] + [0] * 8 and acc.failures()["ILLEGAL"] == 0


def test_the_fold_interval_keeps_every_running_sum_within_int64():
    from oscc_core.engine import gather
    from oscc_core.games import get_game
    leduc = get_game("leduc")
    every = gather.chunks_per_flush(leduc, 3, 1, 1 << 22)
    assert every > 1000, "budget 1 on Leduc: the sums reach the host once, at the end"
    assert gather.chunks_per_flush(leduc, 3, 10_000, 1 << 22) == 1, "large budgets fold every chunk"
    x = 2 * (13 + int(leduc.tree.depth.max()) + 1) * 3     # max |utility| 13 chips
    assert every * (1 << 22) * x ** 4 < 2 ** 63


@pytest.mark.parametrize("code", ["EARLY_END", "ILLEGAL"])
def test_failure_counts_gathered_chunk_by_chunk_are_those_of_all_codes(code):
    from oscc_core.engine.failures import failure_counts
    from oscc_core.engine.violations import EXAMPLES
    one, chunked = (collect("leduc", "", "full", 3_000, seed=4, device="cpu", violation=EXAMPLES[code],
                            chunk_size=size) for size in (3_000, 1_100))
    assert chunked.failures == one.failures == failure_counts(one.codes)
    assert chunked.failures[code] > 0
