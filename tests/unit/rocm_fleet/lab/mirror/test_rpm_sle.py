"""The lab mirror's SLES repositories: AMD's sle trees, the modules' repositories and the kernel devel package."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rocm_fleet.lab import systems
from rocm_fleet.lab.mirror import rpm_amd, rpm_legacy, rpm_sle, rpms
from rocm_fleet.lab.mirror.catalog import DRIVER_LINES, RELEASES

SLES = systems.system("sles15.7")


@pytest.mark.parametrize(
    ("kernel", "parts"),
    [
        ("6.4.0-150700.51-default", ("default", "6.4.0", "150700.51")),  # SLES 15 SP7's first kernel
        ("6.4.0-150700.20-azure", ("azure", "6.4.0", "150700.20")),
        ("6.18.44-fc-v1272", ("v1272", "6.18.44", "fc")),  # the lab machine's, read the same way
    ],
)
def test_a_kernel_release_is_read_as_suse_names_it(kernel, parts):
    assert rpm_sle.suse_kernel(kernel) == parts


@pytest.mark.parametrize("kernel", ["6.18.44", "6.1.0-28", "6.8.0-1015-aws-x"])
def test_a_kernel_release_suse_would_not_name_so_is_refused(kernel):
    with pytest.raises(ValueError, match="no <version>-<release>-<flavor>"):
        rpm_sle.suse_kernel(kernel)


def test_amds_sle_trees_and_rpms_without_a_dist_tag():
    line = DRIVER_LINES[-1]
    assert rpm_amd.amdgpu_line_root(line, SLES) == f"amdgpu/{line.directory}/sle/15.7/main/x86_64"
    assert rpm_amd.core_sdk_root(SLES) == "rocm/core/packages/sles15/x86_64"
    assert rpm_amd.tagged(2327507, SLES) == "2327507"
    assert rpm_amd.tagged(2327507, systems.system("rocky9.6")) == "2327507.el9"
    legacy = next(release for release in RELEASES if release.version.startswith("7."))
    assert rpm_legacy.roots(legacy, SLES) == {
        "rocm": f"rocm/zyp/{legacy.repo_dir}/main",
        "graphics": f"graphics/{legacy.repo_dir}/sle/15.7/main/x86_64",
    }


def test_the_registered_modules_include_those_amds_prerequisites_add():
    names = [repo.name for repo in rpm_sle.module_repos(SLES)]
    for module in ("Basesystem", "Desktop-Applications", "Development-Tools"):
        assert f"SLE-Module-{module}15-SP7-Updates" in names
    assert "SUSE-PackageHub-15-SP7-Backports-Pool" in names


@pytest.mark.skipif(not shutil.which("rpmbuild"), reason="rpmbuild is not installed")
def test_the_kernel_devel_package_answers_the_version_a_zypper_install_names(tmp_path):
    built = rpms.build_rpm(rpm_sle.kernel_devel("6.4.0-150700.51-default"), tmp_path)

    def query(*args):
        return subprocess.run(["rpm", "-qp", *args, str(built)], capture_output=True, text=True, check=True).stdout

    assert query("--qf", "%{NAME}-%{VERSION}-%{RELEASE}") == "kernel-default-devel-6.4.0-150700.51.1"
    assert "kernel-default-devel = 6.4.0-150700.51\n" in query("--provides")
