"""The lab's RPM builder: rpm reads what it writes as the description says, and a rebuild comes from the cache."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rocm_fleet.lab.mirror.rpms import RpmSpec, build_rpm, spec_text

pytestmark = pytest.mark.skipif(not shutil.which("rpmbuild"), reason="needs rpmbuild (Debian's rpm package)")


def sample() -> RpmSpec:
    return RpmSpec(
        name="rocm-core",
        version="7.2.3.70203",
        release="90.el9",
        summary="ROCm core (rocm-fleet lab)",
        requires=["rocm-fleet-lab-base", "/bin/sh"],
        provides=["rocm-core(x86-64) = 7.2.3.70203-90.el9"],
        files={"/opt/rocm-7.2.3/.info/version": b"7.2.3-90\n", "/opt/rocm-7.2.3/bin/tool": (0o755, b"#!/bin/sh\n")},
        symlinks={"/opt/rocm-7.2.3/lib/libx.so": "libx.so.1"},
        scripts={"postinst": "echo configured\n", "prerm": "echo removing\n"},
    )


def query(path, fmt: str) -> str:
    return subprocess.run(["rpm", "-qp", "--qf", fmt, str(path)], capture_output=True, text=True, check=True).stdout


def test_rpm_reads_the_name_version_dependencies_files_and_scripts_of_the_description(tmp_path):
    built = build_rpm(sample(), tmp_path / "out")
    assert built.name == "rocm-core-7.2.3.70203-90.el9.x86_64.rpm"
    assert (
        query(built, "%{NAME} %{VERSION} %{RELEASE} %{ARCH} %{EPOCH}") == "rocm-core 7.2.3.70203 90.el9 x86_64 (none)"
    )
    requires = subprocess.run(["rpm", "-qpR", str(built)], capture_output=True, text=True, check=True).stdout
    assert {"rocm-fleet-lab-base", "/bin/sh"} <= set(requires.split("\n"))
    listed = subprocess.run(["rpm", "-qplv", str(built)], capture_output=True, text=True, check=True).stdout
    assert "-rwxr-xr-x" in next(line for line in listed.splitlines() if line.endswith("/bin/tool"))
    assert any(line.endswith("/opt/rocm-7.2.3/lib/libx.so -> libx.so.1") for line in listed.splitlines())
    scripts = subprocess.run(["rpm", "-qp", "--scripts", str(built)], capture_output=True, text=True, check=True).stdout
    assert "postinstall scriptlet" in scripts and "echo configured" in scripts and "echo removing" in scripts
    # Installed into an empty database, the files land as described.
    root = tmp_path / "root"
    subprocess.run(["rpm", "--root", str(root), "--initdb"], check=True)
    subprocess.run(["rpm", "--root", str(root), "-i", "--nodeps", "--noscripts", str(built)], check=True)
    assert (root / "opt/rocm-7.2.3/.info/version").read_bytes() == b"7.2.3-90\n"
    assert (root / "opt/rocm-7.2.3/lib/libx.so").readlink().as_posix() == "libx.so.1"


def test_an_epoch_is_in_the_header_not_the_file_name(tmp_path):
    spec = sample()
    spec.name, spec.epoch, spec.arch = "amdgpu-dkms", 1, "noarch"
    built = build_rpm(spec, tmp_path)
    assert built.name == "amdgpu-dkms-7.2.3.70203-90.el9.noarch.rpm"
    assert query(built, "%{EPOCH}") == "1" and spec.evr == "1:7.2.3.70203-90.el9"


def test_a_second_build_of_the_same_description_comes_from_the_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = build_rpm(sample(), tmp_path / "a", cache).read_bytes()
    monkeypatch.setattr("rocm_fleet.lab.mirror.rpms._rpmbuild", lambda spec: pytest.fail("rebuilt"))
    assert build_rpm(sample(), tmp_path / "b", cache).read_bytes() == first
    changed = sample()
    changed.files["/opt/rocm-7.2.3/.info/version"] = b"7.2.3-91\n"
    with pytest.raises(pytest.fail.Exception, match="rebuilt"):
        build_rpm(changed, tmp_path / "c", cache)


def test_the_spec_owns_only_the_directories_it_creates_under_opt():
    text = spec_text(sample())
    assert '%dir %attr(0755,root,root) "/opt/rocm-7.2.3"' in text
    assert '"/opt"' not in text.replace("/opt/", "")
