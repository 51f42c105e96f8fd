"""The lab mirror's package naming, versions and key handling (no root, no network)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rocm_fleet.lab.mirror import amd_packages, signing
from rocm_fleet.lab.mirror.catalog import META_PACKAGES, RELEASES, USECASE_PACKAGES, RocmRelease

ROCM_641 = next(release for release in RELEASES if release.version == "6.4.1")


def test_version_strings_follow_amds_format():
    assert ROCM_641.deb_version("rocm-core", "jammy") == "6.4.1.60401-83~22.04"
    assert ROCM_641.deb_version("rocm-cmake", "jammy") == "0.14.0.60401-83~22.04"
    assert ROCM_641.deb_version("rocm-hip-runtime", "noble") == "6.4.1.60401-83~24.04"
    assert ROCM_641.amdgpu_deb_version("noble") == "1:6.12.12.60401-2164967.24.04"
    assert ROCM_641.dkms_module_version("jammy") == "6.12.12-2164967.22.04"


def test_x_y_0_releases_live_in_an_x_y_directory():
    assert RocmRelease("6.4.0", 1, "6.12.12", 1, {}).repo_dir == "6.4"
    assert ROCM_641.repo_dir == "6.4.1"


def test_every_meta_dependency_and_usecase_is_served():
    for release in RELEASES:
        served = set(META_PACKAGES) | {"rocm-core", *release.modules}
        for deps in META_PACKAGES.values():
            assert set(deps) <= served
    assert set(USECASE_PACKAGES.values()) - {"amdgpu-dkms"} <= set(META_PACKAGES)


def test_unversioned_package_excludes_its_versioned_twin():
    bins = {"rocminfo": (0o755, b"x"), "rocm_agent_enumerator": (0o755, b"y")}
    specs = {spec.name: spec for spec in amd_packages.release_packages(ROCM_641, "jammy", bins)}
    single, multi = specs["rocm-hip-runtime"], specs["rocm-hip-runtime6.4.1"]
    assert single.conflicts == ["rocm-hip-runtime6.4.1"] and not multi.conflicts
    assert "rocminfo6.4.1 (= 1.0.0.60401-83~22.04)" in multi.depends
    assert "rocminfo (= 1.0.0.60401-83~22.04)" in single.depends
    assert specs["rocminfo"].files["/opt/rocm-6.4.1/bin/rocminfo"] == (0o755, b"x")


@pytest.mark.skipif(not shutil.which("gpg"), reason="needs gpg")
def test_dearmor_matches_gpg():
    armored = signing.public_key(signing.ROCM_KEY)
    expected = subprocess.run(["gpg", "--dearmor"], input=armored.read_bytes(), capture_output=True, check=True).stdout
    assert signing.dearmor(armored.read_text()) == expected
