"""The frozen-opponent one-step screen: one bounded update of player 0's root check probability.

Setup (Leduc, root "" = player 0's first decision, branches Call = check and
Raise = bet).  The opponent and player 0's post-root play stay frozen at the
uniform policy; the only free parameter is one scalar p = P(check) shared by
all of player 0's root information states (one per private card), starting
at the behaviour value 1/2.

Calibration: on each ordered rank pair (P0 rank, P1 rank) with player 0
holding J or Q, `n_per_pair` comparisons of the two branches, in two modes:

- paired (arm "full"): both branches share the opponent card (hidden stream,
  drawn within the pair's rank) and the public card by semantic event; policy
  draws per branch;
- independent (arm "independent"): each branch draws its own opponent card
  within the pair's rank and has its own chance stream.

The own card (which card of the rank) comes from the root stream and is
shared by the branches in both modes.  The margin of a pair is the mean
contrast R(check) - R(bet) (player 0's chips) with standard error
sd / sqrt(n).

Update: the behaviour-weighted clipped surrogate of the paper's paired update,
L(p) = sum_i pi0(a_i) min(r_i A_i, clip(r_i, 1 - eps, 1 + eps) A_i), with
pi0 = (1/2, 1/2), r_check = 2p, r_bet = 2(1 - p), A_check = m/2, A_bet = -m/2
and m the pooled calibration margin.  For m != 0, L rises linearly towards
the side sign(m) and is flat beyond the clip boundary p = (1 + sign(m) eps)/2;
the update takes the maximiser nearest the behaviour policy, i.e. that
boundary.  Decision rule: the sign is *clear* when |m| > z * SE(m); otherwise
there is no update (p stays 1/2).  m is the equal-weight mean of the six pair
margins (every pair has the same number of comparisons, so it is the mean of
all comparisons) and SE(m) = sqrt(sum_k SE_k^2) / 6 (pairs are sampled
independently).

Evaluation is exact (`oscc_core.exact`): the change of player 0's expected
value (chips) on the held-out pairs where player 0 holds K, per pair and
averaged with the deal law conditional on player 0 holding K, plus the
whole-game change, and the change as a function of eps for each mode's sign.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from oscc_core.device import resolve_device
from oscc_core.engine import rng
from oscc_core.engine.arms import get_arm
from oscc_core.engine.collector import Streams
from oscc_core.engine.rollout import chance_event_of_nodes, draw_index, play, policy_cdf
from oscc_core.exact.evaluation import outcome_distribution, rank_pairs
from oscc_core.exact.exploitability import evaluate
from oscc_core.games import get_game
from oscc_core.games.leduc import CALL, FOLD, NUM_SUITS, RAISE
from oscc_core.policy import uniform_policy, uniform_table
from oscc_core.reporting import claims
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.rows import Row

BASE_CLAIM = "text_bounded.frozen_opponent"   # the claims of the screen

GAME = "leduc"
ROOT = ""
MODES = {"paired": "full", "independent": "independent"}   # mode -> coupling arm of the engine
CALIBRATION_RANKS = (0, 1)     # player 0 holds J or Q
EVALUATION_RANK = 2            # player 0 holds K (held out)
BEHAVIOUR_P = 0.5              # uniform over the two root actions
EPSILON_GRID = tuple(k / 20 for k in range(1, 11))
P_GRID_POINTS = 20001          # check grid for the surrogate's maximiser (step 5e-5)
SPLIT = "calibration"


# ----- exact side ------------------------------------------------------------
def root_policy(p: float) -> dict:
    """The uniform Leduc policy with player 0's root information states set to [Fold 0, Call p, Raise 1 - p]."""
    game = get_game(GAME)
    info, node = game.infostates, game.tree.node_of_history(ROOT)
    policy = uniform_policy(GAME)
    row = [0.0] * game.num_actions
    row[CALL], row[RAISE], row[FOLD] = float(p), 1.0 - float(p), 0.0
    for s in np.asarray(info.strings)[(info.player == 0) & (info.node == node)]:
        policy[str(s)] = list(row)
    return policy


