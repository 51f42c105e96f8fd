"""The lab's signed package mirror, exercised by apt in throwaway Debian 12 and 13 roots.

Needs root (overlayfs, chroot), the lab bases of Debian 12 and 13 (built and cached on
first use) and, on the first run only, network access to fetch the Debian packages it
serves. Every release the mirror serves is installed on the Debian release of each
codename (jammy: Debian 12, noble: Debian 13), as AMD's Debian instructions map them.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab, pytest.mark.slow]

if os.geteuid() != 0 or not shutil.which("dpkg-deb") or not shutil.which("gpg"):
    pytest.skip("the lab mirror tests need root, dpkg-deb and gpg", allow_module_level=True)

from rocm_fleet.lab import base, paths, systems  # noqa: E402
from rocm_fleet.lab.mirror import (  # noqa: E402
    ensure_mirror,
    install_distro_source,
    mirror_status,
    set_mirror_fault,
    signing,
    start_mirror,
    stop_mirror,
)

PIN = "Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600\n"
SUITE = {"jammy": "bookworm", "noble": "trixie"}
UBUNTU = {"jammy": "22.04", "noble": "24.04"}
# What each release names, in AMD's formats (catalog.py cites the sources); {u} is the
# codename's Ubuntu version. 7.x drivers come from the amdgpu 30.x line's directory.
RELEASES = {
    "6.3.3": {"amdgpu": "6.3.3", "graphics": False, "rocm-core": "6.3.3.60303-74~{u}",
              "amdgpu-dkms": "1:6.10.5.60303-2119913.{u}", "module": "6.10.5", "dkms": "6.10.5-2119913.{u}"},
    "6.4.1": {"amdgpu": "6.4.1", "graphics": False, "rocm-core": "6.4.1.60401-83~{u}",
              "amdgpu-dkms": "1:6.12.12.60401-2164967.{u}", "module": "6.12.12", "dkms": "6.12.12-2164967.{u}"},
    "7.1.1": {"amdgpu": "30.20.1", "graphics": True, "rocm-core": "7.1.1.70101-38~{u}",
              "amdgpu-dkms": "1:6.16.6.30200100-2255209.{u}", "module": "6.16.6", "dkms": "6.16.6-2255209.{u}"},
    "7.2.3": {"amdgpu": "30.30.3", "graphics": True, "rocm-core": "7.2.3.70203-90~{u}",
              "amdgpu-dkms": "1:6.16.13.30300300-2327507.{u}", "module": "6.16.13", "dkms": "6.16.13-2327507.{u}"},
}  # fmt: skip
# Debian's real tools each (release, codename) carries: its host release's, except the
# newest 7.x on noble, which carries Debian forky's (they install on Debian 13).
TOOLS = {
    "bookworm": {"rocm-smi": "5.2.3-2", "rocminfo": "5.2.3-2"},
    "trixie": {"rocm-smi": "6.1.2-1", "amd-smi": "6.1.2+ds-2", "rocminfo": "6.1.2-2"},
    "forky": {"rocm-smi": "6.4.1-1.1", "amd-smi": "10.1-1", "rocminfo": "7.2.4-1"},
}
# Without a loaded amdgpu each amd-smi refuses to start, in its own words.
AMD_SMI_WITHOUT_DRIVER = {
    "trixie": "Unable to get devices, driver not initialized (amdgpu not found in modules)",
    "forky": "Drivers not loaded (amdgpu, amd_hsmp, ionic, bnxt_en drivers not found in modules)",
}
COMBOS = [(release, codename) for release in RELEASES for codename in SUITE]


def _tools(release: str, codename: str) -> str:
    return "forky" if (release, codename) == ("7.2.3", "noble") else SUITE[codename]


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


@pytest.fixture
def new_host(tmp_path, mirror):
    """new_host(suite) or new_host(system=key): a throwaway copy-on-write root of that base, trusting its archive."""
    mounted = []

    def make(suite: str = "bookworm", system: str | None = None) -> Path:
        top = tmp_path / (system or suite)
        upper, work, root = top / "upper", top / "work", top / "root"
        for path in (upper, work, root):
            path.mkdir(parents=True)
        lower = base.ensure_system_base(system) if system else base.ensure_base(suite)
        options = f"lowerdir={lower},upperdir={upper},workdir={work}"
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(root)], check=True)
        mounted.append(root)
        for fs in ("proc", "dev"):
            subprocess.run(["mount", "--rbind", f"/{fs}", str(root / fs)], check=True)
            mounted.append(root / fs)
        install_distro_source(root, mirror, systems.system(system) if system else None)
        return root

    yield make
    set_mirror_fault(mirror, None)
    for path in reversed(mounted):
        subprocess.run(["umount", "--recursive", "--lazy", str(path)], check=False)


@pytest.fixture
def host(new_host):
    return new_host("bookworm")


def apt_ok(root: Path, command: str) -> str:
    result = run(root, command)
    assert result.returncode == 0, f"{command}:\n{result.stdout}{result.stderr}"
    return result.stdout


def run(root: Path, command: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"}
    return subprocess.run(
        ["chroot", str(root), "/bin/sh", "-c", command], capture_output=True, text=True, env=env, timeout=300
    )


def repository_lines(mirror, release: str, codename: str) -> dict[str, str]:
    """AMD's Debian instructions: amdgpu.list (no i386 on Debian), rocm.list (+ graphics for 7.x)."""
    options = "[arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg]"
    rocm = [f"deb {options} {mirror.rocm_repo_url(release)} {codename} main"]
    if mirror.graphics_repo_url(release):
        rocm.append(f"deb {options} {mirror.graphics_repo_url(release)} {codename} main")
    return {
        "amdgpu.list": f"deb {options} {mirror.amdgpu_repo_url(release)} {codename} main\n",
        "rocm.list": "\n".join(rocm) + "\n",
    }


