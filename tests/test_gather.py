"""Gathering a collection's per-group columns on the host."""
import pytest
import torch

from oscc_core.engine.gather import KeptColumns


def test_kept_columns_go_to_pageable_memory_with_a_warning_when_pinning_fails():
    kept = KeptColumns(("returns",), 6, torch.device("cpu"))
    kept.stream = "a side stream"        # as on CUDA; this CPU build of torch cannot pin memory, so pinning fails
    with pytest.warns(RuntimeWarning, match=r"pinning 0 MiB of host memory .* failed .* pageable memory"):
        host = kept.allocate({"returns": torch.zeros((2, 3), dtype=torch.int64)})
    assert host["returns"].shape == (6, 3) and host["returns"].dtype == torch.int64
    assert not host["returns"].is_pinned()
