"""The converging learner's transfer: its operating point frozen on Leduc, applied unchanged to Kuhn.

The converging learner (counterfactual decision points and a proximal pull
toward a moving magnet: two choices the paper leaves open, ours) has its
per-arm choices (eta, alpha, kappa) made on Leduc's development seeds by the
Leduc learning study.  `leduc_choices` reads them, with the rule that made
them, from that study's results file (`leduc_study`: the solver chapter's
``05_solver_study.json``, keys ``choices.converging`` and ``design``); a file
that holds only the choices, ``{learner: {arm: {eta, alpha, kappa}}}``, takes
the rule the parameters describe (`leduc_rule`), the one the Leduc study
records for the same defaults.  `converging_operating_point` freezes and
hashes them (`learning.operating_point.study_operating_point`): the solver
chapter builds the same object from the same file and prints the same digest.

The Kuhn study (`design_of`, a `reporting.learning_study.LearningStudy` of
the target game) runs every learned arm at those choices on many seeds,
recorded at budgets up to the largest multiple of the chapter's budget; the
runs are tasks on Dask.  `run` either shows the committed study
(`study_file`) and reruns a small part of it live, checked record by record,
or runs the whole study and keeps each run's average policy at the largest
budget as an OpenSpiel-keyed checkpoint (``"kuhn/<arm>/<seed>"``).  The
study's record drops the learner level of the LearningStudy record:
``runs.<arm>.<seed>.<budget>`` and ``summary.<budget>`` (budgets in physical
calls, as integer-valued keys; exploitability in chips).  Beside it, under
``kuhn_tuned``, the Kuhn-tuned control (`kuhn_tuned`): the same learner with
its choices made on Kuhn's development seeds by the same rule, run on the
same seeds and budgets; the live rerun covers it too, at its committed
choices.  A study run whole keeps the control's checkpoints too
(``"kuhn_tuned/<arm>/<seed>"``, `kuhn_tuned.CHECKPOINTS_FILE`), rechecked by
pyspiel as the frozen study's are; a committed study without them is shown
with a sentence saying so (`check_control_checkpoints` gives None).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from oscc_core.chapters.transfer import kuhn_facts, kuhn_tuned
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.learning import study_design as design
from oscc_core.learning.arms import get_learner_arm
from oscc_core.learning.checkpoints import load_checkpoints, openspiel_check, save_checkpoints
from oscc_core.learning.operating_point import OperatingPoint, study_operating_point
from oscc_core.reporting import claims, learning_study
from oscc_core.reporting.learning_study import CONVERGING_GRID, LearningStudy
from oscc_core.reporting.results import clean

STUDY_STEM, CHECKPOINTS_FILE = "06_transfer_study", "06_transfer_study_checkpoints.json.gz"
LEARNER = design.CONVERGING
ARMS = design.ARMS
#: The paper's row of each learned arm in its Kuhn transfer table.
PAPER_ROW = {"cp_grpo": "cp_grpo_paired", "independent": "independent", "grpo": "standard_grpo",
             "ppo": "standard_ppo"}
#: The arms whose Kuhn exploitability in the paper's transfer table the calls-to table asks about.
TARGET_ARMS = ("cp_grpo", "ppo")
#: Design fields of the Leduc study that enter the converging operating point's rule (with its converging options
#: and recorded budgets per decade when they are not the defaults: `reporting.learning_study.rule_of_design`).
RULE_FIELDS = learning_study.RULE_FIELDS
CHECK_TOLERANCE = 1e-8       # chips: a checkpoint's exploitability by pyspiel against the study's value


class StaleStudy(RuntimeError):
    """The committed Kuhn study was run at another converging operating point than the one frozen now."""


def claim_of(arm: str, column: str = "exploitability") -> str:
    return f"measured_transfer.kuhn.{PAPER_ROW[arm]}.{column}"


def thresholds() -> tuple[float, ...]:
    """The paper's Kuhn exploitabilities of CP-GRPO and PPO (chips), read from the claims file."""
    return tuple(float(claims.claim(claim_of(arm))) for arm in TARGET_ARMS)


# ----- the converging operating point ------------------------------------------------------------
def leduc_rule(p) -> dict:
    """The rule fields the Leduc study records for the parameters `p` (its design: development seeds, budget,
    the tuning budgets' multiples, the grids), as JSON values (the solver chapter's design at its defaults)."""
    leduc = LearningStudy(p.source_game, p.budget, (1,), (), tuple(p.dev_seeds), (), p.base_schedule(),
                          grids=(("literal", design.Grid(eta=tuple(p.eta_grid))), ("converging", CONVERGING_GRID)))
    return json.loads(json.dumps(learning_study.rule_of_design(leduc.record())))


