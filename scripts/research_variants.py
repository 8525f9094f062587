"""Prototype learner variants for issue 33 (torch path only; research, not the library's arithmetic contract).

`VariantLearners` is `loop.Learners` with extra options, each off by default:

- baseline "hidden": a control variate on each branch return, per (state I, opponent card c, root action a):
  R'_i = R_i - b[I, c_i, a_i] + sum_c p(c | I) b[I, c, a_i] (p: the posterior the hidden card was drawn from),
  then b[I, c_i, a_i] moves toward R_i at rate `baseline_rate` (after the iteration's terms are frozen).
"""
from __future__ import annotations

import torch

from oscc_core.engine.rollout import play
from oscc_core.learning import proximal
from oscc_core.learning.arms import ENUMERATE, SAMPLE, EPISODE
from oscc_core.learning.loop import Learners, lanes_action_grid
from oscc_core.learning.objectives import group_terms
from oscc_core.learning.samples import branch_lanes, sampled_lanes


class VariantLearners(Learners):
    def __init__(self, *a, baseline: str = "none", baseline_rate: float = 0.1, oracle: str = "none", **kw):
        super().__init__(*a, engine="torch", **kw)
        self.baseline, self.baseline_rate, self.oracle = baseline, baseline_rate, oracle
        if oracle != "none":
            self.baseline = "oracle"
            deals = self.game.deals
            self._deal_of = {tuple(d): i for i, d in enumerate(deals.tolist())}
        r, n_info, n_a = self.logits.shape
        c = self.game.num_cards
        self.b = torch.zeros((r, n_info, c, n_a), dtype=torch.float64)
        self.b_seen = torch.zeros((r, n_info, c, n_a), dtype=torch.float64)

    def _collect_kind(self, kind, rows, points, groups, split, cdf, last, behaviour):
        if kind != ENUMERATE or self.baseline == "none":
            return super()._collect_kind(kind, rows, points, groups, split, cdf, last, behaviour)
        s = self.schedule
        t = self.game.tables(self.device)
        nodes = points.node.index_select(0, rows)
        calls = t["num_legal"][nodes]
        keep = self._within_budget(rows, calls)
        ctx = self._context(rows, points, groups, split, keep, cdf, last)
        share = [torch.tensor([getattr(self.arms[int(r)], f) for r in rows], device=self.device)
                 for f in ("share_hidden", "share_chance")]
        lanes = branch_lanes(ctx, *share)
        out = play(self.game, lanes.node, lanes.cards, lanes.public, lanes.policy_keys, lanes.chance_keys,
                   cdf, last, table_offset=lanes.offset)
        sign = 1 - 2 * ctx.points.player.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]
        returns = torch.zeros(lanes.mask.shape, dtype=torch.float64, device=self.device)
        raw = (sign * out.utility_p0).to(torch.float64)
        if self.oracle != "none":
            returns[lanes.mask] = self._oracle(ctx, lanes, rows, behaviour)
            raw = None
        # --- the control variate -------------------------------------------------------------
        player = ctx.points.player.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]          # [L]
        opp = torch.where(player == 0, lanes.cards[:, 1], lanes.cards[:, 0])                 # [L]
        info = ctx.points.infostate.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]          # [L]
        run = rows[lanes.run]
        post = ctx.points.hidden_weights.unsqueeze(2).expand(-1, -1, lanes.mask.shape[2], -1)[lanes.mask]  # [L, C]
        post = post / post.sum(-1, keepdim=True)
        if raw is None:
            pass
        else:
          b_all = self.b[run, info, :, lanes.action]                                           # [L, C]
          b_drawn = self.b[run, info, opp, lanes.action]
          corrected = raw - b_drawn + (post * b_all).sum(-1)
          returns[lanes.mask] = corrected
        # move the baseline (after the terms' returns are frozen)
        rate = self.baseline_rate
        if rate > 0 and raw is not None:
            flat = ((run * self.b.shape[1] + info) * self.b.shape[2] + opp) * self.b.shape[3] + lanes.action
            bv = self.b.view(-1)
            seen = self.b_seen.view(-1)
            seen.index_add_(0, flat, torch.ones_like(raw))
            step = torch.clamp(1.0 / seen[flat], min=rate) if self.baseline == "hidden_mean" else rate
            bv.index_add_(0, flat, step * (raw - bv[flat]))
        # --------------------------------------------------------------------------------------
        self.ledger.add("physical_calls", run)
        self.ledger.add("transitions", run, 1 + out.decisions)
        self.ledger.add("decisions", run, out.decisions)
        self.ledger.add("illegal", run, out.illegal.to(torch.int64))
        self.ledger.add("root_draws", rows, keep.sum(1))
        self.ledger.add("groups", rows, keep.sum(1))
        self.draws[rows] += proximal.draw_counts(ctx.points.infostate, keep, self.draws.shape[1])
        updates = torch.tensor([self.arms[int(r)].updates for r in rows], device=self.device)
        mask = lanes.mask & updates.view(-1, 1, 1)
        info_rows = ctx.table_rows(ctx.points.infostate).unsqueeze(-1)
        action = lanes_action_grid(lanes)
        pi0 = behaviour.view(-1, behaviour.shape[-1])[info_rows.expand_as(action), action.clamp(min=0)]
        return group_terms(info_rows, action.clamp(min=0), returns, mask, pi0, keep.sum(1), False)

    def _oracle(self, ctx, lanes, rows, behaviour):
        """Exact returns: E[R | deal's private cards, root action] ("history") or E[R | I, root action] ("state")
        under pi_t (both seats), in the acting player's chips."""
        import numpy as np
        from oscc_core.exact.deal_values import deal_values
        from oscc_core.games import NO_PUBLIC_CARD
        game = self.game
        tables = behaviour.detach().numpy()
        n_cards = game.num_cards
        out = []
        player = ctx.points.player.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask].numpy()
        info = ctx.points.infostate.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask].numpy()
        post = ctx.points.hidden_weights.unsqueeze(2).expand(-1, -1, lanes.mask.shape[2], -1)[lanes.mask].numpy()
        cards = lanes.cards.numpy()
        public = lanes.public.numpy()
        node = lanes.node.numpy()
        run = lanes.run.numpy()
        cache = {}
        res = np.zeros(len(node))
        for l in range(len(node)):
            r = int(rows[run[l]])
            if r not in cache:
                cache[r] = deal_values(game, tables[r])
            v = cache[r]

            def q(c0, c1):
                if public[l] != NO_PUBLIC_CARD:
                    return v[self._deal_of[(c0, c1, int(public[l]))], node[l]]
                ps = [c for c in range(n_cards) if c not in (c0, c1)]
                return sum(v[self._deal_of[(c0, c1, p)], node[l]] for p in ps) / len(ps)
            sign = 1.0 - 2.0 * player[l]
            if self.oracle == "history":
                res[l] = sign * q(int(cards[l, 0]), int(cards[l, 1]))
            else:
                own = int(cards[l, player[l]])
                w = post[l] / post[l].sum()
                total = 0.0
                for c in range(n_cards):
                    if w[c] > 0:
                        c0, c1 = (own, c) if player[l] == 0 else (c, own)
                        total += w[c] * q(c0, c1)
                res[l] = sign * total
        return torch.as_tensor(res)


