"""The coupled collector: comparison groups of every legal root action.

`collect` builds `n_groups` groups at a root.  In each group the root (the
acting player's information state) is drawn once; every legal root action is
one branch; after it both players follow the continuation policy to the end
of the hand, `budget` times from the same post-action state.  Which random
streams the branches share is the arm (coupling.py); every uniform comes
from a counter-based stream addressed by group, so results do not depend on
chunking, batch size or device.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np
import torch
from tqdm import tqdm

from oscc_core.device import resolve_device
from oscc_core.digest import digest
from oscc_core.engine import chance_maps, fused, rng
from oscc_core.engine.arms import Arm, get_arm
from oscc_core.engine.failures import CODE_OF
from oscc_core.engine.gather import Accumulator, KeptColumns, chunks_per_flush
from oscc_core.engine.rollout import chance_event_of_nodes, draw_index, play, policy_cdf
from oscc_core.engine.roots import Root, build_root
from oscc_core.games import Game, get_game
from oscc_core.memory import check_memory
from oscc_core.policy import resolve_policy

DEFAULT_CHUNK = 1 << 17           # groups per torch-path chunk; any value gives identical results
FUSED_CHUNK = 1 << 20             # groups per fused-kernel call (about 64 bytes each)
FUSED_CUDA_CHUNK = 1 << 22        # groups per GPU-kernel launch: fills a large GPU, amortises each chunk's
                                  # launch and copies, and bounds its device memory (about 1 GB)
ENGINES = ("auto", "torch", "fused")


@dataclass
class Streams:
    """The stream addresses of one chunk of groups under one arm."""

    run: int
    split: int
    groups: torch.Tensor            # [G] global group ids
    arm: Arm
    num_branches: int
    budget: int
    branch_ids: torch.Tensor | None = None   # [B] branch field of each column (default 0..B-1)

    def branches(self) -> torch.Tensor:
        if self.branch_ids is None:
            return torch.arange(self.num_branches, device=self.groups.device)
        return self.branch_ids.to(self.groups.device)

    def lane_shape(self) -> tuple[int, int, int]:
        return (len(self.groups), self.num_branches, self.budget)

    def _fields(self) -> dict:
        g = self.groups.view(-1, 1, 1)
        b = self.branches().view(1, -1, 1)
        k = torch.arange(self.budget, device=g.device).view(1, 1, -1)
        return {"run": self.run, "split": self.split, "group": g, "branch": b, "rollout": k}

    def root(self) -> torch.Tensor:
        return rng.derive_key("root", run=self.run, split=self.split, group=self.groups)

    def hidden(self) -> torch.Tensor:
        """[G] when the hidden deal is shared, else [G, B]."""
        if self.arm.share_hidden:
            return rng.derive_key("hidden", run=self.run, split=self.split, group=self.groups)
        b = self.branches()
        return rng.derive_key("hidden", run=self.run, split=self.split, group=self.groups[:, None], branch=b[None, :])

    def chance(self, event: int) -> torch.Tensor:
        f = self._fields()
        if self.arm.share_chance:
            del f["branch"]
        key = rng.derive_key("chance", event=event, **f)
        return key.expand(self.lane_shape()).reshape(-1)

    def policy(self) -> torch.Tensor:
        f = self._fields()
        key = rng.policy_key(f["run"], f["split"], f["group"], f["branch"], f["rollout"], self.arm.policy_stream)
        return key.expand(self.lane_shape()).reshape(-1)


@dataclass
class Collection:
    """Everything one `collect` call measured.

    returns      [G, B] int64 acting player's utility in chips (sum over budget)
    legal_mask   [B] bool over the game's action ids at the root (all groups share it)
    codes        [G] int8 failure code (0 = valid)
    own_card, public_card   [G] the root draw of each group
    stats        exact int64 sufficient statistics of valid groups (Python ints)
    logical_keys, physical_draws   by category: root, hidden, chance, policy
    group_draws  [G] int64 physical draws consumed by each group, all categories (only with keep_draws=True)
    """

    game: str
    root: str
    arm: str
    actions: list[str]
    parameters: dict
    returns: torch.Tensor
    legal_mask: torch.Tensor
    codes: torch.Tensor
    own_card: torch.Tensor
    public_card: torch.Tensor
    stats: dict
    logical_keys: dict
    physical_draws: dict
    failures: dict = field(default_factory=dict)
    group_draws: torch.Tensor | None = None   # [G] int64 physical draws of each group (keep_draws=True only)

    @property
    def digest(self) -> str:
        """SHA-256 of the parameters, sufficient statistics, counts and failures."""
        return digest({"parameters": self.parameters, "stats": self.stats, "logical_keys": self.logical_keys,
                       "physical_draws": self.physical_draws, "failures": self.failures})

    def summary(self) -> dict:
        """Plain dict of the reported statistics (floats computed from exact integer sums)."""
        n, s1, s2 = self.stats["n"], self.stats["sum"], self.stats["sum_products"]
        b = len(self.actions)
        out = {"actions": list(self.actions), "groups": self.stats["groups"], "valid_groups": n,
               "failures": dict(self.failures)}
        if n < 2:
            return out
        mean = [Fraction(s1[i], n) for i in range(b)]
        cov = [[float(Fraction(n * s2[i][j] - s1[i] * s1[j], n * (n - 1))) for j in range(b)] for i in range(b)]
        out["branch_means"] = {a: float(m) for a, m in zip(self.actions, mean)}
        out["branch_vars"] = {a: cov[i][i] for i, a in enumerate(self.actions)}
        out["cov"] = cov
        if b == 2:
            out.update(contrast_moments(self.stats["contrast"]["0-1"], n))
        out["pairwise_contrasts"] = {key: contrast_moments(p, n) for key, p in self.stats["contrast"].items()}
        return out


def contrast_moments(power_sums: list[int], n: int) -> dict:
    """Mean, unbiased variance and its standard error from sums of D, D^2, D^3, D^4."""
    s1, s2, s3, s4 = (Fraction(s) for s in power_sums)
    mean = s1 / n
    var = (s2 - n * mean * mean) / (n - 1)
    m4 = (s4 - 4 * mean * s3 + 6 * mean ** 2 * s2 - 3 * n * mean ** 4) / n   # central 4th moment
    var_of_var = (m4 - var ** 2 * Fraction(n - 3, n - 1)) / n
    return {"contrast_mean": float(mean), "contrast_var": float(var),
            "contrast_var_se": float(max(var_of_var, 0)) ** 0.5}


def _validate(game, root, arm, n_groups, seed, continuation, device, budget, chunk_size, split):
    game = get_game(game)
    if not isinstance(root, str):
        raise ValueError(f"root must be a public history string such as '' or '2', got {root!r}.")
    arm = get_arm(arm)
    for name, value, low in (("n_groups", n_groups, 1), ("budget", budget, 1), ("chunk_size", chunk_size, 1)):
        if name == "chunk_size" and value is None:     # the engine's default
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            allowed = "None or an integer >= 1" if name == "chunk_size" else f"an integer >= {low}"
            raise ValueError(f"{name} must be {allowed}, got {value!r}.")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2 ** 63:
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}.")
    if split not in rng.SPLITS:
        raise ValueError(f"split must be one of {list(rng.SPLITS)}, got {split!r}.")
    table = resolve_policy(game, continuation)
    root_obj = build_root(game, root, table)
    return game, arm, table, root_obj, resolve_device(device)


def _check_memory(n_groups: int, branches: int, keep_returns: bool, keep_draws: bool) -> None:
    """Refuse up front a collection whose kept columns would not fit in memory (the estimate and the limit)."""
    check_memory("n_groups", int(n_groups), kept_bytes_per_group(branches, keep_returns, keep_draws),
                 hint=" (or pass keep_returns=False, which keeps only the failure codes)" if keep_returns else "")


def collect(game, root: str, arm: str, n_groups: int, seed: int, *, continuation="uniform", device: str = "auto",
            budget: int = 1, chunk_size: int | None = None, split: str = "audit",
            keep_returns: bool = True, progress: bool = False, chance_map=None,
            branch_order=None, trace: list | None = None, violation=None,
            continuation_map: str = chance_maps.DEFAULT_MAP, keep_draws: bool = False,
            engine: str = "auto") -> Collection:
    """Collect `n_groups` comparison groups of every legal root action.

    game          "kuhn" or "leduc"
    root          public history of OpenSpiel action ids ("" , "2", "1", "11|", ...)
    arm           "independent", "root_only", "continuation_only", "full", "policy_namespace"
    seed          the run field of every stream key
    continuation  "uniform" or a policy dict (infostate string -> probabilities); it is
                  also the behaviour policy that defines the root law
    budget        continuation rollouts per branch, summed into the branch return
    chunk_size    groups per batch (memory only: results are identical for any value); None picks
                  the engine's default (DEFAULT_CHUNK on the torch path, FUSED_CHUNK fused)
    split         stream namespace of the run ("audit", "train", "validation", "test", "calibration")
    branch_order  optional permutation of the legal root actions (by position): column j of the
                  returns is then action root.actions[branch_order[j]], and every stream keeps the
                  branch field of its action, so reordering only permutes the columns (branch swap)
    trace         optional list: each chunk appends a dict with its lanes' deal, stream keys and the
                  ordered events of `rollout.play` (for the audit in `oscc_core.chapters.contract.run_audit`)
    violation     None, or a deliberate break of the contract from `oscc_core.violations` (the
                  audit's controls only; never used by an estimate)
    continuation_map  selector-stress map of the continuation chance uniform (`oscc_core.chance_maps`):
                  "semantic" (default, the identity: exactly the collection without a map),
                  "relabelled" (per-branch random relabelling of the card bins: independent cards
                  even under a shared uniform) or "antithetic" (odd branches use 1 - U); all keep
                  every branch's marginal law.  Cannot be combined with a custom `chance_map`.
    keep_draws    also keep each group's physical draw count (`Collection.group_draws`)
    engine        "torch" (batched tensor ops, any device), "fused" (one compiled loop per group:
                  `engine.fused` on the CPU, its GPU build `engine.fused_cuda` on CUDA, where numba's
                  CUDA target must be installed) or "auto" (fused whenever it applies: no trace,
                  violation or custom chance map, and on CUDA numba's CUDA target present and the
                  environment variable OSCC_NO_FUSED_CUDA unset).  All give identical results; the
                  engine is not part of the manifest.

    Returns are the acting player's utility in integer chips.  Every argument
    is checked before any compute; bad values raise ValueError.
    """
    game, arm_obj, table, root_obj, dev = _validate(game, root, arm, n_groups, seed, continuation,
                                                    device, budget, chunk_size, split)
    _check_memory(n_groups, len(root_obj.actions), keep_returns, keep_draws)
    chance_maps.check_map(continuation_map)
    if continuation_map != chance_maps.DEFAULT_MAP and chance_map is not None:
        raise ValueError("give either continuation_map or a custom chance_map, not both.")
    kernel = _choose_engine(engine, dev, trace, violation, chance_map)
    if chunk_size is None:
        chunk_size = {None: DEFAULT_CHUNK, "cpu": FUSED_CHUNK, "cuda": FUSED_CUDA_CHUNK}[kernel]
    cdf, last_action = policy_cdf(table, dev)
    events = chance_event_of_nodes(game)
    if len(set(events.values())) > 1:  # pragma: no cover - both games have at most one event type
        raise NotImplementedError("games with several continuation chance events")
    event = next(iter(events.values()), 0)
    params = {"game": game.name, "root": root, "arm": arm_obj.name, "n_groups": int(n_groups), "seed": int(seed),
              "continuation": continuation if isinstance(continuation, str) else "tabular:" + digest(continuation),
              "budget": int(budget), "split": split}
    order = None
    if branch_order is not None:
        order = _branch_order(branch_order, len(root_obj.actions))
        if sorted(order) != list(range(len(root_obj.actions))):
            raise ValueError(f"branch_order must be a permutation of 0..{len(root_obj.actions) - 1}, "
                             f"got {branch_order!r}.")
        root_obj = replace(root_obj, actions=tuple(root_obj.actions[i] for i in order))
        params["branch_order"] = order
    if violation is not None:
        params["violation"] = violation.name
    if continuation_map != chance_maps.DEFAULT_MAP:      # the default keeps the manifest (and digest) unchanged
        params["continuation_map"] = continuation_map
    branch_ids = None if order is None else torch.tensor(order, dtype=torch.int64, device=dev)

    def streams_at(start: int) -> Streams:
        groups = torch.arange(start, min(start + chunk_size, n_groups), dtype=torch.int64, device=dev)
        return Streams(int(seed), rng.SPLITS[split], groups, arm_obj, len(root_obj.actions), budget, branch_ids)

    run_chunk = _chunk_function(kernel, game, root_obj, streams_at, event, cdf, last_action, chance_map, trace,
                                violation, continuation_map)
    acc = Accumulator(len(root_obj.actions), chunks_per_flush(game, len(root_obj.actions), budget, chunk_size))
    names = ("returns", "codes", "own_card", "public_card") if keep_returns else ("codes",)
    kept = KeptColumns(names + (("group_draws",) if keep_draws else ()), n_groups, dev)
    for start in tqdm(range(0, n_groups, chunk_size), disable=not progress, desc=f"{arm_obj.name}", unit="chunk"):
        chunk = run_chunk(streams_at(start))
        kept.add(start, chunk)      # first: the copies to the host start while the sums below run
        acc.add(chunk)
    cat, stats = kept.columns(), acc.stats()
    legal_mask = torch.zeros(game.num_actions, dtype=torch.bool, device="cpu")   # beside the returns, on the host
    legal_mask[list(root_obj.actions)] = True
    return Collection(game=game.name, root=root, arm=arm_obj.name, actions=root_obj.action_names,
                      parameters=params, returns=cat.get("returns"), legal_mask=legal_mask, codes=cat["codes"],
                      own_card=cat.get("own_card"), public_card=cat.get("public_card"), stats=stats,
                      logical_keys=acc.logical, physical_draws=acc.physical, failures=acc.failures(),
                      group_draws=cat.get("group_draws"))


def _branch_order(branch_order, n: int) -> list[int]:
    """The integers of `branch_order`; anything else (floats, strings, booleans) is a ValueError."""
    items = None if isinstance(branch_order, (str, bytes)) or not hasattr(branch_order, "__iter__") \
        else list(branch_order)
    if items is None or any(isinstance(i, bool) or not isinstance(i, (int, np.integer)) for i in items):
        raise ValueError(f"branch_order must be a permutation of the integers 0..{n - 1}, got {branch_order!r}.")
    return [int(i) for i in items]


def kept_bytes_per_group(branches: int, keep_returns: bool, keep_draws: bool) -> int:
    """Memory `collect` keeps per group until it returns (twice the kept columns: their host tensors, and as much
    again for the chunks' own columns on their way there)."""
    per = 1 + (8 * branches + 16 if keep_returns else 0) + (8 if keep_draws else 0)
    return 2 * per


def _choose_engine(engine, device, trace, violation, chance_map) -> str | None:
    """Which fused kernel runs this collection: "cpu", "cuda" (the GPU build), or None (the torch path)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {list(ENGINES)}, got {engine!r}.")
    if engine == "torch":
        return None
    on_cuda = device.type == "cuda"
    if on_cuda:     # imported only here: importing numba's CUDA target costs time a CPU run need not spend
        from oscc_core.engine import fused_cuda
    blockers = [reason for reason, present in (
        ("numba's CUDA target on a CUDA device (pip install numba-cuda)", on_cuda and not fused_cuda.available()),
        ("no trace", trace is not None), ("no violation", violation is not None),
        ("no custom chance map", chance_map is not None)) if present]
    if engine == "fused" and blockers:
        raise ValueError(f"engine='fused' needs {' and '.join(blockers)}; use engine='torch' or 'auto'.")
    if blockers or (engine == "auto" and on_cuda and not fused_cuda.enabled()):
        return None
    return device.type


def _chunk_function(kernel, game: Game, root: Root, streams_at, event: int, cdf, last_action, chance_map, trace,
                    violation, continuation_map: str):
    """The per-chunk computation of one collection, `Streams` -> the chunk's results: the fused kernel's
    (`kernel` "cpu" or "cuda") or the torch path's.  The GPU kernel's inputs other than the group ids are
    uploaded here, once, from the first chunk's streams (`streams_at(0)`): they do not change between chunks."""
    if kernel == "cuda":
        from oscc_core.engine import fused_cuda
        inputs = fused_cuda.prepare(game, root, streams_at(0), event, cdf, last_action, continuation_map)
        return lambda streams: _fused_chunk(kernel, game, root, streams, event, cdf, last_action, continuation_map,
                                            inputs)
    if kernel is not None:
        return lambda streams: _fused_chunk(kernel, game, root, streams, event, cdf, last_action, continuation_map)

    def torch_chunk(streams: Streams) -> dict:
        chunk_map = chance_map if continuation_map == chance_maps.DEFAULT_MAP else \
            chance_maps.make_chance_map(continuation_map, streams, event, game.num_cards - 2)
        return _collect_chunk(game, root, streams, event, cdf, last_action, chunk_map, trace, violation,
                              continuation_map)
    return torch_chunk


def _fused_chunk(kernel: str, game: Game, root: Root, streams: Streams, event: int, cdf, last_action,
                 continuation_map: str, inputs: tuple | None = None) -> dict:
    """`_collect_chunk`'s result computed by a fused kernel, "cpu" or "cuda" (same numbers, same counts);
    `inputs`: the GPU kernel's `fused_cuda.prepare`d inputs (built per chunk when None)."""
    if kernel == "cuda":
        from oscc_core.engine import fused_cuda
        out = fused_cuda.collect_chunk(game, root, streams, event, cdf, last_action, continuation_map, inputs)
    else:
        out = fused.collect_chunk(game, root, streams, event, cdf, last_action, continuation_map)
    counts = _chunk_counts(root, streams, out["chance"], out["chance"] + out["relabel_draws"], out["decisions"],
                           out["policy_lanes"])
    return {"returns": out["returns"], "codes": out["codes"], "own_card": out["own_card"],
            "public_card": out["public_card"], **counts}


def _chunk_counts(root: Root, streams: Streams, chance_keys, chance_draws, decisions, policy_lanes) -> dict:
    """Per-group physical draws and the chunk's logical-key and physical-draw counts by category.

    chance_keys / chance_draws [G]: chance events addressed / uniforms consumed per group
    (they differ only under the relabelled map); decisions [G]: policy draws per group;
    policy_lanes [G] or 0-dim: hands that drew at least one policy action.  The root and hidden
    counts are ints; the chance and policy ones (`gather.SUMMED`) are 0-dim int64 tensors where the chunk
    lies, left there so that nothing waits for the device (`gather.Accumulator` adds them up).
    """
    g, b, _ = streams.lane_shape()
    root_draws, hidden_draws = (2 if root.public_in_root else 1), (1 if streams.arm.share_hidden else b)
    return {"group_draws": root_draws + hidden_draws + chance_draws + decisions,
            "_draws": {"root": g * root_draws, "hidden": g * hidden_draws, "chance": chance_draws.sum(),
                       "policy": decisions.sum()},
            "_keys": {"root": g, "hidden": g if streams.arm.share_hidden else g * b,
                      "chance": chance_keys.sum(), "policy": policy_lanes.sum()}}


def _draw_root(root: Root, streams: Streams, dev) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Own card and (round-two roots) public card from the root stream, opponent card from the hidden stream."""
    own_w = torch.as_tensor(root.own_weights, device=dev)
    pub_w = torch.as_tensor(root.public_weights, device=dev)
    hid_w = torch.as_tensor(root.hidden_weights, device=dev)
    root_key = streams.root()
    g = len(root_key)
    own = draw_index(own_w.expand(g, -1), rng.uniform(root_key, 0))
    public = draw_index(pub_w[own], rng.uniform(root_key, 1)) - 1
    hidden_key = streams.hidden()
    hid = hid_w[own, public + 1]
    if hidden_key.dim() == 2:
        hid = hid.unsqueeze(1).expand(-1, hidden_key.shape[1], -1)
    return own, public, draw_index(hid, rng.uniform(hidden_key, 0))


def _collect_chunk(game: Game, root: Root, streams: Streams, event: int, cdf, last_action, chance_map,
                   trace=None, violation=None, continuation_map: str = chance_maps.DEFAULT_MAP) -> dict:
    dev = streams.groups.device
    g, b, k = streams.lane_shape()
    own, public, opp = _draw_root(root, streams, dev)
    opp = opp.view(g, -1, 1).expand(g, b, k).reshape(-1)
    own_l = own.view(g, 1, 1).expand(g, b, k).reshape(-1)
    pub_l = public.view(g, 1, 1).expand(g, b, k).reshape(-1).clone()
    if violation is not None:
        own_l = violation.root_cards(own_l, opp, pub_l, streams)
    cards = torch.stack([own_l, opp] if root.player == 0 else [opp, own_l], dim=1)
    start = game.tables(dev)["child"][root.node, torch.tensor(root.actions, device=dev)]
    node = start.view(1, b, 1).expand(g, b, k).reshape(-1).clone()
    policy_keys = streams.policy() if violation is None else violation.policy_keys(streams)
    chance_keys = streams.chance(event) if violation is None else violation.chance_keys(streams, event)
    events = None if trace is None else []
    if trace is not None:
        trace.append({"groups": streams.groups, "shape": (g, b, k), "player": root.player, "node": node.clone(),
                      "cards": cards, "public": pub_l.clone(), "branch": streams.branches(),
                      "policy_keys": policy_keys, "chance_keys": chance_keys, "events": events})
    lanes = play(game, node, cards, pub_l, policy_keys, chance_keys, cdf, last_action, chance_map, events, violation)
    sign = 1 if root.player == 0 else -1
    returns = (sign * lanes.utility_p0).view(g, b, k).sum(2)
    codes = torch.zeros(g, dtype=torch.int8, device=dev)
    codes[lanes.unfinished.view(g, -1).any(1)] = CODE_OF["EARLY_END"]
    codes[lanes.illegal.view(g, -1).any(1)] = CODE_OF["ILLEGAL"]
    reached = lanes.chance_draws.view(g, b, k)
    chance_per_group = reached.amax(1).sum(1) if streams.arm.share_chance else reached.sum((1, 2))
    chance_draws_per_group = chance_per_group
    if continuation_map == "relabelled":      # each branch that reaches the event draws its permutation
        chance_draws_per_group = chance_per_group + (game.num_cards - 2) * reached.sum((1, 2))
    counts = _chunk_counts(root, streams, chance_per_group, chance_draws_per_group,
                           lanes.decisions.view(g, b * k).sum(1), (lanes.decisions > 0).sum())
    return {"returns": returns, "codes": codes, "own_card": own, "public_card": public, **counts}