def configure_rocm(root: Path, mirror, key_url: str, release: str = "6.4.1", codename: str = "jammy") -> None:
    """What AMD's Debian instructions do: the dearmored key, the sources, the 600 pin."""
    with urllib.request.urlopen(key_url, timeout=10) as response:
        keyring = signing.dearmor(response.read().decode())
    (root / "etc/apt/keyrings").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/keyrings/rocm.gpg").write_bytes(keyring)
    for name, text in repository_lines(mirror, release, codename).items():
        (root / "etc/apt/sources.list.d" / name).write_text(text)
    (root / "etc/apt/preferences.d/rocm-pin-600").write_text(PIN)


def policy(root: Path, package: str) -> dict:
    """apt-cache policy of one package: its candidate and the source lines of each version."""
    text = apt_ok(root, f"apt-cache policy {package}")
    candidate = re.search(r"Candidate: (\S+)", text)
    return {"candidate": candidate.group(1) if candidate else None, "text": text}


def test_committed_keys_have_the_pinned_fingerprints():
    for name, fingerprint in signing.FINGERPRINTS.items():
        shown = subprocess.run(
            ["gpg", "--show-keys", "--with-colons", str(signing.public_key(name))], capture_output=True, text=True
        )
        assert f"fpr:::::::::{fingerprint}:" in shown.stdout, name


def test_mirror_serves_amd_layout(mirror):
    assert mirror_status(mirror)["running"]
    urls = [f"{mirror.debian_url}/dists/{suite}/InRelease" for suite in ("bookworm", "trixie")] + [mirror.rocm_key_url]
    for release, spec in RELEASES.items():
        assert mirror.amdgpu_repo_url(release) == f"{mirror.base_url}/amdgpu/{spec['amdgpu']}/ubuntu"
        assert mirror.rocm_repo_url(release) == f"{mirror.base_url}/rocm/apt/{release}"
        graphics = mirror.graphics_repo_url(release)
        assert graphics == (f"{mirror.base_url}/graphics/{release}/ubuntu" if spec["graphics"] else None)
        for codename in SUITE:
            for repo in filter(None, (mirror.rocm_repo_url(release), mirror.amdgpu_repo_url(release), graphics)):
                urls += [f"{repo}/dists/{codename}/InRelease", f"{repo}/dists/{codename}/Release.gpg"]
    for url in urls:
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200, url


