"""The run audit: one collection replayed from its trace, one failure code per group.

Per group it checks the root hash (ROOT_DRIFT), the observation hash of every
transition under hidden-field and branch perturbation (OBS_DRIFT), the policy
address under hidden-field perturbation (HIDDEN_LEAK), counters and addresses
against their declared derivation (STREAM_GAP), the collector's EARLY_END and
ILLEGAL codes, the join order of post-hoc fields (JOIN_ORDER) and, when a
solver value is joined, its budget (SOLVER_TIMEOUT).  Every group ends with
exactly one code (0 = valid); counts are of groups, transitions (policy
decisions) and stream events.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from oscc_core.device import HOST
from oscc_core.engine import rng
from oscc_core.engine.arms import get_arm
from oscc_core.engine.collector import Collection, Streams, collect, contrast_moments
from oscc_core.engine.failures import CODE_OF, FAILURE_CODES, OK, failure_counts
from oscc_core.engine.probe import any_by, engine_step, observe
from oscc_core.engine.rollout import ChanceEvent, chance_event_of_nodes
from oscc_core.engine.violations import Violation
from oscc_core.exact.cfr import CFRPlus
from oscc_core.games import TERMINAL, get_game

_ACTION_TAG = rng.signed(rng.tag("oscc/trace/action"))
_CHANCE_TAG = rng.signed(rng.tag("oscc/trace/chance"))
_JOIN_TAG = rng.signed(rng.tag("oscc/trace/join"))
_ADDRESS_TAG = rng.signed(rng.tag("oscc/trace/address"))
CODE_NAMES = [FAILURE_CODES[c][0] for c in sorted(FAILURE_CODES)]


@dataclass
class ChunkAudit:
    """The audit of one traced chunk of groups: flags and digests per group, final lane states."""

    flags: dict                  # code name -> [g] bool
    sealed: torch.Tensor         # [g] the digest sealed for each group's trace
    trace: torch.Tensor          # [g] digest of the rollout events alone
    address: torch.Tensor        # [g] digest of every stream address consumed
    log: list                    # the order of rollout, seal and joins
    visited: torch.Tensor        # [information states] bool: reached by a decision
    node: torch.Tensor           # [L] final node of each lane
    public: torch.Tensor         # [L] public card of each lane (-1 when not dealt)
    cards: torch.Tensor          # [L, 2] private cards of each lane
    shape: tuple                 # (groups, branches, rollouts)
    player: int                  # the seat the returns are recorded for
    terminal: torch.Tensor       # [L] bool: the lane ended at a terminal node
    counts: dict                 # transitions, drifting transitions, events, gaps


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
    parts: list = field(default_factory=list, repr=False)   # the ChunkAudit of every traced chunk

    @property
    def groups(self) -> int:
        return len(self.codes)

    @property
    def failures(self) -> dict:
        return failure_counts(self.codes)

    @property
    def valid(self) -> int:
        return int((self.codes == OK).sum())


def contrast_var(returns: torch.Tensor) -> dict:
    """Moments of the contrast first branch minus last branch (exact integer sums), in chips squared."""
    d = (returns[:, 0] - returns[:, -1]).to(torch.int64)
    return contrast_moments([int((d ** p).sum()) for p in range(1, 5)], len(d))


# ----- replaying one traced chunk ------------------------------------------------------------
def _fold(h: torch.Tensor, lanes: torch.Tensor, value: torch.Tensor) -> None:
    h[lanes] = rng.mix64(h[lanes] ^ value)


def _fold_groups(lane_hash: torch.Tensor, g: int) -> torch.Tensor:
    cols = lane_hash.view(g, -1)
    h = torch.zeros(g, dtype=torch.int64, device=lane_hash.device)
    for j in range(cols.shape[1]):        # branches x rollouts of one group (a handful)
        h = rng.mix64(h ^ cols[:, j]) + j
    return h


@dataclass
class _Replay:
    """The state of one chunk's replay: per-lane position and digests, per-group flags, counts."""

    game: object
    rec: dict
    violation: Violation | None
    declared_chance: torch.Tensor
    flags: dict
    lane_group: torch.Tensor
    lane_branch: torch.Tensor
    node: torch.Tensor
    public: torch.Tensor
    rank: torch.Tensor
    lane_hash: torch.Tensor
    addr_hash: torch.Tensor
    visited: torch.Tensor
    counts: dict

    @property
    def shape(self) -> tuple:
        return self.rec["shape"]

    def flag(self, code: str, lanes: torch.Tensor, bad: torch.Tensor) -> None:
        """Flag `code` on the group of every lane where `bad` holds."""
        self.flags[code] |= any_by(self.lane_group[lanes], bad, self.shape[0])