class HistoryBaseline:
    """Baseline values B[c0, c1, public + 1, node] (player 0's chips) of R runs, and the VR-MCCFR-style
    corrected returns of rollouts (research prototype, torch, not bit-checked)."""

    def __init__(self, game, runs: int, rate_floor: float, root: bool = True, path: bool = True):
        self.game, self.floor, self.root, self.path = game, rate_floor, root, path
        c, n = game.num_cards, game.tree.num_nodes
        self.shape = (runs, c, c, c + 1, n)
        self.B = torch.zeros(self.shape, dtype=torch.float64)
        self.n = torch.zeros(self.shape, dtype=torch.float64)
        t = game.tables("cpu")
        self.t = t
        self.terminal = torch.as_tensor(game.tree.player == -2)
        # exact terminal utilities for every (c0, c1, public, node)
        nodes = torch.arange(n)
        u = torch.zeros((c, c, c + 1, n), dtype=torch.float64)
        for c0 in range(c):
            for c1 in range(c):
                for p in range(-1, c):
                    if c1 == c0 or p in (c0, c1):
                        continue
                    u[c0, c1, p + 1] = game.utility_p0(nodes, torch.full_like(nodes, c0), torch.full_like(nodes, c1),
                                                       torch.full_like(nodes, p)).to(torch.float64)
        self.u = u

    def value(self, run, c0, c1, pub, node):
        """B at cells, the exact utility where the node is terminal (player 0's chips)."""
        term = self.terminal[node]
        return torch.where(term, self.u[c0, c1, pub + 1, node], self.B[run, c0, c1, pub + 1, node])

    def corrected(self, run, c0, c1, pub, node, utility, trace, behaviour_flat, n_info, offset):
        """Per lane: u(z) + sum over sampled steps of (E_x B(h x) - B(h x_sampled)); and the cells/targets along
        the path for the update."""
        game, t = self.game, self.t
        cur, pub = node.clone(), pub.clone()
        corr = torch.zeros(len(node), dtype=torch.float64)
        events = []
        c = game.num_cards
        for ev in trace:
            lanes = ev.lanes
            r, a0, a1 = run[lanes], c0[lanes], c1[lanes]
            here = cur[lanes]
            pub_before = pub[lanes].clone()
            if hasattr(ev, "card"):      # chance: the public card
                nxt = t["chance_child"][here]
                exp = torch.zeros(len(lanes), dtype=torch.float64)
                cnt = torch.zeros(len(lanes), dtype=torch.float64)
                for p in range(c):
                    ok = (a0 != p) & (a1 != p)
                    pp = torch.full_like(here, p)
                    exp += torch.where(ok, self.value(r, a0, a1, pp, nxt), torch.zeros_like(exp))
                    cnt += ok.to(torch.float64)
                exp = exp / cnt
                pub[lanes] = ev.card
                sampled = self.value(r, a0, a1, ev.card, nxt)
                new = nxt
            else:
                probs = behaviour_flat[offset[lanes] + ev.infostate]          # [l, A]
                exp = torch.zeros(len(lanes), dtype=torch.float64)
                for a in range(game.num_actions):
                    ch = t["child"][here, a]
                    legal = ch >= 0
                    v = self.value(r, a0, a1, pub[lanes], ch.clamp(min=0))
                    exp += torch.where(legal, probs[:, a] * v, torch.zeros_like(exp))
                new = t["child"][here, ev.action]
                sampled = self.value(r, a0, a1, pub[lanes], new)
            if self.path:
                corr[lanes] += exp - sampled
            events.append((lanes, r, a0, a1, pub_before, here, exp - sampled))
            cur[lanes] = new
        return utility + corr, corr, events

    def update(self, run, c0, c1, pub0, node0, utility, corr, events):
        """Move B toward the corrected value at every non-terminal node on the paths."""
        cells, targets = [], []
        flat_shape = self.shape
        def cell(r, a0, a1, p, nd):
            return (((r * flat_shape[1] + a0) * flat_shape[2] + a1) * flat_shape[3] + p + 1) * flat_shape[4] + nd
        done = torch.zeros_like(corr)
        # h_0
        keep = ~self.terminal[node0]
        cells.append(cell(run, c0, c1, pub0, node0)[keep]); targets.append((utility + corr)[keep])
        for lanes, r, a0, a1, p, here, d in events:
            done[lanes] += d
            # target at the node after this step: u + corrections after it
            pass
        # second pass for suffix targets: value at the node reached after event k is u + (corr - prefix_k)
        prefix = torch.zeros_like(corr)
        cur = node0.clone()
        for lanes, r, a0, a1, p, here, d in events:
            prefix[lanes] += d
            # the node after the step is recorded in the next event's `here` or is terminal; record at `here`
        # simpler: record the value at each event's starting node `here` (h_k) with target u + corr - prefix_before
        prefix.zero_()
        for k, (lanes, r, a0, a1, p, here, d) in enumerate(events):
            if k == 0:
                pass
            tgt = (utility + corr - prefix)[lanes]
            nonterm = ~self.terminal[here]
            # `here` with the public card known at this step (chance nodes: before the card: p is after; skip them)
            use = nonterm
            cells.append(cell(r, a0, a1, p, here)[use]); targets.append(tgt[use])
            prefix[lanes] += d
        cells, targets = torch.cat(cells), torch.cat(targets)
        flatB, flatn = self.B.view(-1), self.n.view(-1)
        k = torch.zeros_like(flatB).index_add_(0, cells, torch.ones_like(targets))
        s = torch.zeros_like(flatB).index_add_(0, cells, targets)
        hit = k > 0
        flatn += k
        w = torch.clamp(torch.maximum(k / flatn.clamp(min=1), self.floor * k), max=1.0)
        mean = s / k.clamp(min=1)
        flatB[hit] += (w * (mean - flatB))[hit]


