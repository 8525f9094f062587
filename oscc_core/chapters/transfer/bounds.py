"""The bounds of the game's rules that the transfer section's paper numbers are held to, under each reading.

A *reading* is what a printed number is taken to measure.  The paper prints
one "player-0 value" and one "contrast variance" per arm without saying in
this table over what they are taken, so the readings the chapter can
evaluate exactly are listed, each with the range the rules allow for it
(`Bound`).  Where the paper's text elsewhere fixes the reading, that reading
is the paper's (`PAPER_READING`, with the words that fix it) and gives the
verdict when the readings disagree; the others are shown beside it
(`Row.under_readings`).  A number is impossible under the rules only when it
breaks the bound of every reading.

player-0 value (chips; `value_bounds`)
    1. the whole-game self-play value of player 0 (the solver chapter's reading):
       [v* - NashConv, v* + NashConv], v* player 0's equilibrium value
       (-1/18 in Kuhn, a CFR+ bracket in Leduc), NashConv the row's own;
    2. a mean of player 0's self-play value over the paper's held-out roots:
       the paper's reading (`PAPER_READING`: its endpoint aggregates its
       player value over 512 held-out roots per seed, and its transfer rows
       use "the same held-out evaluation convention"); a mean over sampled
       private-card deals is bounded only by the largest pot
       (`held_out_bound`);
    3. the checkpoint's value against the declared evaluation opponent
       (uniform), the mean of both seats (the evaluation's return), then in
       seat 0: between the worst and the best response's value against that
       opponent (`versus_range`);
    4. player 0's self-play value given one ordered private-card pair: the
       paper names no pair, so this is a rule check only (the pair ranges of
       player 0's utilities, `pair_range`; no rule ties them to NashConv).
    Player 1's self-play value is not a reading of a column the paper names
    "player-0 value".
contrast variance (chips^2; `contrast_bounds`)
    1. the per-group budget-1 variance of R_check - R_bet pooled over every
       decision point of the game with that contrast, each weighted by its
       share of the decisions the checkpoint's hands reach (`pooled`): the
       paper's reading (`PAPER_READING`).  A pooled variance adds the spread
       of the points' mean contrasts to their mean variance, so no per-point
       maximum bounds it: only the range of a budget-1 contrast does,
       (range of returns)^2 (16 chips^2 in Kuhn);
    2. the per-group budget-1 variance at one decision point (in Kuhn one
       reading per point, '' first: the root our tables measure; in Leduc
       the chapter's contrast root), held in Kuhn to the proved maximum of
       the arm's construction there (`kuhn_facts.certified_maxima`), in Leduc
       to the range bound;
    3. in Kuhn, a sample variance over n groups at one decision point: an
       estimate can exceed the population maximum by chance, so the rules
       bound it only by n / (n - 1) (range / 2)^2 with the range of the
       construction's contrast (the largest over the four points).
    In Kuhn each is taken under every construction the paper's words allow
    for the row (`ROW_CONSTRUCTIONS`: standard GRPO's group construction may
    or may not share the opponent's card), the book's model first, so a
    contrast variance is impossible only when it breaks every construction's
    bounds.
NashConv and exploitability have one reading each: 0 <= NashConv <= 2 x the
largest |utility| and exploitability = NashConv / 2 of the same profile.

Each reading has a full text (`Bound.reading`: the results file and the
appendix) and a short label of a few words (`Bound.label`: the tables).  A
number breaks a bound when it lies outside it by more than its printed
rounding (half a unit in the last stored decimal of each paper number used)
plus `FEASIBILITY_ROUNDING` (`breaks`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cache

import numpy as np

from oscc_core.chapters.transfer import kuhn_facts
from oscc_core.exact.evaluation import (
    FEASIBILITY_ROUNDING,
    FeasibilityBand,
    equilibrium_value,
    feasibility_band,
    rank_pairs,
)
from oscc_core.exact.sequence_form import sequence_form
from oscc_core.games import TERMINAL, get_game
from oscc_core.games.deal_tables import terminal_utilities
from oscc_core.policy import resolve_policy
from oscc_core.reporting import claims, reading_sets
from oscc_core.reporting.rows import Row

GAME = kuhn_facts.GAME
#: The rows of tab:measured-transfer per game (the paper's row names), and the arm of our records behind each.
ROWS = {"kuhn": tuple(kuhn_facts.ROW_ARM), "leduc": kuhn_facts.LEDUC_ROWS}
ARM_OF_ROW = {"cp_grpo_paired": "cp_grpo", "independent": "independent", "standard_grpo": "grpo",
              "standard_ppo": "ppo"}
OPPONENT = "uniform"
#: Roots per seed of the paper's held-out evaluation (it prints the count for its policy/solver endpoint and uses
#: "the same held-out evaluation convention" for the transfer rows).
HELD_OUT_ROOTS_CLAIM = "learning_boundary.policy_solver.heldout_roots_per_seed"
#: Reading texts (the decision-point readings are completed with the point, the held-out one with the count).
#: The readings of a player-0 value and of a contrast variance: the book's words for them, declared once for every
#: chapter that measures them (`reporting.reading_sets`: the learning chapter reads the same Leduc checkpoints).
SELF_PLAY, HELD_OUT, PAIR = reading_sets.VALUE_SELF_PLAY, reading_sets.VALUE_HELD_OUT, reading_sets.VALUE_PAIR
VERSUS = (reading_sets.VALUE_VERSUS_SEATS, reading_sets.VALUE_VERSUS_SEAT0)
AT_ROOT, POOLED = reading_sets.CONTRAST_AT_ROOT, reading_sets.CONTRAST_POOLED
#: The reading the paper's text fixes for a column (the first element of its `Bound.key`), and the words that fix it.
PAPER_READING = {"contrast_variance": "pooled", "player0_value": "held_out"}
PAPER_READING_BASIS = {
    "contrast_variance": ("the transfer table \"reports the same variance and quality fields as the in-environment "
                          "table\", whose headline contrast variance is \"a weighted summary over all root IDs\""),
    "player0_value": ("for the transfer rows \"the same observation schema and held-out evaluation convention are "
                      "used\" as for the policy endpoint, whose value is taken over {roots:,} \"held-out roots per "
                      "seed\"")}
SAMPLED = "sample variance over {n:,} groups at one decision point"
#: Appended to a contrast-variance reading of a row whose contrast the paper's words allow under several
#: constructions.
CONSTRUCTION = ", {arm} construction"
#: The constructions the paper's words allow for the contrast of each Kuhn row of tab:measured-transfer, the book's
#: model first (`kuhn_facts.ROW_ARM`).  CP-GRPO "reuses a compatible hidden root and semantic continuation stream"
#: (full coupling; in Kuhn the same law as root-only).  The independent arm "reassembles singleton branch records by
#: the same logical update-group key", on the same root IDs as every arm: the branches share the acting player's
#: information state and nothing else.  Standard GRPO "remains a sampled-trajectory baseline with its ordinary group
#: construction": a group shares its prompt, the root; whether its trajectories also share the opponent's hidden card
#: (root-only, the book's model) or each deal it afresh (independent) is not said.  Standard PPO uses "its ordinary
#: trajectory sampling": nothing shared beyond the root.
ROW_CONSTRUCTIONS = {"cp_grpo_paired": ("full",), "independent": ("independent",),
                     "standard_grpo": ("root_only", "independent"), "standard_ppo": ("independent",)}
#: The construction of the book's model per game and row (the learner arm's coupling).
ROW_CONSTRUCTION = {"kuhn": kuhn_facts.ROW_ARM, "leduc": {"cp_grpo_paired": "full", "independent": "independent"}}
NASH_CONV, EXPLOITABILITY = "whole-game NashConv of the profile", "exploitability of the profile (NashConv / 2)"
#: A few words per reading (tables; at most `tables.NOTE_AFTER` characters), by the first element of its key.
LABEL = {"self_play": "self-play, player 0", "held_out": "held-out roots", "versus_mean": "vs uniform, both seats",
         "versus_0": "vs uniform, seat 0", "pairs": "one card pair (rule check)", "root": "at {root!r}",
         "sampled": "sample of {n:,} groups", "groups": "{n:,} groups", "construction": ", {arm}",
         "pooled": "pooled (all points)",
         "nash_conv": "NashConv", "exploitability": "NashConv / 2"}

def breaks(paper: float, low: float, high: float, slack: float) -> bool:
    """The paper's value lies outside [low, high] by more than `slack`."""
    return bool(paper < low - slack or paper > high + slack)


