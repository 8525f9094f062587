"""Counter-based random streams: the core of the coupling contract.

`uniform(key, counter)` is a pure function of two 64-bit integers, computed
elementwise in torch int64 arithmetic (which wraps modulo 2**64 on every
device), so a draw does not depend on batch size, chunking, device or the
order in which lanes are processed.  There is no global generator anywhere.

Keys come from hashing *typed* fields: each namespace has its own tag and
each field is tagged by its name before its value is mixed in, so the same
numbers in two namespaces, or with a field present versus absent, give
unrelated keys.  The policy key takes no game state at all: it cannot see a
hidden card by construction.

`uniform_reference` and `derive_key_reference` are the same functions on
plain Python integers; tests check the two agree bit for bit.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import torch

MASK64 = (1 << 64) - 1
_MIX_1 = 0xFF51AFD7ED558CCD       # murmur3 fmix64 multipliers
_MIX_2 = 0xC4CEB9FE1A85EC53
_GAMMA = 0x9E3779B97F4A7C15        # SplitMix64's odd increment (golden ratio)
_MANTISSA_SCALE = 2.0 ** -53       # a 53-bit integer times this is an exact float64 in [0, 1)
DRAW_SCALE = 2 ** 53               # draws are m / DRAW_SCALE for a 53-bit integer m


def signed(x: int) -> int:
    """A 64-bit pattern as the int64 value torch stores for it."""
    x &= MASK64
    return x - (1 << 64) if x >= 1 << 63 else x


def tag(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


# ----- plain-Python reference ---------------------------------------------
def mix64_reference(x: int) -> int:
    x &= MASK64
    x ^= x >> 33
    x = (x * _MIX_1) & MASK64
    x ^= x >> 33
    x = (x * _MIX_2) & MASK64
    x ^= x >> 33
    return x


def uniform_reference(key: int, counter: int) -> float:
    """Reference draw in [0, 1) for one (key, counter) pair."""
    x = mix64_reference((key + _GAMMA * (counter + 1)) & MASK64)
    return (x >> 11) * _MANTISSA_SCALE


# ----- torch implementation -----------------------------------------------
def _shr(x: torch.Tensor, s: int) -> torch.Tensor:
    """Logical right shift of int64 bit patterns (torch's >> is arithmetic)."""
    return (x >> s) & ((1 << (64 - s)) - 1)


def mix64(x: torch.Tensor) -> torch.Tensor:
    """murmur3's fmix64 finaliser on int64 tensors (wrapping arithmetic)."""
    x = x ^ _shr(x, 33)
    x *= signed(_MIX_1)
    x ^= _shr(x, 33)
    x *= signed(_MIX_2)
    return x ^ _shr(x, 33)


def uniform(key: torch.Tensor, counter: torch.Tensor | int) -> torch.Tensor:
    """Uniform draws in [0, 1) as float64, one per broadcast (key, counter) pair.

    SplitMix64's output function applied to the state key + GAMMA*(counter+1):
    the key is already a well-mixed hash, so one finaliser per draw suffices.
    """
    return uniform_bits(key, counter).to(torch.float64) * _MANTISSA_SCALE


def _device_of(*values) -> torch.device:
    """The device of the first tensor among `values` (the CPU when all are plain integers): every tensor a
    stream function creates goes there, never to torch's default device."""
    return next((v.device for v in values if isinstance(v, torch.Tensor)), torch.device("cpu"))


def uniform_bits(key: torch.Tensor, counter: torch.Tensor | int) -> torch.Tensor:
    """The 53-bit integers m behind `uniform` (uniform = m / 2**53), as int64."""
    device = _device_of(key, counter)
    key = torch.as_tensor(key, dtype=torch.int64, device=device)
    counter = torch.as_tensor(counter, dtype=torch.int64, device=device)
    return _shr(mix64(key + (counter + 1) * signed(_GAMMA)), 11)


# ----- namespaces and key derivation --------------------------------------
@dataclass(frozen=True)
class Namespace:
    """A family of stream keys: its fields and what may be shared across branches."""

    name: str
    fields: tuple[str, ...]          # in hashing order
    optional: tuple[str, ...]        # fields an arm may leave out to share a key
    shared_across_branches: str      # the contract, in words
    draws: str                       # what the stream's uniforms decide

    @property
    def tag(self) -> int:
        return tag(f"oscc/namespace/{self.name}")


NAMESPACES: dict[str, Namespace] = {ns.name: ns for ns in (
    Namespace("root", ("run", "split", "group"), (),
              "always: the acting player's information state is shared",
              "acting player's private card, then the public card for round-two roots"),
    Namespace("hidden", ("run", "split", "group", "branch"), ("branch",),
              "only in root-coupled arms (root_only, full)",
              "opponent's private card from its posterior given the root"),
    Namespace("chance", ("run", "split", "group", "event", "rollout", "branch"), ("branch",),
              "only in continuation-coupled arms (continuation_only, full), by semantic event",
              "continuation chance events such as Leduc's public card"),
    Namespace("policy", ("run", "split", "group", "branch", "rollout", "stream"), ("stream",),
              "never: every branch has its own stream",
              "continuation actions of both players, counter = decision index"),
    Namespace("bootstrap", ("run", "purpose", "replicate"), (),
              "not applicable", "resampling indices for bootstrap and calibration"),
)}

SPLITS = {"audit": 0, "train": 1, "validation": 2, "test": 3, "calibration": 4}


def _field_items(namespace: str, fields: dict) -> list[tuple[int, object]]:
    ns = NAMESPACES[namespace]
    unknown = set(fields) - set(ns.fields)
    if unknown:
        raise ValueError(f"namespace {namespace!r} takes fields {ns.fields}, not {sorted(unknown)}.")
    missing = [f for f in ns.fields if f not in fields and f not in ns.optional]
    if missing:
        raise ValueError(f"namespace {namespace!r} needs fields {missing}.")
    return [(field_tag(f), fields[f]) for f in ns.fields if f in fields]


def derive_key(namespace: str, **fields) -> torch.Tensor:
    """Stream key for `namespace` from its typed fields (ints or int64 tensors, broadcast), on the device of the
    first tensor field (the CPU when every field is an integer)."""
    items = _field_items(namespace, fields)
    device = _device_of(*(value for _, value in items))
    h = torch.tensor(signed(mix64_reference(NAMESPACES[namespace].tag)), dtype=torch.int64, device=device)
    for tag, value in items:
        value = torch.as_tensor(value, dtype=torch.int64, device=device)
        h = mix64(mix64(h ^ signed(tag)) + value)
    return h


def field_tag(field: str) -> int:
    """The tag mixed in before a field's value (unsigned 64-bit)."""
    return tag(f"oscc/field/{field}")


def derive_key_reference_prefix(namespace: str, **leading) -> int:
    """Unsigned hash state of `derive_key` after its first fields (`leading`, in the namespace's order).

    Compiled kernels continue from here with the remaining fields, one
    `mix64(mix64(h ^ field_tag(f)) + value)` each.
    """
    ns = NAMESPACES[namespace]
    if tuple(leading) != ns.fields[:len(leading)]:
        raise ValueError(f"namespace {namespace!r} hashes its fields in the order {ns.fields}, got {tuple(leading)}.")
    h = mix64_reference(ns.tag)
    for name, value in leading.items():
        h = _absorb_reference(h, field_tag(name), value)
    return h


def derive_key_reference(namespace: str, **fields) -> int:
    """Plain-Python twin of `derive_key` for one set of integer fields."""
    h = mix64_reference(NAMESPACES[namespace].tag)
    for tag, value in _field_items(namespace, fields):
        h = _absorb_reference(h, tag, value)
    return signed(h)


def _absorb_reference(h: int, tag: int, value: int) -> int:
    """One typed field into the hash state: mix64(mix64(h ^ tag) + value)."""
    return mix64_reference(mix64_reference(h ^ tag) + value)


def policy_key(run: int, split: int, group, branch, rollout=0, stream=None) -> torch.Tensor:
    """Key of one branch's policy stream.  Takes no game state by design (C2/C3)."""
    fields = dict(run=run, split=split, group=group, branch=branch, rollout=rollout)
    if stream is not None:
        fields["stream"] = stream
    return derive_key("policy", **fields)


def semantic_event_id(game: str, chance_type: str, round_: int, occurrence: int) -> int:
    """Address of a chance event by its meaning, never by a position in a stream."""
    return signed(tag(f"oscc/event/{game}/{chance_type}/round{round_}/occurrence{occurrence}"))