class HistoryLearners(Learners):
    """Learners whose branch returns are VR-corrected by a learned history baseline (`HistoryBaseline`)."""

    def __init__(self, *a, rate_floor: float = 0.05, root: bool = True, path: bool = True, **kw):
        super().__init__(*a, engine="torch", **kw)
        self.hb = HistoryBaseline(self.game, len(self.runs), rate_floor, root, path)

    def _collect_kind(self, kind, rows, points, groups, split, cdf, last, behaviour):
        if kind != ENUMERATE:
            return super()._collect_kind(kind, rows, points, groups, split, cdf, last, behaviour)
        t = self.game.tables(self.device)
        nodes = points.node.index_select(0, rows)
        calls = t["num_legal"][nodes]
        keep = self._within_budget(rows, calls)
        ctx = self._context(rows, points, groups, split, keep, cdf, last)
        share = [torch.tensor([getattr(self.arms[int(r)], f) for r in rows], device=self.device)
                 for f in ("share_hidden", "share_chance")]
        lanes = branch_lanes(ctx, *share)
        trace = []
        out = play(self.game, lanes.node, lanes.cards, lanes.public, lanes.policy_keys, lanes.chance_keys,
                   cdf, last, table_offset=lanes.offset, trace=trace)
        run = rows[lanes.run]
        c0, c1 = lanes.cards[:, 0], lanes.cards[:, 1]
        u = out.utility_p0.to(torch.float64)
        n_info = len(self.game.infostates)
        v, corr, events = self.hb.corrected(run, c0, c1, lanes.public, lanes.node, u, trace,
                                            behaviour.view(-1, behaviour.shape[-1]), n_info, lanes.offset)
        player = ctx.points.player.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]
        sign = (1 - 2 * player).to(torch.float64)
        if self.hb.root:
            post = ctx.points.hidden_weights.unsqueeze(2).expand(-1, -1, lanes.mask.shape[2], -1)[lanes.mask]
            post = post / post.sum(-1, keepdim=True)
            own = torch.where(player == 0, c0, c1)
            exp = torch.zeros_like(v)
            for c in range(self.game.num_cards):
                a0 = torch.where(player == 0, own, torch.full_like(own, c))
                a1 = torch.where(player == 0, torch.full_like(own, c), own)
                ok = post[:, c] > 0
                val = self.hb.value(run, a0.clamp(0), a1.clamp(0), lanes.public, lanes.node)
                exp += torch.where(ok, post[:, c] * val, torch.zeros_like(v))
            root_corr = exp - self.hb.value(run, c0, c1, lanes.public, lanes.node)
        else:
            root_corr = torch.zeros_like(v)
        returns = torch.zeros(lanes.mask.shape, dtype=torch.float64, device=self.device)
        returns[lanes.mask] = sign * (v + root_corr)
        self.hb.update(run, c0, c1, lanes.public, lanes.node, u, corr, events)
        self.ledger.add("physical_calls", run)
        self.ledger.add("transitions", run, 1 + out.decisions)
        self.ledger.add("decisions", run, out.decisions)
        self.ledger.add("illegal", run, out.illegal.to(torch.int64))
        self.ledger.add("root_draws", rows, keep.sum(1))
        self.ledger.add("groups", rows, keep.sum(1))
        self.draws[rows] += proximal.draw_counts(ctx.points.infostate, keep, self.draws.shape[1])
        updates = torch.tensor([self.arms[int(r)].updates for r in rows], device=self.device)
        mask = lanes.mask & updates.view(-1, 1, 1)
        info_rows = ctx.table_rows(ctx.points.infostate).unsqueeze(-1)
        action = lanes_action_grid(lanes)
        pi0 = behaviour.view(-1, behaviour.shape[-1])[info_rows.expand_as(action), action.clamp(min=0)]
        return group_terms(info_rows, action.clamp(min=0), returns, mask, pi0, keep.sum(1), False)
