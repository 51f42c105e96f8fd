"""Package versions in the order dpkg and rpm give them: the cases of their own test suites, then AMD's versions."""

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.package_versions import (
    compare_deb_versions,
    compare_package_versions,
    compare_rpm_versions,
    parse_deb_version,
    parse_rpm_version,
    rpmvercmp,
)

# rpm's own cases (rpm-software-management/rpm tests/rpmvercmp.at): left, right, rpmvercmp(left, right).
RPMVERCMP_CASES = [
    ("1.0", "1.0", 0), ("1.0", "2.0", -1), ("2.0", "1.0", 1), ("2.0.1", "2.0.1", 0), ("2.0", "2.0.1", -1),
    ("2.0.1a", "2.0.1a", 0), ("2.0.1a", "2.0.1", 1), ("5.5p1", "5.5p1", 0), ("5.5p1", "5.5p2", -1),
    ("5.5p10", "5.5p1", 1), ("10xyz", "10.1xyz", -1), ("xyz10", "xyz10", 0), ("xyz10", "xyz10.1", -1),
    ("xyz.4", "xyz.4", 0), ("xyz.4", "8", -1), ("8", "xyz.4", 1), ("xyz.4", "2", -1), ("5.5p2", "5.6p1", -1),
    ("5.6p1", "6.5p1", -1), ("6.0.rc1", "6.0", 1), ("6.0", "6.0.rc1", -1), ("10b2", "10a1", 1), ("10a2", "10b2", -1),
    ("1.0aa", "1.0aa", 0), ("1.0a", "1.0aa", -1), ("10.0001", "10.1", 0), ("10.0001", "10.0039", -1),
    ("4.999.9", "5.0", -1), ("20101121", "20101122", -1), ("2_0", "2_0", 0), ("2.0", "2_0", 0), ("a", "a", 0),
    ("a+", "a_", 0), ("+a", "_a", 0), ("1.0~rc1", "1.0", -1), ("1.0~rc1", "1.0~rc2", -1),
    ("1.0~rc1~git123", "1.0~rc1", -1), ("1.0^", "1.0", 1), ("1.0^git1", "1.0", 1), ("1.0^git1", "1.01", -1),
    ("1.0^20160101", "1.0.1", -1), ("1.0^git1~pre", "1.0^git1", -1), ("1.0~rc1^git1", "1.0~rc1", 1),
    ("1.0^git1", "1.0^git2", -1),
]


@pytest.mark.parametrize(("left", "right", "order"), RPMVERCMP_CASES)
def test_rpmvercmp_orders_as_rpm_does(left, right, order):
    assert rpmvercmp(left, right) == order
    assert rpmvercmp(right, left) == -order


# dpkg's order (deb-version(7); dpkg's own t/dpkg_version.t cases): left, right, order.
DEB_CASES = [
    ("1.0", "1.0", 0), ("1.0", "1.0-1", -1), ("1.0~rc1", "1.0", -1), ("1.0~", "1.0", -1), ("1:1.0", "2.0", 1),
    ("0:1.0", "1.0", 0), ("1.0-1~bpo1", "1.0-1", -1), ("1.2.3", "1.2.10", -1), ("1.0a", "1.0", 1),
    ("1.0+b1", "1.0", 1), ("1.0a", "1.0+", -1), ("1.0", "1.00", 0), ("2.30-2", "2.30-10", -1),
    ("1.18.0.70200-43~24.04", "1.18.0.70200-43", -1),
]


@pytest.mark.parametrize(("left", "right", "order"), DEB_CASES)
def test_debian_versions_order_as_dpkg_does(left, right, order):
    assert compare_deb_versions(left, right) == order
    assert compare_deb_versions(right, left) == -order


# AMD's amdgpu-dkms versions as apt prints them (the sources are in roles/preflight/vars/amdgpu_drivers.yml).
@pytest.mark.parametrize(
    ("installed", "floor", "order"),
    [
        ("1:6.16.13.30300300-2327507.24.04", "1:6.16.13.30300300", 1),  # 30.30.3 itself
        ("1:6.16.13.30300000-2278356.24.04", "1:6.16.13.30300300", -1),  # 30.30 is older than 30.30.3
        ("1:6.16.6.30200100-2255209.24.04", "1:6.16.13.30300000", -1),  # 30.20.1 is older than 30.30
        ("1:6.12.12.60401-2164967.22.04", "1:6.14.14.30100200", -1),  # ROCm 6.4.1's driver before 30.10.2
        ("1:6.16.13.30300400-2341068.24.04", "1:6.16.13.30300300", 1),
    ],
)
def test_amdgpu_dkms_debian_versions(installed, floor, order):
    assert compare_package_versions(installed, floor, "deb") == order


@pytest.mark.parametrize(
    ("installed", "floor", "order"),
    [
        ("1:6.16.13-2327507.el9", "1:6.16.13-2327507", 1),  # the dist tag makes the installed one newer
        ("1:6.16.13-2278356.el9", "1:6.16.13-2327507", -1),
        ("1:6.12.12-2187269.el9", "1:6.12.12", 0),  # a floor without release compares epoch and version only
        ("1:6.16.6-2238411.el8", "1:6.16.13-2278356", -1),
        ("6.16.13-2327507.el9", "1:6.10.5", -1),  # no epoch is epoch 0
    ],
)
def test_amdgpu_dkms_rpm_versions(installed, floor, order):
    assert compare_rpm_versions(installed, floor) == order
    assert compare_package_versions(installed, floor, "rpm") == order


def test_versions_split_as_their_formats_define():
    assert parse_deb_version("1:6.16.13.30300300-2327507.24.04") == (1, "6.16.13.30300300", "2327507.24.04")
    assert parse_deb_version("7.2.0.70200-43~24.04") == (0, "7.2.0.70200", "43~24.04")
    assert parse_deb_version("1:6.16.13.30300300") == (1, "6.16.13.30300300", "")
    assert parse_rpm_version("1:6.16.6-2238411.el8") == (1, "6.16.6", "2238411.el8")
    assert parse_rpm_version("1:6.12.12") == (1, "6.12.12", None)


@pytest.mark.parametrize("bad", ["x:1.0", "abc", ":1.0", ""])
def test_malformed_versions_are_refused(bad):
    with pytest.raises(ValueError):
        compare_deb_versions(bad, "1.0")


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown package format"):
        compare_package_versions("1.0", "1.0", "apk")
