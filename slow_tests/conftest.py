"""The fixtures of `tests/conftest.py` for the slow suites too: a private token cache and
preferences folder for every test (nothing is written into the user's folders), and the
shared counters."""

from __future__ import annotations

from tests.conftest import _private_token_cache, counters  # noqa: F401  (pytest fixtures)
