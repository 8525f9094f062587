"""The collector's coupling arms as learner constructions, for update variances on matched batches.

A learner arm that enumerates every legal action (cp_grpo, independent) is a
coupling arm of the collector plus a gradient step: it shares the opponent's
card and the continuation's chance draws or draws them per branch.  The
root-only and continuation-only arms of the 2x2 ablation share one of the
two; `coupling_learner_arm` builds that construction as a `LearnerArm`, to be
passed to `learning.update_variance.update_variances(arms=...)`.  The runs of
such a batch keep the name of an enumerating learner arm ("independent"):
the name addresses nothing but the arm's construction, which `arms` replaces.

The policy-namespace ablation re-addresses the policy streams of the
independent arm; the learner's policy keys have no namespace field, so it
has no learner construction of its own (`LEARNER_CONSTRUCTION` maps it to
None).
"""
from __future__ import annotations

from oscc_core.engine.arms import ARMS, get_arm
from oscc_core.learning.arms import ENUMERATE, LearnerArm

#: The learner run name the runs of an overridden batch carry (an enumerating arm that updates).
BASE_RUN_ARM = "independent"
#: Collector arm -> whether the learner can build its construction (the namespace ablation cannot).
LEARNER_CONSTRUCTION = {name: arm.policy_stream is None for name, arm in ARMS.items()}


def coupling_learner_arm(arm: str) -> LearnerArm:
    """The learner construction of collector arm `arm`: every legal action a branch, the opponent's card and
    the continuation chance shared as the arm shares them, a gradient step on the group-relative advantage."""
    a = get_arm(arm)
    if a.policy_stream is not None:
        raise ValueError(f"arm {arm!r} namespaces the policy streams, which the learner does not address; it has "
                         f"no learner construction.")
    return LearnerArm(f"coupling:{a.name}", ENUMERATE, a.share_hidden, a.share_chance, True, a.name, a.name)