@pytest.mark.parametrize(("release", "codename"), COMBOS, ids=[f"{r}-{c}" for r, c in COMBOS])
def test_release_installs_with_its_real_tools_on_its_debian(new_host, mirror, release, codename):
    root = new_host(SUITE[codename])
    configure_rocm(root, mirror, mirror.rocm_key_url, release, codename)
    update = run(root, "apt-get update")
    output = update.stdout + update.stderr
    assert update.returncode == 0 and "W:" not in output, output  # signed-by verified, nothing trusted=yes
    expected = {key: value.format(u=UBUNTU[codename]) for key, value in RELEASES[release].items() if key != "graphics"}
    core = policy(root, f"rocm-core{release}")
    assert core["candidate"] == expected["rocm-core"]
    assert f"600 {mirror.rocm_repo_url(release)} {codename}/main amd64 Packages" in core["text"]
    dkms = policy(root, "amdgpu-dkms")
    assert dkms["candidate"] == expected["amdgpu-dkms"]
    assert f"600 {mirror.amdgpu_repo_url(release)} {codename}/main amd64 Packages" in dkms["text"]
    # The roles' base set: ROCm 7 takes amd-smi-lib instead of rocm-smi-lib; both are served.
    base_set = f"rocm-core{release} rocm-language-runtime{release} rocminfo{release}"
    apt_ok(root, f"apt-get install -y -q {base_set} rocm-smi-lib{release} amd-smi-lib{release}")
    tools = TOOLS[_tools(release, codename)]
    for package, version in tools.items():
        if package != "rocminfo":  # repackaged into AMD's rocminfo, not installed under Debian's name
            assert run(root, f"dpkg-query -W -f '${{Version}}' {package}").stdout == version, package
    bin_dir = f"/opt/rocm-{release}/bin"
    smi = run(root, f"{bin_dir}/rocm-smi --help")
    assert smi.returncode == 0 and "--showtopo" in smi.stdout, smi.stdout + smi.stderr
    info = run(root, f"{bin_dir}/rocminfo")
    assert "ROCk module is NOT loaded" in info.stdout + info.stderr, info.stdout + info.stderr
    if "amd-smi" in tools:
        version = run(root, f"{bin_dir}/amd-smi version")
        assert AMD_SMI_WITHOUT_DRIVER[_tools(release, codename)] in version.stdout + version.stderr
    else:
        assert not (root / f"opt/rocm-{release}/bin/amd-smi").exists()
        assert (
            "packages no amd-smi"
            in (root / f"opt/rocm-{release}/share/doc/amd-smi-lib{release}/LAB-PLACEHOLDER").read_text()
        )
    if RELEASES[release]["graphics"]:  # hsa-rocr takes AMD's libdrm from the graphics repository
        assert run(root, "dpkg-query -W -f '${Status}' libdrm-amdgpu-amdgpu1").stdout == "install ok installed"
    assert os.readlink(root / "etc/alternatives/rocm") == f"/opt/rocm-{release}"


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


def test_two_7x_releases_share_one_debian13_host(new_host, mirror):
    """7.1.1 (Debian 13's tools) beside 7.2.3 (forky's): the newer generation serves both."""
    root = new_host("trixie")
    configure_rocm(root, mirror, mirror.rocm_key_url, "7.2.3", "noble")
    with open(root / "etc/apt/sources.list.d/rocm.list", "a") as sources:
        sources.write(repository_lines(mirror, "7.1.1", "noble")["rocm.list"])
    apt_ok(root, "apt-get update")
    apt_ok(root, "apt-get install -y -q rocm-smi-lib7.1.1 amd-smi-lib7.1.1 rocm-smi-lib7.2.3 amd-smi-lib7.2.3")
    assert run(root, "dpkg-query -W -f '${Version}' amd-smi").stdout == TOOLS["forky"]["amd-smi"]
    assert os.readlink(root / "etc/alternatives/rocm") == "/opt/rocm-7.2.3"
    for release in ("7.1.1", "7.2.3"):
        assert run(root, f"/opt/rocm-{release}/bin/rocm-smi --help").returncode == 0


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


