"""One host's upgrade plan: where it stands, skip, upgrade, resume, downgrade, rollback, the move between streams."""

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import data as rocm_data
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.upgrade import host_state, upgrade_plan

PACKAGES_641 = ["rocm-core", "rocm-core6.4.1", "rocm-hip-runtime6.4.1", "amdgpu-dkms", "bash"]
# ansible_facts.packages of a legacy host with 6.4.1 and 7.2.3 (default 7.2.3), and of the same host after the move.
LEGACY_HOST = {
    "rocm-core": [{"version": "7.2.3.70203-90~22.04"}],
    "rocm-core6.4.1": [{"version": "6.4.1.60401-83~22.04"}],
    "rocm-core7.2.3": [{"version": "7.2.3.70203-90~22.04"}],
    "rocm-hip-runtime7.2.3": [{"version": "7.2.3.70203-90~22.04"}],
    "amdgpu-dkms": [{"version": "1:6.16.6.30300300-2238411.22.04"}],
}
CORE_HOST = {
    "amdrocm-sysdeps10.1": [{"version": "10.1.0-1"}],
    "amdrocm10.1-gfx942": [{"version": "10.1.0-1"}],
    "amdrocm-core10.1": [{"version": "10.1.0-1"}],
    "amdgpu-dkms": [{"version": "1:6.16.6.30300300-2238411.22.04"}],
}
MOVE_STARTED = {"schema": 1, "from": "7.2.3", "to": "10.1.0", "installed_before": ["6.4.1", "7.2.3"],
                "state": "started", "from_stream": "legacy", "to_stream": "core_sdk_10"}


def state(default="/opt/rocm-6.4.1", packages=PACKAGES_641, record=None, core=None, core_version=None, matrix=None):
    return host_state(default, packages, record, core, core_version, matrix=matrix)


def legacy(record=None, packages=None):
    return state("/opt/rocm-7.2.3", LEGACY_HOST if packages is None else packages, record)


def core(record=None, packages=None, core_version=None):
    return state(None, CORE_HOST if packages is None else packages, record, "/opt/rocm/core-10.1", core_version)


def test_the_state_reads_the_default_and_the_installed_releases_in_version_order():
    found = host_state("/opt/rocm-6.4.1", ["rocm-core7.2.3", "rocm-core6.10.0", "rocm-core6.4.1", "rocm-core"], None)
    assert found == {
        "default": "6.4.1",
        "default_stream": "legacy",
        "installed": ["6.4.1", "6.10.0", "7.2.3"],
        "streams": {"6.4.1": "legacy", "6.10.0": "legacy", "7.2.3": "legacy"},
        "packages": {"6.4.1": "rocm-core6.4.1", "6.10.0": "rocm-core6.10.0", "7.2.3": "rocm-core7.2.3"},
        "record": None,
    }
    assert host_state(None, [], None)["default"] is None
    assert host_state("/usr", [], None)["default"] is None


def test_the_state_of_a_core_sdk_host_reads_the_release_from_its_package_or_its_version_file():
    found = core()
    assert (found["default"], found["default_stream"], found["installed"]) == ("10.1.0", "core_sdk_10", ["10.1.0"])
    assert found["packages"] == {"10.1.0": "amdrocm-sysdeps10.1"}
    # Both streams installed: every release with its stream and its release package.
    both = state(None, dict(LEGACY_HOST, **CORE_HOST), None, "/opt/rocm/core-10.1")
    assert both["streams"] == {"6.4.1": "legacy", "7.2.3": "legacy", "10.1.0": "core_sdk_10"}
    # The version file where the package facts carry no versions; the matrix where neither is there.
    assert core(packages=["amdrocm-sysdeps10.1"], core_version="10.1.0\n")["default"] == "10.1.0"
    assert core(packages=[])["default"] == "10.1.0"
    # A series the matrix does not list, and neither the version file nor a package tells the release.
    with pytest.raises(ValueError, match=r"^/opt/rocm/core points at /opt/rocm/core-10\.9 \(\.info/version: not "
                                         r"read\), whose ROCm release is not known: .* neither a version nor the "
                                         r"support matrix"):
        state(None, [], None, "/opt/rocm/core-10.9")
    with pytest.raises(ValueError, match=r"\(\.info/version: 10\.9\.0\), whose ROCm release is not known: "
                                         r"/opt/rocm/core-10\.9 is the install root of ROCm 10\.9\.0, which the "
                                         r"support matrix does not list"):
        state(None, [], None, "/opt/rocm/core-10.9", "10.9.0")
    # A legacy host's /opt/rocm/core resolves below /opt/rocm-x.y.z: no Core SDK default.
    assert state("/opt/rocm-7.2.3", LEGACY_HOST, None, "/opt/rocm-7.2.3/core")["default"] == "7.2.3"


