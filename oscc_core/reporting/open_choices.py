"""The reading each ledger line was measured under, declared once for the whole book.

The paper leaves open many choices its numbers depend on: which roots a contrast variance pools, the
continuation policy, the clip ε, the step size η, the opponent, the seeds, groups and budget, the cost unit.
A number of ours is only meaningful beside the choices it was measured under, so every result, check and
interval line of the claims ledger names them (or says that the paper fixes every choice the quantity depends
on).  Lines whose row already names a reading of the paper's words (`reporting.readings`), or whose verdict
carries a reason, keep theirs; every other line takes the sentence declared here
(`ledger_lines.build_lines`, which the ledger and each chapter's result box share).

A declaration is a `Reading`: the chapter (notebook stem) that measured the quantity, the `Choice`s the paper
leaves open, each with the value our run used and what sets it (a parameter of that chapter's notebook, with its
default, or the chapter's code), the choices the paper fixes and how ours follow it, and a note.  Its `sentence`
is what a ledger line prints.  A test reads each notebook's parameters cell and checks every default a choice
names, so a changed default cannot leave a stale sentence behind.

Readings are keyed by claim-id prefixes of ``book/paper_claims.yaml`` (whole dotted components: ``safety``
holds ``safety.chance_counter_reuse.marginal_shift``, not ``safety_x.y``); the longest declared prefix of a claim
id gives its reading (`reading_of`).  A section the paper prints from several experiments declares a prefix per
experiment (``text_bounded.three_seed``, ``text_bounded.frozen_opponent``, ...), and a single entry measured
differently from its section declares its own id (``noise_transfer.independent.return_ratio``).  A test checks
that every entry of the claims file that is not a setting has a reading, so a new section must declare one.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BY_PREFIX", "CHAPTERS", "Choice", "DECLARATIONS", "Reading", "declared_prefix", "in_code",
           "longest_prefix", "parameter", "reading_of"]

#: The notebooks whose parameters set the choices.
CONTRACT, COVARIANCE, GRADIENT_NOISE = "01_contract", "02_covariance", "03_gradient_noise"
SELECTOR, SOLVER, TRANSFER = "04_selector", "05_solver", "06_transfer"
CHAPTERS = (CONTRACT, COVARIANCE, GRADIENT_NOISE, SELECTOR, SOLVER, TRANSFER)
#: The seed lists of the chapters' parameters cells.
FIVE_SEEDS = [13, 17, 23, 29, 31]
DEV_SEEDS = [1001, 1002]
ETA_GRID = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]


def _literal(value) -> str:
    """A parameter's value as a notebook's parameters cell writes it (strings in double quotes)."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


@dataclass(frozen=True)
class Choice:
    """One choice a quantity depends on: `what` is chosen, the `value` our run used, and what sets it: the
    `parameters` of the chapter's notebook with their defaults ((name, default) pairs), or, when no parameter
    does, the `code` that fixes it."""

    what: str
    value: str
    parameters: tuple[tuple[str, object], ...] = ()
    code: str | None = None

    def __post_init__(self):
        if not (self.what.strip() and self.value.strip()):
            raise ValueError("a choice needs what is chosen and the value our run used.")
        if bool(self.parameters) == bool(self.code):
            raise ValueError(f"choice {self.what!r}: name the parameters that set it or the code that fixes it, "
                             f"not both and not neither.")

    @property
    def text(self) -> str:
        """'what: value (name = default, ...)' or 'what: value (set in code: where)'."""
        set_by = (", ".join(f"{name} = {_literal(default)}" for name, default in self.parameters) if self.parameters
                  else f"set in code: {self.code}")
        return f"{self.what}: {self.value} ({set_by})"


def parameter(what: str, value: str, **defaults) -> Choice:
    """A choice set by notebook parameters (keyword: name = its default)."""
    return Choice(what, value, tuple(defaults.items()))


def in_code(what: str, value: str, where: str) -> Choice:
    """A choice no parameter sets: the chapter's code fixes it (`where` names the code)."""
    return Choice(what, value, code=where)


