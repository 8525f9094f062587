"""benchmarks/bench_learn.py's study-batch report, which a GPU machine prints (`--device cuda`): here both sides
run on this CPU with two seeds, so that a fault in it shows before a GPU's time is spent."""
import importlib.util
import re
from pathlib import Path

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_learn.py"
spec = importlib.util.spec_from_file_location("bench_learn", PATH)
bl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bl)


def test_the_study_batch_holds_both_learners_four_arms_each(monkeypatch):
    monkeypatch.setattr(bl, "STUDY_SEEDS", (1, 2))
    batch = bl.study_batch("cpu")
    assert sorted(batch) == ["converging", "literal"]
    assert all(sorted({r.arm for r in learners.runs}) == ["cp_grpo", "grpo", "independent", "ppo"]
               for learners in batch.values())
    assert batch["converging"].schedule.proximal and not batch["literal"].schedule.proximal


def test_the_study_batch_report_prints_the_ratio_and_the_hosts_share(monkeypatch, capsys):
    monkeypatch.setattr(bl, "STUDY_SEEDS", (1, 2))
    gpu, cpu = bl.study_batch("cpu"), bl.study_batch("cpu")       # a CPU stands in for the GPU
    bl.print_study_batch(gpu, cpu, iterations=1, repeats=1)
    bl.print_back_to_back(gpu, iterations=2, repeats=1)
    out = capsys.readouterr().out
    assert re.search(r"= 16 runs: CUDA [\d,]+ run-iterations/s vs fused CPU path [\d,]+ .*: [\d.]+x", out)
    host = [float(h) for h in re.findall(r"\d+\.\d+ \((\d+\.\d+)\)", out)]
    total = [float(t) for t in re.findall(r"(\d+\.\d+) \(\d+\.\d+\)", out)]
    assert len(host) == 2 and all(0 < h <= t for h, t in zip(host, total))