def leduc_choices(p) -> dict:
    """The converging learner's per-arm choices and the rule that made them: {"choices": {arm: {eta, alpha,
    kappa}}, "rule": {dev_seeds, budget, tune_multiples, grids, and converging_options and curve_per_decade away
    from their defaults}, "design_from": "the study file" or "the
    parameters"} (module docstring)."""
    body = json.loads(Path(p.leduc_study).read_text(encoding="utf-8"))
    if "choices" in body and "design" in body:
        return {"choices": body["choices"][LEARNER], "rule": learning_study.rule_of_design(body["design"]),
                "design_from": "the study file"}
    if LEARNER not in body:
        raise ValueError(f"{p.leduc_study} holds neither a learning study (choices and design) nor the learners' "
                         f"choices ({{'{LEARNER}': {{arm: {{eta, alpha, kappa}}}}}}).")
    return {"choices": body[LEARNER], "rule": leduc_rule(p), "design_from": "the parameters"}


def converging_operating_point(p, leduc: dict) -> OperatingPoint:
    """The converging learner's frozen operating point on the source game (`leduc` from `leduc_choices`)."""
    return study_operating_point(p.source_game, learning_study.rule_base(p.base_schedule(), leduc["rule"]), LEARNER,
                                 leduc["choices"], leduc["rule"])


# ----- the Kuhn study ----------------------------------------------------------------------------
def design_of(p, seeds=None, multiples=None, rule: dict | None = None) -> LearningStudy:
    """The Kuhn study of the parameters `p` (seeds and multiples default to the parameters') at the Leduc study's
    `rule` (the operating point's: its converging options and recorded budgets per decade; default: none of the
    options, the committed density)."""
    rule = rule or {}
    options = rule.get("converging_options", design.DEFAULT_OPTIONS)
    return LearningStudy(p.target_game, p.budget, tuple(multiples or p.study_multiples),
                         tuple(seeds or p.study_seeds), tuple(p.dev_seeds), thresholds(),
                         learning_study.rule_base(p.base_schedule(), rule), converging_options=options,
                         curve_per_decade=int(rule.get("curve_per_decade", design.DEFAULT_PER_DECADE)))


def cluster(p):
    """The Dask scheduler's address for the chapter's runs (`reporting.learning_study.cluster`; "" and no cluster
    on a GPU, where the runs train in process)."""
    return learning_study.cluster(p.workers, p.scheduler, p.torch_device)


def store(p) -> str:
    """The directory that keeps every finished run: `p.study_store`, or a fresh temporary one."""
    return learning_study.study_store(p.study_store, "oscc-transfer-study-")


def reshape(study: dict, op: OperatingPoint) -> dict:
    """A LearningStudy record of the converging learner without its learner level, with the frozen operating
    point it ran at (nothing is tuned on Kuhn: the design keeps no grid)."""
    kept = {k: v for k, v in study["design"].items() if k not in ("grids", "tune_multiples")}
    return clean({"design": kept, "choices": study["choices"][LEARNER],
                  "operating_point": {"digest": op.digest, "record": op.record()},
                  "runs": study["runs"][LEARNER], "summary": study["summary"][LEARNER],
                  "thresholds": study["thresholds"][LEARNER]})


def run(p, op: OperatingPoint, scheduler: str | None = None) -> dict:
    """The Kuhn study at the frozen converging operating point `op`, its tasks sent to the Dask cluster at
    `scheduler` (else `p.scheduler`'s, else a local one of `p.workers`): {"study", "live_check" or None,
    "checkpoints_file", "control_checkpoints_file" (None when no file holds the control's), "seconds", "workers",
    "ran", "stored"} (module docstring); the study holds the Kuhn-tuned control under "kuhn_tuned"
    (`kuhn_tuned.run`: tuned and run here, or rerun live at its committed choices), and the live check covers
    both.  Raises StaleStudy when the committed study ran at another operating point or has no control."""
    frozen = design_of(p, rule=kuhn_tuned.rule_of(op))
    control_study = kuhn_tuned.control_design(frozen, kuhn_tuned.rule_of(op))    # refuses bad seeds first
    run_on = {"where": store(p), "scheduler": scheduler or p.scheduler or None, "start": time.perf_counter(),
              "code": learning_study.writer_commit(),       # the code as it stands when the runs start
              "workers": (p.scheduler or p.workers) if p.torch_device.type == "cpu" else
              f"in process on {p.torch_device}"}
    if p.study_file:
        return _show(p, op, frozen, control_study, run_on)
    return _run_whole(p, op, frozen, control_study, run_on)


