"""`molecule test` on the default scenario: its own one-host lab, site.yml, idempotence, check, testinfra."""

from __future__ import annotations

import os
import signal
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
    # Its own session, so a timeout stops the ansible-playbook it runs too, not molecule alone.
    molecule = subprocess.Popen([str(BIN / "molecule"), "test", "--scenario-name", "default"], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # About 5 minutes alone; tests/run-all runs it beside the lab tests, on the same two cores.
        stdout, stderr = molecule.communicate(timeout=1500)
    except subprocess.TimeoutExpired:
        os.killpg(molecule.pid, signal.SIGKILL)
        molecule.communicate()
        # Killed mid-scenario, molecule destroys nothing: take its lab down before failing.
        subprocess.run([str(BIN / "molecule"), "destroy", "--scenario-name", "default"], cwd=REPO, env=env,
                       capture_output=True, timeout=300)
        raise
    assert molecule.returncode == 0, stdout[-6000:] + stderr[-3000:]
