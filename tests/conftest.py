"""Shared test setup."""
import pytest

from oscc_core.reporting.params import OUTPUT_DIR_OVERRIDE


@pytest.fixture(autouse=True)
def _explicit_output_dirs(monkeypatch):
    """Tests pass their own temporary output_dir; the Makefile's nbval redirect must not apply to them."""
    monkeypatch.delenv(OUTPUT_DIR_OVERRIDE, raising=False)

# hypothesis keeps no example database: the tests never write into the repository, and a run depends only on
# the code (derandomize: the same examples on every machine and every run).
import tempfile  # noqa: E402

from hypothesis import settings  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

set_hypothesis_home_dir(tempfile.mkdtemp(prefix="hypothesis-"))

settings.register_profile("book", database=None, derandomize=True, deadline=None)
settings.load_profile("book")
