"""The lab mirror's ROCm Core SDK 10.x stream and amdgpu 31.x lines (no root, no network): what it serves,
AMD's names, the alternatives scripts, no ROCm SMI, its own key, and the legacy stream left as it was."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from fleet_testing.core_sdk_fakes import AMD_SMI_FILES, render, tools

from rocm_fleet.hardware.profile import load_profile
from rocm_fleet.lab.mirror import amd_packages, build, core_sdk, kernel_packages, scripts, signing
from rocm_fleet.lab.mirror.catalog import (
    CORE_SDK_DIRS,
    CORE_SDK_RELEASES,
    CORE_SDK_TARGET_OF,
    CORE_SDK_TARGETS,
    DRIVER_LINES,
    RELEASES,
)
from rocm_fleet.lab.mirror.distro import DebianDeb

REPO = Path(__file__).resolve().parents[5]
PROFILES = REPO / "src" / "rocm_fleet" / "hardware" / "profiles"
PREFLIGHT_VARS = REPO / "roles" / "preflight" / "vars"


def _builtin(name: str, key: str) -> dict:
    return yaml.safe_load((PREFLIGHT_VARS / f"{name}.yml").read_text())[f"preflight_{key}_builtin"]


# What a host registers and installs (the parallel change's data; the mirror must serve exactly that).
CORE_10 = _builtin("release_streams", "release_streams")["core_sdk_10"]
MATRIX = _builtin("support_matrix", "support_matrix")
DRIVERS = _builtin("amdgpu_drivers", "amdgpu_drivers")
CORE = {release.version: release for release in CORE_SDK_RELEASES}


def packages(version: str = "10.0.0", directory: str = "debian13") -> dict[str, core_sdk.DebSpec]:
    release = CORE[version]
    suite = release.tool_suite(directory)
    amd_smi = (AMD_SMI_FILES, "libamd-smi27 (= 10.1-1), python3, python3-argcomplete, python3-yaml")
    specs = core_sdk.release_packages(release, directory, tools(suite.suite), amd_smi if suite.amd_smi else None)
    return {spec.name: spec for spec in specs}


def test_the_mirror_serves_both_streams_and_the_legacy_one_as_before(tmp_path):
    assert [release.version for release in RELEASES] == ["6.3.3", "6.4.1", "7.1.1", "7.2.3"]
    assert [release.version for release in CORE_SDK_RELEASES] == ["10.0.0", "10.1.0"]
    dists = {dist.path: dist for dist in build.dists()}
    for directory in ("debian12", "debian13", "ubuntu2204", "ubuntu2404"):
        dist = dists[f"rocm/core/packages/{directory}/dists/stable"]
        assert (dist.suite, dist.key) == ("stable", signing.AMDROCM_KEY)
    for line in ("31.40", "31.50"):
        for codename in ("jammy", "noble"):
            assert dists[f"amdgpu/{line}/ubuntu/dists/{codename}"].key == signing.ROCM_KEY
    legacy = [dist for path, dist in dists.items() if path.startswith(("rocm/apt/", "graphics/", "amdgpu/"))]
    assert all(dist.key == signing.ROCM_KEY and dist.origin == build.AMD_ORIGIN for dist in legacy)
    assert not [dist for dist in dists.values() if dist.key == signing.AMDROCM_KEY and dist.origin == build.AMD_ORIGIN]
    info = build.MirrorInfo(tmp_path, port=8650)
    assert info.core_sdk_repo_url("debian13") == "http://127.0.0.1:8650/rocm/core/packages/debian13/"
    assert info.core_sdk_key_url == "http://127.0.0.1:8650/rocm/gpg/packages.gpg"
    assert info.driver_line_repo_url("31.50") == "http://127.0.0.1:8650/amdgpu/31.50/ubuntu"
    assert info.amdgpu_repo_url("7.2.3") == "http://127.0.0.1:8650/amdgpu/30.30.3/ubuntu"  # unchanged
    assert info.core_sdk_repo_url("ubuntu2404") == "http://127.0.0.1:8650/rocm/core/packages/ubuntu2404/"
    with pytest.raises(KeyError):
        info.core_sdk_repo_url("rhel9")
    # The kernel the legacy drivers cannot build for stays where it was: the 31.x lines are nobody's release driver.
    assert kernel_packages.newest_driver_base() == (6, 16)


@pytest.mark.parametrize("version", ["10.0.0", "10.1.0"])
@pytest.mark.parametrize("directory", ["debian12", "debian13", "ubuntu2204", "ubuntu2404"])
def test_amds_10x_package_names_per_target_and_for_every_target(version, directory):
    series = CORE[version].series
    names = set(packages(version, directory))
    for target in CORE_SDK_TARGETS:
        assert {f"amdrocm{series}-{target}", f"amdrocm-core-dev{series}-{target}",
                f"amdrocm-core-sdk{series}-{target}"} <= names  # fmt: skip
    assert {f"amdrocm{series}", f"amdrocm-core-dev{series}", f"amdrocm-core-sdk{series}",
            f"amdrocm-opencl{series}", f"amdrocm-developer-tools{series}"} <= names  # fmt: skip
    assert all(spec.version == f"{version}-{CORE[version].build}" for spec in packages(version, directory).values())


def test_the_packages_are_what_release_streams_says_a_host_installs():
    """roles/preflight/vars/release_streams.yml (core_sdk_10): every package name, deb format, for every target."""
    dirs = CORE_10["os_dirs"]["core"]
    wanted = {dirs["debian"]["12"], dirs["debian"]["13"], dirs["ubuntu"]["22.04"], dirs["ubuntu"]["24.04"]}
    assert set(CORE_SDK_DIRS) == wanted
    apt = CORE_10["repositories"][0]["apt"]
    assert apt["uris"][0]["url"].endswith("/rocm/core/packages/{os_dirs[core]}/")
    assert (apt["suite"], apt["components"]) == ("stable", ["main"])
    assert CORE_10["key"] == "amdrocm"
    for release in CORE_SDK_RELEASES:
        assert MATRIX[release.version]["stream"] == "core_sdk_10"
        assert set(CORE_SDK_TARGETS) <= set(MATRIX[release.version]["gfx_targets"])
        assert release.driver == MATRIX[release.version]["amdgpu_driver"]
        assert render(CORE_10["install_root"], release) == release.prefix
        served = set(packages(release.version))
        for table in ("packages", "all_targets"):
            for entries in CORE_10[table].values():
                for entry in entries:
                    if isinstance(entry, dict):
                        if "deb" not in entry.get("formats", ["deb"]):
                            continue
                        entry = entry["name"]
                    for target in CORE_SDK_TARGETS:
                        name = render(entry.replace("{target}", target), release)
                        assert name in served, name
        assert set(CORE_10["tools"]) == {"amd-smi", "rocminfo"}


def test_the_targets_cover_the_labs_hardware():
    for path in PROFILES.glob("*.yml"):
        for gpu in load_profile(path.stem).gpus:
            assert CORE_SDK_TARGET_OF.get(gpu.gfx_target, gpu.gfx_target) in CORE_SDK_TARGETS, (path.name, gpu)


def test_amdrocm_core_carries_amds_alternatives_scripts():
    specs = packages("10.0.0")
    core = specs["amdrocm-core10.0-gfx942"]
    postinst, prerm = core.scripts["postinst"], core.scripts["prerm"]
    for default in CORE_10["default"]:
        link, name, path = (render(default[key], CORE["10.0.0"]) for key in ("link", "alternative", "path"))
        target = path.replace("/opt/rocm/core-10.0", "$PKG_INSTALL_PREFIX")
        assert f'update-alternatives --install "{link}" "{name}" "{target}" "$altscore"' in postinst, link
        assert f'update-alternatives --remove "{name}" "{target}" || true' in prerm, name
    assert "PKG_INSTALL_PREFIX=/opt/rocm/core-10.0" in postinst and "PKG_INSTALL_PREFIX=/opt/rocm/core-10.0" in prerm
    assert "altscore=$((10 - 3))" in postinst and "altscore=$((altscore*1000000+(now-1600000000)/60))" in postinst
    assert 'update-alternatives --install /usr/bin/"$i" "$i"' in postinst
    assert " amd-smi " in postinst and " rocminfo " in postinst
    # Only the amdrocm-core packages register them; every package carries the legacy guard.
    assert [name for name, spec in specs.items() if "postinst" in spec.scripts] == [
        f"amdrocm-core10.0-{target}" for target in CORE_SDK_TARGETS
    ] + ["amdrocm-core10.0"]
    assert all(spec.scripts["preinst"] == scripts.amdrocm_preinst("/opt/rocm/core-10.0") for spec in specs.values())


def fake_commands(tmp_path: Path, **outputs: str) -> dict:
    """A PATH whose update-alternatives (and the named commands) log their arguments and print ``outputs``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    for name in ("update-alternatives", *outputs):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\nprintf %s "{outputs.get(name, "")}"\n')
        script.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(log)}


