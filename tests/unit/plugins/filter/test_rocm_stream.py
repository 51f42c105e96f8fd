"""rocm_stream_plan: the streams' plan as the roles read it, a problem as a sentence instead of an exception."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.rocm_stream import (
    FilterModule,
    rocm_mirrored_url,
    rocm_release_roots,
    rocm_stream_plan,
    rocm_unlisted_release_packages,
)

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


def test_a_mirror_stands_in_for_the_origins_it_maps():
    mirrors = {"https://stable.repo.amd.com": "http://mirror.example:8650/amd"}
    plan = rocm_stream_plan(["10.1.0"], "10.1.0", DEBIAN_13, "apt", ["base"], ["gfx942"], mirrors=mirrors,
                            mirror_required=True)
    assert "URIs: http://mirror.example:8650/amd/rocm/core/packages/debian13/\n" in plan["registrations"][0]["content"]
    assert plan["keys"]["amdrocm"]["url"] == "http://mirror.example:8650/amd/rocm/gpg/packages.gpg"
    # The driver repository's key comes from the origin the mirror does not map: named, before any change.
    unmapped = rocm_stream_plan(["10.1.0"], "10.1.0", DEBIAN_13, "apt", ["base"], ["gfx942"], mirrors=mirrors,
                                mirror_required=True, driver_repository=True)
    assert unmapped["problem"].startswith("repo_source is mirror, but repo_mirrors names no mirror for "
                                          "https://repo.radeon.com")
    assert rocm_mirrored_url("https://repo.radeon.com/amdgpu/31.50/ubuntu", {"https://repo.radeon.com/": "http://m"}) \
        == "http://m/amdgpu/31.50/ubuntu"
    assert rocm_mirrored_url("https://repo.radeon.com.evil/x", {"https://repo.radeon.com": "http://m"}) == (
        "https://repo.radeon.com.evil/x")


def test_a_value_that_would_break_out_of_its_file_is_refused():
    extras = {"streams": {"core_sdk_10": {"os_dirs": {"core": {"debian": {"13": "debian13/\nTrusted: yes"}}}}}}
    plan = rocm_stream_plan(["10.1.0"], "10.1.0", DEBIAN_13, "apt", ["base"], ["gfx942"], extras=extras)
    assert plan["problem"].startswith("the amdrocm-stable registration's URIs would be")
    assert "which is not a URL" in plan["problem"]


def test_the_filters_are_registered():
    assert FilterModule().filters() == {
        "rocm_stream_plan": rocm_stream_plan, "rocm_mirrored_url": rocm_mirrored_url,
        "rocm_unlisted_release_packages": rocm_unlisted_release_packages, "rocm_release_roots": rocm_release_roots}


def test_release_roots_follow_each_stream():
    assert rocm_release_roots(["7.2.3", "10.1.0"]) == {"7.2.3": "/opt/rocm-7.2.3", "10.1.0": "/opt/rocm/core-10.1"}


def test_unlisted_release_packages_and_an_unknown_release_is_a_filter_error():
    installed = {"rocm-core7.2.3": [], "amdrocm-sysdeps10.1": [], "amdrocm10.1-gfx942": []}
    assert rocm_unlisted_release_packages(installed.keys(), ["10.1.0"]) == ["rocm-core7.2.3"]
    with pytest.raises(AnsibleFilterError, match=r"ROCm 9\.9\.9 is not in the support matrix"):
        rocm_release_roots(["9.9.9"])
    with pytest.raises(AnsibleFilterError, match=r"ROCm 9\.9\.9 is not in the support matrix"):
        rocm_unlisted_release_packages([], ["9.9.9"])
