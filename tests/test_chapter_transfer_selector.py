"""Chapter 06: a Leduc-calibrated OSCC-Select read on Kuhn's strata (oscc_core.chapters.transfer.selector_transfer)."""
import math

import numpy as np
import pytest

from oscc_core.chapters.transfer.selector_transfer import (
    key_matched_choice,
    selector_rows,
    selector_table,
    strict_choice,
    strict_sentence,
    transfer_selector,
)
from oscc_core.reporting.rows import NO_PAPER, Row

ARMS = ("independent", "root_only", "continuation_only", "full")
M = 9   # 3 candidates x 3 own-card strata


@pytest.fixture(scope="module")
def default():
    return transfer_selector(13)


@pytest.fixture(scope="module")
def forced():
    """Enough blocks that Leduc's full coupling (exact gain ~0.8-1.0 noise units, B ~5) is certified."""
    return transfer_selector(13, blocks=2048)


def test_the_reading_names_each_kuhn_stratums_key_matched_choice_and_its_exact_comparison(forced):
    """The sentence the chapter glues states, per Kuhn stratum, the arm Leduc certified for the same card class
    and whether it beats independent sampling on Kuhn's exact noise (`_kuhn_enumeration`, below)."""
    leduc = forced["leduc"]["strata"]
    for own, z in enumerate("JQK"):
        m, q = _kuhn_enumeration(own)
        mean, var = m.mean(1), q.mean(1) - m.mean(1) ** 2
        shared = (m[0] * m[1]).mean() - mean[0] * mean[1]
        p = np.array([0.5, 0.5])
        g = np.diag(p) - np.outer(p, p)                    # the softmax Jacobian of the uniform root policy
        gram = g.T @ g
        noise = {"independent": float((gram * np.diag(var)).sum()),
                 "shared": float((gram * np.array([[var[0], shared], [shared, var[1]]])).sum())}
        choice = leduc[z]["choice"]
        gain = 0.0 if choice in ("independent", "continuation_only") else noise["independent"] - noise["shared"]
        word = "better" if gain > 1e-12 else "worse" if gain < -1e-12 else "equal"
        assert f"{z}: {choice} ({word})" in forced["reading"]


def test_the_strict_sentence_says_independent_when_no_kuhn_stratum_is_certified(default):
    assert "independent arm on every Kuhn stratum" in strict_sentence(default)


def test_kuhn_strata_have_no_leduc_certificate(default, forced):
    for res in (default, forced):
        leduc_keys = {tuple(s["key"]) for s in res["leduc"]["strata"].values()}
        kuhn = res["kuhn"]["strata"]
        assert [k["stratum"] for k in kuhn] == ["J", "Q", "K"]
        for k in kuhn:
            assert k["key"][0] == "kuhn" and tuple(k["key"]) not in leduc_keys
            assert k["certified_key"] is False
            assert k["strict"] == "independent"


def test_key_matching_returns_the_certified_leduc_arm(forced):
    leduc = forced["leduc"]["strata"]
    assert leduc["Q"]["choice"] != "independent"          # forced to certify
    for k in forced["kuhn"]["strata"]:
        z = k["stratum"]
        choice = leduc[z]["choice"]
        assert k["key_matched"] == choice
        if choice != "independent":
            cert = next(c for c in leduc[z]["certificates"] if c["arm"] == choice)
            assert cert["certified"] and cert["lower_bound"] > 0
        assert k["key_matched_from"] == leduc[z]["key_text"]


def test_lookup_rules():
    frozen = {("leduc", 1, 2, 0, "Q"): "full", ("leduc", 1, 2, 0, "J"): "independent"}
    assert strict_choice(frozen, ("kuhn", 1, 2, 0, "Q")) == "independent"
    assert strict_choice(frozen, ("leduc", 1, 2, 0, "Q")) == "full"
    assert key_matched_choice(frozen, ("kuhn", 1, 2, 0, "Q")) == ("full", ("leduc", 1, 2, 0, "Q"))
    assert key_matched_choice(frozen, ("kuhn", 1, 2, 1, "Q")) == ("independent", None)   # other seat


def test_hoeffding_radius(default):
    lp = default["leduc"]
    n, delta, b = default["parameters"]["blocks"], default["parameters"]["delta"], lp["B"]
    r = b * math.sqrt(2 * math.log(2 * M / delta) / n)
    assert lp["n_comparisons"] == M
    assert lp["radius"] == pytest.approx(r, rel=1e-12)
    for s in lp["strata"].values():
        for c in s["certificates"]:
            assert c["blocks"] == n
            assert c["lower_bound"] == pytest.approx(c["mean_gain"] - r, rel=1e-12, abs=1e-12)
            assert c["certified"] == (c["lower_bound"] > 0)


