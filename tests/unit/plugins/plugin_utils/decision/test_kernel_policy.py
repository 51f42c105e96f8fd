"""kernel_policy: which kernel series a host may install (the decision the packages role and compliance share)."""

from __future__ import annotations

import fnmatch
import re

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.kernel_policy import (
    flavour_of,
    kernel_allowed,
    kernel_policy,
    newest_allowed,
    series_above_globs,
    series_above_regex,
    update_target,
)

ABOVE_616 = ["6.17.0-1-amd64", "6.19.4", "6.20.1", "6.100.0", "7.0.0-1-amd64", "10.1.0", "6.17"]
NOT_ABOVE_616 = ["6.16.13", "6.16.0-1-amd64", "6.1.0-18-amd64", "6.9.1", "5.14.0-427.el9", "6.12.12"]


@pytest.mark.parametrize("release", ABOVE_616)
def test_the_regex_matches_every_series_above(release):
    assert re.match(series_above_regex((6, 16)), release + ".")


@pytest.mark.parametrize("release", NOT_ABOVE_616)
def test_the_regex_leaves_the_allowed_series(release):
    assert not re.match(series_above_regex((6, 16)), release + ".")


@pytest.mark.parametrize("series", [(6, 9), (6, 0), (5, 19), (9, 99), (6, 8)])
def test_the_regex_agrees_with_a_numeric_comparison(series):
    for major in range(4, 12):
        for minor in range(0, 130):
            above = (major, minor) > series
            assert bool(re.match(series_above_regex(series), "%d.%d.0-1-amd64" % (major, minor))) == above


@pytest.mark.parametrize("series", [(6, 16), (6, 9), (5, 14), (6, 8)])
def test_the_dnf_globs_agree_with_a_numeric_comparison(series):
    globs = series_above_globs(series)
    for major in range(4, 12):
        for minor in range(0, 130):
            name = "kernel-core-%d.%d.1-100.el9.x86_64" % (major, minor)
            assert any(fnmatch.fnmatchcase(name, g) for g in globs) == ((major, minor) > series), name


def test_allowed_series_is_the_driver_maximum_and_pins_the_series_above_on_apt():
    decision = kernel_policy("allowed_series", "6.16", "6.1.0-18-amd64", "apt")
    assert decision["series_max"] == "6.16" and decision["problem"] is None
    assert "Pin-Priority: -1" in decision["apt_preferences"]
    assert "linux-image-amd64" in decision["apt_preferences"]
    assert kernel_allowed("6.16.3-1-amd64", decision)[0]
    allowed, why = kernel_allowed("6.17.0-1-amd64", decision)
    assert not allowed and "6.17.0-1-amd64" in why and "6.16" in why


def test_a_running_series_newer_than_the_driver_maximum_keeps_its_updates():
    decision = kernel_policy("allowed_series", "6.12", "6.18.44-fc-v1045", "apt")
    assert decision["series_max"] == "6.18"
    assert "running kernel" in decision["reason"] and "6.12" in decision["reason"]
    assert kernel_allowed("6.18.45-1-amd64", decision)[0]
    assert not kernel_allowed("6.19.0-1-amd64", decision)[0]


def test_an_unknown_driver_maximum_allows_only_the_running_series():
    decision = kernel_policy("allowed_series", None, "6.1.0-18-amd64", "dnf")
    assert decision["series_max"] == "6.1"
    assert "kernel-6.[2-9].*" in decision["dnf_excludes"]
    assert decision["zypper_addlock"] == "zypper addlock 'kernel-default >= 6.2' 'kernel-default-devel >= 6.2'"


def test_allowed_series_with_nothing_known_is_a_problem_and_allows_nothing():
    decision = kernel_policy("allowed_series", None, None)
    assert decision["problem"] and decision["apt_preferences"] == ""
    assert not kernel_allowed("6.1.0-19-amd64", decision)[0]


