"""gpu_facts host_facts=true over SSH gives what ansible.builtin.setup gives on the same lab host."""

from __future__ import annotations

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import facts as host_facts
from fleet_testing.lab_ansible import adhoc

pytestmark = pytest.mark.lab
HOST = "mi300x-01"
HOST_FACTS = ["ansible_" + name for name in host_facts.HOST_FACTS]  # under setup's names


def one_result(results: dict) -> dict:
    assert set(results) == {HOST}, results
    result = results[HOST]
    assert not result.get("failed") and not result.get("unreachable"), result.get("msg")
    return result


def test_host_facts_equal_setups_min_hardware_facts(lab):
    setup = one_result(adhoc(HOST, "ansible.builtin.setup", "gather_subset=min,hardware"))["ansible_facts"]
    result = one_result(adhoc(HOST, "rocm_fleet.core.gpu_facts", "host_facts=true"))
    facts = result["ansible_facts"]
    assert not [text for text in result.get("warnings", []) if text.startswith("host_facts")], result["warnings"]
    assert set(facts) == {"gpu", "ansible_host_facts_digest", *HOST_FACTS}
    assert len(facts["ansible_host_facts_digest"]) == 64
    assert {name: facts[name] for name in HOST_FACTS} == {name: setup[name] for name in HOST_FACTS}
    assert facts["ansible_distribution"] == "Debian" and facts["ansible_os_family"] == "Debian"
    assert facts["ansible_processor"] and len(facts["ansible_processor"]) % 3 == 0
    assert facts["gpu"]["count"] == 8
