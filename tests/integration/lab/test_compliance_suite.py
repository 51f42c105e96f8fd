"""The documented compliance suite command passes on the converged lab (pending reboots done)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from lab_ansible import LAB_INVENTORY, ansible_env
from lab_helpers import REPO

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def test_compliance_suite_passes_on_every_host(compliant_lab):
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/compliance",
         "--hosts", "ansible://all", "--ansible-inventory", str(LAB_INVENTORY)],
        cwd=REPO, env=ansible_env(), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    passed = re.search(r"(\d+) passed", result.stdout)
    # Every lab host has at least 14 checks (login-01) and one pending-change test.
    assert passed and int(passed[1]) >= 7 * 15, result.stdout[-2000:]
