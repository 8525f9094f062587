"""Structural facts of Kuhn poker that bound the paper's transfer numbers, computed rather than asserted.

* Kuhn has no chance event after the first decision, so full coupling equals
  root-only and continuation-only equals independent (`four_arm_contrast_variances`
  shows the four exact contrast variances, chips^2, and the two residuals).
* Terminal utilities lie in a small set (`returns_support`, chips); from its
  largest |u| and its range follow the rule bounds: a budget-1 contrast
  |R_i - R_j| <= range, so Var(R_i - R_j) <= range^2; a branch return has
  Var(R) <= min(max|u|^2, (range / 2)^2), so two branches that share nothing
  have Var(R_i - R_j) = Var(R_i) + Var(R_j) <= twice that (`support_bounds`).
* `bound_search` finds the largest contrast variance any continuation policy
  reaches at a root, per arm (a numerical search: a lower estimate of the
  supremum, never a proof of it); `certified_maxima` proves the supremum by
  branch and bound over the Bet probabilities with a multilinear upper bound
  (section 3b), and `arm_maxima` reports both.

The paper's numbers are held to these facts, under each reading of what they
measure, in `chapters.transfer.bounds`.
"""
from __future__ import annotations

import copy
import itertools
import time
from functools import cache

import numpy as np

from oscc_core.exact.arm_moments import arm_moments
from oscc_core.exact.evaluation import FEASIBILITY_ROUNDING
from oscc_core.games import TERMINAL, get_game
from oscc_core.games.deal_tables import acting_infostates, terminal_utilities
from oscc_core.policy import table_to_policy, uniform_table

GAME = "kuhn"
ARMS = ("independent", "root_only", "continuation_only", "full")
UNSHARED = "fully_independent"       # two branches sharing nothing, not even the acting player's card
KUHN_ROOTS = ("", "0", "1", "01")     # every decision point of Kuhn (histories of action ids)
# the construction each Kuhn row of tab:measured-transfer measures (the learner arm's coupling)
ROW_ARM = {"cp_grpo_paired": "full", "independent": "independent", "standard_grpo": "root_only",
           "standard_ppo": "independent"}
LEDUC_ROWS = ("cp_grpo_paired", "independent")
SEARCH_RANDOM, SEARCH_SEED = 256, 0
REFINE_STEP, REFINE_TOL, REFINE_MAX_EVALS = 0.25, 1e-5, 3000


# ----- 1. the four arms ------------------------------------------------------------
def four_arm_contrast_variances(policy="uniform", root: str = "") -> dict[str, float]:
    """{arm: exact Var(R_Pass - R_Bet), chips^2} at a Kuhn root under `policy` ("uniform" or a policy dict),
    plus the residuals "full - root_only" and "continuation_only - independent" (0 up to rounding)."""
    m = arm_moments(GAME, root, policy)
    out = {arm: m[arm].contrast_var(0, 1) for arm in ARMS}
    out["full - root_only"] = out["full"] - out["root_only"]
    out["continuation_only - independent"] = out["continuation_only"] - out["independent"]
    return out


# ----- 2. the support of returns and the bounds it implies ----------------------------
def returns_support(game: str = GAME) -> set[float]:
    """Every terminal utility (chips) either player can receive, read from the game tree over all deals."""
    g = get_game(game)
    u = terminal_utilities(g)[:, g.tree.player == TERMINAL]
    return {float(x) for x in np.unique(np.concatenate([u.ravel(), -u.ravel()]))}


def support_bounds(game: str = GAME) -> dict[str, float]:
    """max |u| and range of the support (chips) and the bounds they imply (chips^2): `contrast` on any
    budget-1 Var(R_i - R_j), `branch` on Var(R), `unshared` on Var(R_i) + Var(R_j)."""
    s = np.array(sorted(returns_support(game)))
    max_abs, span = float(np.abs(s).max()), float(s.max() - s.min())
    branch = min(max_abs ** 2, (span / 2) ** 2)          # E[R^2] and Popoviciu; either bounds Var(R)
    return {"max_abs": max_abs, "range": span, "contrast": span ** 2, "branch": branch, "unshared": 2 * branch}


# ----- 3. the search over continuation policies -----------------------------------------
def _free_infostates(root: str) -> np.ndarray:
    """Ids of the information states whose policy can matter at `root`: all but the root's own
    (its action is fixed by the branch); ancestors set the root law, descendants the continuation."""
    g = get_game(GAME)
    node = int(g.tree.node_of_history(root))
    return np.flatnonzero(g.infostates.node != node)