@dataclass(frozen=True)
class Reading:
    """What one kind of quantity was measured under: the `chapter` (notebook stem) that measured it, the choices
    the paper leaves `open` (our value and what sets it), the choices the paper `fixes` (and how ours follow it),
    and a `note`.  With no open choice the sentence says that the paper fixes every choice the quantity depends
    on, and what fixes it (the fixed choices, else the note)."""

    chapter: str
    open: tuple[Choice, ...] = ()
    fixes: tuple[Choice, ...] = ()
    note: str | None = None

    def __post_init__(self):
        if self.chapter not in CHAPTERS:
            raise ValueError(f"chapter must be one of {list(CHAPTERS)}, got {self.chapter!r}.")
        if not (self.open or self.fixes or self.note):
            raise ValueError("a reading names the open choices, or what the paper fixes.")

    @property
    def choices(self) -> tuple[Choice, ...]:
        """Every choice the reading names, open or fixed."""
        return self.open + self.fixes

    @property
    def sentence(self) -> str:
        """The reading as a ledger line prints it."""
        fixed = "; ".join(c.text for c in self.fixes)
        if not self.open:
            said = "; ".join(x for x in (fixed, self.note) if x)
            return f"the paper fixes every choice this quantity depends on: {said} (measured in {self.chapter})"
        text = f"choices the paper leaves open, as {self.chapter} sets them: " + "; ".join(c.text for c in self.open)
        if fixed:
            text += f"; fixed by the paper: {fixed}"
        return text + (f"; {self.note}" if self.note else "")

    def plus(self, *choices: Choice, note: str | None = None) -> "Reading":
        """This reading with more open choices (and another note, when given)."""
        return Reading(self.chapter, self.open + choices, self.fixes, self.note if note is None else note)


# ----- chapter 01: the contract audit ---------------------------------------------------------------------------
_ROOT_01 = parameter("root", "player 0's first decision", root="")
_CONTINUATION_01 = in_code("continuation policy (it also sets the law of the root)", "uniform over legal actions",
                           "the collector's default, which chapter 01 keeps")
_SEED_01 = parameter("seed", "13, the first audit seed", seeds=FIVE_SEEDS)
_FULL_ARM_01 = in_code("audited arm", "full coupling (CP-GRPO)", "the chapter's notebook")

OBSERVATION_AUDIT = Reading(CONTRACT, open=(in_code(
    "states audited", "every Leduc information state (936), each under every hidden completion consistent with it "
    "and both branch labels; the paper does not say which 774 states it audited",
    "observation.observation_audit, which enumerates the game"),))
IMPLEMENTATION_CHECKS = Reading(CONTRACT, open=(
    _ROOT_01, _CONTINUATION_01,
    parameter("groups", "five seeds of 5,120 groups per arm each, pooled (the paper's column is one run of 5,120 "
              "groups)", seeds=FIVE_SEEDS, groups_per_seed=5120)))
SWAP_CHECKS = Reading(CONTRACT, open=(_ROOT_01, _CONTINUATION_01, _SEED_01, _FULL_ARM_01),
                      fixes=(parameter("groups", "100,000", swap_groups=100_000),))
VIOLATION_CONTROLS = Reading(CONTRACT, open=(
    _ROOT_01, _CONTINUATION_01, _SEED_01,
    in_code("violated arm", "full coupling (CP-GRPO); the apparent variance change is against the independent arm "
            "on the same groups", "violation_controls")),
    fixes=(parameter("groups", "512 per violation, the paper's five violations", violation_groups=512),))

# ----- chapter 02: the return-contrast covariance ---------------------------------------------------------------
_CONTINUATION_02 = parameter("continuation policy (it also sets the law of the roots)", "uniform over legal actions",
                             continuation="uniform")
_ONE_ROOT_02 = parameter("root", "player 0's first decision alone", root="")
_BUDGET_02 = in_code("continuation rollouts per branch", "1", "the audit's default budget")

HEADLINE_AUDIT = Reading(COVARIANCE, open=(
    parameter("roots", "the 24 Leduc decision points where check and bet (Call and Raise) are both legal, pooled, "
              "each weighted by its share of the decisions hands reach", pooled_weighting="visits"),
    _CONTINUATION_02, _BUDGET_02, parameter("seed", "13, each root with a seed of its own", seed=13)),
    fixes=(parameter("groups", "100,000 per arm", pooled_groups=100_000),))