@dataclass(frozen=True)
class Bound:
    """The range [low, high] the rules allow for one paper number under one reading.

    `key` names our matching quantity (`readings.seed_values`); `text` states the bound; `kind` is "rule"
    (follows from the rules alone) or "proof" (a proved maximum over every continuation policy); `label` is the
    reading in a few words (tables).
    """

    claim_id: str
    quantity: str
    reading: str
    key: tuple
    low: float
    high: float
    text: str
    slack: float
    kind: str = "rule"
    label: str = ""

    @property
    def paper(self) -> float:
        return float(claims.claim(self.claim_id))

    @property
    def impossible(self) -> bool:
        return breaks(self.paper, self.low, self.high, self.slack)

    def entry(self) -> dict:
        """The bound as a results-file record (with the paper's value and whether it breaks the bound)."""
        out = asdict(self)
        out.update(key=list(self.key), paper=self.paper, allowed=[float(self.low), float(self.high)],
                   impossible=self.impossible, bound=self.text, bound_kind=self.kind)
        for k in ("low", "high", "text", "kind"):
            out.pop(k)
        return out

    def row(self, ours: float, interval: tuple | None) -> Row:
        """`Row.impossible` under this reading, keeping our value under the same reading."""
        return Row.impossible(self.quantity, self.claim_id, ours, self.text, self.reading, interval)


