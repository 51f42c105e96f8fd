"""The RHEL family's kernel packages in the lab mirror: the names AMD's instructions install, the two update kernels
named as `uname -r` names them, and rpm reading their scriptlets and installonly provides as written."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rocm_fleet.lab import systems
from rocm_fleet.lab.mirror import kernel_packages, kernel_rpms
from rocm_fleet.lab.mirror.catalog import DRIVER_LINES
from rocm_fleet.lab.mirror.rpms import build_rpm

ROCKY = systems.system("rocky9.6")
needs_rpmbuild = pytest.mark.skipif(not shutil.which("rpmbuild"), reason="needs rpmbuild (Debian's rpm package)")


def test_a_kernel_release_is_its_packages_version_and_release():
    assert kernel_rpms.rpm_kernel_version("6.1.0-28-amd64") == ("6.1.0", "28_amd64")
    assert kernel_rpms.rpm_kernel_version("5.14.0-570.12.1.el9_6.x86_64") == ("5.14.0", "570.12.1.el9_6")


def test_good_is_the_machines_series_and_bad_the_first_series_no_served_amdgpu_builds_for():
    newest_line = max(tuple(int(n) for n in line.module_version.split(".")[:2]) for line in DRIVER_LINES)
    assert kernel_packages.newest_driver_base(DRIVER_LINES) >= newest_line
    kernels = kernel_rpms.lab_kernels("6.1.0-28-amd64", ROCKY)
    major, minor = kernel_packages.newest_driver_base(DRIVER_LINES)
    assert kernels == {"good": "6.1.1-1.el9.x86_64", "bad": f"{major}.{minor + 1}.0-1.el9.x86_64"}
    assert kernel_rpms.lab_kernels("9.9.3-fc-v1", ROCKY)["bad"] == "9.10.0-1.el9.x86_64"  # a machine above every base


@needs_rpmbuild
def test_the_kernel_packages_answer_to_the_names_amds_instructions_install(tmp_path):
    kernel = "6.1.0-28-amd64"
    for spec in kernel_rpms.kernel_packages(kernel, ROCKY):
        provides = subprocess.run(
            ["rpm", "-qp", "--provides", str(build_rpm(spec, tmp_path))], capture_output=True, text=True, check=True
        ).stdout.split("\n")
        assert f"{spec.name}-{kernel}" in provides
    devel = next(spec for spec in kernel_rpms.kernel_packages(kernel, ROCKY) if spec.name == "kernel-devel")
    assert devel.symlinks == {f"/usr/lib/modules/{kernel}/build": f"/usr/src/kernels/{kernel}"}


@needs_rpmbuild
def test_an_update_kernel_is_installed_beside_the_running_one_and_kernel_install_boots_it(tmp_path):
    good = kernel_rpms.lab_kernels("6.1.0-28-amd64", ROCKY)["good"]
    built = build_rpm(kernel_rpms.kernel_core(good), tmp_path)

    def query(*args: str) -> str:
        return subprocess.run(["rpm", "-qp", *args, str(built)], capture_output=True, text=True, check=True).stdout

    assert query("--qf", "%{VERSION}-%{RELEASE}.%{ARCH}") == good  # the NEVRA the kernel role installs: kernel-<k>
    assert "installonlypkg(kernel)" in query("--provides").split("\n")
    scripts = query("--scripts")
    assert f"/bin/kernel-install add {good} /lib/modules/{good}/vmlinuz" in scripts.split("posttrans")[1]
    assert f"/bin/kernel-install remove {good}" in scripts.split("preuninstall")[1]
    assert f"/usr/lib/modules/{good}" in query("--list").split("\n")  # owned: removed with the kernel
    meta = kernel_rpms.kernel_meta(good)
    assert meta.requires == [
        f"kernel-core = {good.removesuffix('.x86_64')}",
        f"kernel-modules = {good.removesuffix('.x86_64')}",
    ]
