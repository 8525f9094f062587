"""The pooled all-roots audit: the paired comparison over every Leduc decision point with a check-bet contrast.

The paper's headline row is "all roots & complete key ... headline audit",
its aggregate "a weighted summary over all root IDs, not an unweighted
average of stratum means", and its ablation tables use six roots per seed.
So the headline numbers are moments of the pooled set of comparison groups
over many roots, each root ID counted once.  This module measures that:

* Roots: every decision point where Call and Raise are both legal
  (`contrast_roots`): the paper's contrast is check minus bet.  The Fold /
  Call decisions after the last raise of a round have no such contrast, and
  a contrast with Fold could not move under coupling (Fold's return is a
  constant), so they are left out.
* Weights (`method.pooling.root_weights`): the paper does not say how its
  root IDs spread over decision points.  "visits" (our default) weighs each
  root by how often hands played by the behaviour policy (the continuation,
  which also defines each root's law) reach it: a root ID is a decision such
  a hand visits.  "uniform" weighs every root equally.  The notebook
  parameter ``pooled_weighting`` chooses.
* Groups: each root gets `MIN_ROOT_GROUPS` groups and the rest of the
  total in proportion to its weight (`method.pooling.allocate`), collected
  for every arm with the vectorised collector and a seed of its own
  (`root_seed`, so two roots share no random numbers), and audited by `paired_audit.paired_audit`
  (exact integer sums, a paired bootstrap of its own, exact values).
* Pooling (`PooledRoots.audit`): each root's Call and Raise moments,
  bootstrap replicates and exact moments are combined by the mixture formula
  (`method.pooling.mixture_moments`) with the root weights; replicate r of
  every root forms pooled replicate r (a bootstrap stratified by root).  The
  result is a `PairedAudit` of the two branches Call and Raise, so every row
  builder of the chapter reads it as it reads a one-root audit.  A stratum of
  roots (round one, two actions, ...) pools its roots with their weights
  renormalised.

Units: means in chips, variances and covariances in chips^2, ratios unitless,
reductions in percent.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from oscc_core.chapters.covariance.paired_audit import PairedAudit, paired_audit
from oscc_core.engine.roots import parse_root
from oscc_core.exact.arm_moments import Moments
from oscc_core.games import LEDUC, get_game
from oscc_core.method import pooling, stats
from oscc_core.policy import resolve_policy

#: The branches every pooled root contributes (the paper's check and bet), the roots of the pool and the seed of
#: each root are `method.pooling`'s, shared with the gradient-noise chapter.
CONTRAST, contrast_roots, pool_histories, root_seed = (pooling.CONTRAST, pooling.contrast_roots,
                                                        pooling.pool_histories, pooling.root_seed)
#: Fewest groups a root of the pool gets (its own paired bootstrap needs a few).
MIN_ROOT_GROUPS = 100
#: Bootstrap purpose of a root of the pool (completed with its history).
PURPOSE = "pooled/{root}"
#: The label of the whole pool among the strata.
ALL_ROOTS = "all roots"
#: How the chapter's text names each weighting of `method.pooling.WEIGHTINGS`.
WEIGHTING_TEXT = {"visits": "its share of the decisions that hands played by the continuation policy reach",
                  "uniform": "the same weight for every root"}
#: Strata of the paper's root table that the pool splits into: label -> which roots belong (round, legal actions).
STRATA = {"round one": lambda rnd, n_actions: rnd == 1, "round two": lambda rnd, n_actions: rnd == 2,
          "two actions": lambda rnd, n_actions: n_actions == 2, "three actions": lambda rnd, n_actions: n_actions == 3}


def _pair_moments(a: PairedAudit, arm: str):
    """(mean [2], cov [2, 2], replicate means [R, 2], replicate covs [R, 2, 2], exact mean [2], exact cov [2, 2])
    of Call and Raise at one root."""
    idx = [a.actions.index(name) for name in CONTRAST]
    sub = np.ix_(idx, idx)
    boot_cov = a.boot.cov[arm][:, idx][:, :, idx]
    return (a.mean[arm][idx], a.cov[arm][sub], a.boot.mean[arm][:, idx], boot_cov,
            a.exact[arm].mean[idx], a.exact[arm].cov[sub])


@dataclass
class PooledRoots:
    """The per-root audits of the pool, their weights, and how they were weighted.

    histories  the roots, in the tree's order
    weights    [H] root weights (sum to one) under `weighting`
    audits     root -> its `PairedAudit` (every arm, all its legal actions)
    """

    histories: list[str]
    weights: np.ndarray
    weighting: str
    seed: int
    audits: dict[str, PairedAudit] = field(default_factory=dict)

    @property
    def arms(self) -> list[str]:
        return list(next(iter(self.audits.values())).mean)

    def info(self, history: str) -> tuple[int, int]:
        """(round, number of legal actions) of a root of the pool."""
        a = self.audits[history]
        g = get_game(LEDUC)
        return int(g.tree.round[parse_root(g, history)]), len(a.actions)

    def stratum(self, label: str) -> list[str]:
        """The roots of one of `STRATA`, or every root for "all roots"."""
        if label == ALL_ROOTS:
            return list(self.histories)
        keep = STRATA[label]
        return [h for h in self.histories if keep(*self.info(h))]

    def audit(self, roots=None) -> PairedAudit:
        """The pooled `PairedAudit` of Call and Raise over `roots` (default: every root), weights renormalised."""
        roots = list(self.histories if roots is None else roots)
        if not roots or any(h not in self.audits for h in roots):
            raise ValueError(f"roots must be a non-empty subset of the pool's roots {self.histories}, got {roots}.")
        w = np.array([self.weights[self.histories.index(h)] for h in roots])
        w = w / w.sum()
        mean, cov, exact, boot_mean, boot_cov = {}, {}, {}, {}, {}
        for arm in self.arms:
            parts = [_pair_moments(self.audits[h], arm) for h in roots]
            m, c, bm, bc, em, ec = (np.stack(x) for x in zip(*parts))
            mean[arm], cov[arm] = pooling.mixture_moments(w, m, c)
            boot_mean[arm], boot_cov[arm] = pooling.mixture_moments(w, bm.swapaxes(0, 1), bc.swapaxes(0, 1))
            ex_mean, ex_cov = pooling.mixture_moments(w, em, ec)
            exact[arm] = Moments(arm, list(CONTRAST), ex_mean, ex_cov)
        first = self.audits[roots[0]].boot
        valid = sum(self.audits[h].valid for h in roots)
        boot = stats.BootstrapMoments(n=valid, replicates=first.replicates, seed=self.seed, purpose="pooled",
                                      mean=boot_mean, cov=boot_cov)
        emitted = {arm: tuple(sum(x) for x in zip(*(self.audits[h].emitted_counts(arm) for h in roots)))
                   for arm in self.arms}
        return PairedAudit(root=f"{len(roots)} roots", actions=list(CONTRAST), pair=(0, 1),
                           groups=sum(self.audits[h].groups for h in roots), valid=valid, budget=1, mean=mean,
                           cov=cov, exact=exact, boot=boot, emitted=emitted)

    def roots_record(self) -> list[dict]:
        """Per root: its history, acting player's legal actions, round, weight, groups and valid groups."""
        out = []
        for h, w in zip(self.histories, self.weights):
            a = self.audits[h]
            out.append({"root": h, "actions": list(a.actions), "round": self.info(h)[0], "weight": float(w),
                        "groups": a.groups, "valid_groups": a.valid})
        return out


