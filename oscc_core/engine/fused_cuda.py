"""The collector's fused GPU path: the CPU kernel's per-group source, one CUDA thread per group.

`engine.fused` writes every step of a comparison group -- stream keys,
counter-based uniforms, the integer 53-bit policy thresholds, the play of
each hand and the group's int64 sums -- as plain Python functions, compiled
there by numba for the CPU.  This module compiles the very same functions
(their `.py_func`) with `numba.cuda.jit(device=True)`, so the GPU kernel runs
the CPU kernel's source and the two engines cannot drift: the same integer
arithmetic, the same float64 products and comparisons of the root draws
(single IEEE operations, exact on both), hence the same bits.

The kernel runs one thread per group: the hands' decisions loop inside the
thread, nothing synchronises with the host inside the loop, each group's
sums are reduced in its thread (int64, exact), and the tables are read from
device memory (small enough to stay in the GPU's caches).  The per-group
columns stay on the GPU: the collector adds them there into running int64
moment sums and counts (copied to the host once, at the end) and copies the
columns it keeps into pinned host memory on a side stream, overlapping the
next chunk's kernel.  Everything but the group ids is uploaded once per
collection (`prepare`), so a chunk costs one launch and no host sync.

The GPU is used only where `numba.cuda` imports and finds a device
(`available()`); numba's CUDA simulator (`NUMBA_ENABLE_CUDASIM=1`) runs the
same kernel on the CPU, which is how the tests check it without a GPU.
"""
from __future__ import annotations

import os
import types
import warnings
from functools import lru_cache

import numpy as np
import torch

from oscc_core.engine import chance_maps, fused

try:        # numba reads NUMBA_ENABLE_CUDASIM here; the simulator swaps this module-level name in kernels
    from numba import cuda
except ImportError:   # pragma: no cover - a numba without its CUDA target: `available()` is False
    cuda = None

THREADS_PER_BLOCK = 128        # groups per block; each thread holds two hands' state in registers
#: Set to "1" to keep the collector's "auto" engine off the GPU kernel (the torch path then runs on CUDA).
DISABLE_ENV = "OSCC_NO_FUSED_CUDA"


def available() -> bool:
    """True when numba's CUDA target (or its simulator) imports and sees a device."""
    try:
        return cuda is not None and bool(cuda.is_available())
    except Exception:       # no driver or no usable device: the torch path runs
        return False


def enabled() -> bool:
    """True when the collector's "auto" engine may use the GPU kernel on a CUDA device."""
    return os.environ.get(DISABLE_ENV, "") not in ("1", "true", "yes") and available()


def retarget(compile_device, names=fused.SHARED_FUNCTIONS, module=fused) -> dict:
    """The functions `names` of `module` rebuilt from their Python source for another target.

    Each function is recreated from its code object over a copy of the
    module's globals in which every name in `names` is replaced by its
    retargeted version (callees first), so a call of `_mix` inside `_absorb`
    reaches the GPU's `_mix`.  Constants and other globals are the module's
    own.  Returns that namespace (name -> compiled function).
    """
    namespace = dict(vars(module))
    for name in names:
        source = getattr(module, name).py_func
        rebuilt = types.FunctionType(source.__code__, namespace, name, source.__defaults__, source.__closure__)
        namespace[name] = compile_device(rebuilt)
    return namespace


def _grid(groups, branch_ids, start_nodes, budget, root_player, share_hidden, share_chance,
          policy_stream, prefixes, tags, event, map_code, relabel_event, own_cum, own_last, pub_cum, pub_last,
          hid_cum, hid_last, steps, num_cards, has_chance, player, chance_child, child, legal, info_index,
          cdf, last_action, utility, code_early, code_illegal,
          returns, own_out, public_out, codes, decisions_out, chance_out, policy_lanes_out, relabel_out):
    """The kernel's body: thread i runs group i (`fused._collect_group`, retargeted with it)."""
    i = cuda.grid(1)
    if i < groups.shape[0]:     # _collect_group: a name of the retargeted namespace this body runs in
        _collect_group(i, groups, branch_ids, start_nodes, budget, root_player, share_hidden,  # noqa: F821
                       share_chance, policy_stream, prefixes, tags, event, (map_code, relabel_event),
                       (own_cum, own_last, pub_cum, pub_last, hid_cum, hid_last), steps, num_cards, has_chance,
                       (player, chance_child, child, legal, info_index, cdf, last_action, utility),
                       code_early, code_illegal,
                       (returns, own_out, public_out, codes, decisions_out, chance_out, policy_lanes_out,
                        relabel_out))


@lru_cache(maxsize=None)
def _kernel():
    """The compiled CUDA kernel (built on first use): `_grid` over the retargeted `fused` functions."""
    namespace = retarget(cuda.jit(device=True))
    namespace["cuda"] = cuda
    body = types.FunctionType(_grid.__code__, namespace, "collect_groups_cuda")
    return cuda.jit(body)


