"""One test per host and check ID (docs/compliance-controls.md); the evaluation ran once, in conftest."""

from __future__ import annotations

import json
import warnings

import pytest


def test_check(compliance_check):
    name, host, check = compliance_check
    if check is None:  # the host gave no checks: unreachable, or its checks could not run
        pytest.fail(f"{name} is {host.status}: {host.error}")
    if check.status == "skipped":
        pytest.skip(f"{check.id}: {check.message}")
    if check.status == "waived":
        pytest.skip(f"waived: {check.waiver.reason} (expires {check.waiver.expires})")
    if check.status == "warn":  # reported, never a failure
        warnings.warn(f"{name} {check.id}: {check.message}", stacklevel=1)
        return
    # unknown fails: the suite is the proof, and a check nobody could measure proves nothing (waive it instead).
    details = json.dumps({"expected": check.expected, "actual": check.actual}, indent=1, default=str)[:4000]
    assert check.status == "pass", f"{name} {check.id} {check.title} is {check.status}: {check.message}\n{details}"


def test_no_pending_change(compliance_host):
    """Nothing that site.yml --check would change: once per host."""
    name, host = compliance_host
    assert host.reached, f"{name} is unreachable: {host.error}"
    assert not host.changes, f"{name}: " + "; ".join(change.label for change in host.changes)
