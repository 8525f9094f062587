"""Deliberate breaks of the coupling contract, used only to show that the audit catches them.

A `Violation` is handed to `collect(..., violation=v)` (and through it to
`rollout.play(..., tamper=v)`).  Each hook defaults to the contract-abiding
behaviour, so a violation overrides exactly the one thing it breaks:

hook                      contract-abiding behaviour
------------------------  -------------------------------------------------------------
policy_keys(streams)      each branch's own policy stream (run, split, group, branch, rollout)
chance_keys(streams, e)   the semantic event's key (shared by branches in coupled arms)
root_cards(...)           every branch holds the same root information state
policy_address(k, t, ..)  the draw at decision t reads (policy key, t); no card enters it
chance_address(k, t)      the chance draw reads (semantic event key, 0)
action(a, info, t)        the sampled action is played
observe(h, branch, opp)   the recorded observation is the information-state hash alone
max_steps                 play continues until every lane is terminal
joins_before_freeze       post-hoc fields are joined after the trace digest is sealed

`CONTROLS` are the paper's five controlled information-boundary violations
(DESIGN.md section 5); `EXAMPLES` adds one injected fault per failure code
for the failure ledger.  Neither is ever used by an estimate.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from oscc_core.engine import rng

_LEAK_TAG = rng.signed(rng.tag("oscc/violation/opponent-card"))
_OBS_TAG = rng.signed(rng.tag("oscc/violation/observation"))
GLOBAL_CHANCE_STREAM = 0   # the event field of the position-addressed chance stream


@dataclass(frozen=True)
class Violation:
    """The contract-abiding engine; subclasses override one hook each."""

    name: str = "none"
    condition: str = ""          # the contract condition it breaks (C1-C5)
    expected_code: str = ""      # the failure code the audit should give the groups it touches
    description: str = ""
    max_steps: int | None = None
    joins_before_freeze: bool = False

    def policy_keys(self, streams) -> torch.Tensor:
        return streams.policy()

    def chance_keys(self, streams, event: int) -> torch.Tensor:
        return streams.chance(event)

    def root_cards(self, own, opponent, public, streams) -> torch.Tensor:
        return own

    def policy_address(self, keys, counter, own, other):
        return keys, counter

    def chance_address(self, keys, counter):
        return keys, torch.zeros_like(keys)

    def action(self, action, info, counter):
        return action

    def observe(self, obs_hash, branch, other):
        return obs_hash


class OpponentCardInPolicyKey(Violation):
    def policy_address(self, keys, counter, own, other):
        return rng.mix64(keys ^ _LEAK_TAG) + other + 1, counter


class BranchInObservation(Violation):
    def observe(self, obs_hash, branch, other):
        return rng.mix64(obs_hash ^ _OBS_TAG) + branch + 1


class HiddenFieldInObservation(Violation):
    def observe(self, obs_hash, branch, other):
        return rng.mix64(obs_hash ^ _OBS_TAG) + other + 1


class SharedPolicyDraws(Violation):
    def policy_keys(self, streams) -> torch.Tensor:
        g, b, k = streams.lane_shape()
        key = rng.policy_key(streams.run, streams.split, streams.groups.view(-1, 1, 1), 0,
                             torch.arange(k, device=streams.groups.device).view(1, 1, -1), streams.arm.policy_stream)
        return key.expand(g, b, k).reshape(-1)


class ChanceByGlobalPosition(Violation):
    """The public card is read from one group stream at the lane's global position (its decision count)."""

    def chance_keys(self, streams, event: int) -> torch.Tensor:
        g, b, k = streams.lane_shape()
        key = rng.derive_key("chance", run=streams.run, split=streams.split, group=streams.groups.view(-1, 1, 1),
                             event=GLOBAL_CHANCE_STREAM,
                             rollout=torch.arange(k, device=streams.groups.device).view(1, 1, -1))
        return key.expand(g, b, k).reshape(-1)

    def chance_address(self, keys, counter):
        return keys, counter


class OracleBeforeFreeze(Violation):
    pass


class RootDrift(Violation):
    """Branches other than the first get another private card in every fourth group."""

    def root_cards(self, own, opponent, public, streams) -> torch.Tensor:
        g, b, k = streams.lane_shape()
        branch = torch.arange(b, device=own.device).view(1, -1, 1).expand(g, b, k).reshape(-1)
        group = streams.groups.view(-1, 1, 1).expand(g, b, k).reshape(-1)
        drift = (branch > 0) & (group % 4 == 0)
        cards = torch.arange(6, device=own.device)
        taken = (cards == own[:, None]) | (cards == opponent[:, None]) | (cards == public[:, None])
        other = (~taken).to(torch.int64).argmax(1)   # smallest free card id
        return torch.where(drift, other, own)


class CounterGap(Violation):
    """The policy counter skips position 1."""

    def policy_address(self, keys, counter, own, other):
        return keys, counter + (counter >= 1).to(counter.dtype)


class IllegalAction(Violation):
    """The first continuation decision always folds, also where folding is illegal."""

    def action(self, action, info, counter):
        return torch.where(counter == 0, torch.zeros_like(action), action)


CONTROLS: dict[str, Violation] = {v.name: v for v in (
    OpponentCardInPolicyKey("opponent_card_in_policy_key", "C2/C3", "HIDDEN_LEAK",
                            "the policy draw's address mixes in the card the acting player cannot see"),
    BranchInObservation("branch_identity_in_observation", "C2", "OBS_DRIFT",
                        "the recorded observation carries the branch identity"),
    SharedPolicyDraws("shared_policy_side_draw", "C3", "STREAM_GAP",
                      "all branches of a group read the same policy stream (branch field dropped)"),
    ChanceByGlobalPosition("chance_counter_reuse", "C4", "STREAM_GAP",
                           "the public card is read from a group-wide stream at the lane's global "
                           "position, the counter the next policy draw reuses, instead of its semantic address"),
    OracleBeforeFreeze("oracle_before_trace_freeze", "C5", "JOIN_ORDER",
                       "the terminal return is joined into the trace before its digest is sealed",
                       joins_before_freeze=True),
)}

EXAMPLES: dict[str, Violation] = {v.expected_code: v for v in (
    RootDrift("root_drift", "C1", "ROOT_DRIFT", "a branch starts from another private card (every 4th group)"),
    HiddenFieldInObservation("hidden_field_in_observation", "C2", "OBS_DRIFT",
                             "the recorded observation carries the opponent's card"),
    CONTROLS["opponent_card_in_policy_key"],
    CounterGap("counter_gap", "C4", "STREAM_GAP", "the policy counter skips position 1"),
    Violation("early_end", "C4", "EARLY_END", "play stops after two steps", max_steps=2),
    IllegalAction("illegal_action", "C1", "ILLEGAL", "the first continuation decision folds even when not facing a bet"),
    CONTROLS["oracle_before_trace_freeze"],
)}