def _objectives(root: str, free: np.ndarray, bet: np.ndarray) -> np.ndarray:
    """[contrast variance of each arm in ARMS, Var(R_Pass) + Var(R_Bet)] (chips^2) for Bet probabilities
    `bet` at the `free` information states; -inf where the root is unreachable under that policy."""
    g = get_game(GAME)
    table = uniform_table(g)
    table[free] = np.stack([1.0 - bet, bet], axis=1)
    try:
        m = arm_moments(g, root, table_to_policy(g, table))
    except ValueError:                                   # the policy never reaches this root
        return np.full(len(ARMS) + 1, -np.inf)
    diag = m["full"].cov.diagonal()                      # branch variances do not depend on the arm
    return np.array([m[a].contrast_var(0, 1) for a in ARMS] + [float(diag[0] + diag[1])])


def _refine(root: str, free: np.ndarray, bet: np.ndarray, k: int) -> tuple[np.ndarray, float, int]:
    """Coordinate (pattern) ascent of objective k from `bet`: try +-step on each coordinate, halve the step
    when no move improves; returns (policy, value, evaluations)."""
    best, evals, step = _objectives(root, free, bet)[k], 1, REFINE_STEP
    while step > REFINE_TOL and evals < REFINE_MAX_EVALS:
        moved = False
        for i, d in itertools.product(range(len(bet)), (step, -step)):
            trial = bet.copy()
            trial[i] = min(max(trial[i] + d, 0.0), 1.0)
            if trial[i] == bet[i]:
                continue
            value, evals = _objectives(root, free, trial)[k], evals + 1
            if value > best:
                bet, best, moved = trial, value, True
        step = step if moved else step / 2
    return bet, float(best), evals


@cache
def _search(root: str, n_random: int, seed: int) -> dict:
    g = get_game(GAME)
    free = _free_infostates(root)
    corners = np.array(list(itertools.product((0.0, 1.0), repeat=len(free))))   # every deterministic policy
    interior = np.random.default_rng(seed).random((n_random, len(free)))
    candidates = np.concatenate([corners, interior])
    values = np.stack([_objectives(root, free, c) for c in candidates])           # [N, arms + 1]
    bounds, out, evals = support_bounds(GAME), {}, len(candidates)
    for k, name in enumerate(ARMS + (UNSHARED,)):
        bet, best, n = _refine(root, free, candidates[int(np.argmax(values[:, k]))].copy(), k)
        evals += n
        out[name] = {"max": best, "policy": {g.infostates.strings[i]: float(p) for i, p in zip(free, bet)},
                     "respects_contrast_bound": best <= bounds["contrast"] + FEASIBILITY_ROUNDING,
                     "respects_unshared_bound": best <= bounds["unshared"] + FEASIBILITY_ROUNDING}
    return {"root": root, "free_infostates": [g.infostates.strings[i] for i in free], "evaluations": evals,
            "contrast_bound": bounds["contrast"], "unshared_bound": bounds["unshared"], "arms": out}


def bound_search(arms=ARMS, n_random: int = SEARCH_RANDOM, seed: int = SEARCH_SEED, root: str = "") -> dict:
    """The largest contrast variance (chips^2) continuation policies reach at a Kuhn root, per arm.

    Searches Bet probabilities at every information state but the root's own
    (2^9 deterministic policies, `n_random` uniform interior points from
    numpy's Generator with `seed`, then coordinate ascent from the best).
    Returns {root, free_infostates, evaluations, contrast_bound, unshared_bound,
    arms: {arm: {max, policy, respects_contrast_bound, respects_unshared_bound}}};
    `arms` also holds "fully_independent", the largest Var(R_Pass) + Var(R_Bet),
    the construction the unshared bound is about.  Our "independent" arm still
    shares the acting player's card, so the unshared bound need not hold for it.
    """
    unknown = set(arms) - set(ARMS)
    if unknown:
        raise ValueError(f"arms must be among {ARMS}, got {sorted(unknown)}.")
    found = copy.deepcopy(_search(root, int(n_random), int(seed)))   # callers may edit what they get
    return {**found, "arms": {a: found["arms"][a] for a in tuple(arms) + (UNSHARED,)}}