ROUND_AND_ACTION_STRATA = Reading(COVARIANCE, open=(
    parameter("roots", "the headline audit's roots of that round or legal-action count (of 100,000 groups per arm "
              "over all 24 roots), pooled with the headline weights renormalised (each root's share of the "
              "decisions hands reach)", pooled_groups=100_000, pooled_weighting="visits"),
    _CONTINUATION_02, _BUDGET_02, parameter("seed", "13, each root with a seed of its own", seed=13)))
CARD_STRATA = Reading(COVARIANCE, open=(
    parameter("roots", "the one-root audit at player 0's first decision (100,000 groups per arm), split by the "
              "acting player's own card", root="", n_groups=100_000),
    in_code("cards", "the paper does not say which cards its rows A and B hold: each is read as own card J, Q and "
            "K, and the line names the reading that gives its verdict", "strata"),
    _CONTINUATION_02))
ONE_ROOT_AUDIT = Reading(COVARIANCE, open=(
    _ONE_ROOT_02, _CONTINUATION_02, parameter("groups", "100,000 per arm at seed 13", n_groups=100_000, seed=13)))
VARIANCE_IDENTITY = ONE_ROOT_AUDIT.plus(
    note="the residual is the largest over the five arms; the identity holds for exact sums, so no choice moves it "
         "beyond rounding")
BUDGET_FACTORIZATION = Reading(COVARIANCE, open=(
    parameter("root", "player 0's first decision alone (the paper's rows name root strata it does not define)",
              root=""),
    _CONTINUATION_02,
    in_code("scale", "the variance of the per-rollout mean (each branch's k rollouts summed, divided by k)",
            "budget.budget_audits"),
    in_code("rows", "our budgets 1, 4 and 8 set beside the paper's rows private-card group A, group B and "
            "public-round split", "budget.BUDGET_ROWS"),
    parameter("seed", "13", seed=13)),
    fixes=(parameter("budgets and groups", "k = 1, 4, 8 rollouts per branch, 25,600 groups per arm each",
                     budgets=[1, 4, 8], budget_groups=25_600),))
UPDATE_VARIANCES_02 = Reading(COVARIANCE, open=(
    parameter("state", "the continuation policy (uniform: every logit 0)", continuation="uniform"),
    parameter("step size", "η = 1, also read at one decade either side, each line naming its η",
              update_learning_rate=1.0, update_eta_readings=[0.1, 1.0, 10.0]),
    parameter("schedule", "replicate learner steps of N decision points, E clipped-surrogate epochs each (ε = 0.2, "
              "the learner's default)", update_replicates=32, update_decision_points=128, update_epochs=4),
    parameter("seeds", "five", seeds=FIVE_SEEDS)))
SEED_PRECISION = Reading(COVARIANCE, open=(
    parameter("roots", "read two ways, all 24 roots pooled (each weighted by its share of the decisions hands "
              "reach) and player 0's first decision alone; each line names its reading",
              pooled_weighting="visits", root=""),
    _CONTINUATION_02, _BUDGET_02),
    fixes=(parameter("seeds and groups", "five seeds, 5,120 groups per arm and seed",
                     seeds=FIVE_SEEDS, seed_groups=5120),))

# ----- chapter 03: gradient noise -------------------------------------------------------------------------------
_ROOT_03 = parameter("root", "player 0's first decision", root="")
_ROOT_POLICY_03 = parameter("root policy differentiated", "uniform", root_policy="uniform")
_CONTINUATION_03 = parameter("continuation and behaviour policy", "uniform over legal actions", continuation="uniform")
_WEIGHTS_03 = parameter("noise weights", "the root law", noise_weights="root_law")
_GROUPS_03 = parameter("groups", "100,000 per arm at seed 13", n_groups=100_000, seed=13)
_SELECT_03 = parameter("OSCC-Select", "one stratum per own-card class, certified on calibration groups in blocks, "
                       "the leading pilot blocks fixing B at a factor times their largest score, failure "
                       "probability δ",
                       calibration_groups=100_000, block_size=8, pilot_blocks=32, bound_factor=2.0, delta=0.05)