@pytest.mark.skipif(not shutil.which("bash") or not Path("/etc/os-release").exists(), reason="needs bash")
def test_the_postinst_priority_is_amds_and_the_prerm_removes_what_it_added(tmp_path):
    env = fake_commands(tmp_path, date="1796443871")  # `date -u +%s`
    for version in ("10.0.0", "10.1.0"):
        release = CORE[version]
        core = packages(version)[f"amdrocm-core{release.series}-gfx942"]
        for script, argument in (("postinst", "configure"), ("prerm", "remove")):
            path = tmp_path / f"{script}-{version}"
            path.write_text(core.scripts[script])
            subprocess.run(["bash", str(path), argument], env=env, check=True, capture_output=True)
    calls = Path(env["LOG"]).read_text().splitlines()
    minutes = (1796443871 - 1600000000) // 60
    for release in CORE_SDK_RELEASES:
        priority = release.altscore * 1000000 + minutes
        assert f"update-alternatives --install /opt/rocm/core core {release.prefix} {priority}" in calls
        assert f"update-alternatives --install /opt/rocm/bin rocm-bin {release.prefix}/bin {priority}" in calls
        assert f"update-alternatives --remove core {release.prefix}" in calls
        assert f"update-alternatives --remove amd-smi {release.prefix}/bin/amd-smi" in calls
    assert CORE["10.0.0"].altscore == ((10 - 3) * 14 + 0) * 14 + 0 == 1372
    assert CORE["10.1.0"].altscore == 1386
    # /usr/bin/<tool> only for a tool the prefix has (none on this machine): AMD's script skips the others.
    assert not [call for call in calls if "--install /usr/bin/" in call]