def test_hold_refuses_every_kernel_and_free_pins_nothing():
    hold = kernel_policy("hold", "6.16", "6.1.0-18-amd64")
    assert not kernel_allowed("6.1.0-19-amd64", hold)[0]
    assert "linux-(image|headers" in hold["apt_preferences"] and hold["dnf_excludes"][0] == "kernel*"
    free = kernel_policy("free", "6.16", "6.1.0-18-amd64")
    assert free["apt_preferences"] == "" and free["dnf_excludes"] == [] and free["zypper_addlock"] == ""
    assert hold["zypper_addlock"] == "zypper addlock kernel-default kernel-default-devel"
    assert kernel_allowed("7.0.0-1-amd64", free)[0]


@pytest.mark.parametrize("args", [("sometimes", "6.16"), ("hold", "6.16", "6.1", "pacman")])
def test_an_unknown_policy_or_manager_names_itself(args):
    with pytest.raises(ValueError, match=args[-1] if len(args) > 2 else "sometimes"):
        kernel_policy(*args)


def test_newest_allowed_picks_by_version_not_by_text():
    decision = kernel_policy("allowed_series", "6.16", "6.1.0-9-amd64")
    offered = ["6.1.0-9-amd64", "6.1.0-10-amd64", "6.16.2-1-amd64", "6.17.0-1-amd64"]
    assert newest_allowed(offered, decision) == "6.16.2-1-amd64"
    assert newest_allowed(["6.1.0-10-amd64", "6.1.0-9-amd64"], decision, newer_than="6.1.0-9-amd64") == "6.1.0-10-amd64"


def test_update_target_takes_the_asked_kernel_only_when_offered_and_allowed():
    decision = kernel_policy("allowed_series", "6.16", "6.1.0-18-amd64")
    offered = ["6.1.0-19-amd64", "6.17.0-1-amd64"]
    assert update_target(offered, decision, "6.1.0-18-amd64")["kernel"] == "6.1.0-19-amd64"
    refused = update_target(offered, decision, "6.1.0-18-amd64", "6.17.0-1-amd64")
    assert refused["kernel"] is None and "6.17.0-1-amd64" in refused["problem"]
    assert "packages_kernel_update_policy" in refused["problem"]
    missing = update_target(offered, decision, "6.1.0-18-amd64", "6.1.0-30-amd64")
    assert "not offered" in missing["problem"] and "6.1.0-19-amd64" in missing["problem"]
    current = update_target(["6.1.0-18-amd64"], decision, "6.1.0-18-amd64")
    assert current["kernel"] is None and current["problem"] is None


@pytest.mark.parametrize(
    ("running", "offered", "picked"),
    [
        # Ubuntu: an aws or lowlatency kernel sorts above the generic one but is another kernel.
        ("6.8.0-51-generic", ["6.8.0-52-generic", "6.8.0-1020-aws", "6.8.0-52-lowlatency"], "6.8.0-52-generic"),
        # Debian: cloud and rt flavours beside amd64.
        ("6.1.0-18-amd64", ["6.1.0-19-cloud-amd64", "6.1.0-19-amd64", "6.1.0-19-rt-amd64"], "6.1.0-19-amd64"),
        ("6.1.0-18-cloud-amd64", ["6.1.0-19-cloud-amd64", "6.1.0-20-amd64"], "6.1.0-19-cloud-amd64"),
        # No flavour in the running release (RHEL's, the lab machine's own): nothing is filtered.
        ("5.14.0-427.13.1.el9_4.x86_64", ["5.14.0-503.11.1.el9_5.x86_64"], "5.14.0-503.11.1.el9_5.x86_64"),
    ],
)
def test_an_unasked_update_keeps_the_running_kernels_flavour(running, offered, picked):
    decision = kernel_policy("allowed_series", "6.16", running)
    assert update_target(offered, decision, running)["kernel"] == picked


def test_the_flavour_is_what_follows_the_abi_number():
    assert [flavour_of(k) for k in ("6.8.0-51-generic", "6.1.0-19-cloud-amd64", "6.18.44-fc-v1272", "6.16.13")] == [
        "generic", "cloud-amd64", None, None]
    # An asked kernel of another flavour is the operator's choice.
    decision = kernel_policy("allowed_series", "6.16", "6.8.0-51-generic")
    asked = update_target(["6.8.0-1020-aws"], decision, "6.8.0-51-generic", "6.8.0-1020-aws")
    assert asked["kernel"] == "6.8.0-1020-aws"
