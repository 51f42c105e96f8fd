"""Helpers of the provisioning tests: hand changes over SSH, inventory overlays, what a host looks like after a run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from fleet_testing.lab_helpers import REPO, LabShell
from fleet_testing.lab_site import PlaybookRun
from rocm_fleet.lab import inventory

HOSTS = {spec.name: spec for spec in inventory.committed_hosts()}
GPU_HOSTS = sorted(name for name, spec in HOSTS.items() if "gpu_servers" in spec.groups)
# A user of inventory/lab/group_vars/gpu_servers/access.yml that the access role creates.
CREATED_USER = "researcher"
# The ROCm releases the lab mirror serves, as the repo role is told in inventory/lab.
LAB_MIRROR_VARS = REPO / "inventory" / "lab" / "group_vars" / "all" / "lab_mirror.yml"
SERVED_ROCM_VERSIONS = yaml.safe_load(LAB_MIRROR_VARS.read_text())["repo_available_rocm_versions"]


def port(host: str) -> int:
    return HOSTS[host].port


def sudo(lab: LabShell, host: str, command: str, timeout: float = 120) -> str:
    return lab.run(port(host), f"sudo sh -c {_quote(command)}", timeout=timeout)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def overlay_inventory(directory: Path, host_vars: dict[str, dict]) -> list[str]:
    """ansible-playbook arguments adding a second inventory that sets host variables on lab hosts.

    Host variables of an inventory source win over the lab's group_vars, so
    this is how an operator's per-host override (or mistake) looks to the roles.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "overlay.yml"
    path.write_text(yaml.safe_dump({"all": {"hosts": host_vars}}, sort_keys=False))
    return ["-i", str(path)]


def etc_checksums(lab: LabShell, host: str) -> dict[str, str]:
    """{path: sha256} of every regular file under /etc, read as root."""
    listing = sudo(lab, host, "find /etc -xdev -type f -print0 | sort -z | xargs -0 sha256sum")
    return {line[66:]: line[:64] for line in listing.splitlines() if line}


def boot_id(lab: LabShell, host: str) -> str:
    return lab.run(port(host), "cat /proc/sys/kernel/random/boot_id").strip()


def cmdline(lab: LabShell, host: str) -> list[str]:
    return lab.run(port(host), "cat /proc/cmdline").split()


def login_session(lab: LabShell, host: str, user: str, script: str, timeout: float = 60) -> str:
    """Log in as ``user`` (a login shell, as sshd starts one without a command) and feed it ``script``."""
    ssh, *options, _login, _command = lab.ssh_command(port(host), "")
    command = [ssh, "-T", *options, f"{user}@127.0.0.1"]
    result = subprocess.run(command, input=script, capture_output=True, text=True, timeout=timeout)
    return result.stdout + result.stderr


def authorize_login_key(lab: LabShell, host: str, user: str) -> None:
    """What a site's identity management does for a user: the lab's login key in the user's authorized_keys."""
    key = (lab.state_dir / "ssh" / "id_ed25519.pub").read_text().strip()
    sudo(
        lab,
        host,
        f"install -d -m 0700 -o {user} -g {user} ~{user}/.ssh && printf '%s\\n' '{key}' > ~{user}/.ssh/authorized_keys"
        f" && chown {user}:{user} ~{user}/.ssh/authorized_keys && chmod 0600 ~{user}/.ssh/authorized_keys",
    )


def revoke_login_key(lab: LabShell, host: str, user: str) -> None:
    sudo(lab, host, f"rm -rf ~{user}/.ssh")


def role_task_changes(run: PlaybookRun, host: str) -> list[str]:
    """The changed tasks of a host, without the role prefix: 'environment : Write the login shell profile'."""
    return [re.sub(r"^rocm_fleet\.core\.", "", name) for name in run.changed_tasks.get(host, [])]


def reboot_pending_report(run: PlaybookRun) -> str:
    """The reboot_pending part of the report that ends playbooks/provision.yml."""
    start = run.output.rfind("reboot_pending:")
    assert start >= 0, run.tail()
    end = run.output.find("PLAY RECAP", start)
    return run.output[start:end]


def failure_of(run: PlaybookRun, host: str) -> str:
    """The message (msg, stderr, stdout) of the host's first failure."""
    failures = run.failed_tasks.get(host)
    assert failures, f"{host} did not fail:\n{run.tail()}"
    return failures[0]["message"]


def failed_task(run: PlaybookRun, host: str) -> str:
    """The name of the task (role prefix and all) of the host's first failure."""
    failures = run.failed_tasks.get(host)
    assert failures, f"{host} did not fail:\n{run.tail()}"
    return failures[0]["task"]