def test_a_record_of_another_schema_is_refused():
    with pytest.raises(ValueError, match="schema 1"):
        host_state("/opt/rocm-6.4.1", [], {"from": "6.4.1"})


def test_an_upgrade_keeps_the_old_release_beside_the_new_one_and_records_where_it_started():
    plan = upgrade_plan(state(), "7.2.3")
    assert plan["action"] == "upgrade"
    assert (plan["from"], plan["to"], plan["releases"]) == ("6.4.1", "7.2.3", ["6.4.1", "7.2.3"])
    assert (plan["move"], plan["remove_first"], plan["from_stream"], plan["to_stream"], plan["reason"]) == (
        False, [], "legacy", "legacy", None)
    assert plan["record"] == {"schema": 1, "from": "6.4.1", "to": "7.2.3", "installed_before": ["6.4.1"],
                              "state": "started", "from_stream": "legacy", "to_stream": "legacy"}


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


def test_a_target_the_support_matrix_does_not_list_is_refused():
    with pytest.raises(ValueError, match=r"ROCm 10\.9\.0 is not in the support matrix .*"
                                         r"preflight_support_matrix_extra"):
        upgrade_plan(legacy(), "10.9.0")


def test_a_host_without_a_default_release_is_refused_with_both_layouts_and_what_to_do():
    with pytest.raises(ValueError, match="provision the host first") as refused:
        upgrade_plan(state(None, []), "7.2.3")
    assert "/opt/rocm -> /opt/rocm-x.y.z of the legacy ROCm stream" in str(refused.value)
    assert "/opt/rocm/core -> /opt/rocm/core-x.y of the ROCm Core SDK" in str(refused.value)
    # An unfinished upgrade to another target names the recorded one.
    with pytest.raises(ValueError, match=r"unfinished upgrade from 7\.2\.3 to 10\.1\.0: run it again with "
                                         r"upgrade_rocm_version=10\.1\.0, or return the host with upgrade_rollback"):
        upgrade_plan(state(None, [], MOVE_STARTED), "10.2.0")


def test_a_rollback_returns_to_the_recorded_release_and_set():
    record = {"schema": 1, "from": "6.4.1", "to": "7.2.3", "installed_before": ["6.3.3", "6.4.1"], "state": "started"}
    failed = state("/opt/rocm-6.4.1", ["rocm-core6.3.3", "rocm-core6.4.1", "rocm-core7.2.3"], record)
    plan = upgrade_plan(failed, None, rollback=True)
    assert (plan["action"], plan["from"], plan["to"], plan["releases"]) == ("rollback", "6.4.1", "6.4.1",
                                                                           ["6.3.3", "6.4.1"])
    assert (plan["move"], plan["remove_first"], plan["from_stream"], plan["to_stream"]) == (
        False, [], "legacy", "legacy")
    assert plan["record"]["state"] == "rolling back"
    back = state("/opt/rocm-6.4.1", ["rocm-core6.3.3", "rocm-core6.4.1"], dict(record, state="rolled back"))
    assert upgrade_plan(back, None, rollback=True)["action"] == "skip"
    assert upgrade_plan(state(), None, rollback=True)["reason"] == "no upgrade is recorded on this host"


