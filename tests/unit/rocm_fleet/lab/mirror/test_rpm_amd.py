"""AMD's RPM repositories in the lab mirror: AMD's RHEL layouts and names as the roles register and install them,
the Debian Depends dropped only where the Debian userland beneath has them, and rpm reading the scripts as written."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from fleet_testing.core_sdk_fakes import AMD_SMI_FILES, render, tools

from rocm_fleet.lab import systems
from rocm_fleet.lab.mirror import rpm_amd
from rocm_fleet.lab.mirror.catalog import CORE_SDK_RELEASES, CORE_SDK_TARGETS, DRIVER_LINES, TOOL_SUITES
from rocm_fleet.lab.mirror.rpms import RpmRepo, build_rpm

REPO = Path(__file__).resolve().parents[5]
STREAMS = yaml.safe_load((REPO / "roles/preflight/vars/release_streams.yml").read_text())
CORE_10 = STREAMS["preflight_release_streams_builtin"]["core_sdk_10"]
ROCKY = systems.system("rocky9.6")
needs_rpmbuild = pytest.mark.skipif(not shutil.which("rpmbuild"), reason="needs rpmbuild (Debian's rpm package)")


def core_repo() -> RpmRepo:
    suites = {release.tool_suite(ROCKY.core_sdk_directory).suite for release in CORE_SDK_RELEASES}
    amd_smi = {s: (AMD_SMI_FILES, "libamd-smi27 (= 10.1-1), python3") for s in suites if TOOL_SUITES[s].amd_smi}
    return rpm_amd.core_sdk_repo(ROCKY, {suite: beneath_tools(suite) for suite in suites}, amd_smi)


def beneath_tools(suite: str):
    """The fake tools, their libraries needing what Debian 12's do (libhsakmt1, libnuma1, ...)."""
    found = tools(suite)
    for name, library in found.libraries.items():
        found.libraries[name] = dataclasses.replace(library, depends="libhsakmt1 (>= 5.2.0~), libnuma1 (>= 2.0.11)")
    return found


def test_the_core_sdk_directory_and_names_are_what_release_streams_says_an_rpm_host_installs():
    dnf = CORE_10["repositories"][0]["dnf"]["sections"][0]["baseurl"]
    assert dnf.split("stable.repo.amd.com/", 1)[1].replace("{os_dirs[core]}", "rhel9") == rpm_amd.core_sdk_root(ROCKY)
    assert CORE_10["os_dirs"]["core"]["rhel"]["9"] == ROCKY.core_sdk_directory
    served = {spec.name for spec in core_repo().specs}
    for release in CORE_SDK_RELEASES:
        for table in ("packages", "all_targets"):
            for entries in CORE_10[table].values():
                for entry in entries:
                    if isinstance(entry, dict):
                        if "rpm" not in entry.get("formats", ["rpm"]):
                            continue
                        entry = entry["name"]
                    for target in CORE_SDK_TARGETS:
                        assert render(entry.replace("{target}", target), release) in served
    assert not any(name.startswith("amdrocm-core-dev") and "-devel" not in name for name in served)


def test_requires_pin_the_repositorys_packages_by_rpm_version_and_drop_only_what_is_beneath():
    by_name = {spec.name: spec for spec in core_repo().specs}
    release = CORE_SDK_RELEASES[-1]
    evr = f"{release.version}-{release.build}.el9"
    devel = by_name[f"amdrocm-core-devel{release.series}-gfx942"]
    assert f"amdrocm-core{release.series}-gfx942 = {evr}" in devel.requires
    assert all(" = " in item for item in devel.requires)
    base = by_name[f"amdrocm-base{release.series}"]
    assert not any(item.startswith(("python3", "kmod", "libhsa")) for item in base.requires)
    with pytest.raises(ValueError, match="libfoo1"):
        rpm_amd.requires(["libfoo1 (>= 1)"], {}, rpm_amd.BENEATH)
    assert rpm_amd.requires(["libc6 (>= 2.34) | libfoo1, a (= 1)"], {"a": "1-1.el9"}, rpm_amd.BENEATH) == [
        "a = 1-1.el9"
    ]


def test_every_dropped_depends_is_beneath_the_rpm_hosts():
    """ValueError from requires() otherwise: the generation's libraries are the system's packages."""
    assert set(systems.RPM_HOST_LIBRARIES) <= set(ROCKY.packages)
    assert core_repo().specs


def test_the_driver_lines_are_in_amds_el_directories_with_amds_rpm_versions():
    repos = {repo.path: repo for repo in rpm_amd.driver_line_repos(ROCKY)}
    for driver in DRIVER_LINES:
        repo = repos[f"amdgpu/{driver.directory}/el/9.6/main/x86_64"]
        dkms = next(spec for spec in repo.specs if spec.name == "amdgpu-dkms")
        assert dkms.evr == f"1:{driver.module_version}-{driver.build}.el9"
        assert "dkms" in dkms.requires  # EPEL's: why AMD's RHEL instructions need EPEL
        assert f"/usr/src/amdgpu-{driver.module_version}-{driver.build}.el9/lab-build" in dkms.files
        assert 'set -e\n[ "$1" = configure ]' not in dkms.scripts["postinst"]  # rpm's %post runs on install


@needs_rpmbuild
def test_rpm_runs_the_scripts_as_written_and_removes_links_only_on_erase(tmp_path):
    release = CORE_SDK_RELEASES[-1]
    core = next(spec for spec in core_repo().specs if spec.name == f"amdrocm-core{release.series}")
    built = build_rpm(core, tmp_path)
    scripts = subprocess.run(["rpm", "-qp", "--scripts", str(built)], capture_output=True, text=True, check=True)
    assert "preinstall scriptlet (using /bin/sh)" in scripts.stdout
    assert "postinstall scriptlet (using /bin/bash)" in scripts.stdout
    assert "rpm -qa --qf '%{NAME} %{VENDOR}\\n'" in scripts.stdout  # not macro-expanded
    assert "now=$(date -u +%s)" in scripts.stdout
    assert '[ "$1" = 0 ] || exit 0' in scripts.stdout.split("preuninstall")[1]