def _show(p, op: OperatingPoint, frozen: LearningStudy, control_study: LearningStudy, on: dict) -> dict:
    """The committed study, with a small part of it (and of its control) rerun live and checked against it."""
    committed = json.loads(Path(p.study_file).read_text(encoding="utf-8"))
    if committed["operating_point"]["digest"] != op.digest:
        raise StaleStudy(f"{p.study_file} ran at the converging operating point "
                         f"{committed['operating_point']['digest'][:12]}, but the Leduc study now freezes "
                         f"{op.digest[:12]}: rerun the Kuhn study (python -m oscc_core run transfer -p "
                         f"study_file '' ...).")
    if kuhn_tuned.KEY not in committed:
        raise StaleStudy(f"{p.study_file} has no Kuhn-tuned control ('{kuhn_tuned.KEY}'): rerun the Kuhn study "
                         f"(python -m oscc_core run transfer -p study_file '' ...).")
    live = frozen.run(on["where"], {LEARNER: op.arm_choices()}, p.workers, on["scheduler"], p.torch_device)
    control = kuhn_tuned.run(control_study, on["where"], p.workers, on["scheduler"],
                             committed[kuhn_tuned.KEY]["choices"], p.torch_device)
    bitwise, why = learning_study.bit_equality_expected(committed)     # the control's manifest is the study's
    checks = {"frozen": learning_study.live_check(committed, reshape(live["study"], op), bitwise),
              kuhn_tuned.KEY: learning_study.live_check(committed[kuhn_tuned.KEY], control["study"], bitwise)}
    control_file = Path(p.study_file).with_name(kuhn_tuned.CHECKPOINTS_FILE)
    return {"study": committed, "live_check": combined_check(checks, why),
            "checkpoints_file": Path(p.study_file).with_name(CHECKPOINTS_FILE),
            "control_checkpoints_file": control_file if control_file.is_file() else None,
            "seconds": time.perf_counter() - on["start"], "workers": on["workers"],
            "ran": live["ran"] + control["ran"], "stored": live["stored"] + control["stored"]}


def _run_whole(p, op: OperatingPoint, frozen: LearningStudy, control_study: LearningStudy, on: dict) -> dict:
    """The whole study and its control (tuned on Kuhn's development seeds here), each run's average policy at the
    largest budget saved as a checkpoint: the frozen study's as "kuhn/<arm>/<seed>", the control's as
    "kuhn_tuned/<arm>/<seed>" in a file of its own (`kuhn_tuned.save_checkpoints`)."""
    done = frozen.run(on["where"], {LEARNER: op.arm_choices()}, p.workers, on["scheduler"], p.torch_device)
    control = kuhn_tuned.run(control_study, on["where"], p.workers, on["scheduler"], device=p.torch_device)
    tables = {f"{p.target_game}/{key.split('/', 1)[1]}": (p.target_game, table)
              for key, table in done["tables"].items() if key.startswith(f"{LEARNER}/")}
    path = save_checkpoints(Path(p.out_dir) / CHECKPOINTS_FILE, tables)
    control_path = kuhn_tuned.save_checkpoints(Path(p.out_dir), p.target_game, control["tables"])
    return {"study": {**reshape(done["study"], op), kuhn_tuned.KEY: control["study"]}, "live_check": None,
            "checkpoints_file": path, "control_checkpoints_file": control_path,
            "seconds": time.perf_counter() - on["start"], "workers": on["workers"], "code": on["code"],
            "ran": done["ran"] + control["ran"], "stored": done["stored"] + control["stored"]}


def combined_check(checks: dict, reason: str | None = None) -> dict:
    """The live check of both studies (`checks`: {"frozen", "kuhn_tuned"}, each `learning_study.live_check`'s,
    made in the same mode): their records and numbers added, the largest difference of either, whether both
    agree, and each beside; `reason` says why bit equality is not expected, when it is not."""
    first = next(iter(checks.values()))
    return {"records": sum(c["records"] for c in checks.values()),
            "max_abs_difference": max(c["max_abs_difference"] for c in checks.values()),
            "mode": first["mode"], "reason": reason, "fields": sum(c["fields"] for c in checks.values()),
            "fields_within_range": sum(c["fields_within_range"] for c in checks.values()),
            "nothing_to_compare": all(c.get("nothing_to_compare", False) for c in checks.values()),
            "agrees": all(c["agrees"] for c in checks.values()), **checks}


