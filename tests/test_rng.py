"""The counter-based stream contract (DESIGN.md section 4)."""
import inspect
import random

import numpy as np
import torch

from oscc_core.engine import rng

N_REFERENCE = 100_000


def _random_pairs(n, seed):
    r = random.Random(seed)
    return [r.getrandbits(64) for _ in range(n)], [r.getrandbits(64) for _ in range(n)]


def test_torch_uniform_matches_python_reference_bit_for_bit():
    keys, counters = _random_pairs(N_REFERENCE, 1)
    got = rng.uniform(torch.tensor([rng.signed(k) for k in keys]), torch.tensor([rng.signed(c) for c in counters]))
    expected = torch.tensor([rng.uniform_reference(k, c) for k, c in zip(keys, counters)], dtype=torch.float64)
    assert torch.equal(got, expected)


def test_small_counters_and_keys_match_reference_too():
    keys = torch.arange(-500, 500)
    got = rng.uniform(keys, torch.arange(1000))
    assert got.tolist() == [rng.uniform_reference(k, c) for k, c in zip(range(-500, 500), range(1000))]


def test_derived_keys_match_reference_for_every_namespace():
    r = random.Random(2)
    for name, ns in rng.NAMESPACES.items():
        for _ in range(200):
            fields = {f: r.randrange(0, 1 << 40) for f in ns.fields}
            assert int(rng.derive_key(name, **fields)) == rng.derive_key_reference(name, **fields)


def test_uniform_passes_chi_square_on_256_bins():
    u = rng.uniform(rng.derive_key("bootstrap", run=7, purpose=0, replicate=0), torch.arange(1_000_000))
    counts = torch.bincount((u * 256).long(), minlength=256).double()
    chi2 = float(((counts - counts.mean()) ** 2 / counts.mean()).sum())
    assert chi2 < 330.5  # 0.999 quantile of chi-square with 255 degrees of freedom


def test_uniform_is_in_unit_interval():
    u = rng.uniform(torch.arange(100_000), 0)
    assert float(u.min()) >= 0.0 and float(u.max()) < 1.0


def test_adjacent_groups_are_uncorrelated():
    keys = rng.derive_key("root", run=1, split=0, group=torch.arange(200_000))
    u = rng.uniform(keys, 0)
    corr = np.corrcoef(u[:-1].numpy(), u[1:].numpy())[0, 1]
    assert abs(corr) < 4 / np.sqrt(200_000)


def test_same_fields_in_different_namespaces_never_collide():
    fields = dict(run=3, split=0, group=torch.arange(10_000))
    keys = {name: rng.derive_key(name, **fields, **extra) for name, extra in
            [("root", {}), ("hidden", {}), ("chance", {"event": 0, "rollout": 0}),
             ("policy", {"branch": 0, "rollout": 0})]}
    everything = torch.cat(list(keys.values()))
    assert len(torch.unique(everything)) == len(everything)


def test_optional_field_present_with_zero_differs_from_absent():
    shared = rng.derive_key("hidden", run=1, split=0, group=torch.arange(1000))
    branch0 = rng.derive_key("hidden", run=1, split=0, group=torch.arange(1000), branch=0)
    assert not torch.any(shared == branch0)


def test_policy_key_accepts_no_game_state():
    params = set(inspect.signature(rng.policy_key).parameters)
    assert params == {"run", "split", "group", "branch", "rollout", "stream"}


def test_unknown_field_is_rejected():
    try:
        rng.derive_key("policy", run=1, split=0, group=1, branch=0, rollout=0, opponent_card=3)
    except ValueError as e:
        assert "opponent_card" in str(e)
    else:
        raise AssertionError("an unknown field was accepted")