@pytest.mark.skipif(not shutil.which("awk"), reason="needs awk")
@pytest.mark.parametrize(
    ("installed", "refused"),
    [
        ("ii  rocm-core7.2.3 ROCm Dev Support <rocm-dev.support@amd.com>\n", True),
        ("rc  rocm-core7.2.3 ROCm Dev Support <rocm-dev.support@amd.com>\n", False),  # removed, configuration left
        ("ii  rocm-core Debian ROCm Team <debian-ai@lists.debian.org>\n", False),  # not AMD's
        ("", False),
    ],
)
def test_the_preinst_refuses_beside_the_legacy_stream(tmp_path, installed, refused):
    if os.path.islink("/opt/rocm"):
        pytest.skip("this machine's /opt/rocm is a link")
    env = fake_commands(tmp_path, **{"dpkg-query": installed})
    script = tmp_path / "preinst"
    script.write_text(scripts.amdrocm_preinst("/opt/rocm/core-10.0"))
    result = subprocess.run(["sh", str(script), "install"], env=env, capture_output=True, text=True)
    assert (result.returncode != 0) == refused, result.stderr
    if refused:
        assert "the legacy ROCm stream is installed (rocm-core7.2.3 )" in result.stderr
        assert "If you have ROCm 7.2.4 or older installed, please uninstall it before proceeding." in result.stderr
    assert subprocess.run(["sh", str(script), "abort-upgrade"], env=env).returncode == 0