# ----- the player-0 value ---------------------------------------------------------------
def value_band(nash_conv: float, game: str = GAME) -> FeasibilityBand:
    """[v* - NashConv, v* + NashConv] (chips), widened by the bracket of v* (exact -1/18 in Kuhn)."""
    return feasibility_band(game, nash_conv, equilibrium_value(game))


def value_outside_band(value: float, nash_conv: float, game: str = GAME, slack: float = FEASIBILITY_ROUNDING) -> bool:
    """True when a player-0 value (chips) lies outside the band of a profile with this NashConv by > slack."""
    return value_band(nash_conv, game).violation(value) > slack


@cache
def versus_range(game: str, seat: int, opponent: str = OPPONENT) -> tuple[float, float]:
    """(worst, best) value (chips) of any policy playing `seat` against `opponent` in the other seat: the
    values of the worst and of the best response to it (a sweep over the sequence form, exact)."""
    g = get_game(game)
    sf = sequence_form(g)
    table = resolve_policy(g, opponent, "opponent")
    ps = sf.players[seat]
    payoffs = sf.direct_payoffs(ps, sf.realisation_plan(table))
    best, _ = sf.sweep_best(ps, payoffs.copy())
    worst, _ = sf.sweep_best(ps, -payoffs)
    return -float(worst[ps.empty_sequence]), float(best[ps.empty_sequence])


@cache
def pair_range(game: str) -> dict[str, tuple[float, float]]:
    """{pair label: (lowest, highest) utility of player 0 over the terminal outcomes of the pair's deals}."""
    g = get_game(game)
    pairs = rank_pairs(g)
    u = terminal_utilities(g)[:, g.tree.player == TERMINAL]
    return {label: (float(u[pairs.deal_pair == k].min()), float(u[pairs.deal_pair == k].max()))
            for k, label in enumerate(pairs.labels)}


def held_out_roots() -> int:
    """The paper's held-out roots per seed."""
    return int(claims.claim(HELD_OUT_ROOTS_CLAIM))


def held_out_bound(game: str) -> tuple[float, float]:
    """[-largest pot, largest pot] (chips): a mean of player 0's values over sampled private-card deals is fixed by
    no whole-game number of the profile; only the pot bounds it."""
    pot = kuhn_facts.support_bounds(game)["max_abs"]
    return -pot, pot