def exact_pair_values(ps) -> np.ndarray:
    """[len(ps), 9] player 0's exact expected utility (chips) per rank pair, for each root check probability."""
    return np.stack([outcome_distribution(GAME, root_policy(p)).player0_value().pair for p in ps])


def exact_margins() -> dict[str, float]:
    """Exact E[R(check) - R(bet) | rank pair] (chips) under the uniform continuation, all nine pairs."""
    v = exact_pair_values([1.0, 0.0])
    return dict(zip(rank_pairs(GAME).labels, (float(x) for x in v[0] - v[1])))


# ----- sampling --------------------------------------------------------------
def _pair_indices(rank: tuple[int, ...]) -> np.ndarray:
    pairs = rank_pairs(GAME).pairs
    return np.array([k for k, (a, _) in enumerate(pairs) if a in rank], dtype=np.int64)


def sample_contrasts(seed: int, n_per_pair: int, device="cpu") -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Sampled contrasts R(check) - R(bet) (chips) per mode, [6, n] by calibration pair, and rollouts per mode.

    Group g = pair_index * n + k (split "calibration", run `seed`); every
    (mode, group, branch) is one lane of a single `play` call.
    """
    game, dev = get_game(GAME), resolve_device(device)
    pairs = torch.as_tensor(np.array(rank_pairs(GAME).pairs)[_pair_indices(CALIBRATION_RANKS)], device=dev)
    groups = torch.arange(len(pairs) * n_per_pair, dtype=torch.int64, device=dev)
    r0, r1 = (pairs[groups // n_per_pair, i].unsqueeze(1) for i in (0, 1))
    card_rank = (torch.arange(game.num_cards, device=dev) // NUM_SUITS).unsqueeze(0)
    tables = game.tables(dev)
    root_node = game.tree.node_of_history(ROOT)
    start = tables["child"][root_node, torch.tensor([CALL, RAISE], device=dev)]           # branch 0 check, 1 bet
    event = next(iter(chance_event_of_nodes(game).values()))
    g, b = len(groups), len(start)
    parts = {"cards": [], "node": [], "policy": [], "chance": []}
    for arm in MODES.values():          # two modes, each fully vectorised over pairs x groups x branches
        streams = Streams(int(seed), rng.SPLITS[SPLIT], groups, get_arm(arm), b, 1)
        own = draw_index((card_rank == r0).double(), rng.uniform(streams.root(), 0))       # [G] shared by branches
        opp_w = ((card_rank == r1) & (torch.arange(game.num_cards, device=dev) != own.unsqueeze(1))).double()
        hidden = streams.hidden()                                                        # [G] paired, [G, B] indep.
        if hidden.dim() == 2:
            opp_w = opp_w.unsqueeze(1).expand(-1, b, -1)
        opp = draw_index(opp_w, rng.uniform(hidden, 0)).view(g, -1).expand(g, b)
        parts["cards"].append(torch.stack([own.view(g, 1).expand(g, b), opp], dim=2).reshape(-1, 2))
        parts["node"].append(start.view(1, b).expand(g, b).reshape(-1))
        parts["policy"].append(streams.policy())
        parts["chance"].append(streams.chance(event))
    cat = {k: torch.cat(v) for k, v in parts.items()}
    cdf, last = policy_cdf(uniform_table(GAME), dev)
    lanes = play(game, cat["node"], cat["cards"], torch.full_like(cat["node"], -1), cat["policy"], cat["chance"],
                 cdf, last)
    if bool(lanes.illegal.any() or lanes.unfinished.any()):    # the frozen uniform policy never does this
        raise RuntimeError("a frozen-opponent rollout drew an illegal action or did not finish.")
    u = lanes.utility_p0.view(len(MODES), len(pairs), n_per_pair, b).cpu().numpy()
    contrasts = {mode: u[i, ..., 0] - u[i, ..., 1] for i, mode in enumerate(MODES)}
    return contrasts, {mode: g * b for mode in MODES}


# ----- the update ------------------------------------------------------------
def surrogate(p, margin: float, epsilon: float) -> np.ndarray:
    """L(p) (chips) of the clipped paired update with A_check = m/2, A_bet = -m/2, pi0 = (1/2, 1/2)."""
    p = np.asarray(p, dtype=np.float64)
    ratios = np.stack([p / BEHAVIOUR_P, (1.0 - p) / (1.0 - BEHAVIOUR_P)])
    adv = np.array([margin / 2, -margin / 2]).reshape(2, *([1] * p.ndim))
    terms = np.minimum(ratios * adv, np.clip(ratios, 1 - epsilon, 1 + epsilon) * adv)
    return BEHAVIOUR_P * terms[0] + (1.0 - BEHAVIOUR_P) * terms[1]


def grid_maximiser(margin: float, epsilon: float, points: int = P_GRID_POINTS) -> float:
    """The maximiser of L over a grid of p in [0, 1] nearest the behaviour p = 1/2 (L is flat past the clip)."""
    grid = np.linspace(0.0, 1.0, points)
    values = surrogate(grid, margin, epsilon)
    best = grid[values >= values.max() - 1e-12 * max(1.0, abs(margin))]   # rounding slack on the plateau
    return float(best[np.argmin(np.abs(best - BEHAVIOUR_P))])


def choose_p(margin: float, se: float, epsilon: float, z: float) -> tuple[float, bool]:
    """(new p, clear): the clip boundary (1 + sign(m) eps) / 2 when |m| > z SE(m), else the behaviour 1/2."""
    clear = bool(abs(margin) > z * se)
    return (BEHAVIOUR_P + np.sign(margin) * epsilon / 2 if clear else BEHAVIOUR_P), clear


def exact_value_change(ps) -> tuple[np.ndarray, np.ndarray]:
    """Exact change of player 0's value (chips) from p = 1/2 to each p in `ps`, on the held-out K pairs.

    Returns [len(ps), 3] per pair (KJ, KQ, KK) and [len(ps)] their average
    under the deal law conditional on player 0 holding K.
    """
    ev = _pair_indices((EVALUATION_RANK,))
    v = exact_pair_values([BEHAVIOUR_P, *ps])
    delta = v[1:, ev] - v[0, ev]
    law = rank_pairs(GAME).probability[ev]
    return delta, delta @ (law / law.sum())


# ----- the screen ------------------------------------------------------------
def run_screen(seed: int, n_per_pair: int = 4096, epsilon: float = 0.2, z: float = 1.96,
               epsilon_grid=EPSILON_GRID, device="cpu") -> dict:
    """Calibrate both modes at `seed`, take the one-step update, evaluate it exactly (JSON-friendly dict).

    Margins, SEs and value changes are in chips; p is a probability.
    """
    if isinstance(n_per_pair, bool) or not isinstance(n_per_pair, (int, np.integer)) or n_per_pair < 2:
        raise ValueError(f"n_per_pair must be an integer >= 2, got {n_per_pair!r}.")
    if not 0.0 < float(epsilon) < 1.0 or not all(0.0 < float(e) < 1.0 for e in epsilon_grid):
        raise ValueError(f"epsilon and epsilon_grid must lie in (0, 1), got {epsilon!r} and {epsilon_grid!r}.")
    if not float(z) >= 0.0:
        raise ValueError(f"z must be a number >= 0, got {z!r}.")
    labels = rank_pairs(GAME).labels
    cal, ev = (np.asarray(labels)[_pair_indices(r)].tolist() for r in (CALIBRATION_RANKS, (EVALUATION_RANK,)))
    contrasts, rollouts = sample_contrasts(seed, int(n_per_pair), device)
    exact = exact_margins()
    grid = [float(e) for e in epsilon_grid]
    modes = {}
    for mode, c in contrasts.items():
        margins, ses = c.mean(axis=1), c.std(axis=1, ddof=1) / np.sqrt(n_per_pair)
        m4 = ((c - margins[:, None]) ** 4).mean(axis=1)
        pooled, pooled_se = float(margins.mean()), float(np.sqrt((ses ** 2).sum()) / len(ses))
        p, clear = choose_p(pooled, pooled_se, float(epsilon), float(z))
        sign = float(np.sign(pooled)) if clear else 0.0
        delta, delta_law = exact_value_change([p, *(BEHAVIOUR_P + sign * e / 2 for e in grid)])
        whole = evaluate(GAME, root_policy(p)).values[0] - evaluate(GAME, root_policy(BEHAVIOUR_P)).values[0]
        modes[mode] = {
            "arm": MODES[mode],
            "margins": dict(zip(cal, map(float, margins))), "ses": dict(zip(cal, map(float, ses))),
            "m4": dict(zip(cal, map(float, m4))),
            "margin_se_mean": float(ses.mean()), "pooled_margin": pooled, "pooled_se": pooled_se,
            "clear": clear, "p": float(p),
            "clip_boundary": bool(np.isclose(abs(p / BEHAVIOUR_P - 1.0), float(epsilon))),
            "grid_p": grid_maximiser(pooled, float(epsilon)),
            "exact_delta": {"pairs": dict(zip(ev, map(float, delta[0]))), "law_average": float(delta_law[0]),
                            "whole_game": float(whole)},
            "epsilon_curve": [{"epsilon": e, "p": BEHAVIOUR_P + sign * e / 2, "law_average": float(d)}
                              for e, d in zip(grid, delta_law[1:])],
            "rollouts": rollouts[mode]}
    return {"parameters": {"seed": int(seed), "n_per_pair": int(n_per_pair), "epsilon": float(epsilon),
                           "z": float(z), "epsilon_grid": grid, "split": SPLIT, "arms": dict(MODES),
                           "rule": "update to the clip boundary when |pooled margin| > z * SE, else keep p = 1/2"},
            "calibration_pairs": cal, "evaluation_pairs": ev, "modes": modes,
            "exact_margins": exact, "exact_pooled_margin": float(np.mean([exact[k] for k in cal])),
            "rollouts": {"per_mode": rollouts, "total": int(sum(rollouts.values()))}}


def epsilon_reading(epsilon: float, own: float) -> str:
    """The reading of the held-out change at one clip range (the paper states none)."""
    return f"clip epsilon = {epsilon:g}" + (" (the chapter's frozen_epsilon)" if epsilon == own else "")


def delta_rows(result: dict) -> list[Row]:
    """The held-out exact value change (paired mode, deal-law average over the K pairs, chips) under each clip
    range: the screen's own epsilon first, then every other epsilon of its grid (fixed with the screen, before any
    comparison with the paper), each with the relation the paper states ("the same held-out exact value delta
    +0.035851 for both modes": positive, and the same for both modes), decided on the exact changes of both modes
    at that epsilon."""
    own = float(result["parameters"]["epsilon"])
    cid = f"{BASE_CLAIM}.heldout_exact_value_delta"
    quantity = "frozen-opponent held-out exact value delta, K pairs (chips)"
    m = result["modes"]
    points = [(own, m["paired"]["exact_delta"]["law_average"], m["independent"]["exact_delta"]["law_average"])]
    curves = {mode: {pt["epsilon"]: pt["law_average"] for pt in m[mode]["epsilon_curve"]} for mode in MODES}
    points += [(e, d, curves["independent"][e]) for e, d in curves["paired"].items() if e != own]
    out = []
    for e, paired, independent in points:
        same = Relation("delta > 0, the same for both modes (exact)",
                        paired > 0 and abs(paired - independent) <= 1e-12)
        out.append(replace(Row.compare(quantity, cid, paired, relation=same, exact=paired),
                           reading=epsilon_reading(e, own)))
    return out


def screen_rows(result: dict) -> list[Row]:
    """The claims-ledger rows of the screen (SE means and value change, chips); its counts are settings.  The
    margin SEs are sampled: their ordering is resolved when the difference of the two SE means lies beyond 1.96
    standard errors of it (`se_difference_se`).  The held-out change is compared under every clip range of the
    screen's grid (`delta_rows`, `Row.under_readings`; the paper states no epsilon)."""
    m = result["modes"]
    se = {k: m[k]["margin_se_mean"] for k in MODES}
    spread = se_difference_se(result)
    order = Relation("paired SE < independent SE", se["paired"] < se["independent"],
                     None if spread is None else bool(se["independent"] - se["paired"] > 1.96 * spread))
    base = BASE_CLAIM
    return [
        Row.compare("frozen-opponent margin SE mean, paired (chips)", f"{base}.paired.margin_se_mean",
                    se["paired"], relation=order),
        Row.compare("frozen-opponent margin SE mean, independent (chips)", f"{base}.independent.margin_se_mean",
                    se["independent"], relation=order),
        Row.under_readings(delta_rows(result)),
    ]


def se_difference_se(result: dict) -> float | None:
    """The standard error (chips) of independent SE mean - paired SE mean: each pair's SE is sd / sqrt(n), whose
    sampling variance is (m4 - sd^4) / (4 n sd^2) / n by the delta method (m4: the contrasts' fourth central
    moment, kept per pair as "m4"); the six pairs are sampled independently, and the two modes are taken as
    independent (they share only the root draw of the own card within its rank).  None for a screen recorded
    without fourth moments."""
    n = result["parameters"]["n_per_pair"]
    total = 0.0
    for mode in MODES:
        m = result["modes"][mode]
        if "m4" not in m:
            return None
        for pair, se in m["ses"].items():
            sd2 = (se * np.sqrt(n)) ** 2
            total += (m["m4"][pair] - sd2 ** 2) / (4 * n * sd2) / n / len(m["ses"]) ** 2
    return float(np.sqrt(total))


def screen_settings(result: dict) -> list[Row]:
    """The screen's settings (counts): branch rollouts per seed and mode, calibration and evaluation states,
    comparisons per state."""
    m = result["modes"]
    kept = "retained_evidence.frozen_opponent"
    return [
        Row.setting("frozen-opponent branch rollouts per seed and mode", "learning_boundary.frozen_opponent."
                    "rollouts_per_seed", m["paired"]["rollouts"]),
        Row.setting("frozen-opponent calibration states", f"{kept}.calibration_states",
                    len(result["calibration_pairs"])),
        Row.setting("frozen-opponent evaluation states", f"{kept}.evaluation_states", len(result["evaluation_pairs"])),
        Row.setting("frozen-opponent comparisons per state", f"{kept}.comparisons_per_state",
                    result["parameters"]["n_per_pair"]),
    ]


def matching_epsilon(result: dict, target: float, slack: float) -> float | None:
    """The clip range of the screen's epsilon grid whose exact held-out change (paired mode, deal-law average,
    chips) lies within `slack` of `target` (a paper value and its printing slack), or None when none does."""
    for point in result["modes"]["paired"]["epsilon_curve"]:
        if abs(point["law_average"] - target) <= slack:
            return point["epsilon"]
    return None


def reading_glue(result: dict) -> dict[str, str]:
    """Texts the chapter glues about the screen: whether both modes chose the same update, the clip ranges of the
    screen's grid (the readings of the held-out change), which of them (if any) gives the paper's printed change
    to its printed digits, and why such a match is a hypothesis beside the verdict, not the paper's reading."""
    paper = claims.claim(f"{BASE_CLAIM}.heldout_exact_value_delta")
    match = matching_epsilon(result, paper, claims.printed_rounding(paper))
    same = result["modes"]["paired"]["p"] == result["modes"]["independent"]["p"]
    grid = result["parameters"]["epsilon_grid"]
    curve = result["modes"]["paired"]["epsilon_curve"]
    return {"frozen_same": "Both modes choose the same update" if same else "The modes choose different updates",
            "frozen_grid": f"{grid[0]:g} to {grid[-1]:g} in steps of {grid[1] - grid[0]:g}",
            "frozen_match": (f"Of these clip ranges, epsilon = {match:g} gives the paper's printed change to its "
                             "printed digits") if match is not None else
            "No clip range of the grid gives the paper's printed change to its printed digits",
            "frozen_caveat": (f"the change is linear in epsilon (it moves to the clip boundary), so every change "
                              f"between 0 and {max(pt['law_average'] for pt in curve):.4f} chips is matched by some "
                              "epsilon of the range; a match to every printed digit on a grid fixed beforehand "
                              "suggests that the paper clipped at that epsilon with this update, but the paper "
                              "never states its epsilon, so it is a hypothesis beside the verdict, not a reading "
                              "that decides it")}
