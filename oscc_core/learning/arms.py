"""The five learner arms of DESIGN section 8: how each builds its samples and its objective.

| arm         | samples at a decision point                                    | advantage               |
|-------------|----------------------------------------------------------------|-------------------------|
| cp_grpo     | every legal action a branch; opponent card and chance shared   | R_i - mean_i R          |
| independent | every legal action a branch; opponent card and chance per branch | R_i - mean_i R        |
| grpo        | G actions sampled from pi0, sharing the deal; chance per sample | (R - mean) / (sd + 1e-8) |
| ppo         | whole self-play episodes; every decision of both seats          | GAE, z-scored per batch |
| uniform     | collects like independent                                      | none (no update)        |

Physical calls, the budget's unit: one branch rollout (cp_grpo,
independent, uniform, grpo) or one hand played (ppo).
"""
from __future__ import annotations

from dataclasses import dataclass

ENUMERATE, SAMPLE, EPISODE = "enumerate", "sample", "episode"


@dataclass(frozen=True)
class LearnerArm:
    name: str
    samples: str                 # ENUMERATE, SAMPLE or EPISODE
    share_hidden: bool           # one opponent card per group (else per branch)
    share_chance: bool           # continuation chance shared by semantic event (else per branch)
    updates: bool                # takes gradient steps
    coupling_arm: str            # the collector arm with the same construction (for contrast variances)
    label: str


LEARNER_ARMS: dict[str, LearnerArm] = {a.name: a for a in (
    LearnerArm("cp_grpo", ENUMERATE, True, True, True, "full", "CP-GRPO paired"),
    LearnerArm("independent", ENUMERATE, False, False, True, "independent", "independent"),
    LearnerArm("grpo", SAMPLE, True, False, True, "root_only", "standard GRPO"),
    LearnerArm("ppo", EPISODE, False, False, True, "independent", "standard PPO"),
    LearnerArm("uniform", ENUMERATE, False, False, False, "independent", "uniform-policy"),
)}


def get_learner_arm(name: str) -> LearnerArm:
    if name not in LEARNER_ARMS:
        raise ValueError(f"arm must be one of {list(LEARNER_ARMS)}, got {name!r}.")
    return LEARNER_ARMS[name]

ARM_NAMES = tuple(LEARNER_ARMS)      # the arms in the order of DESIGN section 8's table
