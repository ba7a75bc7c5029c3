"""The real-jiuwenswarm tests run only under `make test-swarm` (INSPECTOR_SWARM=1): they
install jiuwenswarm into its own cached venv and drive it for minutes."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Register the `swarm` marker."""
    config.addinivalue_line("markers", "swarm: drives a real jiuwenswarm (make test-swarm)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the swarm tests unless INSPECTOR_SWARM=1 (make test-swarm sets it)."""
    if os.environ.get("INSPECTOR_SWARM") == "1":
        return
    skip = pytest.mark.skip(reason="drives a real jiuwenswarm for minutes: run `make test-swarm`")
    for item in items:
        if item.get_closest_marker("swarm") is not None:
            item.add_marker(skip)