def test_a_keyring_of_both_rocm_keys_verifies_the_mirror_through_a_key_rotation(host, mirror):
    """next-key serves both keys (still signing with the current one); rotated-key signs with the next key."""
    set_mirror_fault(mirror, "next-key")
    configure_rocm(host, mirror, mirror.rocm_key_url)
    shown = subprocess.run(["gpg", "--show-keys", "--with-colons", str(host / "etc/apt/keyrings/rocm.gpg")],
                           capture_output=True, text=True, check=True).stdout
    fingerprints = [line.split(":")[9] for line in shown.splitlines() if line.startswith("fpr:")]
    assert fingerprints == [signing.FINGERPRINTS[signing.ROCM_KEY], signing.FINGERPRINTS[signing.ROCM_NEXT_KEY]]
    apt_ok(host, "apt-get update")
    set_mirror_fault(mirror, "rotated-key")
    update = run(host, "apt-get update")
    assert update.returncode == 0 and "W:" not in update.stdout + update.stderr, update.stdout + update.stderr
    apt_ok(host, "apt-get install -y -q rocm-core6.4.1")
    # A host that trusts the current key alone loses the mirror at the switch: the outage the rotation avoids.
    current_only = signing.dearmor(signing.public_key(signing.ROCM_KEY).read_text())
    (host / "etc/apt/keyrings/rocm.gpg").write_bytes(current_only)
    # Its InRelease files go too, so apt fetches and verifies them again: the mirror (http.server) answers 304 to
    # apt's If-Modified-Since for a file it has not changed, and apt then reported Hit and no NO_PUBKEY in one
    # CI run out of two.
    for stale in (host / "var/lib/apt/lists").glob("*_InRelease"):
        stale.unlink()
    update = run(host, "apt-get update")
    next_key_id = signing.FINGERPRINTS[signing.ROCM_NEXT_KEY][-16:]
    assert f"NO_PUBKEY {next_key_id}" in update.stdout + update.stderr, update.stdout + update.stderr


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


@pytest.mark.parametrize(("release", "codename"), [("6.4.1", "jammy"), ("7.2.3", "noble")])
def test_amdgpu_dkms_needs_headers_for_the_running_kernel(new_host, mirror, release, codename):
    root = new_host(SUITE[codename])
    configure_rocm(root, mirror, mirror.rocm_key_url, release, codename)
    apt_ok(root, "apt-get update")
    kernel = platform.release()
    without = run(root, "apt-get install -y -q amdgpu-dkms")
    assert without.returncode != 0, without.stdout
    assert f"Your kernel headers for kernel {kernel} cannot be found" in without.stdout + without.stderr
    fixed = run(root, f"apt-get install -y -q linux-headers-{kernel} && dpkg --configure -a")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    module_version = RELEASES[release]["dkms"].format(u=UBUNTU[codename])
    assert (root / f"usr/src/amdgpu-{module_version}/dkms.conf").is_file()
    built = root / f"var/lib/dkms/amdgpu/{module_version}/{kernel}/x86_64/module/amdgpu.ko"
    # modinfo's version (and /sys/module/amdgpu/version once booted) is the module's own.
    assert f"version={RELEASES[release]['module']}\n" in built.read_text()
    assert (root / f"lib/modules/{kernel}/updates/dkms/amdgpu.ko").is_file()


