"""The contract audit: C1-C5 predicates, the safety certificate and the failure ledger.

Three layers, each vectorised over its unit (information states, transitions,
groups), with loops only over information-state layouts, trace steps and
controls:

* `rng_dependency_table` - the random-stream contract, generated from
  `rng.NAMESPACES` (the paper's RNG dependency and namespace tables);
* `observation_audit` - every information state of a game, every full state
  consistent with it (every hidden field perturbed), the observation hash and
  the policy address the engine computes there; neither may move;
* `audit_run` - one collection replayed from its trace: per group the root
  hash (ROOT_DRIFT), the observation hash of every transition under
  hidden-field and branch perturbation (OBS_DRIFT), the policy address under
  hidden-field perturbation (HIDDEN_LEAK), counters and addresses against
  their declared derivation (STREAM_GAP), the collector's EARLY_END and
  ILLEGAL codes, the join order of post-hoc fields (JOIN_ORDER) and, when a
  solver value is joined, its budget (SOLVER_TIMEOUT).  `certificate` turns a
  run audit into the safety decision (accept only when C1-C5 all hold).

Swap checks (`branch_swap`, `seat_swap`) and the paper-beside-reproduction
rows for fraction-valued claims (`Row.fraction`) complete the chapter.
Every group of a run ends with exactly one code (0 = valid): nothing leaves
a denominator silently.
"""
from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
import torch

from oscc_core.engine import rng
from oscc_core.engine.arms import get_arm
from oscc_core.engine.collector import Collection, Streams, collect, contrast_moments
from oscc_core.engine.failures import CODE_OF, FAILURE_CODES, OK, failure_counts
from oscc_core.engine.rollout import ChanceEvent, chance_event_of_nodes, policy_cdf, step
from oscc_core.engine.violations import Violation
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.exact.cfr import CFRPlus
from oscc_core.games import TERMINAL, get_game
from oscc_core.policy import uniform_table
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Row

Z_MARGINAL = 4.0          # C1: |branch mean - exact mean| must stay within this many standard errors
_ACTION_TAG = rng.signed(rng.tag("oscc/trace/action"))
_CHANCE_TAG = rng.signed(rng.tag("oscc/trace/chance"))
_JOIN_TAG = rng.signed(rng.tag("oscc/trace/join"))
_ADDRESS_TAG = rng.signed(rng.tag("oscc/trace/address"))
CODE_NAMES = [FAILURE_CODES[c][0] for c in sorted(FAILURE_CODES)]

# The paper's RNG dependency table (tab:rng-dependency) row that each namespace implements.
PAPER_ROW = {"root": "replay/root", "hidden": "environment (hidden root deal)",
             "chance": "continuation (environment event counter)", "policy": "policy action",
             "bootstrap": "bootstrap (tab:app-p1-rng)"}
AUDIT_OF = {"root": "root hash equal across branches (ROOT_DRIFT)",
            "hidden": "observation hash invariant when the hidden card changes (OBS_DRIFT)",
            "chance": "address = semantic event at counter 0, no collision (STREAM_GAP)",
            "policy": "address free of hidden fields (HIDDEN_LEAK), branch-specific, counters 0,1,2,... (STREAM_GAP)",
            "bootstrap": "regenerated from (run, purpose, replicate)"}


# ----- 1. random-stream dependency table -------------------------------------
def rng_dependency_table():
    """One row per namespace of `rng.NAMESPACES`: key fields, sharing, visibility and audit."""
    import pandas as pd

    policy_params = list(inspect.signature(rng.policy_key).parameters)
    rows = []
    for ns in rng.NAMESPACES.values():
        if ns.name == "policy":
            visible = f"action draw only; key takes ({', '.join(policy_params)}), no game state"
        elif ns.name in ("root",):
            visible = "own card and public root (the information state)"
        elif ns.name == "chance":
            visible = "through the public card once dealt"
        elif ns.name == "hidden":
            visible = "never (opponent's card)"
        else:
            visible = "no effect on rollouts"
        rows.append({"namespace": ns.name, "paper row": PAPER_ROW[ns.name],
                     "key fields": ", ".join(ns.fields),
                     "dropped to share": ", ".join(ns.optional) or "-",
                     "shared across branches": ns.shared_across_branches,
                     "draws": ns.draws, "policy visibility": visible, "audit": AUDIT_OF[ns.name]})
    return pd.DataFrame(rows)


def policy_key_takes_no_state() -> bool:
    """C3 by construction: the policy key's parameters are stream coordinates only."""
    return set(inspect.signature(rng.policy_key).parameters) <= {"run", "split", "group", "branch", "rollout", "stream"}


# ----- engine helpers --------------------------------------------------------
@lru_cache(maxsize=None)
def observation_hash_table(game_name: str) -> torch.Tensor:
    """int64 observation hash of every information state: SHA-256 of its OpenSpiel string."""
    strings = get_game(game_name).infostates.strings
    return torch.tensor([rng.signed(int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "little"))
                         for s in strings], dtype=torch.int64)


