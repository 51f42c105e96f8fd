"""The roles' lists come out in the same order on every run.

ansible-core's set filters (difference, union, intersect, symmetric_difference) build a Python set of hashable
items, so their order follows string hashing, which changes per process: a compliance item list made with them
differs between two runs of an unchanged host, and cached facts then look like a change (the known-facts drift
test caught exactly this). ``reject('in', other)`` keeps the left list's order.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
YAML_FILES = sorted([*ROOT.glob("roles/*/*/*.yml"), *ROOT.glob("roles/*/*/*/*.yml"), *ROOT.glob("playbooks/*.yml")])
SET_FILTER = re.compile(r"\|\s*(?:ansible\.builtin\.)?(difference|union|intersect|symmetric_difference)\b")


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_set_filter_orders_a_list(path):
    found = SET_FILTER.findall(path.read_text())
    assert found == [], "%s uses %s; use reject('in', ...) to keep the order" % (path.relative_to(ROOT), found)


def test_a_planted_set_filter_is_found():
    assert SET_FILTER.findall("x: \"{{ a | difference(b) }}\"\ny: \"{{ a | ansible.builtin.union(b) }}\"") == [
        "difference", "union"]