def test_the_move_to_the_core_sdk_removes_every_legacy_release_first_and_keeps_the_target_alone():
    plan = upgrade_plan(legacy(), "10.1.0")
    assert (plan["action"], plan["from"], plan["to"], plan["releases"]) == ("upgrade", "7.2.3", "10.1.0", ["10.1.0"])
    assert (plan["move"], plan["from_stream"], plan["to_stream"]) == (True, "legacy", "core_sdk_10")
    assert (plan["from_title"], plan["to_title"]) == ("the legacy ROCm stream", "the ROCm Core SDK 10.x")
    assert plan["remove_first"] == ["rocm-core6.4.1", "rocm-core7.2.3"]
    assert plan["record"] == MOVE_STARTED
    assert plan["reason"] == ("starts the move from the legacy ROCm stream to the ROCm Core SDK 10.x "
                              "(rocm-core6.4.1, rocm-core7.2.3 removed first)")


@pytest.mark.parametrize("packages, default, remove_first", [
    # The legacy packages are gone (rocm-core's removal took the /opt/rocm link), the Core SDK not yet there.
    ({}, None, []),
    # The removal failed: the host is still on 7.2.3 with both legacy releases.
    (LEGACY_HOST, "/opt/rocm-7.2.3", ["rocm-core6.4.1", "rocm-core7.2.3"]),
    # The removal failed after 6.4.1.
    ({"rocm-core7.2.3": [{"version": "7.2.3.70203-90~22.04"}]}, "/opt/rocm-7.2.3", ["rocm-core7.2.3"]),
])
def test_an_unfinished_move_resumes_from_its_recorded_start(packages, default, remove_first):
    plan = upgrade_plan(state(default, packages, MOVE_STARTED), "10.1.0")
    assert (plan["action"], plan["from"], plan["to"], plan["releases"]) == ("upgrade", "7.2.3", "10.1.0", ["10.1.0"])
    assert (plan["move"], plan["remove_first"]) == (True, remove_first)
    assert plan["record"] == MOVE_STARTED
    assert plan["reason"].startswith("resumes the move from the legacy ROCm stream to the ROCm Core SDK 10.x")


def test_an_unfinished_move_on_the_target_resumes_and_a_finished_one_is_skipped():
    plan = upgrade_plan(core(MOVE_STARTED), "10.1.0")
    assert (plan["action"], plan["from"], plan["remove_first"], plan["move"]) == ("upgrade", "7.2.3", [], True)
    assert upgrade_plan(core(dict(MOVE_STARTED, state="done")), "10.1.0")["action"] == "skip"
    # A record without streams (written before they were recorded) takes them from the support matrix.
    old = {key: value for key, value in MOVE_STARTED.items() if not key.endswith("_stream")}
    assert upgrade_plan(state(None, {}, old), "10.1.0")["record"] == MOVE_STARTED


def test_an_upgrade_within_the_core_sdk_keeps_the_old_series_beside_the_new_one():
    packages = {"amdrocm-sysdeps10.0": [{"version": "10.0.0-1"}], "amdrocm10.0-gfx942": [{"version": "10.0.0-1"}]}
    plan = upgrade_plan(state(None, packages, None, "/opt/rocm/core-10.0", "10.0.0"), "10.1.0")
    assert (plan["action"], plan["from"], plan["to"], plan["releases"]) == ("upgrade", "10.0.0", "10.1.0",
                                                                           ["10.0.0", "10.1.0"])
    assert (plan["move"], plan["remove_first"], plan["from_stream"], plan["to_stream"]) == (
        False, [], "core_sdk_10", "core_sdk_10")
    assert plan["record"]["installed_before"] == ["10.0.0"]


def test_a_release_of_the_same_series_replaces_the_old_one_in_place():
    matrix = rocm_data.preflight_data(None, {"10.1.1": {"stream": "core_sdk_10"}}, None)[1]
    plan = upgrade_plan(core(), "10.1.1", matrix=matrix)
    assert (plan["from"], plan["releases"], plan["remove_first"]) == ("10.1.0", ["10.1.1"], [])
    assert plan["record"]["installed_before"] == ["10.1.0"]