def test_fixed_bound_is_used():
    res = transfer_selector(13, blocks=32, block_size=8, delta=0.1, bound=7.5)
    assert res["leduc"]["B"] == 7.5 and res["leduc"]["bound_rule"] == "fixed"
    assert res["leduc"]["radius"] == pytest.approx(7.5 * math.sqrt(2 * math.log(2 * M / 0.1) / 32), rel=1e-12)
    for s in res["leduc"]["strata"].values():
        for c in s["certificates"]:
            assert -7.5 <= c["mean_gain"] <= 7.5


def _kuhn_enumeration(own: int):
    """pyspiel: per root action a and opponent card o, E[R] and E[R^2] of player 0 under uniform play."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("kuhn_poker")

    def moments(state):
        if state.is_terminal():
            u = state.returns()[0]
            return u, u * u
        legal = state.legal_actions()
        m = q = 0.0
        for a in legal:
            mm, qq = moments(state.child(a))
            m += mm / len(legal)
            q += qq / len(legal)
        return m, q

    opps = [o for o in range(3) if o != own]
    m, q = np.zeros((2, 2)), np.zeros((2, 2))        # [action, opponent]
    for j, o in enumerate(opps):
        s = game.new_initial_state()
        s.apply_action(own)
        s.apply_action(o)
        assert s.current_player() == 0 and s.legal_actions() == [0, 1]
        for a in (0, 1):
            m[a, j], q[a, j] = moments(s.child(a))
    return m, q


@pytest.mark.parametrize("own", [0, 1, 2])
def test_kuhn_exact_values_match_pyspiel(default, own):
    m, q = _kuhn_enumeration(own)                    # posterior of the opponent card: uniform over two
    mean = m.mean(1)
    var = q.mean(1) - mean ** 2
    shared_cov = (m[0] * m[1]).mean() - mean[0] * mean[1]    # same opponent card, independent play
    cov = {"independent": 0.0, "continuation_only": 0.0, "root_only": shared_cov, "full": shared_cov}
    p = np.array([0.5, 0.5])
    g = np.diag(p) - np.outer(p, p)
    gram = g.T @ g
    row = default["kuhn"]["strata"][own]
    for arm in ARMS:
        sigma = np.array([[var[0], cov[arm]], [cov[arm], var[1]]])
        assert row["exact_contrast_variance"][arm] == pytest.approx(var.sum() - 2 * cov[arm], abs=1e-12)
        assert row["exact_noise"][arm] == pytest.approx(float((gram * sigma).sum()), abs=1e-12)


def test_kuhn_structure(default):
    assert default["kuhn"]["structural"] == {"full == root_only": True, "continuation_only == independent": True}
    assert default["kuhn"]["actions"] == ["Pass", "Bet"]
    assert default["leduc"]["actions"] == ["Call", "Raise"]


def test_rows_and_table(forced):
    rows = selector_rows(forced)
    assert rows and all(isinstance(r, Row) and r["verdict"] == NO_PAPER and r["paper"] is None for r in rows)
    table = selector_table(forced)
    assert len(table["leduc"]) == 9 and len(table["kuhn"]) == 3
    assert [r["strict"] for r in table["kuhn"]] == ["independent"] * 3


@pytest.mark.parametrize("kwargs", [{"blocks": 1}, {"block_size": 0}, {"delta": 0.0}, {"bound": "huge"},
                                    {"bound": -1.0}, {"root_policy": [0.5, 0.6]}])
def test_bad_input(kwargs):
    with pytest.raises(ValueError):
        transfer_selector(13, **kwargs)


def test_the_selector_table_shows_each_kuhn_stratum_under_two_short_header_rows():
    from oscc_core.chapters.transfer import tables

    def stratum(z, key, strict, matched, oracle):
        return {"stratum": z, "certified_key": key, "strict": strict, "key_matched": matched, "oracle": oracle,
                "exact_contrast_variance": {"independent": 2.4375, "root_only": 1.9375,
                                            "continuation_only": 3.9375, "full": 1.9375}}

    default = {"kuhn": {"strata": [stratum("J", None, "independent", "independent", "independent"),
                                   stratum("Q", "root_only", "independent", "root_only", "root_only")]}}
    large = {"kuhn": {"strata": [stratum("J", None, "independent", "full", "independent"),
                                 stratum("Q", "root_only", "independent", "continuation_only", "root_only")]}}
    frame = tables.selector_frame(default, large)
    assert list(frame.index) == ["J", "Q"] and frame.index.name == "Kuhn stratum"
    assert frame.columns.nlevels == 2 and max(len(name) for _, name in frame.columns) <= 33
    assert frame.loc["Q", ("frozen selector's arm", "key-matched (large calibration)")] == "continuation-only"
    assert frame.loc["J", ("Leduc certificate", "for this key")] == "none"
    assert frame.loc["Q", ("exact contrast variance (chips²)", "root-only")] == "1.9375"
