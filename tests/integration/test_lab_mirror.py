"""The lab's signed package mirror, exercised by apt in a throwaway Debian 12 root.

Needs root (overlayfs, chroot), the lab base image (built and cached on first use)
and, on the first run only, network access to fetch the Debian packages it serves.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab, pytest.mark.slow]

if os.geteuid() != 0 or not shutil.which("dpkg-deb") or not shutil.which("gpg"):
    pytest.skip("the lab mirror tests need root, dpkg-deb and gpg", allow_module_level=True)

from rocm_fleet.lab import base, paths  # noqa: E402
from rocm_fleet.lab.mirror import (  # noqa: E402
    ensure_mirror,
    install_distro_source,
    mirror_status,
    set_mirror_fault,
    signing,
    start_mirror,
    stop_mirror,
)

ROCM = "6.4.1"
PIN = "Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    info = ensure_mirror(tmp_path_factory.mktemp("lab-state"), paths.cache_dir(), port=_free_port())
    start_mirror(info)
    yield info
    stop_mirror(info)


@pytest.fixture(scope="module")
def base_image():
    return base.ensure_base()


@pytest.fixture
def host(tmp_path, base_image, mirror):
    """A throwaway copy-on-write root of the base image that trusts the mirror's Debian subset."""
    upper, work, root = tmp_path / "upper", tmp_path / "work", tmp_path / "root"
    for path in (upper, work, root):
        path.mkdir()
    options = f"lowerdir={base_image},upperdir={upper},workdir={work}"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(root)], check=True)
    mounted = [root]
    try:
        for fs in ("proc", "dev"):
            subprocess.run(["mount", "--rbind", f"/{fs}", str(root / fs)], check=True)
            mounted.append(root / fs)
        install_distro_source(root, mirror)
        yield root
    finally:
        set_mirror_fault(mirror, None)
        for path in reversed(mounted):
            subprocess.run(["umount", "--recursive", "--lazy", str(path)], check=False)


def apt_ok(root: Path, command: str) -> None:
    result = run(root, command)
    assert result.returncode == 0, f"{command}:\n{result.stdout}{result.stderr}"


