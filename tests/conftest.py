import pytest

from bench_src.run import build


@pytest.fixture(scope="session")
def built():
    """Build the launcher and both programs once per test session (skipped when up to date)."""
    return build.build(("go", "rust"), log=lambda *_: None)