def engine_step(game, node, c0, c1, public, keys, counter, violation=None):
    """The engine's own decision step (`rollout._step`) on explicit full states.

    Returns the information-state id the engine computes, the action it draws
    under the uniform continuation and the (key, counter) address it reads.
    """
    t = game.tables("cpu")
    cdf, last = policy_cdf(uniform_table(game), "cpu")
    illegal = torch.zeros(len(node), dtype=torch.bool)
    _, _, _, info, action, _, used = step(node, c0, c1, public, keys, counter, illegal, t["player"],
                                           t["info_index"].reshape(-1), cdf, last, t["legal"], t["child"],
                                           game.num_cards, violation)
    return info, action, used


def _observe(game, info, branch, other, violation):
    h = observation_hash_table(game.name)[info]
    return h if violation is None else violation.observe(h, branch, other)


def _any_by(index: torch.Tensor, flag: torch.Tensor, size: int) -> torch.Tensor:
    out = torch.zeros(size, dtype=torch.bool)
    out[index[flag]] = True
    return out


def _drift_by(index: torch.Tensor, values: torch.Tensor, size: int) -> torch.Tensor:
    """True for every index whose values are not all equal."""
    lo = torch.full((size,), torch.iinfo(torch.int64).max, dtype=torch.int64).scatter_reduce(0, index, values, "amin")
    hi = torch.full((size,), torch.iinfo(torch.int64).min, dtype=torch.int64).scatter_reduce(0, index, values, "amax")
    return (lo != hi) & (hi >= lo)


# ----- 2. observation audit over information states --------------------------
@dataclass
class ObservationAudit:
    game: str
    states: int
    states_by_player: list
    states_by_round: dict
    full_states: int            # (information state, hidden completion, branch) triples checked
    projection_errors: int      # engine's information state differs from the one we built
    obs_drift_states: int       # observation hash moved under a hidden-field or branch perturbation
    key_drift_states: int       # policy address moved under a hidden-field perturbation
    action_drift_states: int    # drawn action moved under a hidden-field perturbation
    exposures: int              # states with any of the above

    @property
    def verified(self) -> int:
        return self.states - self.exposures

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["verified"] = self.verified
        return d


def observation_audit(game="leduc", violation: Violation | None = None, run: int = 0, split: str = "audit",
                      group: int = 0) -> ObservationAudit:
    """Every information state x every consistent full state x both branch labels.

    Hidden fields perturbed: the opponent's private card and, in round one,
    the public card that is not yet dealt.  The engine is asked for the
    information state, the observation hash and the policy address at each
    full state; the observation may not change at all (also not with the
    branch label) and the policy address and action may not change with a
    hidden field (they may change with the branch: that is C3).
    """
    game = get_game(game)
    info = game.infostates
    n, c = len(info), game.num_cards
    ids = torch.arange(n).view(-1, 1, 1, 1)
    opp = torch.arange(c).view(1, -1, 1, 1)
    fut = torch.arange(c).view(1, 1, -1, 1)
    br = torch.arange(2).view(1, 1, 1, -1)
    own = torch.as_tensor(info.card)[ids]
    pub = torch.as_tensor(info.public_card)[ids]
    rnd = torch.as_tensor(game.tree.round)[torch.as_tensor(info.node)][ids]
    valid = ((opp != own) & (opp != pub)).expand(len(info), c, c, 2)
    if game.has_public_card:
        valid = valid & torch.where(rnd >= 2, fut == pub, (fut != own) & (fut != opp))
    else:
        valid = valid & (fut == 0)
    shape = valid.shape
    sel = [x.expand(shape)[valid] for x in (ids, own, opp, fut, br)]
    i, own_c, opp_c, _fut_c, branch = sel
    player = torch.as_tensor(info.player)[i]
    node = torch.as_tensor(info.node)[i]
    public = torch.as_tensor(info.public_card)[i]        # the engine's state holds only the dealt card
    c0 = torch.where(player == 0, own_c, opp_c)
    c1 = torch.where(player == 0, opp_c, own_c)
    keys = rng.policy_key(run, rng.SPLITS[split], group, branch, 0)
    counter = torch.zeros_like(keys)
    seen, action, (ukey, uctr) = engine_step(game, node, c0, c1, public, keys, counter, violation)
    obs = _observe(game, seen, branch, opp_c, violation)
    per_branch = i * 2 + branch
    proj = _any_by(i, seen != i, n)
    obs_drift = _drift_by(i, obs, n) | proj
    key_drift = (_drift_by(per_branch, ukey, 2 * n) | _drift_by(per_branch, uctr, 2 * n)).view(n, 2).any(1)
    act_drift = _drift_by(per_branch, action, 2 * n).view(n, 2).any(1)
    exposed = obs_drift | key_drift | act_drift
    rounds = game.tree.round[info.node]
    return ObservationAudit(
        game=game.name, states=n, states_by_player=[int((info.player == p).sum()) for p in (0, 1)],
        states_by_round={int(r): int((rounds == r).sum()) for r in np.unique(rounds)},
        full_states=int(valid.sum()), projection_errors=int(proj.sum()), obs_drift_states=int(obs_drift.sum()),
        key_drift_states=int(key_drift.sum()), action_drift_states=int(act_drift.sum()),
        exposures=int(exposed.sum()))