def pair_hull(game: str) -> tuple[float, float]:
    """(lowest, highest) player-0 utility over every pair's range: the values one ordered pair allows, some pair
    or other (the pair ranges overlap, so their union is this interval)."""
    ranges = sorted(pair_range(game).values())
    if any(lo > max(h for _, h in ranges[:k + 1]) for k, (lo, _) in enumerate(ranges[1:])):
        raise ValueError(f"{game}: the pair ranges do not overlap, their union is not one interval.")
    return ranges[0][0], max(h for _, h in ranges)


def value_bounds(game: str, row: str) -> list[Bound]:
    """The readings of the row's player-0 value with their ranges: whole-game self-play (the solver chapter's), a
    mean over held-out roots (the paper's reading, `PAPER_READING`), against the uniform opponent (both seats, then
    seat 0), one private-card pair (a rule check)."""
    base = f"measured_transfer.{game}.{row}"
    cid, quantity = f"{base}.player0_value", f"{game}, {ARM_OF_ROW[row]}: player0 value"
    v0, nc = (float(claims.claim(f"{base}.{k}")) for k in ("player0_value", "nashconv"))
    r = claims.printed_rounding
    band, eq = value_band(nc, game), equilibrium_value(game)
    v_star = f"v* in [{eq.low:.5f}, {eq.high:.5f}] ({eq.source})"
    band_slack, slack = r(v0) + r(nc) + FEASIBILITY_ROUNDING, r(v0) + FEASIBILITY_ROUNDING
    roots, (pot_low, pot_high) = held_out_roots(), held_out_bound(game)
    out = [Bound(cid, quantity, SELF_PLAY, ("self_play",), band.low, band.high,
                 f"player-0 value in [v* - NashConv, v* + NashConv] = [{band.low:.4f}, {band.high:.4f}] "
                 f"({v_star}, the row's NashConv {nc:g})", band_slack, label=LABEL["self_play"]),
           Bound(cid, quantity, HELD_OUT.format(roots=roots), ("held_out",), pot_low, pot_high,
                 f"no rule bound but the largest pot, {pot_high:g} chips: a mean over sampled private-card deals "
                 f"is not fixed by the profile's whole-game numbers", slack, label=LABEL["held_out"])]
    seats = [versus_range(game, 0), versus_range(game, 1)]
    mean = tuple(float(np.mean(x)) for x in zip(*seats))
    for reading, key, (low, high) in ((VERSUS[0], "mean", mean), (VERSUS[1], 0, seats[0])):
        out.append(Bound(cid, quantity, reading, ("versus", key), low, high,
                         f"value against the uniform opponent between its worst and best response's values "
                         f"[{low:.4f}, {high:.4f}]", slack, label=LABEL[f"versus_{key}"]))
    low, high = pair_hull(game)
    out.append(Bound(cid, quantity, PAIR, ("pairs",), low, high,
                     f"player 0's utility at one ordered private-card pair lies in [{low:g}, {high:g}] "
                     f"(the hull of the pairs' ranges)", slack, label=LABEL["pairs"]))
    return out


# ----- the Kuhn contrast variance ---------------------------------------------------------
def root_maxima(arm: str) -> dict[str, float]:
    """{decision point: the proved maximum (chips^2) of the arm's per-group budget-1 contrast variance there}."""
    return {root: kuhn_facts.certified_maxima(root, (arm,))[arm]["upper"] for root in kuhn_facts.KUHN_ROOTS}


def maxima_record(n_random: int = kuhn_facts.SEARCH_RANDOM, arms=("full", "independent")) -> dict[str, dict]:
    """{decision point: {construction: {upper, best, gap, complete, search}}}: the proved maximum (chips^2) of
    the per-group budget-1 contrast variance, the largest value a policy reaches, whether every box closed, and
    the largest value a plain search finds (every deterministic policy, `n_random` random ones, then
    coordinate ascent: a lower estimate beside the proof)."""
    out = {}
    for root in kuhn_facts.KUHN_ROOTS:
        search = kuhn_facts.bound_search(arms, n_random, kuhn_facts.SEARCH_SEED, root)["arms"]
        out[root] = {arm: {**{k: res[k] for k in ("upper", "best", "gap", "complete")}, "search": search[arm]["max"]}
                     for arm, res in kuhn_facts.certified_maxima(root, tuple(arms)).items()}
    return out