# ----- 3b. the certified maximum: branch and bound with a multilinear upper bound ---------------
# x in [0, 1]^9: Bet probabilities of the root's free states.  A path meets each information state at
# most once (perfect recall), so every path probability is multilinear in x; the Pass and Bet
# continuations and the ancestors use disjoint states (checked), so m_P(s) m_B(s) and A_P(I) A_B(I)
# stay multilinear.  At the root "" the law is uniform: E2 = E[(R_P - R_B)^2] and M = E[R_P - R_B] are
# multilinear, so over a box max (E2 - 2cM) sits at a vertex.  Below it the law is reach(s) / Z: for the
# deal-sharing arms E2 - 2cM is linear-fractional (monotone per coordinate where Z > 0; vertex again);
# for the arms drawing the opponent twice, p(I) A_P(I) A_B(I) is bounded by interval arithmetic on its
# linear-fractional factors.  Var = min_c (E2 - 2cM + c^2), so UB_c(B) = max_vertices(E2 - 2cM) + c^2
# is an upper bound for every c (c nearest 0 in [M_min, M_max]: max E2 - min M^2; c near M: a quadratic
# excess).  Boxes split until UB <= best + tol; the largest UB ever discarded or left open is proved.
# The law depends on an ancestor group (one node and action, all cards) only up to a common factor, so
# below "" only the faces with one literal per group equal to 1 are searched; boxes where Z may vanish
# fall back to the support bound (range / 2)^2 (Popoviciu).
CERT_TOL = 1e-6                      # chips^2: the certified bound exceeds the best point by at most this
CERT_BATCH, CERT_MAX_BOXES = 128, 6_000


