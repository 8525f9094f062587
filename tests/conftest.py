"""Shared test setup."""
import pytest

from oscc_core.reporting.params import OUTPUT_DIR_OVERRIDE


@pytest.fixture(autouse=True)
def _explicit_output_dirs(monkeypatch):
    """Tests pass their own temporary output_dir; the Makefile's nbval redirect must not apply to them."""
    monkeypatch.delenv(OUTPUT_DIR_OVERRIDE, raising=False)