def sampled_bound(arm: str, groups: int) -> float:
    """The largest sample variance (ddof 1) of `groups` budget-1 contrasts at any Kuhn decision point:
    n / (n - 1) (range / 2)^2 with the largest range of the construction's contrast (chips^2)."""
    spread = max(kuhn_facts._root_polynomial(root).support_bound(arm) for root in kuhn_facts.KUHN_ROOTS)
    return groups / (groups - 1) * spread


def pooled_bound(game: str, row: str, arm: str, slack: float, named: bool) -> Bound:
    """The pooled reading of a row's contrast variance under the construction `arm`: the range bound only (a
    mixture over decision points adds the spread of their mean contrasts, which no per-point maximum bounds)."""
    cid, rule = f"measured_transfer.{game}.{row}.contrast_variance", kuhn_facts.support_bounds(game)["contrast"]
    span = kuhn_facts.support_bounds(game)["range"]
    support = ", ".join(f"{u:g}" for u in sorted(kuhn_facts.returns_support(game)))
    own = arm == ROW_CONSTRUCTION[game][row]
    return Bound(cid, f"{game}, {ARM_OF_ROW[row]}: contrast variance", POOLED + (CONSTRUCTION.format(arm=arm)
                                                                               if named else ""),
                 ("pooled",) if own else ("pooled", arm), 0.0, rule,
                 f"Var(R_i - R_j) <= {rule:g} chips^2, the square of the range {span:g} of a budget-1 contrast "
                 f"(returns in {{{support}}}): a variance pooled over decision points is a mixture, whose spread of "
                 f"the points' mean contrasts no per-point maximum bounds", slack,
                 label=LABEL["pooled"] + (LABEL["construction"].format(arm=arm) if named else ""))


def contrast_bounds(row: str, groups: int, game: str = GAME, root: str = "") -> list[Bound]:
    """The readings of a row's contrast variance with the largest value the rules allow.

    Kuhn: for each construction the paper's words allow for the row (`ROW_CONSTRUCTIONS`, the book's model
    first), the variance pooled over every decision point (the paper's reading, `pooled_bound`), the per-group
    budget-1 variance at each decision point ('' first: the point our table measures), then a sample variance
    over `groups` groups.  The book's construction has the keys ("pooled",), ("root", point) and ("sampled",);
    another construction c has ("pooled", c), ("root", point, c) and ("sampled", c).  Where a row allows several
    constructions, every reading names its construction.  Leduc: the pooled variance and the variance at the
    chapter's contrast root `root`, both held to the range bound (no maximum is proved in Leduc)."""
    cid = f"measured_transfer.{game}.{row}.contrast_variance"
    quantity = f"{game}, {ARM_OF_ROW[row]}: contrast variance"
    rule = kuhn_facts.support_bounds(game)["contrast"]
    slack = claims.printed_rounding(claims.claim(cid)) + FEASIBILITY_ROUNDING
    if game != GAME:
        return [pooled_bound(game, row, ROW_CONSTRUCTION[game][row], slack, False),
                Bound(cid, quantity, AT_ROOT.format(root=root), ("root", root), 0.0, rule,
                      f"Var(R_i - R_j) <= {rule:g} chips^2, the square of the range of a budget-1 contrast", slack,
                      label=LABEL["root"].format(root=root))]
    proof = (f"branch and bound over every continuation policy with a multilinear upper bound, certified to "
             f"{kuhn_facts.CERT_TOL:g} chips^2")
    constructions = ROW_CONSTRUCTIONS[row]
    named = len(constructions) > 1
    out = []
    for k, arm in enumerate(constructions):
        alt = () if k == 0 else (arm,)
        suffix = CONSTRUCTION.format(arm=arm) if named else ""
        out.append(pooled_bound(game, row, arm, slack, named))
        for point, high in root_maxima(arm).items():
            out.append(Bound(cid, quantity, AT_ROOT.format(root=point) + suffix, ("root", point, *alt), 0.0,
                             min(rule, high),
                             f"Var(R_i - R_j) <= {high:.4f} chips^2, the proved maximum of the {arm} construction at "
                             f"{point!r} ({proof}; the range of returns alone allows {rule:g})", slack, "proof",
                             (LABEL["root"] + (LABEL["construction"] if named else "")).format(root=point, arm=arm)))
        high = sampled_bound(arm, groups)
        out.append(Bound(cid, quantity, SAMPLED.format(n=groups) + suffix, ("sampled", *alt), 0.0, high,
                         f"a sample variance of {groups:,} values in a range of width w is at most n/(n-1) (w/2)^2 = "
                         f"{high:.4f} chips^2 for the {arm} construction's contrast (an estimate can exceed the "
                         f"population maximum by chance, not this)", slack,
                         label=(LABEL["groups"] + LABEL["construction"] if named else LABEL["sampled"]).format(
                             n=groups, arm=arm)))
    return out


