"""The lab mirror's package naming, versions, layout and key handling (no root, no network)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from rocm_fleet.lab.mirror import amd_packages, build, signing
from rocm_fleet.lab.mirror.catalog import (
    CORE_SDK_RELEASES,
    DEFAULT_RELEASE,
    META_PACKAGES,
    RELEASES,
    TOOL_SUITES,
    USECASE_PACKAGES,
    DriverLine,
    RocmRelease,
    driver_line,
    tool_suites_in_use,
)
from rocm_fleet.lab.mirror.debs import DebSpec, build_deb
from rocm_fleet.lab.mirror.libraries import Library

RELEASE = {release.version: release for release in RELEASES}
REPO = Path(__file__).resolve().parents[3]


def tools(suite: str = "bookworm") -> amd_packages.Tools:
    versions = {"rocm-smi": "5.2.3-2", "librocm-smi64-1": "5.2.3-2", "amd-smi": "6.1.2+ds-2"}
    bins = {"rocminfo": (0o755, b"x"), "rocm_agent_enumerator": (0o755, b"y")}
    found = {
        name: Library(name, package, "1", f"{name}.so.9.9", f"{name}.so.9", 0o644, f"{package}-needs", b"ELF")
        for name, package in TOOL_SUITES[suite].libraries.items()
    }
    return amd_packages.Tools(TOOL_SUITES[suite], versions, bins, "libhsa-runtime64-1 (>= 5.2.3~), kmod", found)


def test_version_strings_follow_amds_format():
    rocm_641 = RELEASE["6.4.1"]
    assert rocm_641.deb_version("rocm-core", "jammy") == "6.4.1.60401-83~22.04"
    assert rocm_641.deb_version("rocm-cmake", "jammy") == "0.14.0.60401-83~22.04"
    assert rocm_641.deb_version("rocm-hip-runtime", "noble") == "6.4.1.60401-83~24.04"
    assert rocm_641.driver.dkms_deb_version("noble") == "1:6.12.12.60401-2164967.24.04"
    assert rocm_641.driver.dkms_module_version("jammy") == "6.12.12-2164967.22.04"


def test_7x_drivers_come_from_the_30x_line():
    # AMD's strings (catalog.py cites them): 30.20.1 from a real `dpkg -l`, 30.30.3 from a validated config.
    driver_711, driver_723 = RELEASE["7.1.1"].driver, RELEASE["7.2.3"].driver
    assert driver_711.directory == "30.20.1" and driver_723.directory == "30.30.3"
    assert driver_711.dkms_deb_version("noble") == "1:6.16.6.30200100-2255209.24.04"
    assert driver_711.firmware_deb_version("noble") == "30.20.1.0.30200100-2255209.24.04"
    assert driver_723.dkms_deb_version("jammy") == "1:6.16.13.30300300-2327507.22.04"
    assert driver_723.firmware_deb_version("jammy") == "30.30.3.0.30300300-2327507.22.04"
    assert driver_723.dkms_module_version("noble") == "6.16.13-2327507.24.04"
    assert RELEASE["7.2.3"].deb_version("amd-smi-lib", "noble") == "26.2.2.70203-90~24.04"
    assert RELEASE["7.1.1"].graphics_deb_version("2.4.125", "noble") == "1:2.4.125.70101-2255337.24.04"


def test_x_y_0_releases_and_drivers_live_in_an_x_y_directory():
    assert RocmRelease("6.4.0", 1, DriverLine("6.4", "6.12.12", "60400", 1), {}).repo_dir == "6.4"
    assert RELEASE["6.4.1"].repo_dir == "6.4.1"
    assert driver_line("30.20", "6.16.6", 2238411).directory == "30.20"
    assert driver_line("30.20", "6.16.6", 2238411).firmware_deb_version("noble") == "30.20.0.0.30200000-2238411.24.04"


def test_the_default_is_the_newest_7x_and_carries_forkys_tools_on_noble():
    assert DEFAULT_RELEASE.version == "7.2.3"
    assert DEFAULT_RELEASE.tool_suite("noble").suite == "forky"
    assert DEFAULT_RELEASE.tool_suite("jammy").suite == "bookworm"
    assert RELEASE["7.1.1"].tool_suite("noble").suite == "trixie"
    assert [suite.suite for suite in tool_suites_in_use()] == ["bookworm", "trixie", "forky"]
    assert TOOL_SUITES["forky"].host_suite == "trixie"


def test_mirror_urls_follow_amds_7x_layout(tmp_path):
    info = build.MirrorInfo(tmp_path, port=8650)
    assert info.amdgpu_repo_url("7.2.3") == "http://127.0.0.1:8650/amdgpu/30.30.3/ubuntu"
    assert info.graphics_repo_url("7.2.3") == "http://127.0.0.1:8650/graphics/7.2.3/ubuntu"
    assert info.rocm_repo_url("7.1.1") == "http://127.0.0.1:8650/rocm/apt/7.1.1"
    assert info.amdgpu_repo_url("6.4.1") == "http://127.0.0.1:8650/amdgpu/6.4.1/ubuntu"
    assert info.graphics_repo_url("6.4.1") is None
    served = {dist.path for dist in build.dists()}
    assert {"graphics/7.1.1/ubuntu/dists/noble", "debian/dists/bookworm", "debian/dists/trixie"} <= served
    # The Ubuntu hosts' distribution archives, under Ubuntu's codenames (rocm_fleet.lab.systems).
    assert {"ubuntu/dists/jammy", "ubuntu/dists/noble"} <= served
    assert not any(path.startswith("graphics/6.") for path in served)


def test_the_inventory_offers_what_the_mirror_serves():
    variables = yaml.safe_load((REPO / "inventory/lab/group_vars/all/lab_mirror.yml").read_text())
    assert variables["repo_available_rocm_versions"] == [release.version for release in RELEASES] + [
        release.version for release in CORE_SDK_RELEASES]


def test_every_meta_dependency_and_usecase_is_served():
    for release in RELEASES:
        served = set(META_PACKAGES) | {"rocm-core", *release.modules}
        for deps in META_PACKAGES.values():
            assert set(deps) <= served
    assert set(USECASE_PACKAGES.values()) - {"amdgpu-dkms"} <= set(META_PACKAGES)


def test_unversioned_package_excludes_its_versioned_twin():
    specs = {spec.name: spec for spec in amd_packages.release_packages(RELEASE["6.4.1"], "jammy", tools())}
    single, multi = specs["rocm-hip-runtime"], specs["rocm-hip-runtime6.4.1"]
    assert single.conflicts == ["rocm-hip-runtime6.4.1"] and not multi.conflicts
    assert specs["rocm-core"].conflicts == ["rocm-core6.4.1"]
    assert "rocminfo6.4.1 (= 1.0.0.60401-83~22.04)" in multi.depends
    assert "rocminfo (= 1.0.0.60401-83~22.04)" in single.depends
    assert specs["rocminfo"].files["/opt/rocm-6.4.1/bin/rocminfo"] == (0o755, b"x")
    assert "libhsa-runtime64-1 (>= 5.2.3~), kmod" in specs["rocminfo"].depends


def test_smi_packages_carry_their_generations_tools():
    bookworm = {spec.name: spec for spec in amd_packages.release_packages(RELEASE["7.2.3"], "jammy", tools())}
    assert "rocm-smi (>= 5.2.3-2)" in bookworm["rocm-smi-lib"].depends
    assert bookworm["rocm-smi-lib"].symlinks == {"/opt/rocm-7.2.3/bin/rocm-smi": amd_packages.ROCM_SMI_SCRIPT}
    note = bookworm["amd-smi-lib"].files["/opt/rocm-7.2.3/share/doc/amd-smi-lib/LAB-PLACEHOLDER"]
    assert b"Debian bookworm packages no amd-smi" in note and not bookworm["amd-smi-lib"].symlinks
    trixie = {spec.name: spec for spec in amd_packages.release_packages(RELEASE["7.1.1"], "noble", tools("trixie"))}
    assert "amd-smi (>= 6.1.2+ds-2)" in trixie["amd-smi-lib7.1.1"].depends
    assert trixie["amd-smi-lib7.1.1"].symlinks["/opt/rocm-7.1.1/bin/amd-smi"] == amd_packages.AMD_SMI_SCRIPT
    assert "libamd-smi0-needs" in trixie["amd-smi-lib7.1.1"].depends  # and its library's (test_runtime_libraries)
    assert "libdrm-amdgpu-amdgpu1 | libdrm-amdgpu1" in trixie["hsa-rocr"].depends


def test_dkms_stub_reports_the_kernel_module_version():
    dkms = next(spec for spec in amd_packages.driver_packages(RELEASE["7.2.3"], "noble") if spec.name == "amdgpu-dkms")
    assert "version=6.16.13" in dkms.scripts["postinst"] and "version=6.16.13-2327507.24.04" in dkms.scripts["postinst"]
    assert dkms.depends == ["amdgpu-dkms-firmware (= 30.30.3.0.30300300-2327507.24.04)"]


@pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="needs dpkg-deb")
def test_built_deb_reads_back_with_dpkg_deb(tmp_path):
    spec = DebSpec(
        name="lab-test",
        version="1:1.0-1",
        description="x",
        files={"/opt/x/bin/tool": (0o755, b"#!/bin/sh\n"), "/opt/x/doc": b"note\n"},
        symlinks={"/usr/bin/tool": "/opt/x/bin/tool"},
        scripts={"postinst": "#!/bin/sh\nexit 0\n"},
    )
    deb = build_deb(spec, tmp_path)
    assert deb.name == "lab-test_1.0-1_amd64.deb"
    control = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, text=True, check=True).stdout
    assert control == spec.control()
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    assert "-rwxr-xr-x root/root" in listing and "./usr/bin/tool -> /opt/x/bin/tool" in listing
    assert build_deb(spec, tmp_path).read_bytes() == deb.read_bytes()  # reproducible


@pytest.mark.skipif(not shutil.which("gpg"), reason="needs gpg")
def test_dearmor_matches_gpg():
    armored = signing.public_key(signing.ROCM_KEY)
    expected = subprocess.run(["gpg", "--dearmor"], input=armored.read_bytes(), capture_output=True, check=True).stdout
    assert signing.dearmor(armored.read_text()) == expected
