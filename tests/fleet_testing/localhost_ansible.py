"""Run one module on the control machine (inventory/localhost) and read its result from the JSON callback."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_on_localhost(module, *args, env=None, timeout=300):
    """``ansible localhost -m MODULE ARGS...``; returns the completed process (stdout is the JSON callback's)."""
    environment = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
                       ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_NOCOLOR="1", **(env or {}))
    command = [str(Path(sys.executable).parent / "ansible"), "localhost", "-i", "inventory/localhost", "-m", module,
               *args]
    return subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=timeout)


def localhost_result(completed):
    """The one task result of localhost in a run_on_localhost run."""
    return json.loads(completed.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]
