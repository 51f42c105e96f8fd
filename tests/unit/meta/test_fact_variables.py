"""ansible.cfg turns inject_facts_as_vars off; nothing of the collection reads a fact as an ansible_<name> variable.

With injection on, every task's variables carry a cleaned deep copy of every fact (docs/scaling.md, the fifth
round); off, a fact read as ``ansible_distribution`` instead of ``ansible_facts.distribution`` is undefined.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
# Facts that setup and gpu_facts return, as their injected variables would be named.
INJECTED = re.compile(
    r"\bansible_(?:distribution\w*|os_family|kernel\w*|architecture|processor\w*|hostname|fqdn|nodename|lsb"
    r"|pkg_mgr|service_mgr|machine|system\w*|memtotal_mb|default_ipv[46]|interfaces|devices|mounts|cmdline"
    r"|proc_cmdline|env|date_time|virtualization_\w+|selinux|apparmor|gpu|host_facts_digest|python)\b"
)
SOURCES = ("roles", "playbooks", "inventory", "molecule", "site.yml")


def test_ansible_cfg_turns_fact_variables_off():
    config = configparser.ConfigParser()
    config.read(REPO / "ansible.cfg")
    assert config.getboolean("defaults", "inject_facts_as_vars") is False


def test_no_role_playbook_or_inventory_reads_a_fact_as_an_injected_variable():
    found = []
    for source in SOURCES:
        root = REPO / source
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if path.suffix not in (".yml", ".yaml", ".j2") or not path.is_file():
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0] if path.suffix != ".j2" else line
                for match in INJECTED.finditer(code):
                    if match.group(0) != "ansible_python_interpreter":
                        found.append(f"{path.relative_to(REPO)}:{number}: {match.group(0)}")
    assert not found, "read these as ansible_facts.<name>:\n" + "\n".join(found)