def top_budget(study: dict) -> int:
    return max(int(b) for b in study["design"]["recorded_budgets"])


def check_checkpoints(result: dict) -> dict:
    """pyspiel's exploitability of every checkpoint in the study's checkpoints file beside the study's own value
    at the largest budget (`learning.checkpoints.openspiel_check`; chips)."""
    study, top = result["study"], str(top_budget(result["study"]))
    ours = {key: study["runs"][key.split("/")[1]][key.split("/")[2]][top]["exploitability_average"]
            for key in load_checkpoints(result["checkpoints_file"])}
    return clean(openspiel_check(result["checkpoints_file"], ours, lambda key: key.split("/")[0]))


def check_control_checkpoints(result: dict) -> dict | None:
    """pyspiel's recheck of the Kuhn-tuned control's checkpoints (`kuhn_tuned.check_checkpoints`), or None when no
    file holds them (the studies committed before issue 33 kept none)."""
    return kuhn_tuned.check_checkpoints(result["study"][kuhn_tuned.KEY], result.get("control_checkpoints_file"),
                                        result["study"]["design"]["game"], CHECK_TOLERANCE)


def checkpoint_contrast(result: dict, root: str) -> dict:
    """{"kuhn/<arm>/<seed>": the exact budget-1 contrast variance (chips^2) of the arm's construction at `root`
    with the checkpoint as continuation}, from the checkpoints file read back."""
    out = {}
    for key, policy in load_checkpoints(result["checkpoints_file"]).items():
        game, arm = key.split("/")[:2]
        coupling = get_learner_arm(arm).coupling_arm
        out[key] = arm_moments(game, root, policy)[coupling].contrast_var(0, 1)
    return clean(out)


def proved_maxima(root: str) -> dict:
    """{arm: (its construction, the proved maximum of that construction's per-group budget-1 contrast variance
    at `root` over every continuation policy, chips^2)} (`kuhn_facts.certified_maxima`)."""
    out = {}
    for arm in ARMS:
        coupling = get_learner_arm(arm).coupling_arm
        out[arm] = (coupling, kuhn_facts.certified_maxima(root, (coupling,))[coupling]["upper"])
    return out


def write(p, result: dict, check: dict, control_check: dict | None = None) -> Path | None:
    """`06_transfer_study.json` in the output directory when the whole study ran (with the pyspiel check of its
    checkpoints, and of the control's under "kuhn_tuned.checkpoints", and a manifest: the parameters, the
    library's source digest; the wall time and workers beside)."""
    if result["live_check"] is not None:
        return None
    from oscc_core.reporting.results import write_results

    study = result["study"]
    if control_check is not None:
        study = {**study, kuhn_tuned.KEY: {**study[kuhn_tuned.KEY], "checkpoints": control_check}}
    body = {**study, "checkpoints": check,
            "run": {"seconds": round(result["seconds"], 1), "workers": result["workers"], "ran": result["ran"],
                    "stored": result["stored"], **result["code"]}}
    return write_results(p.out_dir, STUDY_STEM, p.record, body, "cpu")


def record(result: dict, check: dict, contrast: dict, maxima: dict, leduc: dict, root: str,
           control_check: dict | None = None) -> dict:
    """What the chapter's results file keeps of the study and of its Kuhn-tuned control (the runs, and every
    score the control's tuning tried, stay in the study's own file; the control's checkpoint check is None when
    no checkpoints of it were kept)."""
    study, tuned = result["study"], result["study"][kuhn_tuned.KEY]
    kept = ("eta", "alpha", "kappa", "score", "extensions", "at_edge")
    control = {"design": tuned["design"], "choices": tuned["choices"], "summary": tuned["summary"],
               "thresholds": tuned["thresholds"],
               "tuning": {arm: {k: t[k] for k in kept} for arm, t in (tuned["tuning"] or {}).items()},
               "checkpoints": None if control_check is None else
               {k: control_check[k] for k in ("file", "max_abs_difference", "missing", "agrees")}}
    return clean({kuhn_tuned.KEY: control, "operating_point": study["operating_point"],
                  "leduc_rule_from": leduc["design_from"],
                  "design": study["design"], "choices": study["choices"], "summary": study["summary"],
                  "thresholds": study["thresholds"], "live_check": result["live_check"],
                  "checkpoints": {k: check[k] for k in ("file", "max_abs_difference")},
                  "contrast_root": root, "contrast_variance_exact": contrast,
                  "proved_maxima": {arm: {"construction": c, "maximum": m} for arm, (c, m) in maxima.items()}})
