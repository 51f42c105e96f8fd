"""package items: dpkg's status file read directly, rpm's query output parsed."""

import shutil
import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import HostView
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate_item

DPKG_STATUS = """Package: rocm-core
Status: install ok installed
Priority: optional
Architecture: amd64
Version: 6.4.1.60401-83~22.04
Description: ROCm core
 A continuation line: with a colon.

Package: amdgpu-dkms
Status: deinstall ok config-files
Architecture: all
Version: 1:6.12.12.60401-2164967.22.04

Package: libc6
Status: install ok installed
Multi-Arch: same
Architecture: amd64
Version: 2.36-9+deb12u10

Package: libc6
Status: install ok installed
Multi-Arch: same
Architecture: i386
Version: 2.36-9+deb12u10
"""


@pytest.fixture
def host(tmp_path):
    status = tmp_path / "var/lib/dpkg/status"
    status.parent.mkdir(parents=True)
    status.write_text(DPKG_STATUS)
    return HostView(str(tmp_path))


def check(host, **expect):
    return evaluate_item({"id": "ROCM-PKG-010", "kind": "package", "expect": expect}, 0, host)


def test_installed_package_with_version_pattern(host):
    result = check(host, name="rocm-core", version="6.4.1*")
    assert result["status"] == "pass", result["message"]
    assert result["actual"] == {"installed": ["6.4.1.60401-83~22.04"], "manager": "dpkg"}


def test_wrong_version_is_named(host):
    result = check(host, name="rocm-core", version="6.3.0*")
    assert result["status"] == "fail"
    assert result["message"] == "rocm-core 6.4.1.60401-83~22.04 is installed, expected 6.3.0*"


def test_config_files_only_is_not_installed(host):
    result = check(host, name="amdgpu-dkms")
    assert (result["status"], result["message"], result["action"]) == (
        "fail",
        "amdgpu-dkms is not installed",
        "install",
    )
    assert check(host, name="amdgpu-dkms", state="absent")["status"] == "pass"


def test_absent_package_that_is_installed_fails(host):
    result = check(host, name="libc6", state="absent")
    assert result["message"] == "libc6 2.36-9+deb12u10, 2.36-9+deb12u10 is installed and should not be"


def test_exact_version_must_match_exactly(host):
    assert check(host, name="libc6", version="2.36-9+deb12u10")["status"] == "pass"
    assert check(host, name="libc6", version="2.36")["status"] == "fail"


def test_no_package_database_is_an_error(tmp_path):
    result = check(HostView(str(tmp_path)), name="rocm-core")
    assert result["status"] == "error"
    assert "no package database" in result["message"]


def test_version_with_state_absent_is_invalid(host):
    result = check(host, name="rocm-core", state="absent", version="6.4.1")
    assert (result["status"], result["message"]) == (
        "error",
        "ROCM-PKG-010: expect.version: makes no sense with state absent",
    )


# RPM hosts: the real rpm reads a database of packages built by the real rpmbuild.
KERNEL_DEVEL_SPEC = """Name: kernel-devel
Version: 5.14.0
Release: 570.12.1.el9_6
Summary: rpm database fixture
License: GPL-2.0-only
BuildArch: x86_64
Provides: kernel-devel-uname-r = 5.14.0-570.12.1.el9_6.x86_64
%description
fixture
%files
"""
ROCKY_OS_RELEASE = 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.6"\n'


@pytest.fixture
def rpm_host(tmp_path):
    if not (shutil.which("rpm") and shutil.which("rpmbuild")):
        pytest.skip("needs rpm and rpmbuild (Debian's rpm package)")
    """A root with an rpm database holding kernel-devel 5.14.0-570.12.1.el9_6, EPEL's dpkg status beside it."""
    top = tmp_path / "build"
    (top / "SPECS").mkdir(parents=True)
    (top / "SPECS/kernel-devel.spec").write_text(KERNEL_DEVEL_SPEC)
    subprocess.run(
        ["rpmbuild", "-bb", "--quiet", "--define", f"_topdir {top}", str(top / "SPECS/kernel-devel.spec")],
        check=True,
        capture_output=True,
    )
    root = tmp_path / "root"
    subprocess.run(
        ["rpm", "--root", str(root), "--dbpath", "/var/lib/rpm", "--initdb"], check=True, capture_output=True
    )
    built = next((top / "RPMS/x86_64").glob("*.rpm"))
    subprocess.run(
        ["rpm", "--root", str(root), "--dbpath", "/var/lib/rpm", "-i", "--nodeps", "--noscripts", str(built)],
        check=True,
        capture_output=True,
    )
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc/os-release").write_text(ROCKY_OS_RELEASE)
    status = root / "var/lib/dpkg/status"
    status.parent.mkdir(parents=True)
    status.write_text(DPKG_STATUS)
    return HostView(str(root))


def test_an_rpm_host_is_read_from_its_rpm_database_even_with_dpkg_beside_it(rpm_host):
    result = check(rpm_host, name="kernel-devel", version="5.14.0-570*")
    assert result["status"] == "pass", result["message"]
    assert result["actual"]["manager"] == "rpm"
    assert check(rpm_host, name="rocm-core", state="absent")["status"] == "pass"


def test_an_rpm_package_is_found_by_the_forms_dnf_installs_it_by(rpm_host):
    # AMD's RHEL instructions: dnf install kernel-devel-$(uname -r), NEVRA on a real RHEL kernel.
    for form in (
        "kernel-devel-5.14.0-570.12.1.el9_6.x86_64",
        "kernel-devel-5.14.0-570.12.1.el9_6",
        "kernel-devel-uname-r",
    ):
        assert check(rpm_host, name=form)["status"] == "pass", form
    assert check(rpm_host, name="kernel-devel-5.14.0-571.el9.x86_64")["status"] == "fail"


def test_a_debian_host_with_rpm_beside_it_is_read_from_dpkg(rpm_host, tmp_path):
    (tmp_path / "root/etc/os-release").write_text('NAME="Debian GNU/Linux"\nID=debian\nVERSION_ID="12"\n')
    result = check(HostView(str(tmp_path / "root")), name="rocm-core", version="6.4.1*")
    assert (result["status"], result["actual"]["manager"]) == ("pass", "dpkg")