def _start_replay(game, rec: dict, streams: Streams, event: int, violation) -> _Replay:
    g, b, k = rec["shape"]
    dev = rec["node"].device          # the host: `audit_chunk` replays on the CPU
    lanes = torch.arange(g * b * k, device=dev)
    zeros = torch.zeros(g * b * k, dtype=torch.int64, device=dev)
    return _Replay(game=game, rec=rec, violation=violation, declared_chance=streams.chance(event),
                   flags={name: torch.zeros(g, dtype=torch.bool, device=dev) for name in CODE_NAMES},
                   lane_group=lanes // (b * k), lane_branch=rec["branch"][(lanes // k) % b],
                   node=rec["node"].clone(), public=rec["public"].clone(), rank=zeros.clone(),
                   lane_hash=zeros.clone(), addr_hash=zeros.clone(),
                   visited=torch.zeros(len(game.infostates), dtype=torch.bool, device=dev),
                   counts={"transitions": 0, "obs_drift_transitions": 0, "gap_events": 0, "chance_events": 0,
                           "policy_events": 0})


def _root_drift(rec: dict) -> torch.Tensor:
    """[g] bool: the branches of a group do not start from one information state (own card, public card)."""
    g = rec["shape"][0]
    own = rec["cards"][:, rec["player"]].view(g, -1)
    start_pub = rec["public"].view(g, -1)
    return ~((own == own[:, :1]).all(1) & (start_pub == start_pub[:, :1]).all(1))


def _policy_key_gaps(s: _Replay, declared_policy: torch.Tensor) -> torch.Tensor:
    """[g] bool: a lane's policy key is not its declared key, or two branches share one key."""
    g, b, k = s.shape
    pkeys = s.rec["policy_keys"]
    gap = any_by(s.lane_group, pkeys != declared_policy, g)
    kv = pkeys.view(g, b, k).sort(dim=1).values
    if b == 1:
        return gap
    return gap | (kv[:, 1:] == kv[:, :-1]).flatten(1).any(1)


def _replay_chance(s: _Replay, ev: ChanceEvent, t: dict) -> None:
    """A dealt public card: its address must be the semantic event's declared key at counter 0."""
    lanes = ev.lanes.cpu()
    card, key, ctr = ev.card.cpu(), ev.key.cpu(), ev.counter.cpu()
    s.counts["chance_events"] += len(lanes)
    bad = (key != s.declared_chance[lanes]) | (ctr != 0)
    s.counts["gap_events"] += int(bad.sum())
    s.flag("STREAM_GAP", lanes, bad)
    s.public[lanes] = card
    s.node[lanes] = t["chance_child"][s.node[lanes]]
    _fold(s.lane_hash, lanes, rng.mix64(card + _CHANCE_TAG))
    _fold(s.addr_hash, lanes, rng.mix64(key ^ _ADDRESS_TAG) + ctr)


def _hidden_perturbation(s: _Replay, lanes, ids, own_c, br, recorded, ukey, uctr):
    """Every other opponent card at each transition: (observation drift, address leak), per transition."""
    info = s.game.infostates
    n_t = len(lanes)
    pl = torch.as_tensor(info.player, device=HOST)[ids]
    ipub = torch.as_tensor(info.public_card, device=HOST)[ids]
    alt = torch.arange(s.game.num_cards, device=HOST).view(1, -1).expand(n_t, -1)
    ok_alt = (alt != own_c[:, None]) & (alt != ipub[:, None])
    rows = torch.arange(n_t, device=HOST).view(-1, 1).expand_as(alt)[ok_alt]
    alt_other = alt[ok_alt]
    c0 = torch.where(pl[rows] == 0, own_c[rows], alt_other)
    c1 = torch.where(pl[rows] == 0, alt_other, own_c[rows])
    seen, _, (akey, actr) = engine_step(s.game, torch.as_tensor(info.node, device=HOST)[ids][rows], c0, c1, ipub[rows],
                                        s.rec["policy_keys"][lanes][rows], s.rank[lanes][rows], s.violation)
    drift = any_by(rows, observe(s.game, seen, br[rows], alt_other, s.violation) != recorded[rows], n_t)
    leak = any_by(rows, (akey != ukey[rows]) | (actr != uctr[rows]), n_t)
    return drift, leak


