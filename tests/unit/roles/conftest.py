"""Fixtures of the role tests; their helpers are fleet_testing.roles."""

from __future__ import annotations

import pytest
from ansible_collections.rocm_fleet.core.plugins.filter import rocm_repo


@pytest.fixture
def repo_filters():
    return rocm_repo
