"""rocm_stream_plan: the streams' plan as the roles read it, a problem as a sentence instead of an exception."""

from ansible_collections.rocm_fleet.core.plugins.filter.rocm_stream import FilterModule, rocm_stream_plan

DEBIAN_13 = {"distribution": "Debian", "distribution_version": "13", "distribution_release": "trixie"}


def test_the_plan_of_a_10x_host():
    plan = rocm_stream_plan(["10.1.0"], "10.1.0", DEBIAN_13, "apt", ["base"], ["gfx942", "gfx90a"])
    assert plan["problem"] is None
    assert plan["packages"] == {"10.1.0": ["amdrocm10.1-gfx942", "amdrocm10.1-gfx90a"]}
    assert "URIs: https://stable.repo.amd.com/rocm/core/packages/debian13/\n" in plan["registrations"][0]["content"]


def test_the_extras_reach_the_decision():
    extras = {"streams": {"core_sdk_10": {"os_dirs": {"core": {"debian": {"13": "debian-trixie"}}}}},
              "keys": {"amdrocm": {"url": "https://mirror.example/rocm/gpg/packages.gpg"}},
              "matrix": {"10.1.0": {"gfx_targets": ["gfx942"]}}}
    plan = rocm_stream_plan(["10.1.0"], "10.1.0", DEBIAN_13, "apt", ["base"], ["gfx942"], extras=extras)
    assert "packages/debian-trixie/" in plan["registrations"][0]["content"]
    assert plan["keys"]["amdrocm"]["url"] == "https://mirror.example/rocm/gpg/packages.gpg"
    unbuilt = rocm_stream_plan(["10.1.0"], "10.1.0", DEBIAN_13, "apt", ["base"], ["gfx90a"], extras=extras)
    assert "amdrocm10.1-gfx90a would have been needed" in unbuilt["problem"]


def test_a_problem_is_a_sentence_and_an_empty_plan():
    plan = rocm_stream_plan(["7.2.3", "10.0.0"], "10.0.0", DEBIAN_13, "apt", ["base"])
    assert "cannot be installed side by side" in plan["problem"]
    assert plan["registrations"] == [] and plan["packages"] == {}
    broken = rocm_stream_plan(["10.0.0"], "10.0.0", DEBIAN_13, "apt", ["base"],
                              extras={"streams": {"core_sdk_10": {"key": "missing"}}})
    assert broken["problem"].startswith("the release stream data is not usable: release stream core_sdk_10: key")
    bad_extra = rocm_stream_plan(["10.0.0"], "10.0.0", DEBIAN_13, "apt", ["base"], extras={"matrix": ["x"]})
    assert bad_extra["problem"] == "preflight_support_matrix_extra must be a mapping, got list"


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"rocm_stream_plan": rocm_stream_plan}
