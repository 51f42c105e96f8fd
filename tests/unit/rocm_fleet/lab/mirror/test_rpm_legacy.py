"""The legacy stream's RPM repositories: AMD's el layout and RPM versions, dpkg's arguments for the carried
maintainer scripts under rpm, and the single-version set refusing its twin without standing in for it."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from fleet_testing.core_sdk_fakes import tools

from rocm_fleet.lab import systems
from rocm_fleet.lab.mirror import rpm_legacy
from rocm_fleet.lab.mirror.catalog import TOOL_SUITES

ROCKY = systems.system("rocky9.6")


def test_amds_rpm_versions_from_the_deb_ones():
    # rocm-core7.2.3 7.2.3.70203-90~22.04 (deb) is rocm-core7.2.3-7.2.3.70203-90.el9 on RHEL 9 (AMD's el9 tree).
    assert rpm_legacy.rpm_version("7.2.3.70203-90~22.04", "el9") == (None, "7.2.3.70203", "90.el9")
    assert rpm_legacy.rpm_version("1:2.4.125.70203-2327507.22.04", "el9") == (1, "2.4.125.70203", "2327507.el9")


def test_the_legacy_directories_are_amds_el_layout():
    release = next(release for release in rpm_legacy.legacy_releases() if release.version == "7.2.3")
    assert rpm_legacy.roots(release, ROCKY) == {
        "rocm": "rocm/el9/7.2.3/main",
        "graphics": "graphics/7.2.3/el/9.6/main/x86_64",
    }
    assert rpm_legacy.amd_codename(ROCKY) == "jammy"  # Debian 12's userland takes AMD's jammy builds


@pytest.mark.parametrize(
    ("name", "rpm_argument", "dpkg_argument"),
    [
        ("postinst", "1", "configure"),
        ("postinst", "2", "configure"),
        ("prerm", "0", "remove"),
        ("prerm", "1", "upgrade"),
    ],
)
def test_a_carried_maintainer_script_sees_dpkgs_arguments(tmp_path, name, rpm_argument, dpkg_argument):
    script = rpm_legacy.dpkg_arguments(name, '#!/bin/sh\necho "$1"\n')
    (tmp_path / "script").write_text(script)
    out = subprocess.run(["sh", str(tmp_path / "script"), rpm_argument], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == dpkg_argument


@pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="needs dpkg-deb")
def test_the_single_version_set_conflicts_with_its_twin_and_does_not_provide_it(monkeypatch):
    suite = "bookworm"
    monkeypatch.setattr(
        rpm_legacy.rpm_amd,
        "BENEATH",
        rpm_legacy.rpm_amd.BENEATH | {"libhsa-runtime64-1-needs", "libamdhip64-5-needs", "rocm-smi", "librocm-smi64-1"},
    )
    repos = rpm_legacy.legacy_repos(ROCKY, {suite: tools(suite)}, {suite: []})
    rocm = next(repo for repo in repos if repo.path == "rocm/el9/7.2.3/main")
    core = next(spec for spec in rocm.specs if spec.name == "rocm-core")
    assert core.conflicts == ["rocm-core7.2.3"] and core.provides == []
    versioned = next(spec for spec in rocm.specs if spec.name == "rocm-hip-runtime7.2.3")
    assert "rocm-core7.2.3 = 7.2.3.70203-90.el9" in versioned.requires
    assert TOOL_SUITES[suite].amd_smi is False
