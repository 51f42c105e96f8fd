"""The lab's hosts: the committed inventory/lab plus generated scale-test hosts.

hosts.yml is read directly (PyYAML) rather than through ansible-inventory: the
lab needs only each host's lab_profile, ansible_port, lab_os and groups, and
parsing takes milliseconds where ansible-inventory takes seconds. lab_os (the
operating system a host is installed with, rocm_fleet.lab.systems; debian12 when
unset) may also be set in a group's ``vars:`` in hosts.yml, as a site groups its
hosts by release; the lab does not read group_vars/ or host_vars/, so a lab_os
there is refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from rocm_fleet.lab import paths, systems
from rocm_fleet.lab.host import HostSpec

SYSTEM_VARIABLE = "lab_os"
_TOP_LEVEL_SYSTEM_KEY = re.compile(rf'^["\']?{SYSTEM_VARIABLE}["\']?\s*:', re.MULTILINE)

GENERATED_GROUP = "scale_hosts"
GENERATED_PORT_BASE = 2300
GENERATED_PROFILES = ("mi300x-8", "mi210-4-pcie", "rx7900xtx-1", "nogpu")


class InventoryError(ValueError):
    pass


def _walk(group_name: str, group: dict, parents: tuple[str, ...], settings: tuple, found: dict) -> None:
    """Collect each host's own vars, groups and the lab_os of every group above it (depth, value, group)."""
    group = group or {}
    lineage = (*parents, group_name)
    if SYSTEM_VARIABLE in (group.get("vars") or {}):
        settings = (*settings, (len(parents), group["vars"][SYSTEM_VARIABLE], group_name))
    for host_name, host_vars in (group.get("hosts") or {}).items():
        entry = found.setdefault(host_name, {"vars": {}, "groups": set(), "group_systems": set()})
        entry["vars"].update(host_vars or {})
        entry["groups"].update(name for name in lineage if name != "all")
        entry["group_systems"].update(settings)
    for child_name, child in (group.get("children") or {}).items():
        _walk(child_name, child, lineage, settings, found)


def system_key(host: str, value, where: str) -> str:
    """A lab_os value as a systems.SYSTEMS key, or an error naming the host and what to set."""
    if not isinstance(value, str) or value not in systems.SYSTEMS:
        known = ", ".join(f"{key} ({system.name})" for key, system in systems.SYSTEMS.items())
        raise InventoryError(
            f"{where}: host {host}: {SYSTEM_VARIABLE} {value!r} is not an operating system the lab installs;"
            f" set it to one of {known}, or leave it out for {systems.DEFAULT}"
        )
    return value


def _host_system(name: str, entry: dict, hosts_file: Path) -> str:
    """The host's own lab_os, else its deepest group's (as Ansible's group depth decides), else the default."""
    if SYSTEM_VARIABLE in entry["vars"]:
        return system_key(name, entry["vars"][SYSTEM_VARIABLE], str(hosts_file))
    if not entry["group_systems"]:
        return systems.DEFAULT
    deepest = max(depth for depth, _value, _group in entry["group_systems"])
    chosen = sorted((group, value) for depth, value, group in entry["group_systems"] if depth == deepest)
    if len({str(value) for _group, value in chosen}) > 1:
        listed = ", ".join(f"group {group}: {value!r}" for group, value in chosen)
        raise InventoryError(
            f"{hosts_file}: host {name}: its groups disagree on {SYSTEM_VARIABLE} ({listed});"
            f" set {SYSTEM_VARIABLE} on the host itself"
        )
    group, value = chosen[0]
    return system_key(name, value, f"{hosts_file} (group {group})")


def _refuse_unread_system_settings(inventory_dir: Path) -> None:
    """lab_os in group_vars/ or host_vars/ would give Ansible one system and the lab another."""
    for directory in ("group_vars", "host_vars"):
        for path in sorted((inventory_dir / directory).rglob("*")):
            if not path.is_file() or path.suffix not in ("", ".yml", ".yaml"):
                continue
            # A top-level key by text, not by YAML: vault-encrypted values (!vault) need no key here.
            if _TOP_LEVEL_SYSTEM_KEY.search(path.read_text(errors="replace")):
                raise InventoryError(
                    f"{path}: {SYSTEM_VARIABLE} is read by the lab from hosts.yml only (the operating system each"
                    f" host is installed with); move it to the host, or to a group's vars:, in"
                    f" {inventory_dir / 'hosts.yml'}"
                )


def committed_hosts(inventory_dir: Path | None = None) -> list[HostSpec]:
    inventory_dir = inventory_dir or paths.inventory_dir()
    hosts_file = inventory_dir / "hosts.yml"
    if not hosts_file.is_file():
        raise InventoryError(
            f"{hosts_file}: no such file; the lab's inventory is a directory with hosts.yml (a copy of the"
            f" checkout's inventory/lab); set ROCM_FLEET_LAB_INVENTORY to one"
        )
    try:
        data = yaml.safe_load(hosts_file.read_text()) or {}
    except yaml.YAMLError as error:
        raise InventoryError(f"{hosts_file}: not valid YAML ({error}); fix the file and run again") from None
    if not isinstance(data, dict):
        raise InventoryError(f"{hosts_file}: must be a mapping of groups, as Ansible's YAML inventory is")
    found: dict = {}
    for group_name, group in data.items():
        _walk(group_name, group, (), {}, found)
    _refuse_unread_system_settings(inventory_dir)
    specs = []
    for name, entry in found.items():
        host_vars = entry["vars"]
        if "lab_profile" not in host_vars or "ansible_port" not in host_vars:
            raise InventoryError(f"{hosts_file}: host {name} needs lab_profile and ansible_port")
        specs.append(
            HostSpec(
                name,
                host_vars["lab_profile"],
                int(host_vars["ansible_port"]),
                tuple(sorted(entry["groups"])),
                system=_host_system(name, entry, hosts_file),
            )
        )
    _check_unique_ports(specs)
    return specs


def generated_hosts(count: int) -> list[HostSpec]:
    """scale-01..scale-NN, profiles round-robin over GPU servers and a GPU-less node."""
    return [
        HostSpec(
            f"scale-{index:02d}",
            GENERATED_PROFILES[(index - 1) % len(GENERATED_PROFILES)],
            GENERATED_PORT_BASE + index,
            (GENERATED_GROUP,),
            generated=True,
        )
        for index in range(1, count + 1)
    ]


def _check_unique_ports(specs: list[HostSpec]) -> None:
    seen: dict[int, str] = {}
    for spec in specs:
        if spec.port in seen:
            raise InventoryError(f"hosts {seen[spec.port]} and {spec.name} share port {spec.port}")
        seen[spec.port] = spec.name


def desired_hosts(extra: int = 0) -> list[HostSpec]:
    specs = committed_hosts() + generated_hosts(extra)
    _check_unique_ports(specs)
    return specs


def write_generated_inventory(specs: list[HostSpec], destination: Path) -> Path:
    """An inventory of the generated hosts, with the lab connection settings inline."""
    group_vars = yaml.safe_load((paths.inventory_dir() / "group_vars" / "all" / "connection.yml").read_text())
    hosts = {spec.name: {"lab_profile": spec.profile, "ansible_port": spec.port} for spec in specs if spec.generated}
    document = {"all": {"vars": group_vars, "children": {GENERATED_GROUP: {"hosts": hosts}}}}
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(
        "---\n# Generated by `rocm-fleet lab up --hosts N`; do not edit.\n" + yaml.safe_dump(document, sort_keys=False)
    )
    return destination