def pooled_roots(arms, n_groups: int, seed: int, continuation, device: str, n_bootstrap: int,
                 weighting: str = "visits", game: str = LEDUC, purpose: str = PURPOSE) -> PooledRoots:
    """Audit every root of `contrast_roots` that the continuation reaches (a root it never reaches has no root
    IDs) for `arms`: `n_groups` groups in all, split by the root weights
    (`method.pooling.allocate`, at least `MIN_ROOT_GROUPS` per root), each root with its own seed
    (`root_seed`) and bootstrap (`purpose` completed with the root's history: ``pooled/<root>`` by default)."""
    table = resolve_policy(game, continuation)
    histories = pool_histories(continuation, game)
    weights = pooling.root_weights(game, histories, table, weighting)
    groups = pooling.allocate(n_groups, weights, MIN_ROOT_GROUPS)
    audits = {h: paired_audit(h, arms, int(n), root_seed(seed, h), continuation, device, n_bootstrap,
                              purpose.format(root=h), game=game) for h, n in zip(histories, groups)}
    return PooledRoots(histories, weights, weighting, int(seed), audits)


def strata_audits(pool: PooledRoots) -> dict[str, PairedAudit]:
    """The pool split into the paper's round and action strata (`STRATA`), then "all roots" (the whole pool)."""
    return {**{label: pool.audit(pool.stratum(label)) for label in STRATA}, ALL_ROOTS: pool.audit()}