# ----- NashConv and exploitability --------------------------------------------------------
def rule_bounds(game: str, row: str) -> list[Bound]:
    """0 <= NashConv <= 2 x the largest |utility| and exploitability = NashConv / 2 (chips)."""
    base = f"measured_transfer.{game}.{row}"
    nc, ex = (float(claims.claim(f"{base}.{k}")) for k in ("nashconv", "exploitability"))
    r = claims.printed_rounding
    top = 2 * kuhn_facts.support_bounds(game)["max_abs"]      # each best response wins at most the largest pot
    arm = ARM_OF_ROW[row]
    return [Bound(f"{base}.nashconv", f"{game}, {arm}: nashconv", NASH_CONV, ("nash_conv",), 0.0, top,
                  f"0 <= NashConv <= 2 x the largest |utility| = {top:g} chips", r(nc) + FEASIBILITY_ROUNDING,
                  label=LABEL["nash_conv"]),
            Bound(f"{base}.exploitability", f"{game}, {arm}: exploitability", EXPLOITABILITY, ("exploitability",),
                  nc / 2, nc / 2, f"exploitability = NashConv / 2 = {nc / 2:.5f} (the row's NashConv {nc:g})",
                  r(ex) + r(nc) / 2 + FEASIBILITY_ROUNDING, label=LABEL["exploitability"])]


def all_bounds(groups: int, leduc_root: str = "") -> dict[str, list[Bound]]:
    """{claim id: its readings' bounds, in the listed order} for every checked number of
    the section; `leduc_root` is the Leduc decision point the chapter's contrast variances are measured at."""
    out: dict[str, list[Bound]] = {}
    for game, rows in ROWS.items():
        for row in rows:
            for b in rule_bounds(game, row) + value_bounds(game, row) + \
                    contrast_bounds(row, groups, game, "" if game == GAME else leduc_root):
                out.setdefault(b.claim_id, []).append(b)
    return out


def bound_table(groups: int, leduc_root: str = "") -> list[dict]:
    """Every checked paper number under every reading: {claim_id, quantity, reading, label, key, paper, allowed,
    slack, bound, bound_kind, impossible} (the results file's record)."""
    return [b.entry() for bounds in all_bounds(groups, leduc_root).values() for b in bounds]


def paper_reading(bounds: list[Bound]) -> str | None:
    """The column the paper's text fixes a reading for, when `bounds` are the readings of such a column (else
    None): "contrast_variance" or "player0_value" (`PAPER_READING`)."""
    column = bounds[0].claim_id.rsplit(".", 1)[1]
    return column if column in PAPER_READING else None


def paper_bounds(bounds: list[Bound]) -> list[Bound]:
    """The readings among `bounds` that the paper's text fixes (`PAPER_READING`): one per construction the paper's
    words allow for the row (the pooled reading under each), none for a column whose reading it leaves open."""
    column = paper_reading(bounds)
    return [] if column is None else [b for b in bounds if b.key[0] == PAPER_READING[column]]


def paper_basis(column: str) -> str:
    """The paper's words that fix the reading of `column` (`PAPER_READING_BASIS`)."""
    return PAPER_READING_BASIS[column].format(roots=held_out_roots())