NOISE_TRANSFER = Reading(GRADIENT_NOISE, open=(
    _ROOT_03, _ROOT_POLICY_03, _CONTINUATION_03, _WEIGHTS_03,
    parameter("update", "E steps of size η on each group's clipped surrogate (half-width ε), starting the lag (in "
              "logits) ahead of the behaviour checkpoint, divided by ηE",
              epochs=4, learning_rate=0.02, epsilon=0.2, behaviour_lag=0.2),
    _SELECT_03, _GROUPS_03))
SELF_RATIO = Reading(GRADIENT_NOISE, note="the independent arm is the reference: its noise divided by its own is 1 "
                                          "by definition, on every bootstrap replicate")
CLIPPING_STUDY = Reading(GRADIENT_NOISE, open=(
    _ROOT_03, _ROOT_POLICY_03, _CONTINUATION_03,
    parameter("settings", "each row pools the independent and full arms over its settings: the connectivity "
              "control one epoch from the behaviour policy at η = 0.02; the lag grid lags 0.1, 0.2, 0.3 logits at "
              "η = 0.02; the learning-rate grid η = 0.01, 0.02, 0.05 at lag 0; the activated stress lag 0.3 with "
              "η = 0.05; E = 4 epochs outside the control, ε = 0.2 throughout",
              lag_grid=[0.1, 0.2, 0.3], learning_rate_grid=[0.01, 0.02, 0.05], learning_rate=0.02, epochs=4,
              epsilon=0.2),
    _GROUPS_03))
COST_FRONTIER = Reading(GRADIENT_NOISE, open=(
    parameter("root", "player 0's first decision for the noise traces, transitions and costs", root=""),
    _ROOT_POLICY_03, _CONTINUATION_03, _WEIGHTS_03, _SELECT_03,
    in_code("cost unit", "physical draws: every uniform an arm consumes, each arm taking the largest prefix of its "
            "groups that fits the budget", "frontier"),
    parameter("contrast variances", "read two ways, all 24 roots pooled (100,000 groups per arm, each root weighted "
              "by its share of the decisions hands reach: the paper's reading, which gives the verdict) and player "
              "0's first decision alone at the matched budget; each line names its reading",
              pooled_groups=100_000, pooled_weighting="visits")),
    fixes=(parameter("budget", "61,440 per arm, the calls the paper prints (0 reads them from the claims file)",
                     physical_budget=0),))
SCALAR_SCREEN = Reading(GRADIENT_NOISE, open=(
    parameter("learner", "only the root policy at player 0's first decision learns, from the uniform policy, on "
              "returns of the frozen uniform continuation", root="", root_policy="uniform", continuation="uniform"),
    parameter("step size", "η = 0.5 on the batch-mean clipped surrogate", screen_learning_rate=0.5),
    parameter("clip range", "ε = 0.2", epsilon=0.2),
    parameter("seeds", "five", screen_seeds=FIVE_SEEDS)),
    fixes=(parameter("schedule", "five seeds of 40 iterations of 32 groups, four epochs each, paired (full) and "
                     "independent arms", screen_iterations=40, screen_groups=32, epochs=4),))
CONNECTIVITY_LOOP = Reading(GRADIENT_NOISE, open=(
    parameter("learners", "the book's tabular clipped-surrogate learners (ε = 0.2) on Leduc, paired (CP-GRPO) and "
              "independent", epsilon=0.2),
    parameter("schedule", "8 logical batches of 8 decision points per arm (the paper's 64 paired root draws), 4 "
              "epochs each, step size 0.05", connectivity_batches=8, connectivity_decision_points=8,
              connectivity_epochs=4, connectivity_learning_rate=0.05),
    parameter("stress conditions", "the lag grid lags 2 and 4 batches; the learning-rate grid 0.1, 0.2, 0.5 at lag "
              "0; the activated stress lag 4 with 0.5", connectivity_lag_grid=[2, 4],
              connectivity_learning_rate_grid=[0.1, 0.2, 0.5]),
    parameter("endpoint", "the exact expected return (chips) of the final checkpoint in each seat against the "
              "uniform opponent", connectivity_endpoint="last"),
    parameter("seeds", "five", connectivity_seeds=FIVE_SEEDS)))