@pytest.mark.parametrize("directory", ["debian12", "debian13"])
def test_no_rocm_smi_in_any_10x_package(directory):
    for version in ("10.0.0", "10.1.0"):
        for spec in packages(version, directory).values():
            paths = [*spec.files, *spec.symlinks, *spec.symlinks.values()]
            assert not [path for path in paths if "rocm-smi" in path or "rocm_smi" in path], spec.name
            assert not [dep for dep in spec.depends if "rocm-smi" in dep or "rocm_smi" in dep], spec.name


def test_no_rocm_smi_is_copied_into_the_10x_repositories(tmp_path, monkeypatch):
    """Debian's packages of a generation that the host release lacks come with the repository, never rocm-smi."""
    monkeypatch.setattr(core_sdk, "amd_smi_files", lambda deb, cache=None: (AMD_SMI_FILES, "libamd-smi27 (= 10.1-1)"))
    names = ("rocm-smi", "librocm-smi64-1", "amd-smi", "libamd-smi27", "libhsa-runtime64-1", "rocminfo")
    forky = [DebianDeb(tmp_path / f"{name}_1_amd64.deb", name, "1", "forky") for name in names]
    bookworm = [DebianDeb(tmp_path / f"{name}_1_amd64.deb", name, "1", "bookworm") for name in ("rocminfo",)]
    jobs, copies = [], {}
    build._core_sdk_jobs(tmp_path, {"forky": tools("forky"), "bookworm": tools("bookworm")},
                         {"forky": forky, "bookworm": bookworm}, jobs, copies)  # fmt: skip
    copied = {(dist, name.split("_")[0]) for dist, name in copies}
    # The trixie directories: Debian 13's and Ubuntu 24.04's (its hosts run Debian 13's userland).
    assert copied == {(f"rocm/core/packages/{directory}/dists/stable", name)
                      for directory in ("debian13", "ubuntu2404")
                      for name in ("libamd-smi27", "libhsa-runtime64-1", "rocminfo")}  # fmt: skip
    assert len(jobs) == len(packages()) * 2 * len(build.CORE_SDK_DIRS)


def test_amd_smi_lives_in_amds_relocatable_tree_where_debian_packages_it():
    trixie, bookworm = packages("10.0.0", "debian13"), packages("10.0.0", "debian12")
    amdsmi = trixie["amdrocm-amdsmi10.0"]
    assert amdsmi.symlinks == {
        "/opt/rocm/core-10.0/bin/amd-smi": "../libexec/amdsmi_cli/amdsmi_cli.py",
        "/opt/rocm/core-10.0/lib/libamd_smi.so.9": "libamd_smi.so.9.9",  # the library (test_runtime_libraries)
        "/opt/rocm/core-10.0/lib/libamd_smi.so": "libamd_smi.so.9",
    }
    assert "/opt/rocm/core-10.0/share/amd_smi/amdsmi/_version.py" in amdsmi.files
    assert "libamd-smi27 (= 10.1-1), python3, python3-argcomplete, python3-yaml" in amdsmi.depends
    assert not bookworm["amdrocm-amdsmi10.0"].symlinks
    note = bookworm["amdrocm-amdsmi10.0"].files["/opt/rocm/core-10.0/share/doc/amdrocm-amdsmi10.0/LAB-PLACEHOLDER"]
    assert b"Debian bookworm packages no amd-smi" in note
    base = trixie["amdrocm-base10.0"]
    assert base.files["/opt/rocm/core-10.0/.info/version"] == b"10.0.0\n"
    assert base.files["/opt/rocm/core-10.0/bin/rocminfo"] == (0o755, b"x")
    assert packages("10.1.0")["amdrocm-base10.1"].files["/opt/rocm/core-10.1/.info/version"] == b"10.1.0\n"
    assert "amdrocm-blas10.0-gfx942 (= 10.0.0-4)" in trixie["amdrocm-core10.0-gfx942"].depends
    assert "amdrocm-blas10.0 (= 10.0.0-4)" in trixie["amdrocm-core10.0"].depends


