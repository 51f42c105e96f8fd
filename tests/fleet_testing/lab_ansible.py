"""Run Ansible against the lab as a site would: ad-hoc modules with JSON results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fleet_testing.lab_helpers import REPO

BIN = Path(sys.executable).parent
# A second lab instance (ROCM_FLEET_LAB_DIR, ROCM_FLEET_LAB_INVENTORY) runs the lab tests beside the default one.
LAB_INVENTORY = Path(os.environ.get("ROCM_FLEET_LAB_INVENTORY") or REPO / "inventory" / "lab")


def ansible_env(extra: dict | None = None) -> dict:
    return {
        **os.environ,
        "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        **(extra or {}),
    }


def adhoc(
    pattern: str,
    module: str,
    args: str = "",
    timeout: float = 180,
    inventory: Path = LAB_INVENTORY,
    env: dict | None = None,
    extra_vars: str | None = None,
) -> dict:
    """Run one module on ``pattern`` (``env``: more environment; ``extra_vars``: a JSON ``-e``); return {host:
    result} from the JSON callback."""
    command = [str(BIN / "ansible"), "-i", str(inventory), pattern, "-m", module]
    if args:
        command += ["-a", args]
    if extra_vars:
        command += ["-e", extra_vars]
    result = subprocess.run(
        command,
        cwd=REPO,
        env=ansible_env({"ANSIBLE_LOAD_CALLBACK_PLUGINS": "1", "ANSIBLE_STDOUT_CALLBACK": "json", **(env or {})}),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    try:
        report = json.loads(result.stdout)
    except ValueError as error:
        output = result.stdout + result.stderr
        raise AssertionError(f"ansible printed no JSON (rc {result.returncode}): {output}") from error
    return report["plays"][0]["tasks"][0]["hosts"]


def gpu_facts(pattern: str, timeout: int = 30) -> dict:
    """{host: ansible_facts.gpu} of gpu_facts run over SSH; fails on a host that did not answer."""
    results = adhoc(pattern, "rocm_fleet.core.gpu_facts", f"timeout={timeout}")
    failed = {
        host: result.get("msg") for host, result in results.items() if result.get("failed") or result.get("unreachable")
    }
    assert not failed, failed
    return {host: result["ansible_facts"]["gpu"] for host, result in results.items()}


def declared_releases(role_default: str) -> dict[str, str]:
    """{host: ROCm release}: each lab host's preflight_rocm_version as Ansible resolves the inventory, else
    ``role_default`` (the preflight role's default)."""
    listing = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(LAB_INVENTORY), "--list"], cwd=REPO,
                             env=ansible_env(), capture_output=True, text=True, check=True, timeout=120)
    hostvars = json.loads(listing.stdout)["_meta"]["hostvars"]
    return {host: str(values.get("preflight_rocm_version", role_default)) for host, values in hostvars.items()}
