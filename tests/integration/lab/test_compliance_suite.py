"""The documented compliance suite command passes on the converged lab (pending reboots done)."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from fleet_testing.lab_ansible import LAB_INVENTORY, ansible_env
from fleet_testing.lab_helpers import REPO

from rocm_fleet.lab.inventory import committed_hosts

pytestmark = [pytest.mark.lab, pytest.mark.slow]
# The fewest checks a lab host has (login-01, no GPU); each host also has one pending-change test. The floor is
# per inventory host: the total the suite must pass grows with the lab.
FEWEST_CHECKS = 14
# test_check[<host>::<check ID>] and test_no_pending_change[<host>], as tests/compliance/conftest.py names them.
TEST_HOST = re.compile(r"^test_(?:check\[(?P<checked>[^:\]]+)::[^\]]+|no_pending_change\[(?P<host>[^\]]+))\]$")


def test_compliance_suite_passes_on_every_host(compliant_lab, tmp_path):
    junit = tmp_path / "compliance.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/compliance",
         "--hosts", "ansible://all", "--ansible-inventory", str(LAB_INVENTORY), "--junitxml", str(junit)],
        cwd=REPO, env=ansible_env(), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    # Passes per host, against the hosts the lab's inventory has (not a count written here): a host the suite
    # leaves out, or one with no passing check or no pending-change test, fails, however many the others pass.
    checks, pending = Counter(), set()
    for case in ET.parse(junit).iter("testcase"):
        if case.find("failure") is None and case.find("error") is None and case.find("skipped") is None:
            match = TEST_HOST.match(case.get("name", ""))
            assert match, case.get("name")
            if match["checked"]:
                checks[match["checked"]] += 1
            else:
                pending.add(match["host"])
    hosts = sorted(spec.name for spec in committed_hosts(LAB_INVENTORY))
    assert sorted(checks) == hosts, f"no check passed on {sorted(set(hosts) - set(checks))}, not in the " \
                                    f"inventory: {sorted(set(checks) - set(hosts))}\n{result.stdout[-2000:]}"
    assert sorted(pending) == hosts, f"no pending-change test passed on {sorted(set(hosts) - pending)}"
    assert sum(checks.values()) + len(pending) >= len(hosts) * (FEWEST_CHECKS + 1), (checks, result.stdout[-2000:])