# The ROCm Core SDK 10.x stream ----------------------------------------------------------------------------
# AMD's 10.0.0 install page (rocm.docs.amd.com/en/latest/install/rocm.html): the key dearmored into
# /etc/apt/keyrings/amdrocm.gpg, a deb822 amdrocm-stable.sources naming rocm/core/packages/<dir>/, suite stable.
CORE_SDK = {"10.0.0": "10.0", "10.1.0": "10.1"}
CORE_SDK_DIR = {"bookworm": "debian12", "trixie": "debian13"}
# AMD's amdrocm-core postinst registers these (TheRock amdrocm-core-postinst.j2): link -> path under the prefix.
CORE_SDK_LINKS = {"core": ("/opt/rocm/core", ""), "core-10": ("/opt/rocm/core-10", ""),
                  "rocm-bin": ("/opt/rocm/bin", "/bin"), "rocm-lib": ("/opt/rocm/lib", "/lib"),
                  "rocm-include": ("/opt/rocm/include", "/include"), "rocm-llvm": ("/opt/rocm/llvm", "/llvm"),
                  "rocm-amdgcn": ("/opt/rocm/amdgcn", "/amdgcn"), "rocm-libexec": ("/opt/rocm/libexec", "/libexec"),
                  "rocm-share": ("/opt/rocm/share", "/share")}  # fmt: skip
# The 31.x driver lines, served as the 30.x lines are: amdgpu/<line>/ubuntu <codename> main, the legacy key.
DRIVER_LINES = {"31.40": "1:6.19.14.31400000-2364437.{u}", "31.50": "1:7.1.3.31500000-2390945.{u}"}


def configure_core_sdk(
    root: Path, mirror, suite: str, key_url: str | None = None, directory: str | None = None
) -> None:
    """AMD's 10.x registration: the dearmored key and amdrocm-stable.sources (deb822)."""
    with urllib.request.urlopen(key_url or mirror.core_sdk_key_url, timeout=10) as response:
        keyring = signing.dearmor(response.read().decode())
    (root / "etc/apt/keyrings").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/keyrings/amdrocm.gpg").write_bytes(keyring)
    (root / "etc/apt/sources.list.d/amdrocm-stable.sources").write_text(
        "X-Repo-Id: amdrocm-stable\n"
        "Types: deb\n"
        f"URIs: {mirror.core_sdk_repo_url(directory or CORE_SDK_DIR[suite])}\n"
        "Suites: stable\n"
        "Components: main\n"
        "Architectures: amd64\n"
        "Signed-By: /etc/apt/keyrings/amdrocm.gpg\n"
        "Enabled: yes\n"
    )


def alternative(root: Path, name: str) -> dict:
    """update-alternatives --query: the link, the chosen path and each path's priority."""
    text = apt_ok(root, f"update-alternatives --query {name}")
    chosen = re.search(r"^Value: (\S+)$", text, re.MULTILINE)
    link = re.search(r"^Link: (\S+)$", text, re.MULTILINE)
    priorities = dict(re.findall(r"^Alternative: (\S+)\nPriority: (\d+)$", text, re.MULTILINE))
    return {"link": link.group(1), "value": chosen.group(1), "priorities": {k: int(v) for k, v in priorities.items()}}


def test_core_sdk_repository_is_amds_10x_layout_signed_with_its_own_key(mirror):
    with urllib.request.urlopen(mirror.core_sdk_key_url, timeout=10) as response:
        served = response.read().decode()
    assert mirror.core_sdk_key_url == f"{mirror.base_url}/rocm/gpg/packages.gpg"
    assert served.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")  # armored, as AMD serves it
    shown = subprocess.run(["gpg", "--show-keys", "--with-colons"], input=served, capture_output=True, text=True)
    fingerprints = [line.split(":")[9] for line in shown.stdout.splitlines() if line.startswith("fpr:")]
    assert fingerprints == [signing.FINGERPRINTS[signing.AMDROCM_KEY]]
    assert signing.FINGERPRINTS[signing.AMDROCM_KEY] != signing.FINGERPRINTS[signing.ROCM_KEY]
    for directory in CORE_SDK_DIR.values():
        url = mirror.core_sdk_repo_url(directory)
        assert url == f"{mirror.base_url}/rocm/core/packages/{directory}/"
        with urllib.request.urlopen(f"{url}dists/stable/Release", timeout=10) as response:
            release = response.read().decode()
        assert "Suite: stable\nCodename: stable\n" in release and "Components: main" in release, release