# ----- chapter 04: the selector ---------------------------------------------------------------------------------
_BINARY_04 = parameter("two-action root", "player 0's first decision, uniform root policy", binary_root="",
                       binary_root_policy="uniform")
_TERNARY_04 = parameter("three-action root", "player 1 facing a bet (Fold, Call, Raise), root policy 0.8, 0.1, 0.1 at "
                        "every information state", root="2", root_policy=[0.8, 0.1, 0.1])
_CHECKPOINT_04 = parameter("frozen checkpoint (continuation and root law)", "the CFR+ average policy after 1,000 "
                           "iterations", continuation="cfr_plus", cfr_iterations=1000)
_CERTIFICATE_04 = parameter("certificate", "one stratum per own-card class, blocks of groups, B a quantile of the "
                            "absolute block score on a pilot of the validation split, failure probability δ, no "
                            "charge per physical draw", block_size=16, bound_quantile=0.99, pilot_groups=50_000,
                            score_bound=0.0, delta=0.05, cost_weight=0.0)
_HELD_OUT_04 = parameter("held-out groups", "100,000 per arm, seed 13", eval_groups=100_000, seed=13)
_CALIBRATION_04 = parameter("calibration", "1,024 groups per stratum", calibration_groups=1024)

ACTION_SUPPORT = Reading(SELECTOR, open=(
    _BINARY_04, _TERNARY_04, _CHECKPOINT_04, _CERTIFICATE_04, _HELD_OUT_04,
    in_code("contrast variance with three actions", "the mean over the three action pairs", "action_support")),
    fixes=(_CALIBRATION_04,))
COVARIANCE_REGIMES = Reading(SELECTOR, open=(
    _BINARY_04, _CHECKPOINT_04,
    in_code("regimes", "the map of the shared chance uniform: positive = semantic, near-zero = relabelled, negative "
            "= antithetic; the paper's fallback row is the independent arm under the antithetic map", "regimes"),
    _CERTIFICATE_04, _HELD_OUT_04),
    fixes=(_CALIBRATION_04,))
CALIBRATION_SWEEP = Reading(SELECTOR, open=(
    _BINARY_04, _CHECKPOINT_04, _CERTIFICATE_04,
    parameter("repetitions", "independent calibrations per size on disjoint group ranges",
              sweep_repetitions=300, seed=13),
    in_code("rates", "certification: the share of stratum decisions that certify a coupling in the positive "
            "(semantic) regime; false selection: family-wise, the worse of the near-zero and negative regimes; the "
            "median gain bound: full coupling's over repetitions and strata", "sweep")),
    fixes=(parameter("sizes", "64 to 2,048 calibration groups per stratum",
                     sweep_sizes=[64, 128, 256, 512, 1024, 2048]),))

# ----- chapter 05: learners and the exact solver ----------------------------------------------------------------
_ETA_05 = parameter("step size", "η chosen per arm on the development seeds from the grid, at the matched budget "
                    "(the grid grows past a choice at its edge)",
                    learning_rate=0.0, dev_seeds=DEV_SEEDS, eta_grid=ETA_GRID)
_LEARNER_05 = parameter("learner", "clip range ε, E full-batch SGD steps on the logits per iteration, G sampled "
                        "actions (GRPO), GAE λ and value rate (PPO)",
                        epsilon=0.2, epochs=4, group_size=4, gae_lambda=0.95, value_rate=0.5)
_CHECKPOINT_05 = in_code("checkpoint", "each run's average policy (its iterates weighted by each player's own "
                         "reach), evaluated exactly over every deal", "learning")
_OPPONENT_05 = parameter("opponent", "the uniform policy, for return and task success (P(win) + P(tie)/2), each "
                         "averaged over both seats", opponent="uniform")

POLICY_SCREEN = Reading(SOLVER, open=(
    _ETA_05, _LEARNER_05,
    parameter("budget", "61,440 physical calls per seed (branch rollouts; PPO: hands played); the paper does not "
              "say per seed or in total", budget=61_440),
    _CHECKPOINT_05, _OPPONENT_05),
    fixes=(parameter("seeds and batch", "five seeds, N = 128 decision points per iteration",
                     policy_seeds=FIVE_SEEDS, decision_points=128),))
