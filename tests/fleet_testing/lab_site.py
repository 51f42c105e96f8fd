"""Run the project's playbooks against the lab and read what they did, as a person reads the recap."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, ansible_env
from fleet_testing.lab_helpers import REPO

RECAP_LINE = re.compile(
    r"^(?P<host>\S+)\s+:\s+ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)\s+failed=(?P<failed>\d+)"
)


@dataclass
class PlaybookRun:
    returncode: int
    output: str
    recap: dict[str, dict[str, int]]
    changed_tasks: dict[str, list[str]]  # host -> names of tasks that reported a change
    changed_objects: dict[str, list[str]]  # host -> the printed loop label (object label) or task of each change
    failed_tasks: dict[str, list[dict]]  # host -> [{task, message}] of the failures, in order

    def tail(self, characters: int = 6000) -> str:
        return self.output[-characters:]


def run_playbook(playbook: str = "site.yml", *args: str, inventory: Path = LAB_INVENTORY,
                 timeout: float = 1500) -> PlaybookRun:
    """ansible-playbook with the default output (for failure messages) plus a JSON log of changed tasks."""
    log = Path(subprocess.check_output(["mktemp", "--suffix=.json"], text=True).strip())
    env = ansible_env({"ANSIBLE_CALLBACKS_ENABLED": "rocm_fleet_changes", "ROCM_FLEET_CHANGES_LOG": str(log),
                       "ANSIBLE_CALLBACK_PLUGINS": str(REPO / "tests" / "integration" / "lab" / "callbacks"),
                       "ANSIBLE_NOCOLOR": "1"})
    result = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), playbook, *args], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=timeout)
    output = result.stdout + result.stderr
    recap = {}
    for line in output.splitlines():
        match = RECAP_LINE.match(line)
        if match:
            recap[match["host"]] = {key: int(match[key]) for key in ("ok", "changed", "unreachable", "failed")}
    recorded = json.loads(log.read_text()) if log.stat().st_size else {}
    log.unlink()
    return PlaybookRun(result.returncode, output, recap, recorded.get("changed", {}), recorded.get("objects", {}),
                       recorded.get("failed", {}))


def link_site_group_vars(inventory: Path, mirror_port: int) -> None:
    """inventory/lab's group_vars linked into ``inventory`` (a lab instance of a test's own), with its mirror port."""
    group_vars = inventory / "group_vars"
    shutil.rmtree(group_vars, ignore_errors=True)
    group_vars.mkdir()
    site_group_vars = REPO / "inventory" / "lab" / "group_vars"
    for group in site_group_vars.iterdir():
        if group.name != "all":
            (group_vars / group.name).symlink_to(group)
    (group_vars / "all").mkdir()
    for item in (site_group_vars / "all").iterdir():
        (group_vars / "all" / item.name).symlink_to(item)
    (group_vars / "all" / "zz_instance.yml").write_text(f"---\nlab_mirror_port: {mirror_port}\n")
