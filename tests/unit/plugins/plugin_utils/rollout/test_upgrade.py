"""One host's upgrade plan: where it stands, skip, upgrade, resume, downgrade, rollback."""

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.upgrade import host_state, upgrade_plan

PACKAGES_641 = ["rocm-core", "rocm-core6.4.1", "rocm-hip-runtime6.4.1", "amdgpu-dkms", "bash"]


def state(default="/opt/rocm-6.4.1", packages=PACKAGES_641, record=None):
    return host_state(default, packages, record)


def test_the_state_reads_the_default_and_the_installed_releases_in_version_order():
    found = host_state("/opt/rocm-6.4.1", ["rocm-core7.2.3", "rocm-core6.10.0", "rocm-core6.4.1", "rocm-core"], None)
    assert found == {"default": "6.4.1", "installed": ["6.4.1", "6.10.0", "7.2.3"], "record": None}
    assert host_state(None, [], None)["default"] is None
    assert host_state("/usr", [], None)["default"] is None


def test_a_record_of_another_schema_is_refused():
    with pytest.raises(ValueError, match="schema 1"):
        host_state("/opt/rocm-6.4.1", [], {"from": "6.4.1"})


def test_an_upgrade_keeps_the_old_release_beside_the_new_one_and_records_where_it_started():
    plan = upgrade_plan(state(), "7.2.3")
    assert plan["action"] == "upgrade"
    assert (plan["from"], plan["to"], plan["releases"]) == ("6.4.1", "7.2.3", ["6.4.1", "7.2.3"])
    assert plan["record"] == {"schema": 1, "from": "6.4.1", "to": "7.2.3", "installed_before": ["6.4.1"],
                              "state": "started"}


def test_a_host_on_the_target_is_skipped_and_an_unfinished_one_resumes_from_its_recorded_start():
    on_target = state("/opt/rocm-7.2.3", ["rocm-core6.4.1", "rocm-core7.2.3"])
    assert upgrade_plan(on_target, "7.2.3")["action"] == "skip"
    assert upgrade_plan(on_target, "7.2.3")["reason"] == "already on 7.2.3"
    started = {"schema": 1, "from": "6.4.1", "to": "7.2.3", "installed_before": ["6.4.1"], "state": "started"}
    resumed = upgrade_plan(state("/opt/rocm-7.2.3", ["rocm-core6.4.1", "rocm-core7.2.3"], started), "7.2.3")
    assert (resumed["action"], resumed["from"]) == ("upgrade", "6.4.1")
    assert resumed["record"]["installed_before"] == ["6.4.1"]
    assert resumed["reason"] == "resumes the unfinished upgrade"
    done = dict(started, state="done")
    assert upgrade_plan(state("/opt/rocm-7.2.3", ["rocm-core7.2.3"], done), "7.2.3")["action"] == "skip"


def test_a_downgrade_needs_its_own_setting():
    with pytest.raises(ValueError, match="upgrade_allow_downgrade=true"):
        upgrade_plan(state("/opt/rocm-7.2.3", ["rocm-core7.2.3"]), "6.4.1")
    plan = upgrade_plan(state("/opt/rocm-7.2.3", ["rocm-core7.2.3"]), "6.4.1", allow_downgrade=True)
    assert (plan["action"], plan["from"], plan["to"]) == ("upgrade", "7.2.3", "6.4.1")


@pytest.mark.parametrize("target", ["", None, "7.2", "latest", "7.2.3.1", " 7.2.3"])
def test_a_target_that_is_not_x_y_z_is_refused(target):
    with pytest.raises(ValueError, match=r"upgrade_rocm_version must be an x\.y\.z ROCm release"):
        upgrade_plan(state(), target)


def test_a_host_without_a_default_release_is_refused_with_what_to_do():
    with pytest.raises(ValueError, match="provision the host first"):
        upgrade_plan(state(None, []), "7.2.3")


def test_a_rollback_returns_to_the_recorded_release_and_set():
    record = {"schema": 1, "from": "6.4.1", "to": "7.2.3", "installed_before": ["6.3.3", "6.4.1"], "state": "started"}
    failed = state("/opt/rocm-6.4.1", ["rocm-core6.3.3", "rocm-core6.4.1", "rocm-core7.2.3"], record)
    plan = upgrade_plan(failed, None, rollback=True)
    assert (plan["action"], plan["from"], plan["to"], plan["releases"]) == ("rollback", "6.4.1", "6.4.1",
                                                                           ["6.3.3", "6.4.1"])
    assert plan["record"]["state"] == "rolling back"
    back = state("/opt/rocm-6.4.1", ["rocm-core6.3.3", "rocm-core6.4.1"], dict(record, state="rolled back"))
    assert upgrade_plan(back, None, rollback=True)["action"] == "skip"
    assert upgrade_plan(state(), None, rollback=True)["reason"] == "no upgrade is recorded on this host"