CONSTRUCTIONS = POLICY_SCREEN.plus(parameter(
    "contrast variance", "exact, of each arm's own construction at player 0's first decision with the run's "
    "checkpoint as continuation", contrast_root=""))
LEARNING_STUDY = Reading(SOLVER, open=(
    parameter("seeds", "the 30 seeds of the committed learning study", study_file="../results/05_solver_study.json"),
    in_code("iteration", "the paper's literal one (on-policy decision points, no pull)", "study"),
    _ETA_05, _LEARNER_05,
    parameter("budget", "61,440 physical calls per run (one seed); the paper does not say per seed or in total",
              budget=61_440),
    _CHECKPOINT_05),
    fixes=(parameter("batch", "N = 128 decision points per iteration", decision_points=128),),
    note="NashConv is twice the exploitability (two players, zero-sum)")
BOUNDED_DIAGNOSTIC = Reading(SOLVER, open=(
    _ETA_05, parameter("learner", "ε = 0.2, E = 4 full-batch SGD steps on the logits per iteration", epsilon=0.2,
                       epochs=4),
    in_code("exploitability", "exact, of each run's average policy (its iterates weighted by each player's own "
            "reach) after the last iteration", "learning")),
    fixes=(parameter("schedule", "paired (CP-GRPO) and independent, T = 40 iterations of N = 128 decision points on "
                     "seeds 13, 17, 23", iterations=40, decision_points=128, diagnostic_seeds=[13, 17, 23]),))
FROZEN_OPPONENT = Reading(SOLVER, open=(
    in_code("root and frozen play", "player 0's first decision, check = Call and bet = Raise; the opponent and "
            "player 0's play after the root frozen at uniform", "frozen_screen"),
    in_code("calibration states", "the six ordered rank pairs where player 0 holds J or Q (K held out)",
            "frozen_screen"),
    parameter("seed", "13, the first policy seed", policy_seeds=FIVE_SEEDS)),
    fixes=(parameter("comparisons", "4,096 per rank pair, 49,152 branch rollouts per seed and mode",
                     frozen_comparisons=4096),))
EXACT_CALIBRATION = Reading(SOLVER, fixes=(parameter(
    "solver and iterations", "CFR+ (regret matching+, alternating updates, linear averaging), 20,000 iterations on "
    "Kuhn and 300 on Leduc", kuhn_cfr_iterations=20_000, leduc_cfr_iterations=300),),
    note="CFR+ draws no random numbers, so its run labels change nothing")
CFR_REFERENCE = Reading(SOLVER, open=(
    parameter("iterations", "300 CFR+ iterations, the calibration's Leduc budget", leduc_cfr_iterations=300),
    _OPPONENT_05),
    note="one deterministic policy, evaluated exactly over every deal")

# ----- chapter 06: transfer -------------------------------------------------------------------------------------
_OPERATING_POINT_06 = parameter(
    "operating point", "frozen on Leduc before any Kuhn run: η chosen per arm on Leduc's development seeds from the "
    "grid at the matched budget, and the literal learner's clip range ε, E epochs, N decision points, G sampled "
    "actions (GRPO), GAE λ and value rate (PPO)",
    learning_rate=0.0, dev_seeds=DEV_SEEDS, eta_grid=ETA_GRID, epsilon=0.2, epochs=4, decision_points=128,
    group_size=4, gae_lambda=0.95, value_rate=0.5)
_BUDGET_06 = parameter("budget", "61,440 physical calls per seed", budget=61_440)
_SEEDS_06 = parameter("seeds", "five", seeds=FIVE_SEEDS)

MEASURED_TRANSFER = Reading(TRANSFER, open=(
    _OPERATING_POINT_06, _BUDGET_06,
    in_code("checkpoint", "each run's average policy at its last iteration, evaluated exactly", "runs"),
    parameter("opponent", "the uniform policy, for task success (P(win) + P(tie)/2, averaged over both seats)",
              opponent="uniform"),
    in_code("leakage", "the observation audit over every information state plus a hidden-card perturbation of every "
            "policy lookup of the checkpoint", "leakage")),
    fixes=(_SEEDS_06,))