@pytest.mark.parametrize("key", ["core-sdk-key", "legacy-key"])
def test_apt_accepts_the_10x_repository_with_its_key_only(new_host, mirror, key):
    root = new_host("trixie")
    configure_core_sdk(root, mirror, "trixie", None if key == "core-sdk-key" else mirror.rocm_key_url)
    update = run(root, "apt-get update")
    output = update.stdout + update.stderr
    if key == "legacy-key":
        assert update.returncode != 0, output
        # apt names the missing key: NO_PUBKEY <long id> (gpgv, Debian 12) or Missing key <fingerprint> (sqv, 13).
        fingerprint = signing.FINGERPRINTS[signing.AMDROCM_KEY]
        assert f"NO_PUBKEY {fingerprint[-16:]}" in output or f"Missing key {fingerprint}" in output, output
        assert "rocm/core/packages/debian13 stable InRelease' is not signed" in output, output
        assert "amdrocm10.0-gfx942" not in run(root, "apt-cache pkgnames amdrocm").stdout
        return
    assert update.returncode == 0 and "W:" not in output, output
    for series in CORE_SDK.values():
        for name in (f"amdrocm{series}-gfx942", f"amdrocm-core-dev{series}-gfx942", f"amdrocm-core-sdk{series}-gfx942",
                     f"amdrocm{series}", f"amdrocm-core-dev{series}", f"amdrocm-core-sdk{series}",
                     f"amdrocm-opencl{series}", f"amdrocm-developer-tools{series}"):  # fmt: skip
            found = policy(root, name)
            assert found["candidate"] and found["candidate"].startswith(f"{series}.0-"), (name, found["text"])
            assert f"{mirror.core_sdk_repo_url('debian13').rstrip('/')} stable/main amd64 Packages" in found["text"]
    # No ROCm SMI in the 10.x repositories: AMD's 10.x ships none.
    for directory in CORE_SDK_DIR.values():
        index = f"{mirror.core_sdk_repo_url(directory)}dists/stable/main/binary-amd64/Packages"
        with urllib.request.urlopen(index, timeout=10) as response:
            names = re.findall(r"^Package: (\S+)$", response.read().decode(), re.MULTILINE)
        assert "amdrocm-core-sdk10.1-gfx942" in names and not [name for name in names if "rocm-smi" in name], names


@pytest.mark.parametrize("codename", SUITE)
def test_the_31x_driver_lines_are_served_like_the_30x_lines(new_host, mirror, codename):
    root = new_host(SUITE[codename])
    configure_rocm(root, mirror, mirror.rocm_key_url, "7.2.3", codename)
    for line in DRIVER_LINES:
        options = "[arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg]"
        (root / f"etc/apt/sources.list.d/amdgpu-{line}.list").write_text(
            f"deb {options} {mirror.driver_line_repo_url(line)} {codename} main\n"
        )
    update = run(root, "apt-get update")
    assert update.returncode == 0 and "W:" not in update.stdout + update.stderr, update.stdout + update.stderr
    text = apt_ok(root, "apt-cache madison amdgpu-dkms")
    for line, version in DRIVER_LINES.items():
        expected = version.format(u=UBUNTU[codename])
        assert f"amdgpu-dkms | {expected} | {mirror.base_url}/amdgpu/{line}/ubuntu {codename}/main" in text, text
    # 31.50 is apt's candidate (the newest); its simulated DKMS build leaves the module version the lab's kernel
    # model reports once loaded (kernelstate.dkms_amdgpu_version: /sys/module/amdgpu/version).
    kernel = platform.release()
    assert policy(root, "amdgpu-dkms")["candidate"] == DRIVER_LINES["31.50"].format(u=UBUNTU[codename])
    apt_ok(root, f"apt-get install -y -q linux-headers-{kernel} amdgpu-dkms")
    built = root / f"var/lib/dkms/amdgpu/7.1.3-2390945.{UBUNTU[codename]}/{kernel}/x86_64/module/amdgpu.ko"
    assert "version=7.1.3\n" in built.read_text()


