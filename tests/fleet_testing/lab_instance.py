"""A second instance of the lab's committed inventory: the same hosts, groups and variables on other ports.

tests/run-all gives its second pytest one, so the lab tests that need the lab booted but not converged run there,
beside the lab stream's instance of inventory/lab:

    python -m fleet_testing.lab_instance DESTINATION PORT_OFFSET MIRROR_PORT

with ROCM_FLEET_LAB_DIR, ROCM_FLEET_LAB_INVENTORY=DESTINATION and ROCM_FLEET_LAB_MIRROR_PORT=MIRROR_PORT set
for that pytest. Only the ports differ from inventory/lab: every ansible_port moves by PORT_OFFSET and
lab_mirror_port becomes MIRROR_PORT.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import yaml

SOURCE = Path(__file__).resolve().parents[2] / "inventory" / "lab"
MIRROR_SETTING = re.compile(r"^lab_mirror_port: \d+$", re.MULTILINE)


def _shift_ports(node, offset: int) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "ansible_port":
                node[key] = int(value) + offset
            else:
                _shift_ports(value, offset)


def copy_inventory(destination: Path, port_offset: int, mirror_port: int, source: Path = SOURCE) -> Path:
    """Write the copy (replacing an earlier one) and return it."""
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(source, destination)
    hosts = destination / "hosts.yml"
    tree = yaml.safe_load(hosts.read_text())
    _shift_ports(tree, port_offset)
    hosts.write_text("---\n" + yaml.safe_dump(tree, sort_keys=False))
    mirror = destination / "group_vars" / "all" / "lab_mirror.yml"
    text, count = MIRROR_SETTING.subn(f"lab_mirror_port: {mirror_port}", mirror.read_text())
    if count != 1:
        raise ValueError(f"{mirror}: expected one lab_mirror_port setting, found {count}")
    mirror.write_text(text)
    return destination


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    print(copy_inventory(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