VARIANCE_RATIOS_06 = Reading(TRANSFER, open=(
    parameter("contrast variances", "each arm's at its own checkpoint over the independent arm's at the independent "
              "arm's checkpoint, seed by seed, read two ways: pooled over every decision point with a check-bet "
              "contrast (the paper's reading, which gives the verdict) and at the game's root; each line names its "
              "reading", contrast_root="", kuhn_contrast_root=""),
    _OPERATING_POINT_06, _BUDGET_06),
    fixes=(_SEEDS_06,))
SELF_RATIO_06 = Reading(TRANSFER, note="the independent arm is the reference: its contrast variance divided by its "
                                       "own is 1 on every seed, under every reading")


# ----- which entries each reading holds -------------------------------------------------------------------------
def _each(template: str, *names: str) -> tuple[str, ...]:
    """The claim-id prefixes `template` gives for each of `names` (its one "{}" filled in)."""
    return tuple(template.format(n) for n in names)


_LEARNED_05 = ("cp_grpo_paired", "independent", "standard_grpo", "standard_ppo")

#: (reading, the claim-id prefixes it holds), chapter by chapter.
DECLARATIONS: tuple[tuple[Reading, tuple[str, ...]], ...] = (
    (OBSERVATION_AUDIT, ("method_obs", "release.observation_boundary")),
    (IMPLEMENTATION_CHECKS, ("impl_checks",)),
    (SWAP_CHECKS, ("seat_swap",)),
    (VIOLATION_CONTROLS, ("safety", "text_rootbudget.safety")),
    (HEADLINE_AUDIT, ("main", "main_uncertainty", "text_precision", "marginal_equivalence", "fig_diagnostics",
                      "intro", "conclusion", "abstract.independent", "abstract.cp_grpo", "text_ablation",
                      "coupling_factors", "ablations", "strata.all_roots", "root_budget.all_roots",
                      "learning_boundary.fixed_root", "retained_evidence.fixed_root",
                      "acceptance.variance_mechanism")),
    (ROUND_AND_ACTION_STRATA, ("strata",)),
    (CARD_STRATA, ("strata.private_card_a", "strata.private_card_b")),
    (VARIANCE_IDENTITY, ("text_precision.both_arms.variance_identity_residual",
                         "retained_evidence.fixed_root.identity_residual",
                         "acceptance.variance_mechanism.identity_residual")),
    (ONE_ROOT_AUDIT, _each("coupling_factors.{}.calls", "ind", "root_only", "stream_only", "cp_grpo")),
    (BUDGET_FACTORIZATION, ("root_budget",)),
    (UPDATE_VARIANCES_02, _each("coupling_factors.{}.update", "ind", "root_only", "stream_only", "cp_grpo")
     + _each("ablations.{}.update_variance", "ind", "root_only", "continuation", "policy_namespace", "cp_grpo_full")),
    (SEED_PRECISION, ("seed_precision", "seed_precision_text")),
    (NOISE_TRANSFER, ("noise_transfer", "text_rootbudget.oscc_select.gradient_noise_ratio",
                      "text_rootbudget.oscc_select.update_noise_ratio")),
    (SELF_RATIO, _each("noise_transfer.independent.{}", "return_ratio", "gradient_ratio", "update_ratio")),
    (CLIPPING_STUDY, ("clipping", "learning_boundary_text.stress_grid",
                      "extended_controls.tabular_ppo_connectivity.ratio_range")),
    (COST_FRONTIER, ("cost_frontier", "text_rootbudget.oscc_select", "text_rootbudget.independent")),
    (SCALAR_SCREEN, ("text_bounded.scalar_screen", "learning_boundary.scalar_clipped",
                     "retained_evidence.scalar_clipped", "extended_controls.scalar_clipped",
                     "acceptance.clipping_interaction", "learning_boundary_text.connectivity")),
    (CONNECTIVITY_LOOP, ("extended_controls.tabular_ppo_connectivity", "one_seed_connectivity", "seed_cost",
                         "runtime_text")
     + _each("clipping.{}.i_minus_p_endpoint", "connectivity_control", "behavior_lag_grid", "learning_rate_grid",
             "activated_stress")),
    (ACTION_SUPPORT, ("multi_action", "abstract.oscc_select", "abstract.rv_select", "text_action_support.3_actions",
                      "selector_axes_text.3_actions")),
    (COVARIANCE_REGIMES, ("selector_stress",)),
    (CALIBRATION_SWEEP, ("calibration", "fig_calibration_size", "abstract.calibration",
                         "text_action_support.calibration", "selector_axes_text.calibration")),
    (POLICY_SCREEN, ("grpo_ppo", "measured_solver", "text_bounded.policy_screen", "app_solver", "solver_text",
                     "failures", "learning_boundary.policy_solver", "retained_evidence.policy_solver",
                     "acceptance.solver_transfer", "release.solver_evaluation")),
    (CONSTRUCTIONS, ("measured_independent",)),
    (LEARNING_STUDY, _each("grpo_ppo.{}.exploitability", *_LEARNED_05)
     + _each("measured_solver.{}.exploitability", *_LEARNED_05) + _each("measured_solver.{}.nashconv", *_LEARNED_05)
     + ("text_bounded.policy_screen.cp_grpo.exploitability", "text_bounded.policy_screen.independent.exploitability",
        "app_solver.nashconv.reported_value", "app_solver.exploitability.reported_value",
        "solver_text.cp_grpo.exploitability", "learning_boundary.policy_solver.exploitability",
        "retained_evidence.policy_solver.exploitability", "acceptance.solver_transfer.exploitability",
        "release.solver_evaluation.exploitability")),
    (CFR_REFERENCE, ("measured_solver.exact_cfr_plus",)),
    (BOUNDED_DIAGNOSTIC, ("text_bounded.three_seed", "fig_three_seed")),
    (FROZEN_OPPONENT, ("text_bounded.frozen_opponent", "learning_boundary.frozen_opponent",
                       "retained_evidence.frozen_opponent", "extended_controls.frozen_opponent")),
    (EXACT_CALIBRATION, ("learning_boundary.exact_calibration", "retained_evidence.exact_calibration",
                         "extended_controls.exact_solver")),
    (MEASURED_TRANSFER, ("measured_transfer", "text_rootbudget.kuhn")
     + _each("app_transfer.{}.exploitability", "leduc_to_leduc.paired", "leduc_to_leduc.ind", "leduc_to_kuhn.paired",
             "leduc_to_kuhn.ppo")
     + _each("transfer_text.kuhn.{}.exploitability", "cp_grpo", "ppo")),
    (VARIANCE_RATIOS_06, ("app_transfer", "transfer_text", "acceptance.solver_transfer.transfer_ratio")),
    (SELF_RATIO_06, ("app_transfer.leduc_to_leduc.ind.variance_ratio",)),
)


