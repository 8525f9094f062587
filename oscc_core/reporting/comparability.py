"""Which of the paper's quantities can be compared with ours in size, declared once for the whole book.

A *family* is a kind of quantity the paper prints in several places (its gradient-noise traces, its wall
times, its I−P endpoints).  Each family listed here is one whose **size** cannot be set beside ours, for one of
four reasons (`BASES`):

* the paper leaves the scale undefined (its noise traces: which gradients, which normalisation);
* the size is set by a parameter we chose and the paper does not state (an update variance grows with η²);
* the paper counts another unit or runs another design (its seconds, its calls per group);
* ours agrees by construction (two arms run at one matched budget have a cost ratio of 1).

A row of such a quantity is *not compared* in size: `reporting.rows.Row` turns a size verdict into not
compared with the family's reason (`incomparable_reason`), and the claims ledger refuses a size verdict for a
listed family (`size_verdict_refused`).  The direction or sign the paper states for the quantity (an ordering of
arms, "lower than independent") is still judged: the row keeps its relation, and the relation gets a verdict of
its own (`relation_verdict`).  Chapters glue a family's reason into their prose (`reason_of`) instead of typing
it, so the prose and the ledger cannot disagree.

Families are matched on claim ids (shell patterns over the ids of ``book/paper_claims.yaml``); a claim id
belongs to at most one family (`family_of`; a test checks it over the whole claims file).
"""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from oscc_core.reporting import claims

#: Why a family's size cannot be compared.
SCALE_UNDEFINED = "the paper leaves its scale undefined"
OUR_PARAMETER = "its size is set by a parameter we chose"
OTHER_UNIT = "another unit or another design"
BY_CONSTRUCTION = "true by construction"
BASES = (SCALE_UNDEFINED, OUR_PARAMETER, OTHER_UNIT, BY_CONSTRUCTION)
#: The verdicts that judge a size: refused for a family declared not comparable.
SIZE_VERDICTS = claims.COMPARED + (claims.DEPENDS,)

__all__ = ["BASES", "BY_CONSTRUCTION", "FAMILIES", "Family", "OTHER_UNIT", "OUR_PARAMETER", "SCALE_UNDEFINED",
           "SIZE_VERDICTS", "family_of", "incomparable_reason", "reason_of", "relation_verdict", "size_verdict_refused"]


@dataclass(frozen=True)
class Family:
    """A kind of quantity whose size is not compared: its `name` (a few words a reader can scan), the `basis`
    (one of `BASES`), the one-sentence `reason` a row and the prose give, and the claim-id `patterns` (shell
    patterns) of its entries."""

    name: str
    basis: str
    reason: str
    patterns: tuple[str, ...]

    def __post_init__(self):
        if self.basis not in BASES:
            raise ValueError(f"family {self.name!r}: basis must be one of {list(BASES)}, got {self.basis!r}.")
        if not (self.reason.strip() and self.patterns):
            raise ValueError(f"family {self.name!r} needs its reason and at least one claim-id pattern.")

    def holds(self, claim_id: str) -> bool:
        """Whether `claim_id` is an entry of this family."""
        return any(fnmatchcase(claim_id, p) for p in self.patterns)

    @property
    def sentence(self) -> str:
        """The reason as the prose and a ledger line print it: what the family is, and why its size is not
        compared."""
        return f"{self.name}: not compared in size ({self.basis}): {self.reason}"