def test_the_core_sdk_key_is_its_own():
    fingerprint = signing.FINGERPRINTS[signing.AMDROCM_KEY]
    others = {name: value for name, value in signing.FINGERPRINTS.items() if name != signing.AMDROCM_KEY}
    assert fingerprint not in others.values() and signing.AMDROCM_KEY == "amdrocm-lab"
    assert signing.public_key(signing.AMDROCM_KEY).is_file() and signing.secret_key(signing.AMDROCM_KEY).is_file()
    assert "`amdrocm-lab.{pub,secret}.asc`" in (signing.KEYS_DIR / "README.md").read_text()
    assert fingerprint in (signing.KEYS_DIR / "README.md").read_text()
    assert build.CORE_SDK_KEY_PATH == "rocm/gpg/packages.gpg" and build.ROCM_KEY_PATH == "rocm/rocm.gpg.key"


def test_the_31x_driver_lines():
    lines = {driver.line: driver for driver in DRIVER_LINES}
    assert lines["31.40"].dkms_deb_version("noble") == "1:6.19.14.31400000-2364437.24.04"
    assert lines["31.50"].dkms_deb_version("jammy") == "1:7.1.3.31500000-2390945.22.04"
    assert lines["31.50"].firmware_deb_version("noble") == "31.50.0.0.31500000-2390945.24.04"
    for line, driver in lines.items():
        assert driver.directory == DRIVERS[line]["repo_dir"] and driver.module_version == DRIVERS[line]["kernel_module"]
        assert driver.dkms_deb_version("noble").startswith(DRIVERS[line]["amdgpu_dkms"]["deb"] + "-")
        dkms = next(spec for spec in amd_packages.driver_line_packages(driver, "noble") if spec.name == "amdgpu-dkms")
        # What the lab's kernel model reports once loaded (kernelstate.dkms_amdgpu_version reads version=).
        lab_build = dkms.files[f"/usr/src/amdgpu-{driver.dkms_module_version('noble')}/lab-build"][1].decode()
        assert f"version={driver.module_version}" in lab_build


def test_a_large_package_is_built_once_and_taken_from_the_cache_byte_for_byte(tmp_path):
    from rocm_fleet.lab.mirror import debs

    spec = packages("10.0.0")["amdrocm-amdsmi10.0"]
    spec.files["/opt/rocm/core-10.0/share/amd_smi/big"] = os.urandom(debs.CACHED_PAYLOAD)
    direct = debs.build_deb(spec, tmp_path / "direct").read_bytes()
    first = debs.build_deb_cached(spec, tmp_path / "pool1", tmp_path / "cache")
    kept = tmp_path / "cache" / f"amdrocm-amdsmi10.0_{debs.spec_digest(spec)}.deb"
    assert list((tmp_path / "cache").iterdir()) == [kept]
    kept.write_bytes(b"from the cache")
    second = debs.build_deb_cached(spec, tmp_path / "pool2", tmp_path / "cache")
    assert first.read_bytes() == direct and second.read_bytes() == b"from the cache"
    spec.depends.append("something-else")  # another spec, another entry
    assert debs.build_deb_cached(spec, tmp_path / "pool3", tmp_path / "cache").read_bytes() != b"from the cache"
    small = packages("10.0.0")["amdrocm10.0-gfx942"]
    debs.build_deb_cached(small, tmp_path / "pool4", tmp_path / "cache")
    assert len(list((tmp_path / "cache").iterdir())) == 2  # small packages are not kept