def _by_prefix(declarations) -> dict[str, Reading]:
    """Prefix -> its reading; a prefix declared twice stops the import (one quantity, one reading)."""
    out: dict[str, Reading] = {}
    for reading, prefixes in declarations:
        for prefix in prefixes:
            if prefix in out:
                raise ValueError(f"the claim-id prefix {prefix!r} is declared twice.")
            out[prefix] = reading
    return out


#: Claim-id prefix -> the reading of the entries it holds (the longest prefix of an id wins).
BY_PREFIX: dict[str, Reading] = _by_prefix(DECLARATIONS)


def longest_prefix(claim_id: str, prefixes) -> str | None:
    """The longest of `prefixes` that is `claim_id` or a run of its leading dotted components, or None."""
    parts = claim_id.split(".")
    for n in range(len(parts), 0, -1):
        head = ".".join(parts[:n])
        if head in prefixes:
            return head
    return None


def declared_prefix(claim_id: str) -> str | None:
    """The declared prefix that gives `claim_id` its reading (`BY_PREFIX`), or None when none holds it."""
    return longest_prefix(claim_id, BY_PREFIX) if claim_id else None


def reading_of(claim_id: str | None, declared=None) -> str | None:
    """The sentence of the reading `claim_id` was measured under (the reading of its longest declared prefix in
    `declared`, prefix -> `Reading` or sentence; by default `BY_PREFIX`), or None when no prefix holds it."""
    if not claim_id:
        return None
    table = BY_PREFIX if declared is None else declared
    prefix = longest_prefix(claim_id, table)
    if prefix is None:
        return None
    found = table[prefix]
    return found.sentence if isinstance(found, Reading) else found