def roots_frame(pool: PooledRoots):
    """Per root of the pool: history, round, legal actions, weight and groups per arm, as a table."""
    import pandas as pd

    return pd.DataFrame([{"root": repr(r["root"]), "round": r["round"], "actions": ", ".join(r["actions"]),
                          "weight": f"{r['weight']:.4f}", "groups per arm": f"{r['groups']:,}"}
                         for r in pool.roots_record()]).set_index("root")


def glue_values(pool: PooledRoots) -> dict:
    """What the chapter's text says about the pool, by glue name: its roots, groups and weighting."""
    audit = pool.audit()
    return {"pooled_roots": len(pool.histories), "pooled_groups": f"{audit.groups:,}",
            "pooled_weighting": pool.weighting, "pooled_weighting_text": WEIGHTING_TEXT[pool.weighting],
            "pooled_root_weight": float(pool.weights[pool.histories.index("")]) if "" in pool.histories else 0.0}


def one_root(rows, root: str) -> list:
    """The same comparisons made on the one-root audit at `root`: sensitivity rows of the pooled audit's claims
    ("sensitivity of"), their quantity marked with the root."""
    return [replace(r, quantity=f"root {root!r} only: {r.quantity}").as_sensitivity() for r in rows]


def arm_record(audit: PairedAudit) -> dict:
    """One pooled audit's per-arm contrast variance, Call-Raise covariance, branch variances and means, each with
    its 95% interval (paired bootstrap stratified by root) and exact value; and its ratio and reduction."""
    out = {}
    for arm in audit.mean:
        v, c = audit.contrast_var(arm), audit.covariance(arm)
        ex = audit.exact[arm]
        out[arm] = {"contrast_var": v.value, "contrast_var_interval": [v.low, v.high],
                    "exact_contrast_var": v.exact, "cov_pair": c.value, "cov_pair_interval": [c.low, c.high],
                    "exact_cov_pair": c.exact, "cov": audit.cov[arm].tolist(), "exact_cov": ex.cov.tolist(),
                    "branch_means": dict(zip(CONTRAST, audit.mean[arm].tolist())),
                    "exact_branch_means": dict(zip(CONTRAST, ex.mean.tolist())),
                    "contrast_mean": audit.contrast_mean(arm).value, "exact_contrast_mean": ex.contrast_mean()}
    return {"groups": audit.groups, "valid_groups": audit.valid, "arms": out, "ratio": audit.ratio().as_dict(),
            "reduction_percent": audit.reduction().as_dict()}


def record(pool: PooledRoots, strata: dict[str, PairedAudit] | None = None) -> dict:
    """The results file's ``pooled_roots``: the weighting, every root with its weight and groups, the pooled
    per-arm moments with intervals and exact values, the ratio and reduction, and the same for each stratum."""
    out = {"weighting": pool.weighting, "contrast": list(CONTRAST), "roots": pool.roots_record(),
           **arm_record(pool.audit())}
    if strata:
        out["strata"] = {label: {"roots": pool.stratum(label), **arm_record(a)} for label, a in strata.items()}
    return out
