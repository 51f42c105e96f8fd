"""plugin_utils.roles.converge_plan: which provisioning roles a converge runs, from the results of their items."""

from __future__ import annotations

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.converge_plan import plan, role_name

ORDER = ["repo", "packages", "kernel", "partitions", "access", "environment"]


def result(role, label, status="pass", message="as expected"):
    return {"role": "rocm_fleet.core.%s" % role if role else None, "label": label, "id": "ROCM-X-001",
            "title": "t", "status": status, "message": message}


def every_role_passes():
    return [result(role, "%s: object" % role) for role in ORDER]


def test_a_host_whose_every_object_passes_runs_no_role_and_lists_each_proven_object():
    decided = plan(ORDER, every_role_passes(), {})
    assert decided["run"] == [] and decided["reasons"] == {}
    assert decided["proven"] == dict((role, ["%s: object" % role]) for role in ORDER)


def test_the_first_role_that_differs_runs_and_every_role_after_it():
    results = every_role_passes() + [result("kernel", "kernel: /etc/modprobe.d/rocm-fleet.conf", "fail", "differs")]
    decided = plan(ORDER, results, {})
    assert decided["run"] == ["kernel", "partitions", "access", "environment"]
    assert decided["reasons"]["kernel"] == ["kernel: /etc/modprobe.d/rocm-fleet.conf fail: differs"]
    assert decided["reasons"]["access"] == ["runs after kernel, whose changes it reads"]
    assert set(decided["proven"]) == {"repo", "packages"}


def test_anything_but_pass_runs_the_role():
    for status in ("fail", "error", "unknown", "skipped", "warn", None):
        decided = plan(ORDER, every_role_passes() + [result("environment", "environment: x", status)], {})
        assert decided["run"] == ["environment"], status


def test_what_the_objects_cannot_prove_runs_the_role_with_its_reason():
    decided = plan(ORDER, every_role_passes(), {"packages": ["packages_remove_unlisted_versions"], "repo": []})
    assert decided["run"] == ORDER[1:]
    assert decided["reasons"]["packages"] == ["not proven by its objects: packages_remove_unlisted_versions"]


def test_results_of_no_role_or_another_collection_are_not_the_roles_to_repair():
    results = every_role_passes() + [result(None, "ROCM-GPU-001", "fail"),
                                     dict(result("access", "x", "fail"), role="other.collection.access")]
    assert plan(ORDER, results, {})["run"] == []


def test_a_role_without_objects_is_proven_with_none():
    assert plan(ORDER, [], {})["proven"] == dict((role, []) for role in ORDER)


def test_role_names_lose_only_this_collections_prefix():
    assert [role_name(name) for name in ("rocm_fleet.core.kernel", "kernel", None, "other.kernel")] == [
        "kernel", "kernel", None, "other.kernel"]