def _replay_decision(s: _Replay, ev, t: dict) -> None:
    """A policy decision: projection, observation drift, address leak and counter gap, then the move."""
    g, b, k = s.shape
    info = s.game.infostates
    lanes = ev.lanes.cpu()
    ids, action, uctr, ukey = (x.cpu() for x in (ev.infostate, ev.action, ev.counter, ev.key))
    s.visited[ids] = True
    s.counts["transitions"] += len(lanes)
    s.counts["policy_events"] += len(lanes)
    pl = torch.as_tensor(info.player, device=HOST)[ids]
    own_c, other = s.rec["cards"][lanes, pl], s.rec["cards"][lanes, 1 - pl]
    br = s.lane_branch[lanes]
    # the engine's information state is the projection of the lane's full state
    proj_bad = ((torch.as_tensor(info.card, device=HOST)[ids] != own_c)
                | (torch.as_tensor(info.node, device=HOST)[ids] != s.node[lanes])
                | (torch.as_tensor(info.public_card, device=HOST)[ids] != s.public[lanes]))
    recorded = observe(s.game, ids, br, other, s.violation)
    drift, leak = _hidden_perturbation(s, lanes, ids, own_c, br, recorded, ukey, uctr)
    other_label = s.rec["branch"][((lanes // k) % b + 1) % b]      # the next branch's label
    drift |= observe(s.game, ids, other_label, other, s.violation) != recorded
    drift |= proj_bad
    s.counts["obs_drift_transitions"] += int(drift.sum())
    s.flag("OBS_DRIFT", lanes, drift)
    s.flag("HIDDEN_LEAK", lanes, leak)
    gap = uctr != s.rank[lanes]
    s.counts["gap_events"] += int(gap.sum())
    s.flag("STREAM_GAP", lanes, gap)
    s.rank[lanes] += 1
    legal = t["legal"][s.node[lanes], action]
    s.node[lanes] = torch.where(legal, t["child"][s.node[lanes], action.clamp(min=0)], s.node[lanes])
    _fold(s.lane_hash, lanes, rng.mix64((uctr * 4 + action) ^ _ACTION_TAG) + recorded)
    _fold(s.addr_hash, lanes, rng.mix64(ukey ^ _ADDRESS_TAG) + uctr)


def _seal(s: _Replay, returns: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, list]:
    """C5: seal the rollout's digest, then join the terminal return; flags JOIN_ORDER when out of order."""
    g, b, k = s.shape
    trace_digest = _fold_groups(s.lane_hash, g)
    join_value = rng.mix64(returns.view(g, b, 1).expand(g, b, k).reshape(-1) ^ _JOIN_TAG)
    if s.violation is not None and s.violation.joins_before_freeze:
        joined = s.lane_hash.clone()
        _fold(joined, torch.arange(g * b * k, device=joined.device), join_value)
        sealed = _fold_groups(joined, g)
        log = ["rollout", "join:terminal_return", "seal"]
    else:
        sealed = trace_digest.clone()
        log = ["rollout", "seal", "join:terminal_return"]
    # the seal must precede every join, and the sealed digest must be the rollout's alone
    s.flags["JOIN_ORDER"] |= sealed != trace_digest
    if log.index("seal") > min(i for i, e in enumerate(log) if e.startswith("join")):
        s.flags["JOIN_ORDER"] |= True
    return sealed, trace_digest, log


def audit_chunk(game, rec: dict, run: int, split: int, arm, event: int, violation, returns) -> ChunkAudit:
    """Replay one traced chunk: root, declared addresses, every event in order, then the seal."""
    rec = {k: (v.cpu() if isinstance(v, torch.Tensor) else v) for k, v in rec.items()}
    g, b, k = rec["shape"]
    streams = Streams(run, split, rec["groups"], arm, b, k, rec["branch"])
    s = _start_replay(game, rec, streams, event, violation)
    s.flags["ROOT_DRIFT"] |= _root_drift(rec)
    s.flags["STREAM_GAP"] |= _policy_key_gaps(s, streams.policy())
    t = game.tables("cpu")
    for ev in rec["events"]:
        if isinstance(ev, ChanceEvent):
            _replay_chance(s, ev, t)
        else:
            _replay_decision(s, ev, t)
    sealed, trace_digest, log = _seal(s, returns)
    c = s.counts
    counts = {"transitions": c["transitions"], "obs_drift_transitions": c["obs_drift_transitions"],
              "events": c["policy_events"] + c["chance_events"], "policy_events": c["policy_events"],
              "chance_events": c["chance_events"], "gap_events": c["gap_events"]}
    return ChunkAudit(flags=s.flags, sealed=sealed, trace=trace_digest, address=_fold_groups(s.addr_hash, g),
                      log=log, visited=s.visited, node=s.node, public=s.public, cards=rec["cards"], shape=(g, b, k),
                      player=rec["player"], terminal=t["player"][s.node] == TERMINAL, counts=counts)


# ----- the run ----------------------------------------------------------------------------------
def group_codes(flags: dict, n_groups: int) -> torch.Tensor:
    """One code per group: the first raised flag in code order (0 = valid)."""
    matrix = torch.stack([flags[name] for name in CODE_NAMES], dim=1)
    return torch.where(matrix.any(1), matrix.to(torch.int8).argmax(1).to(torch.int8) + 1,
                       torch.zeros(n_groups, dtype=torch.int8, device=matrix.device))


def audit_run(game, root: str, arm: str, n_groups: int, seed: int, violation: Violation | None = None,
              continuation="uniform", device: str = "cpu", split: str = "audit",
              branch_order=None) -> RunAudit:
    """Collect `n_groups` groups with their trace and audit every group (see the module docstring)."""
    game = get_game(game)
    trace: list = []
    col = collect(game, root, arm, n_groups, seed, continuation=continuation, device=device, split=split,
                  trace=trace, violation=violation, branch_order=branch_order)
    arm_obj = get_arm(arm)
    event = next(iter(chance_event_of_nodes(game).values()), 0)
    parts, offset = [], 0
    for rec in trace:
        g = len(rec["groups"])
        parts.append(audit_chunk(game, rec, int(seed), rng.SPLITS[split], arm_obj, event, violation,
                                 col.returns[offset:offset + g].to(torch.int64)))
        offset += g
    flags = {name: torch.cat([pt.flags[name] for pt in parts]) for name in CODE_NAMES}
    # one logical group key per group (unique within the run)
    keys = rng.derive_key("root", run=int(seed), split=rng.SPLITS[split], group=torch.arange(n_groups, device=HOST))
    _, inverse, counts = torch.unique(keys, return_inverse=True, return_counts=True)
    unique = counts[inverse] == 1
    flags["ROOT_DRIFT"] |= ~unique
    flags["EARLY_END"] |= col.codes == CODE_OF["EARLY_END"]
    flags["ILLEGAL"] |= col.codes == CODE_OF["ILLEGAL"]
    counts_total = {key: sum(pt.counts[key] for pt in parts) for key in parts[0].counts}
    counts_total["unique_group_keys"] = int((unique & ~torch.cat([pt.flags["ROOT_DRIFT"] for pt in parts])).sum())
    counts_total["terminal_lanes"] = int(sum(int(pt.terminal.sum()) for pt in parts))
    counts_total["states_visited"] = int(torch.stack([pt.visited for pt in parts]).any(0).sum())
    return RunAudit(collection=col, violation="none" if violation is None else violation.name,
                    codes=group_codes(flags, n_groups), flags=flags,
                    sealed_digest=torch.cat([pt.sealed for pt in parts]),
                    trace_digest=torch.cat([pt.trace for pt in parts]),
                    address_digest=torch.cat([pt.address for pt in parts]), counts=counts_total,
                    join_log=parts[0].log, parts=parts)


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