def test_core_sdk_releases_install_side_by_side_with_amds_alternatives(new_host, mirror):
    root = new_host("trixie")
    configure_core_sdk(root, mirror, "trixie")
    apt_ok(root, "apt-get update")
    apt_ok(root, "apt-get install -y -q amdrocm10.0-gfx942")
    prefix = "/opt/rocm/core-10.0"
    assert (root / prefix.lstrip("/") / ".info/version").read_text() == "10.0.0\n"
    assert (root / "opt/rocm").is_dir() and not (root / "opt/rocm").is_symlink()
    # The real amd-smi 27.1 (Debian forky's package 10.1) in AMD's relocatable tree, and the real rocminfo.
    version = run(root, f"{prefix}/bin/amd-smi version")
    assert AMD_SMI_WITHOUT_DRIVER["forky"] in version.stdout + version.stderr, version.stdout + version.stderr
    assert os.readlink(root / prefix.lstrip("/") / "bin/amd-smi") == "../libexec/amdsmi_cli/amdsmi_cli.py"
    assert "27.1" in (root / prefix.lstrip("/") / "share/amd_smi/amdsmi/_version.py").read_text()
    info = run(root, "rocminfo")  # /usr/bin/rocminfo: the alternative
    assert "ROCk module is NOT loaded" in info.stdout + info.stderr, info.stdout + info.stderr
    for tool in ("amd-smi", "rocminfo"):
        assert os.readlink(root / f"usr/bin/{tool}") == f"/etc/alternatives/{tool}"
        assert os.readlink(root / f"etc/alternatives/{tool}") == f"{prefix}/bin/{tool}"
    # AMD's alternatives, with AMD's priority: ((major-3)*14 + minor)*14 + patch, times 1000000, plus the minutes
    # since 2020-09-13 of the install.
    altscore_10_0 = (((10 - 3) * 14 + 0) * 14 + 0) * 1000000
    for name, (link, below) in CORE_SDK_LINKS.items():
        chosen = alternative(root, name)
        assert (chosen["link"], chosen["value"]) == (link, prefix + below), (name, chosen)
        minutes = (time.time() - 1600000000) / 60
        assert abs(chosen["priorities"][prefix + below] - altscore_10_0 - minutes) < 10, (name, chosen)
    # No ROCm SMI anywhere.
    found = run(root, "find / -xdev \\( -name 'rocm-smi*' -o -name 'rocm_smi*' -o -name 'librocm_smi*' \\) -print")
    assert found.stdout == "", found.stdout
    # 10.1 beside it: the higher version becomes the default; removing it gives 10.0 back.
    apt_ok(root, "apt-get install -y -q amdrocm10.1-gfx942")
    assert (root / "opt/rocm/core-10.0/bin/amd-smi").is_symlink()
    assert (root / "opt/rocm/core-10.1/.info/version").read_text() == "10.1.0\n"
    assert alternative(root, "core")["value"] == "/opt/rocm/core-10.1"
    assert os.readlink(root / "etc/alternatives/amd-smi") == "/opt/rocm/core-10.1/bin/amd-smi"
    apt_ok(root, "apt-get remove -y -q amdrocm-core10.1-gfx942")
    for name, (_link, below) in CORE_SDK_LINKS.items():
        assert alternative(root, name)["value"] == prefix + below, name
    apt_ok(root, "apt-get remove -y -q amdrocm-core10.0-gfx942")
    assert run(root, "update-alternatives --query core").returncode != 0  # prerm removed them
    assert not (root / "usr/bin/amd-smi").exists()