def _on_device(value):
    """An input argument as the kernel reads it: arrays in device memory, scalars as they are."""
    if isinstance(value, torch.Tensor):
        return cuda.as_cuda_array(value) if value.is_cuda else cuda.to_device(value.numpy())
    if isinstance(value, np.ndarray):
        return cuda.to_device(value)
    return value


def _upload(value, device: torch.device | None):
    """`_on_device(value)`, a NumPy array copied through torch's allocator on a CUDA `device`: one C++ copy,
    and no numba allocation, whose free would later synchronise the device."""
    if device is None or not isinstance(value, np.ndarray):
        return _on_device(value)
    wide = value.dtype == np.uint64          # copied as its int64 bits: torch's uint64 support is partial
    array = cuda.as_cuda_array(torch.as_tensor(value.view(np.int64) if wide else value, device=device))
    return array.view(np.uint64) if wide else array


def prepare(game, root, streams, event: int, cdf: torch.Tensor, last_action: torch.Tensor,
            continuation_map: str = chance_maps.DEFAULT_MAP) -> tuple:
    """The kernel's inputs after the group ids (`fused.kernel_inputs[1:]`), in device memory.

    They depend on the game, root, policy, run, split, arm, branches and
    budget, never on a chunk's groups, so the collector builds and uploads
    them once per collection: per chunk that saves the tables' rebuild in
    NumPy and about twenty small synchronous copies.
    """
    device = streams.groups.device if streams.groups.is_cuda else None
    inputs = fused.kernel_inputs(game, root, streams, event, cdf, last_action, None, continuation_map)
    return tuple(_upload(v, device) for v in inputs[1:])


def launch_stream(device: torch.device):
    """torch's current stream on `device` as a numba launch stream (0, numba's default, for the legacy default
    stream), so the kernel stays ordered with the torch ops before and after it."""
    handle = torch.cuda.current_stream(device).cuda_stream
    return cuda.external_stream(handle) if handle else 0


def launch(inputs: tuple, outputs: dict, threads_per_block: int = THREADS_PER_BLOCK, stream=0) -> None:
    """Run the kernel over inputs (`fused.kernel_inputs`, device arrays or host arrays) into the device
    arrays `outputs` (in `fused.OUTPUTS` order) on `stream`; returns without waiting for the GPU."""
    n = len(inputs[0])
    threads_per_block = max(1, min(threads_per_block, n))     # a tiny chunk (the simulator's) needs no idle threads
    blocks = max(1, -(-n // threads_per_block))
    with warnings.catch_warnings():     # small chunks leave the GPU idle; numba says so at every launch
        warnings.filterwarnings("ignore", message=".*(occupancy|Grid size)")
        _kernel()[blocks, threads_per_block, stream](*(_on_device(v) for v in inputs), *outputs.values())


def device_outputs(g: int, b: int, device: torch.device | None) -> dict:
    """Empty per-group output columns for g groups and b branches: torch tensors on a CUDA `device`,
    or NumPy arrays (for the simulator) when `device` is None."""
    shapes = {name: ((g, b) if per_branch else (g,), dtype) for name, dtype, per_branch in fused.OUTPUTS}
    if device is None:
        return {name: np.empty(shape, dtype) for name, (shape, dtype) in shapes.items()}
    return {name: torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=device)
            for name, (shape, dtype) in shapes.items()}


def collect_chunk(game, root, streams, event: int, cdf: torch.Tensor, last_action: torch.Tensor,
                  continuation_map: str = chance_maps.DEFAULT_MAP, inputs: tuple | None = None) -> dict:
    """`fused.collect_chunk`'s per-group results computed by the GPU kernel (bit for bit the same).

    `inputs`: the collection's `prepare`d inputs (built here when None, with `continuation_map`; when given,
    they carry the map they were prepared with).
    With the chunk's groups on a CUDA device the results stay there as torch
    tensors, queued on torch's current stream (nothing waits for the GPU);
    with CPU groups (numba's simulator) they come back as CPU tensors.
    """
    g, b, _ = streams.lane_shape()
    on_gpu = streams.groups.is_cuda
    inputs = prepare(game, root, streams, event, cdf, last_action, continuation_map) if inputs is None else inputs
    outputs = device_outputs(g, b, streams.groups.device if on_gpu else None)
    targets = {k: (cuda.as_cuda_array(v) if on_gpu else cuda.to_device(v)) for k, v in outputs.items()}
    launch((streams.groups, *inputs), targets, stream=launch_stream(streams.groups.device) if on_gpu else 0)
    if on_gpu:
        return outputs
    return {k: torch.from_numpy(v.copy_to_host()) for k, v in targets.items()}
