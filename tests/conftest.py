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
# `make mutants` runs every test once per mutant: fewer examples per property keep it to minutes
from hypothesis import Phase  # noqa: E402

settings.register_profile("mutants", settings.get_profile("book"), max_examples=12,
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))    # a failure is not shrunk
settings.load_profile("mutants" if __import__("os").environ.get("OSCC_HYPOTHESIS_PROFILE") == "mutants" else "book")
