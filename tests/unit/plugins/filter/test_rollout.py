"""rocm_upgrade_plan as the upgrade role calls it: stat, slurp and package_facts results in, a plan or an error out."""

import base64

from ansible_collections.rocm_fleet.core.plugins.filter.rollout import FilterModule, rocm_upgrade_plan

# What the role registers on a legacy host (7.2.3 the default, 6.4.1 beside it) and on a Core SDK host (10.1.0).
LEGACY_ROCM = {"changed": False, "stat": {"exists": True, "islnk": True, "path": "/opt/rocm",
                                          "lnk_source": "/opt/rocm-7.2.3", "lnk_target": "/etc/alternatives/rocm"}}
LEGACY_CORE = {"changed": False, "stat": {"exists": False}}
LEGACY_PACKAGES = {"rocm-core6.4.1": [{"version": "6.4.1.60401-83~22.04"}],
                   "rocm-core7.2.3": [{"version": "7.2.3.70203-90~22.04"}], "bash": [{"version": "5.2"}]}
CORE_ROCM = {"changed": False, "stat": {"exists": True, "islnk": False, "isdir": True, "path": "/opt/rocm"}}
CORE_CORE = {"changed": False, "stat": {"exists": True, "islnk": True, "path": "/opt/rocm/core",
                                        "lnk_source": "/opt/rocm/core-10.1", "lnk_target": "/etc/alternatives/core"}}
CORE_VERSION = {"changed": False, "content": base64.b64encode(b"10.1.0\n").decode(), "encoding": "base64",
                "source": "/opt/rocm/core/.info/version"}
CORE_PACKAGES = {"amdrocm-sysdeps10.1": [{"version": "10.1.0-1"}], "amdrocm10.1-gfx942": [{"version": "10.1.0-1"}]}
MOVED = {"schema": 1, "from": "7.2.3", "to": "10.1.0", "installed_before": ["6.4.1", "7.2.3"], "state": "done",
         "from_stream": "legacy", "to_stream": "core_sdk_10"}
SKIPPED = {"changed": False, "skipped": True, "skip_reason": "Conditional result was False"}


def test_the_filter_is_registered():
    assert FilterModule().filters()["rocm_upgrade_plan"] is rocm_upgrade_plan


def test_the_move_from_what_the_role_registers_on_a_legacy_host():
    plan = rocm_upgrade_plan(LEGACY_ROCM, LEGACY_PACKAGES, None, "10.1.0", False, False, core=LEGACY_CORE,
                             core_version=SKIPPED)
    assert plan["error"] is None
    assert (plan["action"], plan["from"], plan["to"], plan["releases"], plan["move"]) == (
        "upgrade", "7.2.3", "10.1.0", ["10.1.0"], True)
    assert plan["remove_first"] == ["rocm-core6.4.1", "rocm-core7.2.3"]
    assert (plan["from_stream"], plan["to_stream"]) == ("legacy", "core_sdk_10")


def test_what_the_role_passes_today_still_plans_a_legacy_upgrade():
    plan = rocm_upgrade_plan("/opt/rocm-6.4.1", ["rocm-core6.4.1", "bash"], None, "7.2.3", False, False)
    assert (plan["action"], plan["releases"], plan["move"], plan["remove_first"], plan["error"]) == (
        "upgrade", ["6.4.1", "7.2.3"], False, [], None)


def test_a_core_sdk_host_reads_its_default_from_the_core_link_and_its_version_file():
    plan = rocm_upgrade_plan(CORE_ROCM, {}, MOVED, None, False, True, core=CORE_CORE, core_version=CORE_VERSION)
    assert (plan["action"], plan["from"], plan["to"], plan["releases"]) == ("rollback", "10.1.0", "7.2.3",
                                                                           ["6.4.1", "7.2.3"])
    assert plan["remove_first"] == []  # no package facts: nothing known to remove
    with_packages = rocm_upgrade_plan(CORE_ROCM, CORE_PACKAGES, MOVED, None, "false", "true", core=CORE_CORE)
    assert (with_packages["from"], with_packages["remove_first"]) == ("10.1.0", ["amdrocm-sysdeps10.1"])
    on_target = rocm_upgrade_plan(CORE_ROCM, CORE_PACKAGES, None, "10.1.0", core=CORE_CORE["stat"],
                                  core_version="10.1.0")
    assert (on_target["action"], on_target["reason"]) == ("skip", "already on 10.1.0")
    # Two releases of the series: the slurped version file says which is the default.
    extras = {"matrix": {"10.1.1": {"stream": "core_sdk_10"}}}
    version = dict(CORE_VERSION, content=base64.b64encode(b"10.1.1\n").decode())
    patched = rocm_upgrade_plan(CORE_ROCM, ["amdrocm-sysdeps10.1"], None, "10.1.1", core=CORE_CORE,
                                core_version=version, extras=extras)
    assert (patched["action"], patched["reason"]) == ("skip", "already on 10.1.1")


def test_a_plan_that_must_not_run_is_an_error_not_an_exception():
    no_default = rocm_upgrade_plan(CORE_ROCM, {}, None, "10.1.0", core=LEGACY_CORE)
    assert no_default["action"] == "error"
    assert no_default["error"].startswith("no default ROCm release (neither /opt/rocm -> /opt/rocm-x.y.z")
    unserved = rocm_upgrade_plan(CORE_ROCM, CORE_PACKAGES, MOVED, None, False, True, core=CORE_CORE,
                                 served=["7.2.3", "10.1.0"])
    assert unserved["action"] == "error" and "the mirror no longer serves 6.4.1" in unserved["error"]
    downgrade = rocm_upgrade_plan(CORE_ROCM, CORE_PACKAGES, None, "7.2.3", "false", core=CORE_CORE)
    assert "upgrade_allow_downgrade=true" in downgrade["error"] and "upgrade_rollback=true" in downgrade["error"]
    allowed = rocm_upgrade_plan(CORE_ROCM, CORE_PACKAGES, None, "7.2.3", "true", core=CORE_CORE)
    assert (allowed["error"], allowed["remove_first"], allowed["releases"]) == (None, ["amdrocm-sysdeps10.1"],
                                                                               ["7.2.3"])


def test_the_extras_reach_the_plan():
    extras = {"matrix": {"10.3.0": {"stream": "core_sdk_10"}}}
    assert "ROCm 10.3.0 is not in the support matrix" in rocm_upgrade_plan(LEGACY_ROCM, LEGACY_PACKAGES, None,
                                                                           "10.3.0")["error"]
    plan = rocm_upgrade_plan(LEGACY_ROCM, LEGACY_PACKAGES, None, "10.3.0", extras=extras)
    assert (plan["error"], plan["to_stream"], plan["releases"]) == (None, "core_sdk_10", ["10.3.0"])
    titled = rocm_upgrade_plan(LEGACY_ROCM, LEGACY_PACKAGES, None, "10.1.0",
                               extras={"streams": {"core_sdk_10": {"title": "the site's Core SDK"}}})
    assert titled["to_title"] == "the site's Core SDK"
    broken = rocm_upgrade_plan(LEGACY_ROCM, LEGACY_PACKAGES, None, "10.1.0", extras={"matrix": ["x"]})
    assert broken == {"action": "error", "error": "preflight_support_matrix_extra must be a mapping, got list"}