def reachable_states(game="leduc", root: str = "") -> int:
    """Information states that can occur at or after `root` (with any cards)."""
    game = get_game(game)
    tree = game.tree
    start = tree.node_of_history(root)
    below = np.zeros(tree.num_nodes, dtype=bool)
    below[start] = True
    for n in range(tree.num_nodes):       # parents precede children
        if tree.parent[n] >= 0 and below[tree.parent[n]]:
            below[n] = True
    return int(below[game.infostates.node].sum())


# ----- 3. per-run trace audit ---------------------------------------------------
@dataclass
class RunAudit:
    """One collection replayed from its trace; every tensor is indexed by group."""

    collection: Collection
    violation: str
    codes: torch.Tensor                  # [G] one failure code per group (0 = valid)
    flags: dict                          # code name -> [G] bool (a group may raise several)
    sealed_digest: torch.Tensor          # [G] the digest sealed for each group's trace
    trace_digest: torch.Tensor           # [G] digest of the rollout events alone
    address_digest: torch.Tensor         # [G] digest of every stream address consumed
    counts: dict
    join_log: list

    @property
    def groups(self) -> int:
        return len(self.codes)

    @property
    def failures(self) -> dict:
        return failure_counts(self.codes)

    @property
    def valid(self) -> int:
        return int((self.codes == OK).sum())


def _fold(h: torch.Tensor, lanes: torch.Tensor, value: torch.Tensor) -> None:
    h[lanes] = rng.mix64(h[lanes] ^ value)


def _fold_groups(lane_hash: torch.Tensor, g: int) -> torch.Tensor:
    cols = lane_hash.view(g, -1)
    h = torch.zeros(g, dtype=torch.int64)
    for j in range(cols.shape[1]):        # branches x rollouts of one group (a handful)
        h = rng.mix64(h ^ cols[:, j]) + j
    return h