FAMILIES = (
    Family("gradient-noise traces", SCALE_UNDEFINED,
           "the paper does not say of which parametrisation's gradients its trace is taken nor how it is normalised, "
           "and ours (the tabular softmax's gradients, weighted by the root law) is on another scale; only the "
           "orderings of arms it states can agree",
           ("*.gradient_noise_trace",)),
    Family("gain lower bounds", SCALE_UNDEFINED,
           "a gain bound is in the units of the noise trace, whose scale the paper leaves undefined, and its clip "
           "B is stated in those units; only its sign and its trend in the calibration size can agree",
           ("*.simult_gain_lcb", "*.median_gain_lcb", "selector_axes_text.calibration.median_lcb_*")),
    Family("gradient-noise regret", SCALE_UNDEFINED,
           "regret is a difference of noise traces, on the same undefined scale; only its trend in the calibration "
           "size can agree",
           ("*.gradient_noise_regret", "selector_axes_text.calibration.regret_*")),
    Family("selector calls and costs", OTHER_UNIT,
           "the paper's calls and costs count its own calibration and rollout design, ours the uniforms our "
           "collector draws for the groups we run; the two count different things, and ours grow with the "
           "calibration size by construction",
           ("multi_action.*.physical_calls", "calibration.*.physical_calls",
            "selector_axes_text.calibration.physical_calls_*", "selector_stress.*.physical_cost")),
    Family("coupling-factor calls", OTHER_UNIT,
           "the paper counts the calls of its own design (six roots of 5,120 groups per seed), ours are the draws "
           "of the audit's groups at one root; calls per group, not their totals, could be set side by side",
           ("coupling_factors.*.calls",)),
    Family("connectivity-loop sampling calls", OTHER_UNIT,
           "the paper never defines what it counts as a sampling call, and its counts imply more episodes per batch "
           "than its 64 paired root draws provide, so they cannot be the draws its own loop describes; ours are the "
           "root and policy draws our loop consumes",
           ("seed_cost.*.sampling_calls", "runtime_text.sampling_calls_total")),
    Family("transitions", OTHER_UNIT,
           "the paper never defines what it counts as a transition (which steps, of which games of a group), so our "
           "count of the environment steps our collector records is another quantity",
           ("cost_frontier.*.transitions", "one_seed_connectivity.transitions")),
    Family("wall times", BY_CONSTRUCTION,
           "the paper's seconds depend on its machine; our arms run at budgets matched in physical calls, so their "
           "cost ratio is 1 up to the last group by construction and says nothing about the paper's seconds",
           ("*.wall_time", "grpo_ppo.*.cost")),
    Family("I−P endpoints", SCALE_UNDEFINED,
           "the paper does not name the metric of its independent-minus-paired endpoint (which policy, against "
           "which opponent, in which unit), so ours (the exact expected return against the uniform opponent) is "
           "one choice among several; only whether its seed interval covers zero can agree",
           ("*i_minus_p*",)),
    Family("update variances", OUR_PARAMETER,
           "the update variance of a step grows with the square of the step size η, and the paper gives no η for "
           "any of its update variances; ours are read at every step size the book measures, none of them the "
           "paper's, so only the direction between arms can agree",
           ("*.update_variance", "coupling_factors.*.update", "clipping.footnote.update_variance_*")),
    Family("check-probability changes", OUR_PARAMETER,
           "the change of P(check) over the scalar screen is set by the screen's step size (ours η = 0.5), which "
           "the paper does not give; only its sign can agree",
           ("text_bounded.scalar_screen.*.check_prob_delta", "extended_controls.scalar_clipped.*_check_delta",
            "retained_evidence.scalar_clipped.*_check_delta")),
    Family("the uniform-policy row", OTHER_UNIT,
           "the paper's exploitability for its uniform-policy row is impossible for the fixed uniform policy under "
           "every reading (chapter 05), so that row is not the fixed policy the book runs but an arm with uniform "
           "behaviour that the book does not run; the fixed policy's returns, values and success set beside it "
           "measure another arm",
           ("grpo_ppo.uniform_policy.return_*", "grpo_ppo.uniform_policy.success_*",
            "grpo_ppo.uniform_policy.value")),
    Family("estimates of a zero marginal difference", BY_CONSTRUCTION,
           "the exact difference between an arm's branch means and the independent arm's is 0 by marginal "
           "preservation (checked by enumeration), so a Monte-Carlo estimate of it, the paper's or ours, measures "
           "only its run's sampling noise; the equivalence the paper states is decided on the exact value",
           ("text_precision.*.mean_difference", "text_precision.*.bootstrap_interval",
            "marginal_equivalence.*.mean_difference", "marginal_equivalence.*.ci_*",
            "selector_stress.*.marginal_difference")),
)


def family_of(claim_id: str | None) -> Family | None:
    """The family `claim_id` belongs to, or None when its size can be compared.  Raises when two families
    claim it: a quantity has one comparability."""
    if not claim_id:
        return None
    found = [f for f in FAMILIES if f.holds(claim_id)]
    if len(found) > 1:
        raise ValueError(f"claim {claim_id!r} is in two comparability families: {[f.name for f in found]}.")
    return found[0] if found else None


def reason_of(name: str) -> str:
    """The sentence of the family called `name` (for a chapter's prose, through glue)."""
    for f in FAMILIES:
        if f.name == name:
            return f.reason
    raise KeyError(f"no comparability family is called {name!r}; families: {[f.name for f in FAMILIES]}.")


def incomparable_reason(claim_id: str | None) -> str | None:
    """The one-sentence reason a row of `claim_id` is not compared in size, or None when it can be."""
    family = family_of(claim_id)
    return None if family is None else family.sentence


def size_verdict_refused(claim_id: str | None, verdict: str | None) -> bool:
    """Whether `verdict` is a size verdict (reproduced, inconclusive, partly, not reproduced) for a claim whose
    family is declared not comparable: what the claims ledger refuses to build."""
    return verdict in SIZE_VERDICTS and family_of(claim_id) is not None


def relation_verdict(holds: bool | None, resolved: bool | None) -> str | None:
    """The verdict of a relation the paper states for a quantity whose size is not compared: reproduced when it
    holds and our intervals do not contradict it, inconclusive when it holds on our estimate but our intervals
    also hold a value that contradicts it, not reproduced when it fails; None without a relation."""
    if holds is None:
        return None
    if not holds:
        return claims.NOT_REPRODUCED
    return claims.INCONCLUSIVE if resolved is False else claims.REPRODUCED
