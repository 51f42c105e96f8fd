"""`molecule test` on the default scenario: its own two-host lab, site.yml, idempotence, check, testinfra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def test_molecule_default_scenario_passes():
    if os.geteuid() != 0:
        pytest.skip("the molecule scenario runs a lab: root is needed")
    env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
    try:
        result = subprocess.run(
            [str(BIN / "molecule"), "test", "--scenario-name", "default"],
            cwd=REPO, env=env, capture_output=True, text=True,
            # About 5 minutes alone; tests/run-all runs it beside the lab tests, on the same two cores.
            timeout=1500,
        )
    except subprocess.TimeoutExpired:
        # Killed mid-scenario, molecule destroys nothing: take its lab down before failing.
        subprocess.run([str(BIN / "molecule"), "destroy", "--scenario-name", "default"], cwd=REPO, env=env,
                       capture_output=True, timeout=300)
        raise
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