def run(root: Path, command: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"}
    return subprocess.run(
        ["chroot", str(root), "/bin/sh", "-c", command], capture_output=True, text=True, env=env, timeout=180
    )


def configure_rocm(root: Path, mirror, key_url: str, codename: str = "jammy") -> None:
    """What AMD's Debian instructions do: dearmored key, amdgpu + rocm sources, the 600 pin."""
    with urllib.request.urlopen(key_url, timeout=10) as response:
        keyring = signing.dearmor(response.read().decode())
    (root / "etc/apt/keyrings").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/keyrings/rocm.gpg").write_bytes(keyring)
    options = "[arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg]"
    (root / "etc/apt/sources.list.d/amdgpu.list").write_text(
        f"deb {options} {mirror.amdgpu_repo_url(ROCM)} {codename} main\n"
    )
    rocm_line = f"deb {options} {mirror.rocm_repo_url(ROCM)} {codename} main\n"
    (root / "etc/apt/sources.list.d/rocm.list").write_text(rocm_line)
    (root / "etc/apt/preferences.d/rocm-pin-600").write_text(PIN)


def test_committed_keys_have_the_pinned_fingerprints():
    for name, fingerprint in signing.FINGERPRINTS.items():
        shown = subprocess.run(
            ["gpg", "--show-keys", "--with-colons", str(signing.public_key(name))], capture_output=True, text=True
        )
        assert f"fpr:::::::::{fingerprint}:" in shown.stdout, name


def test_mirror_serves_amd_layout(mirror):
    assert mirror_status(mirror)["running"]
    for url in (
        f"{mirror.rocm_repo_url(ROCM)}/dists/jammy/InRelease",
        f"{mirror.rocm_repo_url('6.3.3')}/dists/noble/Release.gpg",
        f"{mirror.amdgpu_repo_url(ROCM)}/dists/jammy/main/binary-amd64/Packages.gz",
        f"{mirror.debian_url}/dists/bookworm/InRelease",
        mirror.rocm_key_url,
    ):
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200, url


def test_apt_installs_real_tools_from_the_signed_mirror(host, mirror):
    configure_rocm(host, mirror, mirror.rocm_key_url)
    update = run(host, "apt-get update")
    assert update.returncode == 0 and "W:" not in update.stdout + update.stderr, update.stdout + update.stderr
    install = run(host, "apt-get install -y -q rocm-smi-lib rocminfo")
    assert install.returncode == 0, install.stdout + install.stderr
    assert run(host, "dpkg-query -W -f '${Version}' rocminfo").stdout == "1.0.0.60401-83~22.04"
    smi = run(host, f"/opt/rocm-{ROCM}/bin/rocm-smi --help")
    assert smi.returncode == 0 and "--showtopo" in smi.stdout, smi.stdout + smi.stderr
    # Debian's real rocminfo binary: it runs, and without a GPU reports what the real one does.
    info = run(host, f"/opt/rocm-{ROCM}/bin/rocminfo")
    assert "ROCk module" in info.stdout + info.stderr, info.stdout + info.stderr
    assert os.readlink(host / "etc/alternatives/rocm") == f"/opt/rocm-{ROCM}"
    assert (host / f"opt/rocm-{ROCM}/.info/version").read_text() == f"{ROCM}-83\n"


def test_versioned_releases_install_side_by_side_and_never_mix(host, mirror):
    configure_rocm(host, mirror, mirror.rocm_key_url)
    extra = f"deb [signed-by=/etc/apt/keyrings/rocm.gpg] {mirror.rocm_repo_url('6.3.3')} jammy main\n"
    with open(host / "etc/apt/sources.list.d/rocm.list", "a") as sources:
        sources.write(extra)
    apt_ok(host, "apt-get update")
    both = run(host, "apt-get install -y -q rocm-core6.3.3 rocm-core6.4.1")
    assert both.returncode == 0, both.stdout + both.stderr
    assert os.readlink(host / "etc/alternatives/rocm") == "/opt/rocm-6.4.1"  # the newest release wins
    # The single-version rocm-core of a release conflicts with its versioned twin: apt
    # swaps one for the other instead of letting dpkg collide on /opt/rocm-6.4.1 files.
    mixed = run(host, "apt-get install -y -q rocm-core=6.4.1.60401-83~22.04")
    assert mixed.returncode == 0, mixed.stdout + mixed.stderr
    assert "Removing rocm-core6.4.1 " in mixed.stdout, mixed.stdout
    assert run(host, "dpkg-query -W -f '${Status}' rocm-core6.4.1").stdout != "install ok installed"
    assert (host / "opt/rocm-6.3.3/.info/version").exists() and (host / "opt/rocm-6.4.1/.info/version").exists()


@pytest.mark.parametrize("how", ["signed-by-wrong-key", "mirror-signs-with-wrong-key"])
def test_apt_refuses_a_signature_that_does_not_match(host, mirror, how):
    if how == "signed-by-wrong-key":
        configure_rocm(host, mirror, mirror.wrong_key_url)
    else:
        configure_rocm(host, mirror, mirror.rocm_key_url)
        set_mirror_fault(mirror, "wrong-key")
    update = run(host, "apt-get update")
    output = update.stdout + update.stderr
    assert update.returncode != 0, output
    assert "NO_PUBKEY" in output and "is not signed" in output, output
    assert "rocm-smi-lib" not in run(host, "apt-cache pkgnames rocm-smi").stdout
    set_mirror_fault(mirror, None)
    if how == "mirror-signs-with-wrong-key":
        apt_ok(host, "apt-get update")


def test_missing_package_fails_the_install_with_apts_error(host, mirror):
    configure_rocm(host, mirror, mirror.rocm_key_url)
    set_mirror_fault(mirror, "missing-package:hsa-rocr")
    apt_ok(host, "apt-get update")
    install = run(host, "apt-get install -y -q rocminfo")
    assert install.returncode != 0
    assert "Depends: hsa-rocr (= 1.15.0.60401-83~22.04) but it is not installable" in install.stdout, install.stdout


def test_mirror_down_fails_the_fetch(host, mirror):
    configure_rocm(host, mirror, mirror.rocm_key_url)
    apt_ok(host, "apt-get update")
    set_mirror_fault(mirror, "down")
    assert not mirror_status(mirror)["running"]
    install = run(host, "apt-get install -y -q rocminfo")
    assert install.returncode != 0 and "Failed to fetch" in install.stdout + install.stderr, install.stdout
    set_mirror_fault(mirror, "up")
    assert mirror_status(mirror)["running"]


def test_amdgpu_dkms_needs_headers_for_the_running_kernel(host, mirror):
    configure_rocm(host, mirror, mirror.rocm_key_url)
    apt_ok(host, "apt-get update")
    kernel = platform.release()
    without = run(host, "apt-get install -y -q amdgpu-dkms")
    assert without.returncode != 0, without.stdout
    assert f"Your kernel headers for kernel {kernel} cannot be found" in without.stdout + without.stderr
    fixed = run(host, f"apt-get install -y -q linux-headers-{kernel} && dpkg --configure -a")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    module_version = "6.12.12-2164967.22.04"
    assert (host / f"usr/src/amdgpu-{module_version}/dkms.conf").is_file()
    built = host / f"var/lib/dkms/amdgpu/{module_version}/{kernel}/x86_64/module/amdgpu.ko"
    assert "version=6.12.12" in built.read_text()
    assert (host / f"lib/modules/{kernel}/updates/dkms/amdgpu.ko").is_file()