def _audit_chunk(game, rec: dict, run: int, split: int, arm, event: int, violation, returns) -> dict:
    rec = {k: (v.cpu() if isinstance(v, torch.Tensor) else v) for k, v in rec.items()}
    groups, (g, b, k), p = rec["groups"], rec["shape"], rec["player"]
    L = g * b * k
    lane = torch.arange(L)
    lane_group = lane // (b * k)
    lane_branch = rec["branch"][(lane // k) % b]
    cards = rec["cards"]
    info = game.infostates
    flags = {name: torch.zeros(g, dtype=torch.bool) for name in CODE_NAMES}

    # root: one information state per group, one logical key per group
    own = cards[:, p].view(g, -1)
    start_pub = rec["public"].view(g, -1)
    flags["ROOT_DRIFT"] |= ~((own == own[:, :1]).all(1) & (start_pub == start_pub[:, :1]).all(1))

    # declared addresses
    streams = Streams(run, split, groups, arm, b, k, rec["branch"])
    declared_policy = streams.policy()
    declared_chance = streams.chance(event)
    pkeys = rec["policy_keys"]
    flags["STREAM_GAP"] |= _any_by(lane_group, pkeys != declared_policy, g)
    kv = pkeys.view(g, b, k).sort(dim=1).values
    flags["STREAM_GAP"] |= (kv[:, 1:] == kv[:, :-1]).flatten(1).any(1) if b > 1 else torch.zeros(g, dtype=torch.bool)

    lane_hash = torch.zeros(L, dtype=torch.int64)
    addr_hash = torch.zeros(L, dtype=torch.int64)
    rank = torch.zeros(L, dtype=torch.int64)
    node = rec["node"].clone()
    public = rec["public"].clone()
    t = game.tables("cpu")
    transitions = obs_drift_tr = gaps = chance_events = policy_events = 0
    visited = torch.zeros(len(info), dtype=torch.bool)
    for ev in rec["events"]:
        lanes = ev.lanes.cpu()
        if isinstance(ev, ChanceEvent):
            card, key, ctr = ev.card.cpu(), ev.key.cpu(), ev.counter.cpu()
            chance_events += len(lanes)
            bad = (key != declared_chance[lanes]) | (ctr != 0)
            gaps += int(bad.sum())
            flags["STREAM_GAP"] |= _any_by(lane_group[lanes], bad, g)
            public[lanes] = card
            node[lanes] = t["chance_child"][node[lanes]]
            _fold(lane_hash, lanes, rng.mix64(card + _CHANCE_TAG))
            _fold(addr_hash, lanes, rng.mix64(key ^ _ADDRESS_TAG) + ctr)
            continue
        ids, action, uctr, ukey = (x.cpu() for x in (ev.infostate, ev.action, ev.counter, ev.key))
        n_t = len(lanes)
        visited[ids] = True
        transitions += n_t
        policy_events += n_t
        pl = torch.as_tensor(info.player)[ids]
        own_c = cards[lanes, pl]
        other = cards[lanes, 1 - pl]
        inode = torch.as_tensor(info.node)[ids]
        ipub = torch.as_tensor(info.public_card)[ids]
        br = lane_branch[lanes]
        # the engine's information state is the projection of the lane's full state
        proj_bad = (torch.as_tensor(info.card)[ids] != own_c) | (inode != node[lanes]) | (ipub != public[lanes])
        recorded = _observe(game, ids, br, other, violation)
        # every other opponent card, and the other branch label
        alt = torch.arange(game.num_cards).view(1, -1).expand(n_t, -1)
        ok_alt = (alt != own_c[:, None]) & (alt != ipub[:, None])
        rows = torch.arange(n_t).view(-1, 1).expand_as(alt)[ok_alt]
        alt_other = alt[ok_alt]
        c0 = torch.where(pl[rows] == 0, own_c[rows], alt_other)
        c1 = torch.where(pl[rows] == 0, alt_other, own_c[rows])
        seen, _, (akey, actr) = engine_step(game, inode[rows], c0, c1, ipub[rows], pkeys[lanes][rows],
                                            rank[lanes][rows], violation)
        drift = _any_by(rows, _observe(game, seen, br[rows], alt_other, violation) != recorded[rows], n_t)
        other_label = rec["branch"][((lanes // k) % b + 1) % b]      # the next branch's label
        drift |= _observe(game, ids, other_label, other, violation) != recorded
        drift |= proj_bad
        obs_drift_tr += int(drift.sum())
        flags["OBS_DRIFT"] |= _any_by(lane_group[lanes], drift, g)
        leak = _any_by(rows, (akey != ukey[rows]) | (actr != uctr[rows]), n_t)
        flags["HIDDEN_LEAK"] |= _any_by(lane_group[lanes], leak, g)
        gap = uctr != rank[lanes]
        gaps += int(gap.sum())
        flags["STREAM_GAP"] |= _any_by(lane_group[lanes], gap, g)
        rank[lanes] += 1
        legal = t["legal"][node[lanes], action]
        node[lanes] = torch.where(legal, t["child"][node[lanes], action.clamp(min=0)], node[lanes])
        _fold(lane_hash, lanes, rng.mix64((uctr * 4 + action) ^ _ACTION_TAG) + recorded)
        _fold(addr_hash, lanes, rng.mix64(ukey ^ _ADDRESS_TAG) + uctr)

    trace_digest = _fold_groups(lane_hash, g)
    join_value = rng.mix64(returns.view(g, b, 1).expand(g, b, k).reshape(-1) ^ _JOIN_TAG)
    if violation is not None and violation.joins_before_freeze:
        joined = lane_hash.clone()
        _fold(joined, lane, join_value)
        sealed = _fold_groups(joined, g)
        log = ["rollout", "join:terminal_return", "seal"]
    else:
        sealed = trace_digest.clone()
        log = ["rollout", "seal", "join:terminal_return"]
    # C5: the seal must precede every join, and the sealed digest must be the rollout's alone
    flags["JOIN_ORDER"] |= sealed != trace_digest
    if log.index("seal") > min(i for i, e in enumerate(log) if e.startswith("join")):
        flags["JOIN_ORDER"] |= True

    terminal = t["player"][node] == TERMINAL
    return {"flags": flags, "sealed": sealed, "trace": trace_digest, "address": _fold_groups(addr_hash, g),
            "log": log, "visited": visited, "node": node, "public": public, "cards": cards, "shape": (g, b, k), "player": p,
            "terminal": terminal,
            "counts": {"transitions": transitions, "obs_drift_transitions": obs_drift_tr,
                       "events": policy_events + chance_events, "policy_events": policy_events,
                       "chance_events": chance_events, "gap_events": gaps}}


def audit_run(game, root: str, arm: str, n_groups: int, seed: int, violation: Violation | None = None,
              continuation="uniform", device: str = "cpu", split: str = "audit",
              branch_order=None) -> RunAudit:
    """Collect `n_groups` groups with their trace and audit every group (see the module docstring)."""
    game = get_game(game)
    trace: list = []
    col = collect(game, root, arm, n_groups, seed, continuation, device, split=split, trace=trace,
                  violation=violation, branch_order=branch_order)
    arm_obj = get_arm(arm)
    event = next(iter(chance_event_of_nodes(game).values()), 0)
    parts, offset = [], 0
    for rec in trace:
        g = len(rec["groups"])
        parts.append(_audit_chunk(game, rec, int(seed), rng.SPLITS[split], arm_obj, event, violation,
                                  col.returns[offset:offset + g].to(torch.int64)))
        offset += g
    flags = {name: torch.cat([pt["flags"][name] for pt in parts]) for name in CODE_NAMES}
    # one logical group key per group (unique within the run)
    keys = rng.derive_key("root", run=int(seed), split=rng.SPLITS[split], group=torch.arange(n_groups))
    _, inverse, counts = torch.unique(keys, return_inverse=True, return_counts=True)
    unique = counts[inverse] == 1
    flags["ROOT_DRIFT"] |= ~unique
    flags["EARLY_END"] |= col.codes == CODE_OF["EARLY_END"]
    flags["ILLEGAL"] |= col.codes == CODE_OF["ILLEGAL"]
    matrix = torch.stack([flags[name] for name in CODE_NAMES], dim=1)
    codes = torch.where(matrix.any(1), matrix.to(torch.int8).argmax(1).to(torch.int8) + 1,
                        torch.zeros(n_groups, dtype=torch.int8))
    counts_total = {key: sum(pt["counts"][key] for pt in parts) for key in parts[0]["counts"]}
    counts_total["unique_group_keys"] = int((unique & ~torch.cat([pt["flags"]["ROOT_DRIFT"] for pt in parts])).sum())
    counts_total["terminal_lanes"] = int(sum(int(pt["terminal"].sum()) for pt in parts))
    counts_total["states_visited"] = int(torch.stack([pt["visited"] for pt in parts]).any(0).sum())
    audit = RunAudit(collection=col, violation="none" if violation is None else violation.name, codes=codes,
                     flags=flags, sealed_digest=torch.cat([pt["sealed"] for pt in parts]),
                     trace_digest=torch.cat([pt["trace"] for pt in parts]),
                     address_digest=torch.cat([pt["address"] for pt in parts]), counts=counts_total,
                     join_log=parts[0]["log"])
    audit._parts = parts
    return audit


def join_solver_values(audit: RunAudit, iterations: int, tolerance: float) -> dict:
    """Post-hoc join of an equilibrium value, computed by CFR+ within an iteration budget.

    The join runs after the trace is sealed.  When CFR+ has not brought the
    exploitability below `tolerance` within `iterations`, the solver timed
    out: every group waiting for the value is coded SOLVER_TIMEOUT (unless it
    already carries an earlier code), and nothing is joined.
    """
    solver = CFRPlus(audit.collection.game)
    for _ in range(iterations):
        solver.iterate()
    gap = solver.exploitability()
    timed_out = gap > tolerance
    if timed_out:
        audit.flags["SOLVER_TIMEOUT"] |= True
        audit.codes = torch.where(audit.codes == OK, torch.full_like(audit.codes, CODE_OF["SOLVER_TIMEOUT"]),
                                  audit.codes)
    audit.join_log = audit.join_log + ["join:solver_value" if not timed_out else "timeout:solver_value"]
    return {"iterations": iterations, "tolerance": tolerance, "exploitability": gap, "timed_out": timed_out}


# ----- 4. certificate -----------------------------------------------------------
def marginal_check(col: Collection, continuation="uniform") -> dict:
    """C1: every branch mean against its exact value, in standard errors."""
    exact = arm_moments(col.game, col.root, continuation)["independent"]   # marginals are the same in every arm
    s = col.summary()
    n = s["valid_groups"]
    names = col.actions
    exact_names = exact.actions
    z, shift = {}, {}
    for a in names:
        j = exact_names.index(a)
        mean, var = s["branch_means"][a], s["branch_vars"][a]
        shift[a] = mean - float(exact.mean[j])
        z[a] = shift[a] / (var / n) ** 0.5 if var > 0 else 0.0
    return {"shift": shift, "z": z, "passed": all(abs(v) <= Z_MARGINAL for v in z.values())}


def certificate(audit: RunAudit, state_audit: ObservationAudit, continuation="uniform") -> dict:
    """The safety gate: accept only when C1-C5 hold on the run and on the state space."""
    c1 = marginal_check(audit.collection, continuation)
    f = audit.flags
    preds = {
        "C1 marginal preservation": c1["passed"] and not bool(f["ROOT_DRIFT"].any() | f["ILLEGAL"].any()),
        "C2 information-state safety": state_audit.obs_drift_states == 0 and not bool(f["OBS_DRIFT"].any()),
        "C3 policy-randomness separation": state_audit.key_drift_states == 0 and state_audit.action_drift_states == 0
        and not bool(f["HIDDEN_LEAK"].any()) and policy_key_takes_no_state(),
        "C4 semantic event alignment": not bool(f["STREAM_GAP"].any() | f["EARLY_END"].any()),
        "C5 trace order": not bool(f["JOIN_ORDER"].any() | f["SOLVER_TIMEOUT"].any()),
    }
    accept = all(preds.values())
    # a rejected coupling is quarantined as a whole: none of its groups reaches an estimate
    return {"predicates": preds, "decision": "accept" if accept else "reject",
            "groups": audit.groups, "rejected_groups": 0 if accept else audit.groups,
            "flagged_groups": audit.groups - audit.valid, "marginal": c1}


# ----- 5. controls, swaps, implementation checks ---------------------------------
def contrast_var(returns: torch.Tensor) -> float:
    d = (returns[:, 0] - returns[:, -1]).to(torch.int64)   # first minus last branch
    return contrast_moments([int((d ** p).sum()) for p in range(1, 5)], len(d))


def violation_control(game, root: str, arm: str, n_groups: int, seed: int, violation: Violation,
                      device: str = "cpu") -> dict:
    """One controlled violation beside the clean arm and the independent arm on the same groups."""
    bad = audit_run(game, root, arm, n_groups, seed, violation, device=device)
    clean = audit_run(game, root, arm, n_groups, seed, None, device=device)
    ind = collect(game, root, "independent", n_groups, seed, device=device)
    cert = certificate(bad, observation_audit(game, violation))
    rb, rc = bad.collection.returns.to(torch.float64), clean.collection.returns.to(torch.float64)
    diff = (rb - rc).mean(1)
    shift, shift_se = float(diff.mean()), float(diff.std() / len(diff) ** 0.5)
    vb, vi, vc = contrast_var(bad.collection.returns), contrast_var(ind.returns), contrast_var(clean.collection.returns)
    ratio = vb["contrast_var"] / vi["contrast_var"]
    ratio_se = ratio * ((vb["contrast_var_se"] / vb["contrast_var"]) ** 2
                        + (vi["contrast_var_se"] / vi["contrast_var"]) ** 2) ** 0.5
    replay_fail = bad.sealed_digest != clean.sealed_digest
    affected = replay_fail | (bad.address_digest != clean.address_digest)
    return {"name": violation.name, "condition": violation.condition, "expected_code": violation.expected_code,
            "groups": n_groups, "affected_groups": int(affected.sum()), "decision": cert["decision"],
            "rejected": cert["rejected_groups"], "flagged": cert["flagged_groups"], "predicates": cert["predicates"],
            "failures": bad.failures, "expected_code_groups": int(bad.flags[violation.expected_code].sum()),
            "marginal_shift": shift, "marginal_shift_se": shift_se,
            "replay_failure_rate": float(replay_fail.double().mean()),
            "contrast_var": vb["contrast_var"], "contrast_var_clean": vc["contrast_var"],
            "contrast_var_independent": vi["contrast_var"],
            "variance_change_pct": 100 * (ratio - 1), "variance_change_pct_se": 100 * ratio_se,
            "variance_change_vs_clean_pct": 100 * (vb["contrast_var"] / vc["contrast_var"] - 1)}


def admissible_check(game, root: str, arm: str, n_groups: int, seed: int, device: str = "cpu") -> dict:
    run = audit_run(game, root, arm, n_groups, seed, None, device=device)
    cert = certificate(run, observation_audit(game))
    replay = audit_run(game, root, arm, n_groups, seed, None, device=device)
    return {"arm": arm, "groups": n_groups, "decision": cert["decision"], "rejected": cert["rejected_groups"],
            "flagged": cert["flagged_groups"], "failures": run.failures,
            "replay_failure_rate": float((run.sealed_digest != replay.sealed_digest).double().mean()),
            "max_abs_z": max(abs(z) for z in cert["marginal"]["z"].values())}


def branch_swap(game, root: str, arm: str, n_groups: int, seed: int, device: str = "cpu") -> dict:
    """Reverse the branch order; every stream keeps its branch field, so D must become -D exactly."""
    a = collect(game, root, arm, n_groups, seed, device=device)
    nb = len(a.actions)
    b = collect(game, root, arm, n_groups, seed, device=device, branch_order=list(range(nb))[::-1])
    d, d_swapped = a.returns[:, 0] - a.returns[:, -1], b.returns[:, 0] - b.returns[:, -1]
    va, vb = contrast_var(a.returns), contrast_var(b.returns)     # first minus last branch
    return {"groups": n_groups, "valid": [a.stats["n"], b.stats["n"]],
            "reversed": int((d_swapped == -d).sum()), "columns_permuted": bool(torch.equal(b.returns, a.returns.flip(1))),
            "contrast_mean": [va["contrast_mean"], vb["contrast_mean"]],
            "variance_residual": abs(va["contrast_var"] - vb["contrast_var"]), "contrast_var": va["contrast_var"]}


def _seat_utilities(game, node, cards, public) -> torch.Tensor:
    """Both seats' utilities [L, 2] by chip accounting: payout - contribution, independently of utility_p0."""
    t = game.tables("cpu")
    contrib = t["contributions"][node]
    pot = contrib.sum(1)
    folder = t["folder"][node]
    s0 = game.hand_strength(cards[:, 0], public)
    s1 = game.hand_strength(cards[:, 1], public)
    win0 = torch.where(folder >= 0, folder == 1, s0 > s1)
    win1 = torch.where(folder >= 0, folder == 0, s1 > s0)
    tie = (folder < 0) & (s0 == s1)
    payout = torch.stack([pot * win0 + pot // 2 * tie, pot * win1 + pot // 2 * tie], 1)
    return payout - contrib


def seat_swap(game, root: str, arm: str, n_groups: int, seed: int, device: str = "cpu") -> dict:
    """The seat-swapped duplicate of every group and its sign property.

    Definition: the duplicate of group g is the same root state (same deal,
    same streams, same trajectories) recorded from the other seat, under the
    declared convention that a group's returns are the utility of the seat
    it is recorded for.  Each trajectory's terminal state is rebuilt from the
    trace and both seats' utilities come from chip accounting (payout minus
    contribution), not from the engine's utility.  Zero-sum conservation
    (u0 + u1 = 0 on every lane) then implies R_dup = -R and D_dup = -D for
    every group; the checks count where that holds.
    """
    game = get_game(game)
    run = audit_run(game, root, arm, n_groups, seed, device=device)
    recorded, dup, conserved, terminal = [], [], 0, 0
    for pt in run._parts:
        g, b, k = pt["shape"]
        u = _seat_utilities(game, pt["node"], pt["cards"], pt["public"])
        conserved += int((u.sum(1) == 0).sum())
        terminal += int(pt["terminal"].sum())
        p = pt["player"]
        recorded.append(u[:, p].view(g, b, k).sum(2))
        dup.append(u[:, 1 - p].view(g, b, k).sum(2))
    own, other = torch.cat(recorded), torch.cat(dup)
    r = run.collection.returns.to(torch.int64)
    d, d_dup = r[:, 0] - r[:, -1], other[:, 0] - other[:, -1]
    v, v_dup = contrast_var(r), contrast_var(other)
    return {"groups": n_groups, "lanes": int(own.numel() * run.collection.parameters["budget"]),
            "terminal_lanes": terminal, "conserved_lanes": conserved,
            "replay_matches_engine": int((own == r).all(1).sum()), "reversed": int((d_dup == -d).sum()),
            "valid": [run.valid, run.valid], "contrast_mean": [v["contrast_mean"], v_dup["contrast_mean"]],
            "variance_rel_drift": abs(v_dup["contrast_var"] - v["contrast_var"]) / v["contrast_var"]}


def implementation_checks(game, root: str, arm: str, seeds, n_groups: int, device: str = "cpu") -> dict:
    """The rows of tab:app-implementation-checks for one arm, per seed and pooled."""
    per_seed, pooled = [], {"groups": 0, "unique": 0, "transitions": 0, "obs_drift": 0, "events": 0, "gaps": 0,
                            "swap_reversed": 0}
    sums = None
    for seed in seeds:
        run = audit_run(game, root, arm, n_groups, seed, device=device)
        sw = branch_swap(game, root, arm, n_groups, seed, device=device)
        r = run.collection.returns.to(torch.float64)
        row = {"seed": seed, "groups": n_groups, "valid": run.valid, "unique_group_key": run.counts["unique_group_keys"],
               "transitions": run.counts["transitions"], "obs_drift": run.counts["obs_drift_transitions"],
               "events": run.counts["events"], "gaps": run.counts["gap_events"], "swap_reversed": sw["reversed"],
               "failures": run.failures}
        per_seed.append(row)
        for key, src in (("groups", "groups"), ("unique", "unique_group_key"), ("transitions", "transitions"),
                         ("obs_drift", "obs_drift"), ("events", "events"), ("gaps", "gaps"),
                         ("swap_reversed", "swap_reversed")):
            pooled[key] += row[src]
        sums = r if sums is None else torch.cat([sums, r])
    exact = arm_moments(game, root)["independent"]
    branch_avg = sums.mean(1)
    shift = float(branch_avg.mean() - exact.mean.mean())
    se = float(branch_avg.std() / len(branch_avg) ** 0.5)
    per_branch = (sums.mean(0).numpy() - exact.mean)
    pooled.update({"marginal_shift": shift, "marginal_shift_se": se,
                   "marginal_shift_by_branch": dict(zip(exact.actions, per_branch.tolist()))})
    return {"arm": arm, "per_seed": per_seed, "pooled": pooled}


def failure_ledger(game, root: str, arm: str, n_groups: int, seed: int, examples: dict, solver_iterations: int,
                   solver_tolerance: float, device: str = "cpu") -> list[dict]:
    """One injected fault per failure code: which code each group ends with, and the denominator."""
    rows = []
    for code in CODE_NAMES:
        if code == "SOLVER_TIMEOUT":
            run = audit_run(game, root, arm, n_groups, seed, None, device=device)
            info = join_solver_values(run, solver_iterations, solver_tolerance)
            what = f"CFR+ value joined with a budget of {solver_iterations} iteration(s), tolerance {solver_tolerance}"
            name = "solver_timeout"
        else:
            v = examples[code]
            run = audit_run(game, root, arm, n_groups, seed, v, device=device)
            what, name = v.description, v.name
        fails = run.failures
        rows.append({"code": code, "example": name, "injected fault": what, "groups": run.groups,
                     "valid": run.valid, "caught with its code": fails[code],
                     "other codes": sum(fails.values()) - fails[code],
                     "accounted": run.valid + sum(fails.values()) == run.groups, "failures": fails})
    return rows


# ----- 6. paper rows for fraction-valued claims -----------------------------------
# ----- 7. the chapter's comparison rows ------------------------------------------
def _ci(x: float, se: float) -> tuple[float, float]:
    return (x - 1.96 * se, x + 1.96 * se)


def observation_rows(oa: ObservationAudit) -> list[dict]:
    return [
        Row.compare("observation audit: states audited", "method_obs.observation_audit.states", oa.states),
        Row.compare("observation audit: opponent-card exposures", "method_obs.observation_audit.opponent_card_exposures",
                oa.exposures),
        Row.fraction("observation boundary: states verified", "release.observation_boundary.states_verified",
                     oa.verified, oa.states),
    ]


def implementation_rows(paired: dict, independent: dict) -> list[dict]:
    """tab:app-implementation-checks, pooled over seeds (the paper's column is one 5,120-group run)."""
    rows = []
    for col, res in (("paired", paired), ("independent", independent)):
        p = res["pooled"]
        lo, hi = _ci(p["marginal_shift"], p["marginal_shift_se"])
        rows += [
            Row.fraction(f"unique group key ({col})", f"impl_checks.unique_group_key.{col}", p["unique"], p["groups"]),
            Row.fraction(f"observation hash drift ({col})", f"impl_checks.observation_hash_drift.{col}",
                         p["obs_drift"], p["transitions"]),
            Row.fraction(f"stream counter gap ({col})", f"impl_checks.stream_counter_gap.{col}", p["gaps"], p["events"]),
            Row.fraction(f"branch-swap sign ({col})", f"impl_checks.branch_swap_sign.{col}", p["swap_reversed"],
                         p["groups"]),
            Row.compare(f"marginal return shift ({col})", f"impl_checks.marginal_return_shift.{col}",
                    p["marginal_shift"], lo, hi),
        ]
    return rows


def swap_rows(bs: dict, ss: dict) -> list[dict]:
    return [
        Row.below("branch swap: variance residual", "seat_swap.branch_swap.variance_residual", bs["variance_residual"]),
        Row.fraction("branch swap: group count", "seat_swap.branch_swap.group_count", min(bs["valid"]), bs["groups"]),
        Row.compare("seat swap: variance relative drift", "seat_swap.seat_swap.variance_rel_drift",
                ss["variance_rel_drift"], direction_agrees=ss["variance_rel_drift"] <= claims.claim(
                    "seat_swap.seat_swap.variance_rel_drift")),
        Row.fraction("seat swap: group count", "seat_swap.seat_swap.group_count", min(ss["valid"]), ss["groups"]),
    ]


def violation_rows(controls: dict) -> list[dict]:
    """tab:safety-violations: affected groups, marginal shift, replay failure rate, apparent variance change."""
    rows = [Row.compare("controlled violations", "text_safety.violation_conditions", len(controls))]
    worst = min(controls.values(), key=lambda c: Fraction(c["rejected"], c["groups"]))
    rejected, groups = worst["rejected"], worst["groups"]
    rows.append(Row.fraction("rejected injected groups (worst condition)",
                             "text_rootbudget.safety.rejected_groups_per_condition", rejected, groups))
    for name, c in controls.items():
        lo, hi = _ci(c["marginal_shift"], c["marginal_shift_se"])
        p = c["replay_failure_rate"]
        rse = (p * (1 - p) / c["groups"]) ** 0.5
        vlo, vhi = _ci(c["variance_change_pct"], c["variance_change_pct_se"])
        paper_v = claims.claim(f"safety.{name}.apparent_variance_change")
        rows += [
            Row.fraction(f"{name}: affected groups", f"safety.{name}.affected_groups", c["affected_groups"], c["groups"]),
            Row.compare(f"{name}: marginal shift", f"safety.{name}.marginal_shift", c["marginal_shift"], lo, hi),
            Row.compare(f"{name}: replay failure rate", f"safety.{name}.replay_failure_rate", p,
                    max(0.0, p - 1.96 * rse), min(1.0, p + 1.96 * rse)),
            Row.compare(f"{name}: apparent variance change (%)", f"safety.{name}.apparent_variance_change",
                    c["variance_change_pct"], vlo, vhi,
                    direction_agrees=(c["variance_change_pct"] < 0) == (paper_v < 0)),
        ]
    return rows
