"""Fixtures shared by test modules."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def ray():
    """A real local Ray instance with two CPUs for the module's tests (skipped without Ray)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
