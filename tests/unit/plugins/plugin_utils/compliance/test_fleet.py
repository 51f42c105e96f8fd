"""compliance.fleet: the drift playbook's set_stats summary, and its agreement with the drift report's host status."""

import pytest
from ansible_collections.rocm_fleet.core.plugins.filter.compliance import FilterModule
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.fleet import fleet_stats, host_status

from rocm_fleet.drift.results import host_result

stats_filter = FilterModule().filters()["compliance_fleet_stats"]


def _item(check_id, status, label=None):
    return {"id": check_id, "title": check_id, "status": status, "expected": 1, "actual": 1, "message": status,
            "label": label}


ITEM_LISTS = [
    [],
    [_item("ROCM-ENV-001", "pass"), _item("ROCM-GPU-001", "skipped")],
    [_item("ROCM-ENV-001", "pass"), _item("ROCM-ACCESS-006", "warn")],
    [_item("ROCM-HEALTH-003", "unknown"), _item("ROCM-ACCESS-006", "warn")],
    [_item("ROCM-HEALTH-003", "unknown"), _item("ROCM-TOPO-001", "fail")],
    [_item("ROCM-SYSCTL-001", "error")],
    [_item("ROCM-ENV-001", "fail", label="environment: /etc/profile.d/rocm.sh")],
    [_item("ROCM-ENV-001", "gone")],  # a status this version does not know is never a pass
]


@pytest.mark.parametrize("items", ITEM_LISTS)
def test_a_hosts_status_is_the_drift_reports(items):
    assert host_status(items) == host_result({"results": items}).status


def test_counts_hosts_check_ids_and_the_hosts_needing_a_look():
    stats = fleet_stats({
        "gpu-01": {"results": ITEM_LISTS[1]},
        "gpu-02": {"results": ITEM_LISTS[4]},
        "gpu-03": {"results": ITEM_LISTS[3]},
        "gpu-04": None,  # not reached
        "gpu-05": {"failed": True, "msg": "host gpu-05: inventory variable gpu_expect: not a mapping"},
        "gpu-06": {"results": ITEM_LISTS[2]},
    })
    assert stats == {
        "hosts": 6, "compliant": 2, "unverified": 1, "drift": 1, "not_checked": 2, "ok": False,
        "failing_checks": ["ROCM-TOPO-001"], "unknown_checks": ["ROCM-HEALTH-003"],
        "drift_hosts": ["gpu-02"], "unverified_hosts": ["gpu-03"], "not_checked_hosts": ["gpu-04", "gpu-05"],
    }


def test_ok_only_when_every_host_was_checked_and_is_compliant():
    assert fleet_stats({"gpu-01": {"results": ITEM_LISTS[1]}, "gpu-02": {"results": ITEM_LISTS[2]}})["ok"] is True
    assert fleet_stats({"gpu-01": {"results": ITEM_LISTS[1]}, "gpu-02": None})["ok"] is False
    assert fleet_stats({"gpu-01": {"results": ITEM_LISTS[3]}})["ok"] is False  # unverified is not compliant
    assert fleet_stats({})["ok"] is False


def test_the_filter_reads_each_hosts_registered_result_from_hostvars():
    hostvars = {"gpu-01": {"compliance_result": {"results": ITEM_LISTS[6]}}, "gpu-02": {}}
    stats = stats_filter(["gpu-01", "gpu-02"], hostvars)
    assert (stats["drift_hosts"], stats["not_checked_hosts"]) == (["gpu-01"], ["gpu-02"])
    with pytest.raises(Exception, match="list of host names"):
        stats_filter("gpu-01", hostvars)