class _RootPolynomial:
    """The multilinear form of one Kuhn root: per deal its reach literals and, per branch, the terminal
    histories below the root with the acting player's utility and their (column, action) literals."""

    def __init__(self, root: str):
        g = get_game(GAME)
        tree, ids = g.tree, acting_infostates(g)
        util = terminal_utilities(g)
        node = int(tree.node_of_history(root))
        self.root, self.player = root, int(tree.player[node])
        self.free = _free_infostates(root)
        col = {int(i): j for j, i in enumerate(self.free)}
        sign = 1.0 if self.player == 0 else -1.0
        hist = list(tree.history)
        terminals = [n for n in range(tree.num_nodes) if tree.player[n] == TERMINAL]
        self.own, self.reach, self.branches = [], [], ([], [])

        def literals(d, h, start):
            return tuple((col[int(ids[d, tree.node_of_history(h[:i])])], int(h[i])) for i in range(start, len(h)))

        for d, deal in enumerate(g.deals.tolist()):
            self.own.append(int(deal[self.player]))
            self.reach.append(literals(d, root, 0))
            for b, a in enumerate(int(x) for x in np.flatnonzero(tree.legal[node])):
                below = [n for n in terminals if hist[n].startswith(root + str(a))]
                self.branches[b].append([(sign * float(util[d, n]), literals(d, hist[n], len(root) + 1))
                                         for n in below])
        self.own = np.array(self.own)
        self.cols = sorted({j for lits in self._all_literals() for j, _ in lits})   # the variables that matter
        self.fixed_law = all(len(r) == 0 for r in self.reach)
        self._check_multilinear()

    def _all_literals(self):
        return list(self.reach) + [lits for br in self.branches for hs in br for _, lits in hs]

    def _check_multilinear(self) -> None:
        """Each state at most once per path; ancestors, Pass and Bet continuations on disjoint states."""
        for lits in self._all_literals():
            assert len({j for j, _ in lits}) == len(lits), "an information state repeats on a path"
        anc = {j for r in self.reach for j, _ in r}
        sets = [{j for hs in br for _, lits in hs for j, _ in lits} for br in self.branches]
        assert not (sets[0] & sets[1]) and not (anc & (sets[0] | sets[1])), "branch variables overlap"

    def groups(self) -> list[list[tuple[int, int]]]:
        """The ancestor literal groups: per position on the root's history, the (column, action) of every deal."""
        return [sorted({r[i] for r in self.reach}) for i in range(len(self.root))]

    @staticmethod
    def _product(x: np.ndarray, lits) -> np.ndarray:
        out = np.ones(x.shape[0])
        for j, a in lits:
            out = out * (x[:, j] if a == 1 else 1.0 - x[:, j])
        return out

    def evaluate(self, x: np.ndarray):
        """reach [S, N], m and q [2, S, N] at Bet probabilities x [N, 9]."""
        reach = np.stack([self._product(x, r) for r in self.reach])
        m, q = np.zeros((2,) + reach.shape), np.zeros((2,) + reach.shape)
        for b, br in enumerate(self.branches):
            for s, hs in enumerate(br):
                for u, lits in hs:
                    p = self._product(x, lits)
                    m[b, s] += u * p
                    q[b, s] += u * u * p
        return reach, m, q

    def quantities(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Z, M, E2 of both couplings, the parts of the unshared construction and of the cross term."""
        reach, m, q = self.evaluate(x)
        z = reach.sum(0)
        w = reach / np.where(z > 0, z, 1.0)
        cards = sorted(set(self.own.tolist()))
        p_i = np.stack([w[self.own == c].sum(0) for c in cards])                     # [I, N]
        n_b = np.stack([np.stack([(w[self.own == c] * m[b][self.own == c]).sum(0) for c in cards])
                        for b in range(2)])                                          # [2, I, N]
        safe = np.where(p_i > 0, p_i, 1.0)
        a_b = np.where(p_i > 0, n_b / safe, 0.0)                                     # posterior means A_b(I)
        base = (w * (q[0] + q[1])).sum(0)
        return {"z": z, "M": (w * (m[0] - m[1])).sum(0), "S": base,
                "E2_shared": base - 2 * (w * m[0] * m[1]).sum(0),
                "E2_unshared": base - 2 * (p_i * a_b[0] * a_b[1]).sum(0),
                "Mb": (w[None] * m).sum(1), "Qb": (w[None] * q).sum(1), "p_I": p_i, "A_b": a_b,
                "m": m, "reach_I": np.stack([reach[self.own == c].sum(0) for c in cards])}

    def values(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """The contrast variance of every arm and Var(R_P) + Var(R_B) at x [N, 9] (chips^2)."""
        k = self.quantities(np.atleast_2d(x))
        shared, unshared = k["E2_shared"] - k["M"] ** 2, k["E2_unshared"] - k["M"] ** 2
        out = {"full": shared, "root_only": shared, "independent": unshared, "continuation_only": unshared,
               UNSHARED: (k["Qb"] - k["Mb"] ** 2).sum(0)}
        return {a: np.where(k["z"] > 0, v, -np.inf) for a, v in out.items()}

    def support_bound(self, arm: str) -> float:
        """(range / 2)^2 of the values the arm's contrast (or each branch return) can take: a bound for
        every root law and continuation (Popoviciu)."""
        us = [[[u for u, _ in hs] for hs in br] for br in self.branches]
        if arm == UNSHARED:
            return float(sum((np.ptp([u for hs in br for u in hs]) / 2) ** 2 for br in us))
        pairs = [(s, t) for s in range(len(self.own)) for t in range(len(self.own))
                 if (s == t if arm in ("full", "root_only") else self.own[s] == self.own[t])]
        diffs = [a - b for s, t in pairs for a in us[0][s] for b in us[1][t]]
        return float((np.ptp(diffs) / 2) ** 2)


@cache
def _root_polynomial(root: str) -> _RootPolynomial:
    return _RootPolynomial(root)


def _golden_min(phi, lo: np.ndarray, hi: np.ndarray, iters: int = 24) -> np.ndarray:
    """Elementwise near-minimum of convex phi over [lo, hi] (any c gives a valid bound: no exactness needed)."""
    r = (np.sqrt(5) - 1) / 2
    a, b = lo.copy(), hi.copy()
    for _ in range(iters):
        c1, c2 = b - r * (b - a), a + r * (b - a)
        left = phi(c1) <= phi(c2)
        b, a = np.where(left, c2, b), np.where(left, a, c1)
    return phi((a + b) / 2)


def box_bounds(root: str, arm: str, lo: np.ndarray, hi: np.ndarray) -> dict[str, np.ndarray]:
    """Certified upper bounds of the arm's variance over boxes [lo, hi] ([nb, 9] each), with the best
    vertex value and point and a split score per coordinate (the larger, the more that side matters)."""
    poly = _root_polynomial(root)
    cols, nb = poly.cols, lo.shape[0]
    corners = np.array(list(itertools.product((0.0, 1.0), repeat=len(cols))))      # [V, k]
    nv = len(corners)
    x = np.repeat(lo[:, None, :], nv, axis=1)
    x[:, :, cols] = lo[:, None, cols] + corners[None] * (hi - lo)[:, None, cols]
    x = x.reshape(nb * nv, -1)
    k = poly.quantities(x)
    shape = (nb, nv)
    val = {a: v.reshape(shape) for a, v in poly.values(x).items()}[arm]
    fallback = np.full(nb, poly.support_bound(arm))
    zpos = k["z"].reshape(shape).min(1) > 0          # Z is multilinear and >= 0: positive on B iff at its vertices
    big = lambda a: a.reshape(a.shape[:-1] + shape)

    if arm == UNSHARED:
        mb, qb = big(k["Mb"]), big(k["Qb"])           # [2, nb, nv]
        ub = np.zeros(nb)
        for b in range(2):
            lo_c, hi_c = mb[b].min(1), mb[b].max(1)
            ub += _golden_min(lambda c, b=b: (qb[b] - 2 * c[:, None] * mb[b]).max(1) + c ** 2, lo_c, hi_c)
        effect_terms = [qb[0] + qb[1], mb[0], mb[1]]
    else:
        mm = big(k["M"])
        if arm in ("full", "root_only") or poly.fixed_law:
            e2 = big(k["E2_shared"] if arm in ("full", "root_only") else k["E2_unshared"])
            cross = np.zeros(nb)
        else:                                          # rational law, drawn twice: bound the cross term
            e2 = big(k["S"])
            p_i, a_b = big(k["p_I"]), big(k["A_b"])  # [I, nb, nv], [2, I, nb, nv]
            reach_ok = big(k["reach_I"]).min(2) > 0   # [I, nb]: posterior means linear-fractional on B
            m = big(k["m"])                           # [2, S, nb, nv]
            cross = np.zeros(nb)
            for i, card in enumerate(sorted(set(poly.own.tolist()))):
                rng = []
                for b in range(2):
                    hull = m[b][poly.own == card]     # posterior mean lies in the hull of m_b(s), s in I
                    rng.append((np.where(reach_ok[i], a_b[b, i].min(1), hull.min((0, 2))),
                                np.where(reach_ok[i], a_b[b, i].max(1), hull.max((0, 2)))))
                prods = [pp * ap * ab for pp in (p_i[i].min(1), p_i[i].max(1))
                         for ap in rng[0] for ab in rng[1]]
                cross += np.min(prods, axis=0)
            cross = -2 * cross                        # >= -2 sum_I p A_P A_B on B
        lo_c, hi_c = mm.min(1), mm.max(1)
        phi = lambda c: (e2 - 2 * c[:, None] * mm).max(1) + c ** 2 + cross
        near0 = np.clip(0.0, lo_c, hi_c)
        plain = e2.max(1) + cross - np.where((lo_c <= 0) & (hi_c >= 0), 0.0, np.minimum(lo_c ** 2, hi_c ** 2))
        ub = np.minimum.reduce([plain, phi(near0), phi(mm.mean(1)), _golden_min(phi, lo_c, hi_c)])
        effect_terms = [e2, mm * np.abs(mm).max(1, keepdims=True)]
    ub = np.where(zpos, np.minimum(ub, fallback), fallback)
    # split score per relevant coordinate: the largest change of the bound's ingredients along that side
    score = np.full((nb, lo.shape[1]), -1.0)
    for t, j in enumerate(cols):
        width = hi[:, j] - lo[:, j]
        eff = np.zeros(nb)
        for term in effect_terms:
            tt = term.reshape((nb,) + (2,) * len(cols))
            eff += np.abs(np.take(tt, 1, axis=t + 1) - np.take(tt, 0, axis=t + 1)).reshape(nb, -1).max(1)
        score[:, j] = np.where(width > 0, eff + 1e-9 * width, -1.0)
    best = np.argmax(val, axis=1)
    return {"ub": ub, "best": val[np.arange(nb), best], "point": x.reshape(nb, nv, -1)[np.arange(nb), best],
            "score": score}


def _initial_boxes(poly: _RootPolynomial) -> tuple[np.ndarray, np.ndarray]:
    """[0, 1]^9 at the root ""; below it one face per choice of a literal fixed to 1 in each ancestor group."""
    n = len(poly.free)
    if poly.fixed_law:
        return np.zeros((1, n)), np.ones((1, n))
    choices = list(itertools.product(*poly.groups()))
    lo, hi = np.zeros((len(choices), n)), np.ones((len(choices), n))
    for f, choice in enumerate(choices):
        for j, a in choice:
            lo[f, j] = hi[f, j] = float(a == 1)
    return lo, hi


@cache
def _certify(root: str, arm: str, tol: float = CERT_TOL) -> dict:
    """Branch and bound for one root and arm: {upper, best, gap, policy, boxes, seconds, complete}."""
    start = time.perf_counter()
    poly = _root_polynomial(root)
    found = _search(root, SEARCH_RANDOM, SEARCH_SEED)["arms"][arm]
    g = get_game(GAME)
    x0 = np.array([[found["policy"][g.infostates.strings[i]] for i in poly.free]])
    best, best_x = float(poly.values(x0)[arm][0]), x0[0]
    lo, hi = _initial_boxes(poly)
    r = box_bounds(root, arm, lo, hi)
    open_lo, open_hi, open_ub, open_side = lo, hi, r["ub"], np.argmax(r["score"], axis=1)
    pruned, boxes = -np.inf, len(lo)
    while len(open_lo) and boxes < CERT_MAX_BOXES:
        if r["best"].max() > best:
            i = int(np.argmax(r["best"]))
            best, best_x = float(r["best"][i]), r["point"][i]
        keep = open_ub > best + tol
        if (~keep).any():
            pruned = max(pruned, float(open_ub[~keep].max()))
        open_lo, open_hi, open_ub, open_side = open_lo[keep], open_hi[keep], open_ub[keep], open_side[keep]
        if not len(open_lo):
            break
        order = np.argsort(-open_ub)[:CERT_BATCH]                  # split the most promising boxes first
        rest = np.setdiff1d(np.arange(len(open_lo)), order)
        lo, hi = open_lo[order], open_hi[order]
        side = open_side[order]
        mid = (lo[np.arange(len(lo)), side] + hi[np.arange(len(lo)), side]) / 2
        lo2, hi2 = lo.copy(), hi.copy()
        hi[np.arange(len(lo)), side] = mid
        lo2[np.arange(len(lo)), side] = mid
        lo, hi = np.concatenate([lo, lo2]), np.concatenate([hi, hi2])
        r, boxes = box_bounds(root, arm, lo, hi), boxes + 2 * len(lo2)
        open_lo, open_hi = np.concatenate([open_lo[rest], lo]), np.concatenate([open_hi[rest], hi])
        open_ub = np.concatenate([open_ub[rest], r["ub"]])
        open_side = np.concatenate([open_side[rest], np.argmax(r["score"], axis=1)])
    upper = max(best, pruned, float(open_ub.max()) if len(open_ub) else -np.inf)
    return {"upper": upper, "best": best, "gap": upper - best, "complete": not len(open_ub),
            "policy": {g.infostates.strings[i]: float(p) for i, p in zip(poly.free, best_x)},
            "boxes": boxes, "seconds": time.perf_counter() - start, "tol": tol}


# In Kuhn nothing is dealt after the first decision, so the shared-chance arms have the same polynomial
# as their no-chance twins (`_RootPolynomial.values`): one branch and bound serves both.
_SAME_POLYNOMIAL = {"root_only": "full", "continuation_only": "independent"}


def certified_maxima(root: str = "", arms=ARMS + (UNSHARED,)) -> dict[str, dict]:
    """{arm: {upper, best, gap, complete, policy, boxes, seconds, tol}}: a proved maximum (chips^2) of the
    budget-1 contrast variance (for "fully_independent": Var(R_Pass) + Var(R_Bet)) over every
    continuation policy at a Kuhn root.  `upper` is the certified bound, `best` the largest value
    reached (by `policy`); complete = every box closed, so best <= max <= upper <= best + tol."""
    return {a: copy.deepcopy(_certify(root, _SAME_POLYNOMIAL.get(a, a))) for a in arms}


def arm_maxima(n_random: int = SEARCH_RANDOM, seed: int = SEARCH_SEED) -> dict[str, dict]:
    """{arm: {max, root, upper, upper_root, gap}}: over every Kuhn decision point, the largest contrast
    variance found (`max` at `root`, chips^2, by the search with `n_random`, `seed`) and the certified
    (branch-and-bound) maximum `upper` (reached at `upper_root`); gap = upper - max.  `upper` is the
    per-group bound a paper value of the arm's construction is held to whichever roots it pools."""
    out = {}
    for arm in ARMS:
        best = max((bound_search(ARMS, n_random, seed, r)["arms"][arm]["max"], r) for r in KUHN_ROOTS)
        upper = max((certified_maxima(r, (arm,))[arm]["upper"], r) for r in KUHN_ROOTS)
        out[arm] = {"max": best[0], "root": best[1], "upper": upper[0], "upper_root": upper[1],
                    "gap": upper[0] - best[0]}
    return out