def test_a_finished_move_rolls_back_to_the_recorded_legacy_releases_removing_the_core_sdk_first():
    plan = upgrade_plan(core(dict(MOVE_STARTED, state="done")), None, rollback=True)
    assert (plan["action"], plan["from"], plan["to"], plan["releases"]) == ("rollback", "10.1.0", "7.2.3",
                                                                           ["6.4.1", "7.2.3"])
    assert (plan["move"], plan["from_stream"], plan["to_stream"]) == (True, "core_sdk_10", "legacy")
    assert plan["remove_first"] == ["amdrocm-sysdeps10.1"]
    assert plan["record"] == dict(MOVE_STARTED, state="rolling back")
    assert plan["reason"] == ("moves back from the ROCm Core SDK 10.x to the legacy ROCm stream "
                              "(amdrocm-sysdeps10.1 removed first)")


def test_a_failed_move_rolls_back_to_what_the_host_had():
    # Still on 7.2.3, the removal stopped after 6.4.1: 6.4.1 comes back.
    partly = upgrade_plan(legacy(MOVE_STARTED, {"rocm-core7.2.3": [{"version": "7.2.3.70203-90~22.04"}]}), None,
                          rollback=True)
    assert (partly["action"], partly["from"], partly["to"], partly["releases"]) == ("rollback", "7.2.3", "7.2.3",
                                                                                   ["6.4.1", "7.2.3"])
    assert (partly["move"], partly["remove_first"]) == (True, [])
    # The Core SDK came in while 7.2.3 stayed: it goes first.
    beside = upgrade_plan(legacy(MOVE_STARTED, dict(LEGACY_HOST, **CORE_HOST)), None, rollback=True)
    assert (beside["action"], beside["remove_first"]) == ("rollback", ["amdrocm-sysdeps10.1"])
    # Nothing removed, nothing installed: already back.
    assert upgrade_plan(legacy(MOVE_STARTED), None, rollback=True)["reason"] == "already back on 7.2.3"
    # Nothing left at all (the legacy releases removed, the Core SDK not installed).
    empty = upgrade_plan(state(None, {}, MOVE_STARTED), None, rollback=True)
    assert (empty["action"], empty["from"], empty["releases"], empty["remove_first"]) == (
        "rollback", None, ["6.4.1", "7.2.3"], [])


def test_a_rollback_to_a_release_the_mirror_no_longer_serves_is_refused():
    finished = core(dict(MOVE_STARTED, state="done"))
    with pytest.raises(ValueError) as refused:
        upgrade_plan(finished, None, rollback=True, served=["7.2.3", "10.1.0"])
    assert str(refused.value) == (
        "the rollback would return the host from ROCm 10.1.0 (the ROCm Core SDK 10.x) to ROCm 7.2.3 (the legacy ROCm "
        "stream), but the mirror no longer serves 6.4.1, which the upgrade record lists among the releases the host "
        "had (repo_available_rocm_versions: 7.2.3, 10.1.0): mirror 6.4.1 again and list it in "
        "repo_available_rocm_versions, or keep the host on 10.1.0 (leave it out with -l)")
    assert upgrade_plan(finished, None, rollback=True, served=["6.4.1", "7.2.3", "10.1.0"])["action"] == "rollback"
    assert upgrade_plan(finished, None, rollback=True, served=None)["action"] == "rollback"
    # A host already back is skipped whatever the mirror serves.
    assert upgrade_plan(legacy(MOVE_STARTED), None, rollback=True, served=["10.1.0"])["action"] == "skip"


def test_a_move_back_to_the_legacy_stream_needs_the_downgrade_setting():
    with pytest.raises(ValueError) as refused:
        upgrade_plan(core(), "7.2.3")
    assert str(refused.value) == (
        "ROCm 7.2.3 (the legacy ROCm stream) cannot be installed beside the host's 10.1.0 (the ROCm Core SDK 10.x), "
        "which replaces it: moving back removes the ROCm Core SDK 10.x first (amdrocm-sysdeps10.1). Set "
        "upgrade_allow_downgrade=true to move back to it, or upgrade_rollback=true to return to the release recorded "
        "before the last upgrade")
    plan = upgrade_plan(core(), "7.2.3", allow_downgrade=True)
    assert (plan["action"], plan["from"], plan["to"], plan["releases"]) == ("upgrade", "10.1.0", "7.2.3", ["7.2.3"])
    assert (plan["move"], plan["from_stream"], plan["to_stream"], plan["remove_first"]) == (
        True, "core_sdk_10", "legacy", ["amdrocm-sysdeps10.1"])