def test_core_sdk_on_debian12_carries_bookworms_tools(new_host, mirror):
    root = new_host("bookworm")
    configure_core_sdk(root, mirror, "bookworm")
    apt_ok(root, "apt-get update")
    apt_ok(root, "apt-get install -y -q amdrocm10.0-gfx90a")
    info = run(root, "/opt/rocm/core-10.0/bin/rocminfo")
    assert "ROCk module is NOT loaded" in info.stdout + info.stderr, info.stdout + info.stderr
    assert not (root / "opt/rocm/core-10.0/bin/amd-smi").exists()  # Debian 12 packages no amd-smi
    assert os.readlink(root / "etc/alternatives/core") == "/opt/rocm/core-10.0"


def test_core_sdk_refuses_to_install_beside_the_legacy_stream(new_host, mirror):
    root = new_host("trixie")
    configure_rocm(root, mirror, mirror.rocm_key_url, "7.2.3", "noble")
    configure_core_sdk(root, mirror, "trixie")
    apt_ok(root, "apt-get update")
    apt_ok(root, "apt-get install -y -q rocm-core7.2.3")
    assert os.readlink(root / "etc/alternatives/rocm") == "/opt/rocm-7.2.3"
    install = run(root, "apt-get install -y -q amdrocm10.0-gfx942")
    output = install.stdout + install.stderr
    assert install.returncode != 0, output
    assert "the legacy ROCm stream is installed (rocm-core7.2.3 )" in output, output
    assert "If you have ROCm 7.2.4 or older installed, please uninstall it before proceeding." in output, output
    assert not (root / "opt/rocm-7.2.3/core-10.0").exists()  # nothing unpacked through the legacy link
    # AMD's remedy: uninstall the legacy release first; then it installs.
    apt_ok(root, "apt-get purge -y -q rocm-core7.2.3 && dpkg --configure -a")
    apt_ok(root, "apt-get install -y -q amdrocm10.0-gfx942")
    assert (root / "opt/rocm/core-10.0/.info/version").is_file()


# Ubuntu hosts ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("system", "directory", "codename", "target"),
    [("ubuntu22.04", "ubuntu2204", "jammy", "gfx90a"), ("ubuntu24.04", "ubuntu2404", "noble", "gfx1100")],
)
def test_an_ubuntu_root_follows_amds_ubuntu_instructions_from_its_own_archive(
    new_host, mirror, system, directory, codename, target
):
    """An Ubuntu host's apt reads the mirror's ubuntu/ archive under its codename: the running kernel's headers and
    extra modules (AMD's Ubuntu prerequisites: linux-headers-$(uname -r) linux-modules-extra-$(uname -r)) and the
    Core SDK from AMD's directory of its Ubuntu release."""
    root = new_host(system=system)
    assert apt_ok(root, "lsb_release -is; lsb_release -cs").split() == ["Ubuntu", codename]
    sources = (root / "etc/apt/sources.list.d/rocm-fleet-lab-ubuntu.sources").read_text()
    assert f"URIs: {mirror.base_url}/ubuntu\nSuites: {codename}\n" in sources
    assert not (root / "etc/apt/sources.list.d/rocm-fleet-lab-debian.sources").exists()
    configure_core_sdk(root, mirror, "", directory=directory)
    apt_ok(root, "apt-get update")
    kernel = platform.release()
    extra = policy(root, f"linux-modules-extra-{kernel}")
    assert f"{mirror.base_url}/ubuntu {codename}/main amd64 Packages" in extra["text"], extra["text"]
    apt_ok(root, f"apt-get install -y -q linux-headers-{kernel} linux-modules-extra-{kernel} amdrocm10.1-{target}")
    assert (root / f"lib/modules/{kernel}/build").is_symlink()
    core = policy(root, f"amdrocm10.1-{target}")
    assert f"{mirror.core_sdk_repo_url(directory).rstrip('/')} stable/main amd64 Packages" in core["text"], core["text"]
    assert (root / "opt/rocm/core-10.1/bin/rocminfo").exists()
