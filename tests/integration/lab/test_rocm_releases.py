"""Every ROCm release the lab mirror serves, on a lab host converged to it: AMD's repository lines, the pin,
the release's packages, /opt/rocm and the loaded amdgpu driver, exactly as AMD's layout names them.

The session lab is a fleet in migration: inventory/lab pins groups or hosts to older releases
(preflight_rocm_version in their preflight.yml), the rest get the preflight role's default, so the one
converge of the session (converged_lab) has a host on each release. The expected strings are AMD's, written
here with their sources (docs/amdgpu-driver-lines.md, ROCm/rocm-install-on-linux = RIL, ROCm/amdgpu-docs =
AGD); "code index id N" is a real apt/dpkg output in a public repository file of the shared code index.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import subprocess
from dataclasses import dataclass

import pytest
import yaml
from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, ansible_env
from fleet_testing.lab_helpers import REPO

from rocm_fleet.hardware.profile import load_profile
from rocm_fleet.lab import inventory, paths, systems
from rocm_fleet.lab.mirror.catalog import CORE_SDK_RELEASES

pytestmark = pytest.mark.lab

HOSTS = {spec.name: spec for spec in inventory.committed_hosts()}
# What the site tells the repo role the mirror serves (checked against the mirror's own served.json below).
SERVED = yaml.safe_load((LAB_INVENTORY / "group_vars" / "all" / "lab_mirror.yml").read_text())[
    "repo_available_rocm_versions"
]
ROLE_DEFAULT = yaml.safe_load((REPO / "roles" / "preflight" / "defaults" / "main.yml").read_text())[
    "preflight_rocm_version"
]

# AMD builds Debian support from its Ubuntu repositories: Debian 12 -> jammy, Debian 13 -> noble (AGD
# docs/conf.py debian_version_numbers @ 7302d99); AMD's package versions end in that Ubuntu's version.
# An Ubuntu host reads its own codename's repositories, and the Core SDK's directory of its own release (AMD's
# 7.14.0 and 10.0.0 install pages: ubuntu2204, ubuntu2404, debian12, debian13).
SUITE = {"debian12": "jammy", "debian13": "noble", "ubuntu22.04": "jammy", "ubuntu24.04": "noble"}
CORE_SDK_DIR = {
    "debian12": "debian12", "debian13": "debian13", "ubuntu22.04": "ubuntu2204", "ubuntu24.04": "ubuntu2404"}
UBUNTU = {"jammy": "22.04", "noble": "24.04"}
# RIL package-manager-debian.rst @ ef80a05: AMD's packages win over Debian's.
PIN = ["Package: *", "Pin: release o=repo.radeon.com", "Pin-Priority: 600"]
# Written by `rocm-fleet lab up` (the lab's Debian or Ubuntu subset), not by the roles.
LAB_DISTRO_SOURCES = ("rocm-fleet-lab-debian.sources", "rocm-fleet-lab-ubuntu.sources")
# amdgpu-install use cases base and hip (the packages role's default), as AMD's versioned packages.
USECASES_6X = ["rocm-core", "rocm-language-runtime", "rocminfo", "rocm-smi-lib", "rocm-hip-runtime"]
# ROCm 7 adds amd-smi-lib and keeps the deprecated rocm-smi-lib (rocm/apt/7.1 lists rocm-smi-lib7.1.0).
USECASES_7X = ["rocm-core", "rocm-language-runtime", "rocminfo", "amd-smi-lib", "rocm-smi-lib", "rocm-hip-runtime"]
VERSIONED = re.compile(r"^(?P<name>[a-z][a-z0-9+.-]*?)(?P<release>\d+\.\d+\.\d+)$")
# Every package of AMD's repositories is built for an Ubuntu release (<version>~<ubuntu>); Debian's own package
# names can end in x.y.z too (systemd pulls in libdevmapper1.02.1, version 2:1.02.185-2).
AMD_VERSION = re.compile(r"~\d{2}\.\d{2}$")


@dataclass(frozen=True)
class Release:
    tag: str  # AMD's release tag inside every package version (6.4.1 -> 60401)
    build: int  # rocm-core<release> <release>.<tag>-<build>~<ubuntu>
    amdgpu_dir: str  # amdgpu/<dir>/ubuntu: the release for 6.x, the driver line for 7.x
    graphics: bool  # graphics/<release>/ubuntu in rocm.sources (AMD's 7.x instructions)
    amdgpu_dkms: str  # without the .<ubuntu> suffix
    dkms_firmware: str
    module: str  # /sys/module/amdgpu/version of the loaded driver
    usecases: list[str]
    source: str


KERNEL_POLICY_PIN = "rocm-fleet-kernel.pref"
RELEASES = {
    "6.3.3": Release(
        tag="60303",
        build=74,
        amdgpu_dir="6.3.3",
        graphics=False,
        amdgpu_dkms="1:6.10.5.60303-2119913",
        dkms_firmware="1:6.10.5.60303-2119913",
        module="6.10.5",
        usecases=USECASES_6X,
        source="rocm6.3.3 6.3.3.60303-74~22.04 (code index id 57140918684); amdgpu/6.3.3/ubuntu noble"
        " amdgpu-dkms-firmware 1:6.10.5.60303-2119913.24.04 (apt output, code index id 61654985385); module 6.10.5"
        " (ROCm/gpu-operator docs/metrics/exporter.md)",
    ),
    "6.4.1": Release(
        tag="60401",
        build=83,
        amdgpu_dir="6.4.1",
        graphics=False,
        amdgpu_dkms="1:6.12.12.60401-2164967",
        dkms_firmware="1:6.12.12.60401-2164967",
        module="6.12.12",
        usecases=USECASES_6X,
        source="rocm-core6.4.1/noble 6.4.1.60401-83~24.04 (code index id 56723194054);"
        " amdgpu/6.4.1/ubuntu/pool/main/a/amdgpu-dkms/amdgpu-dkms_6.12.12.60401-2164967.24.04_all.deb (code index id"
        " 27956306241), amdgpu-dkms-firmware 1:6.12.12.60401-2164967.24.04 (code index id 56859207211); module 6.12.12"
        " (ROCm/gpu-operator docs/metrics/exporter.md)",
    ),
    "7.1.1": Release(
        tag="70101",
        build=38,
        amdgpu_dir="30.20.1",
        graphics=True,
        amdgpu_dkms="1:6.16.6.30200100-2255209",
        dkms_firmware="30.20.1.0.30200100-2255209",
        module="6.16.6",
        usecases=USECASES_7X,
        source="repos amdgpu/30.20.1, graphics/7.1.1, rocm/apt/7.1.1 with amdgpu-dkms 1:6.16.6.30200100-2255209.24.04"
        " and amdgpu-dkms-firmware 30.20.1.0.30200100-2255209.24.04 (apt list, code index id 58171103493, 57023055394);"
        " rocm 7.1.1.70101-38~24.04 (dpkg -l, code index id 57177200177); module 6.16.6 (ROCm/legacy-rocm-build#5624)",
    ),
    "7.2.3": Release(
        tag="70203",
        build=90,
        amdgpu_dir="30.30.3",
        graphics=True,
        amdgpu_dkms="1:6.16.13.30300300-2327507",
        dkms_firmware="30.30.3.0.30300300-2327507",
        module="6.16.13",
        usecases=USECASES_7X,
        source="AGD docs/conf.py version 30.30.3 with rocm_version 7.2.3 (code index id 66458441088); amdgpu/30.30.3,"
        " rocm/apt/7.2.3 and graphics/7.2.3/ubuntu with amdgpu-dkms 1:6.16.13.30300300-2327507.22.04 and firmware"
        " 30.30.3.0.30300300-2327507.22.04 (code index id 62016764605); rocm-llvm ...70203-90~22.04 in"
        " rocm/apt/7.2.3/pool (code index id 56678999296); module 6.16.13 (ROCm/ROCm#5915)",
    ),
}

# One SSH call per host: what apt, dpkg and the loaded driver say, as JSON.
PROBE = r"""
import glob, json, os, shutil, subprocess
def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None
def files(pattern):
    return {os.path.basename(path): read(path) for path in glob.glob(pattern)}
def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True).stdout if shutil.which(argv[0]) else None
release = dict(line.split("=", 1) for line in (read("/etc/os-release") or "").splitlines() if "=" in line)
families = (release.get("ID", "") + " " + release.get("ID_LIKE", "")).replace('"', "").split()
rpm_host = "rhel" in families or "suse" in families
if rpm_host:
    query = run("rpm", "-qa", "--qf", "%{NAME}|%{EPOCH}|%{VERSION}-%{RELEASE}\n") or ""
    rows = [line.split("|") for line in query.splitlines()]
    packages = {name: (version if epoch == "(none)" else epoch + ":" + version) for name, epoch, version in rows}
    pubkeys = sorted(version for name, epoch, version in rows if name == "gpg-pubkey")
else:
    query = run("dpkg-query", "-W", "-f", "${db:Status-Abbrev}|${Package}|${Version}\n")
    packages = {name: version for status, name, version in (line.split("|") for line in query.splitlines())
                if status.startswith("ii")}
    pubkeys = None
print(json.dumps({
    "rpm_host": rpm_host,
    "sources": files("/etc/apt/sources.list.d/*"),
    "preferences": files("/etc/apt/preferences.d/*"),
    "repos": files("/etc/yum.repos.d/*"),
    "zypp_repos": files("/etc/zypp/repos.d/*"),
    "zypp_locks": read("/etc/zypp/locks"),
    "default_grub": read("/etc/default/grub"),
    "grubenv": read("/boot/grub2/grubenv"),
    "grub_cfg": read("/boot/grub2/grub.cfg") if "suse" in families else None,
    "dnf_conf": read("/etc/dnf/dnf.conf"),
    "pubkeys": pubkeys,
    "default_kernel": (run("sudo", "-n", "/usr/sbin/grubby", "--default-kernel") or "").strip() or None,
    "cmdline": read("/proc/cmdline"),
    "packages": packages,
    "opt_rocm": os.path.realpath("/opt/rocm") if os.path.lexists("/opt/rocm") else None,
    "amdgpu": read("/sys/module/amdgpu/version"),
    "keyrings": files("/etc/apt/keyrings/*"),
    "rpm_keys": files("/etc/pki/rpm-gpg/*"),
    "core": os.path.realpath("/opt/rocm/core") if os.path.lexists("/opt/rocm/core") else None,
    "core_version": read("/opt/rocm/core/.info/version"),
    "rocm_bin": os.path.realpath("/opt/rocm/bin") if os.path.lexists("/opt/rocm/bin") else None,
    "tools": {name: shutil.which(name) for name in ("rocm-smi", "amd-smi", "rocminfo")},
}))
"""


@pytest.fixture(scope="module")
def hosts_by_release() -> dict[str, list[str]]:
    """{release: hosts}: each host's preflight_rocm_version as Ansible resolves the inventory, else the role default."""
    listing = subprocess.run(
        [str(BIN / "ansible-inventory"), "-i", str(LAB_INVENTORY), "--list"],
        cwd=REPO,
        env=ansible_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    hostvars = json.loads(listing.stdout)["_meta"]["hostvars"]
    releases: dict[str, list[str]] = {}
    for host in sorted(HOSTS):
        releases.setdefault(str(hostvars[host].get("preflight_rocm_version", ROLE_DEFAULT)), []).append(host)
    return releases


def content_lines(text: str | None) -> list[str] | None:
    """A file's lines without the comments (the ansible_managed header says who wrote it, not what apt reads)."""
    if text is None:
        return None
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def expected_sources(release: str, suite: str, gpu: bool) -> dict[str, list[str]]:
    base = f"http://127.0.0.1:{paths.mirror_port()}"
    spec = RELEASES[release]
    # RIL package-manager-debian.rst @ ef80a05 (rocm.list, graphics from ROCm 7), AGD package-manager-debian.rst
    # (amdgpu.list, amd64 only on Debian); the roles write them as deb822 with the keyring they verified.
    rocm_uris = [f"{base}/rocm/apt/{release}"] + ([f"{base}/graphics/{release}/ubuntu"] if spec.graphics else [])
    sources = {"rocm.sources": rocm_uris}
    if gpu:  # no driver repository on a host without an AMD GPU
        sources["amdgpu.sources"] = [f"{base}/amdgpu/{spec.amdgpu_dir}/ubuntu"]
    return {
        name: [
            "Types: deb",
            f"URIs: {' '.join(uris)}",
            f"Suites: {suite}",
            "Components: main",
            "Architectures: amd64",
            "Signed-By: /etc/apt/keyrings/rocm.asc",
        ]
        for name, uris in sources.items()
    }


def probe(lab, host: str) -> dict:
    return json.loads(lab.run(HOSTS[host].port, f"python3 -c {shlex.quote(PROBE)}"))


def test_the_inventory_lists_every_release_the_mirror_serves(lab):
    served = json.loads((paths.state_dir() / "mirror" / "served.json").read_text())
    releases = sorted([*served["releases"], *served["core_sdk"]["releases"]])
    assert releases == sorted(SERVED), f"the mirror serves {releases}, {LAB_INVENTORY} lists {SERVED}"


def test_every_host_is_on_a_release_the_mirror_serves(hosts_by_release):
    unserved = {release: hosts for release, hosts in hosts_by_release.items() if release not in SERVED}
    assert not unserved, f"hosts on releases the mirror does not serve: {unserved}"


@pytest.mark.parametrize("release", SERVED)
def test_a_host_converged_to_the_release_has_exactly_what_it_names(lab, converged_lab, hosts_by_release, release):
    if release in CORE_SDK:
        check_core_sdk_hosts(lab, hosts_by_release, release)
        return
    assert release in RELEASES, (
        f"ROCm {release}: the mirror serves it but this test knows none of AMD's strings for it; add them to RELEASES"
        " with their source"
    )
    hosts = hosts_by_release.get(release)
    assert hosts, (
        f"ROCm {release}: the mirror serves it but no host of {LAB_INVENTORY} is on it; pin one with"
        f' preflight_rocm_version: "{release}" in group_vars/<group>/preflight.yml or host_vars/<host>/preflight.yml'
    )
    spec = RELEASES[release]
    for host in hosts:
        seen = probe(lab, host)
        suite = SUITE[HOSTS[host].system]
        ubuntu = UBUNTU[suite]
        gpu = bool(load_profile(HOSTS[host].profile).gpus)
        where = f"{host} ({HOSTS[host].system}, ROCm {release})"

        sources = {name: content_lines(text) for name, text in seen["sources"].items()
                   if name not in LAB_DISTRO_SOURCES}
        assert sources == expected_sources(release, suite, gpu), where
        preferences = {name: content_lines(text) for name, text in seen["preferences"].items()}
        # The packages role's kernel update policy (allowed_series, ROCM-KERN-004) pins kernels in a file of its own,
        # on hosts that build amdgpu-dkms: a host without a GPU has no driver a kernel could break.
        assert bool(preferences.pop(KERNEL_POLICY_PIN, None)) == gpu, where
        assert preferences == {"rocm-pin-600": PIN}, where

        packages = seen["packages"]
        versioned = {name: VERSIONED.match(name) for name, version in packages.items() if AMD_VERSION.search(version)}
        releases = {match["release"] for match in versioned.values() if match}
        assert releases == {release}, f"{where}: versioned ROCm packages of {sorted(releases)}"
        missing = [name for name in spec.usecases if f"{name}{release}" not in packages]
        assert not missing, f"{where}: the base and hip use cases lack {missing}"
        assert packages[f"rocm-core{release}"] == f"{release}.{spec.tag}-{spec.build}~{ubuntu}", where
        # AMD's user space versions: <component version>.<tag>-<build>~<ubuntu> (docs/amdgpu-driver-lines.md).
        suffix = f".{spec.tag}-{spec.build}~{ubuntu}"
        off = {
            name: packages[name] for name, match in versioned.items() if match and not packages[name].endswith(suffix)
        }
        assert not off, f"{where}: versions without {suffix}: {off}"

        driver = {name: packages.get(name) for name in ("amdgpu-dkms", "amdgpu-dkms-firmware")}
        wanted = {
            "amdgpu-dkms": f"{spec.amdgpu_dkms}.{ubuntu}",
            "amdgpu-dkms-firmware": f"{spec.dkms_firmware}.{ubuntu}",
        }
        assert driver == (wanted if gpu else dict.fromkeys(wanted)), where
        # From ROCm 7 AMD's graphics repository serves libdrm-amdgpu-amdgpu1 with the release's tag
        # (1:2.4.125.70101-2255337.24.04 beside ROCm 7.1.1: apt list, code index id 57023055394).
        libdrm = packages.get("libdrm-amdgpu-amdgpu1")
        assert (f".{spec.tag}-" in (libdrm or "")) if spec.graphics else libdrm is None, f"{where}: libdrm {libdrm}"
        assert seen["opt_rocm"] == f"/opt/rocm-{release}", where
        assert (seen["amdgpu"] or "").strip() == (spec.module if gpu else ""), where


# The ROCm Core SDK (roles/preflight/vars/release_streams.yml core_sdk_10). AMD's 10.0.0 install page
# (rocm.docs.amd.com/en/latest/install/rocm.html, code index id 69869114788) registers
# /etc/apt/sources.list.d/amdrocm-stable.sources as below, with `Signed-By: /etc/apt/keyrings/amdrocm.gpg`
# (rocm-fleet writes the armored key it checked, amdrocm.asc), and installs `amdrocm<series>-<gfx>` for a GPU
# target; the same page links the driver as amdgpu-install/31.50/ubuntu/<codename>. 10.1.0: the docs-10.1.0
# changelog and packages amdrocm10.1-gfx1100 in user reports (code index ids 70858560661, 70239093972).
@dataclass(frozen=True)
class CoreSdk:
    series: str  # <major>.<minor>: in the package names and the install root /opt/rocm/core-<series>
    driver_dir: str  # amdgpu/<line>/ubuntu
    amdgpu_dkms: str  # the deb version up to the build: <module>.<line code> (amdgpu_drivers.yml 31.50)
    module: str  # /sys/module/amdgpu/version ("amdgpu version: 7.1.3.31500000" in the page's amd-smi example)


CORE_SDK = {
    "10.0.0": CoreSdk(series="10.0", driver_dir="31.50", amdgpu_dkms="1:7.1.3.31500000", module="7.1.3"),
    "10.1.0": CoreSdk(series="10.1", driver_dir="31.50", amdgpu_dkms="1:7.1.3.31500000", module="7.1.3"),
}
# The package a GPU target needs (the base and hip use cases): the target the runtime reports, an RX 6700 XT's
# gfx1031 as gfx1030 (its HSA override; AMD builds gfx1030, not gfx1031).
RUNTIME_TARGET = {"gfx1031": "gfx1030"}
PINNED_KEYS = yaml.safe_load((LAB_INVENTORY / "group_vars" / "all" / "lab_mirror.yml").read_text())[
    "repo_signing_keys"
]


def fingerprints(armored: str) -> list[str]:
    listing = subprocess.run(["gpg", "--show-keys", "--with-colons"], input=armored, capture_output=True, text=True,
                             check=True, timeout=60).stdout
    return [line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:")][:1]


def check_core_sdk_hosts(lab, hosts_by_release, release):
    spec = CORE_SDK[release]
    hosts = hosts_by_release.get(release)
    assert hosts, f"ROCm {release}: the mirror serves it but no host of {LAB_INVENTORY} is on it"
    base = f"http://127.0.0.1:{paths.mirror_port()}"
    for host in hosts:
        seen = probe(lab, host)
        system = HOSTS[host].system
        if seen["rpm_host"]:
            (check_core_sdk_sles_host if HOSTS[host].system.startswith("sles") else check_core_sdk_rpm_host)(
                seen, host, release)
            continue
        suite = SUITE[system]
        profile = load_profile(HOSTS[host].profile)
        gpu = bool(profile.gpus)
        where = f"{host} ({system}, ROCm {release})"

        sources = {name: content_lines(text) for name, text in seen["sources"].items()
                   if name not in LAB_DISTRO_SOURCES}
        expected = {"amdrocm-stable.sources": [
            "X-Repo-Id: amdrocm-stable", "Types: deb", f"URIs: {base}/rocm/core/packages/{CORE_SDK_DIR[system]}/",
            "Suites: stable", "Components: main", "Architectures: amd64", "Signed-By: /etc/apt/keyrings/amdrocm.asc",
            "Enabled: yes"]}
        if gpu:
            expected["amdgpu.sources"] = [
                "Types: deb", f"URIs: {base}/amdgpu/{spec.driver_dir}/ubuntu", f"Suites: {suite}", "Components: main",
                "Architectures: amd64", "Signed-By: /etc/apt/keyrings/rocm.asc"]
        assert sources == expected, where
        # Two keys, each the one the inventory pins: the Core SDK's and (with a driver) the amdgpu repositories'.
        keys = {name: fingerprints(text) for name, text in seen["keyrings"].items()}
        wanted_keys = {"amdrocm.asc": [PINNED_KEYS["amdrocm"]["fingerprints"]]}
        if gpu:
            wanted_keys["rocm.asc"] = [PINNED_KEYS["rocm"]["fingerprints"]]
        assert keys == wanted_keys, where
        # AMD's 10.x instructions pin nothing; the kernel update policy's pin stays where a driver is built.
        preferences = {name: content_lines(text) for name, text in seen["preferences"].items()}
        assert bool(preferences.pop(KERNEL_POLICY_PIN, None)) == gpu and preferences == {}, where

        packages = seen["packages"]
        targets = sorted({RUNTIME_TARGET.get(gpu_spec.gfx_target, gpu_spec.gfx_target) for gpu_spec in profile.gpus})
        missing = [f"amdrocm{spec.series}-{target}" for target in targets
                   if f"amdrocm{spec.series}-{target}" not in packages]
        assert not missing, f"{where}: lacks {missing}"
        amdrocm = {name: version for name, version in packages.items() if name.startswith("amdrocm")}
        other_series = sorted(name for name in amdrocm if spec.series not in name)
        assert not other_series, f"{where}: packages of another release: {other_series}"
        # TheRock's versions: <release>-<build> (build_package.py --version-suffix), no OS part.
        assert all(version.startswith(f"{release}-") for version in amdrocm.values()), f"{where}: {amdrocm}"
        legacy = sorted(name for name in packages if name.startswith("rocm-core"))
        assert not legacy, f"{where}: legacy packages {legacy}"

        # Install root and active release: the core alternative and the bin link (amdrocm-core's postinst).
        root = f"/opt/rocm/core-{spec.series}"
        assert (seen["core"], seen["rocm_bin"], (seen["core_version"] or "").strip()) == (
            root, f"{root}/bin", release), where
        # ROCm SMI is not part of TheRock builds from 10.0 (AMD's ROCm SMI page); the lab's amd-smi is Debian
        # forky's, which a Debian 12 userland cannot run (docs/lab-mirror.md).
        assert seen["tools"]["rocm-smi"] is None, where
        assert bool(seen["tools"]["amd-smi"]) == (HOSTS[host].suite == "trixie"), where

        dkms = packages.get("amdgpu-dkms")
        if gpu:
            assert dkms and dkms.startswith(f"{spec.amdgpu_dkms}-"), (where, dkms)
            assert dkms.endswith(f".{UBUNTU[suite]}"), (where, dkms)
        else:
            assert dkms is None, where
        assert (seen["amdgpu"] or "").strip() == (spec.module if gpu else ""), where


# A RHEL-family host on the Core SDK (inventory/lab's rocky9 and rhel10 groups). AMD's 10.0.0 install page registers
# /etc/yum.repos.d/amdrocm-stable.repo "[amdrocm-stable] ... baseurl=https://stable.repo.amd.com/rocm/core/packages/
# rhel9/x86_64 ... gpgcheck=1" (code index id 69869114788; release_streams.yml core_sdk_10, os_dirs rhel: 9 -> rhel9)
# and its amdgpu-install links the driver as amdgpu/31.50; AGD's package-manager-rhel.rst @ 7302d99 writes amdgpu.repo
# with baseurl amdgpu/<line>/el/<9.x>/main/x86_64/ on RHEL 9 (el/<major> elsewhere), priority=50. AMD's RPM
# versions: amdgpu-dkms 1:<module>-<build>.el9 (amdgpu_drivers.yml 31.50: rpm "1:7.1.3"; amdgpu-dkms-6.14.14-2226257
# .el10 in amdgpu/30.10.2/el/10, code index id 67082770872). The kernel packages AMD's RHEL prerequisites install:
# kernel-headers, kernel-devel and (RHEL 9 and 10) kernel-devel-matched of $(uname -r); kernel-modules-extra.
CORE_SDK_BUILDS = {release.version: release.build for release in CORE_SDK_RELEASES}  # modelled (catalog.py)
RPM_KERNEL_PACKAGES = ("kernel-headers", "kernel-devel", "kernel-devel-matched", "kernel-modules-extra")
# The driver line's newest kernel series (amdgpu_drivers.yml 31.50: kernel max 7.1): the kernel policy excludes
# every kernel package of a series above it from dnf (dnf.conf's excludepkgs, ROCM-KERN-004).
DRIVER_KERNEL_MAX = {"31.50": (7, 1)}
# The distribution's own repository files on a lab host (docs/lab.md: Rocky's rocky-repos; RHEL's redhat.repo as
# subscription-manager writes it, with Red Hat's CDN repository ids) and where CodeReady Builder is in them.
DISTRO_REPO_FILES = {"rocky": {"rocky.repo", "rocky-extras.repo"}, "rhel": {"redhat.repo"}}
DISTRO_CRB = {"rocky": ("rocky.repo", "crb"), "rhel": ("redhat.repo", "codeready-builder-for-rhel-{major}-x86_64-rpms")}


def ini(text: str) -> dict[str, dict[str, str]]:
    sections, current = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
        elif current is not None and "=" in line:
            key, _, value = line.partition("=")
            current[key.strip()] = value.strip()
    return sections


def check_rpm_keys_and_release_packages(seen: dict, profile, release: str, dist_tag: str, where: str) -> None:
    """An RPM host's keys, as pinned and imported into the rpm database (gpg-pubkey-<last 8 of the fingerprint>), and
    its Core SDK packages: the release's own per GPU target at AMD's version (``dist_tag``: .el9, none on SLES)."""
    spec = CORE_SDK[release]
    gpu = bool(profile.gpus)
    assert fingerprints(seen["rpm_keys"]["RPM-GPG-KEY-amdrocm"]) == [PINNED_KEYS["amdrocm"]["fingerprints"]], where
    imported = {key.split("-")[0] for key in seen["pubkeys"]}
    assert PINNED_KEYS["amdrocm"]["fingerprints"][-8:].lower() in imported, where
    assert (PINNED_KEYS["rocm"]["fingerprints"][-8:].lower() in imported) == gpu, where
    packages = seen["packages"]
    targets = sorted({RUNTIME_TARGET.get(gpu_spec.gfx_target, gpu_spec.gfx_target) for gpu_spec in profile.gpus})
    for target in targets:
        wanted = f"{release}-{CORE_SDK_BUILDS[release]}{dist_tag}"
        assert packages.get(f"amdrocm{spec.series}-{target}") == wanted, where
    assert not [name for name in packages if name.startswith("amdrocm") and spec.series not in name], where
    assert not [name for name in packages if name.startswith("rocm-core")], where


def check_core_sdk_rpm_host(seen: dict, host: str, release: str) -> None:
    spec = CORE_SDK[release]
    base = f"http://127.0.0.1:{paths.mirror_port()}"
    system = systems.system(HOSTS[host].system)
    profile = load_profile(HOSTS[host].profile)
    gpu = bool(profile.gpus)
    where = f"{host} ({system.key}, ROCm {release})"
    major, version = system.major, system.version

    repos = {name: ini(text or "") for name, text in seen["repos"].items()}
    assert repos.pop("amdrocm-stable.repo") == {"amdrocm-stable": {
        "name": f"ROCm {release}", "baseurl": f"{base}/rocm/core/packages/rhel{major}/x86_64", "enabled": "1",
        "gpgcheck": "1", "gpgkey": "file:///etc/pki/rpm-gpg/RPM-GPG-KEY-amdrocm"}}, where
    el = version if major == "9" else major
    amdgpu = repos.pop("amdgpu.repo", None)
    assert amdgpu == ({"amdgpu": {
        "name": f"amdgpu {spec.driver_dir}", "baseurl": f"{base}/amdgpu/{spec.driver_dir}/el/{el}/main/x86_64/",
        "enabled": "1", "gpgcheck": "1", "gpgkey": "file:///etc/pki/rpm-gpg/RPM-GPG-KEY-rocm", "priority": "50"}}
        if gpu else None), where
    # AMD's prerequisites (EPEL, CRB) enabled: epel-release's epel.repo, and the distribution's CodeReady Builder. On
    # Rocky the repo role enabled them (repo_enable_epel_crb in group_vars/rocky9; `dnf config-manager --set-enabled
    # crb`); on RHEL the site's Satellite did (subscription-manager's redhat.repo) and the role left them as found.
    assert repos.pop("epel.repo")["epel"]["enabled"] == "1", where
    crb_file, crb = DISTRO_CRB[system.family]
    assert repos[crb_file][crb.format(major=major)]["enabled"] == "1", where
    assert set(repos) == DISTRO_REPO_FILES[system.family], f"{where}: repository files nobody wrote: {sorted(repos)}"

    check_rpm_keys_and_release_packages(seen, profile, release, f".el{major}", where)
    packages = seen["packages"]
    kernel_release = seen["default_kernel"].removeprefix("/boot/vmlinuz-")
    if gpu:
        assert packages.get("amdgpu-dkms", "").startswith(f"1:{spec.module}-") and packages["amdgpu-dkms"].endswith(
            f".el{major}"), (where, packages.get("amdgpu-dkms"))
        assert all(name in packages for name in RPM_KERNEL_PACKAGES), where
        assert "dkms" in packages, f"{where}: amdgpu-dkms requires EPEL's dkms"
        # The kernel policy's lock: dnf excludes each kernel package of a series above the driver's, none of the
        # running kernel's.
        excludes = ini("[main]\n" + (seen["dnf_conf"] or ""))["main"].get("excludepkgs", "").split()
        newest = DRIVER_KERNEL_MAX[spec.driver_dir]
        assert f"kernel-core-{newest[0]}.[{newest[1] + 1}-9].*" in excludes, (where, excludes)
        assert not any(fnmatch.fnmatch(f"kernel-devel-{kernel_release}", glob) for glob in excludes), where
    # The boot default: grubby's default kernel is the one running, and it booted with the decided parameters.
    assert f"vmlinuz-{kernel_release} " in seen["cmdline"], where
    assert (seen["core"], seen["rocm_bin"], (seen["core_version"] or "").strip()) == (
        f"/opt/rocm/core-{spec.series}", f"/opt/rocm/core-{spec.series}/bin", release), where
    assert seen["tools"]["rocm-smi"] is None and seen["tools"]["rocminfo"], where
    assert (seen["amdgpu"] or "").strip() == (spec.module if gpu else ""), where


# A SLES host on the Core SDK (inventory/lab's sles15 group). AMD's 10.0.0 install page registers
# /etc/zypp/repos.d/amdrocm-stable.repo "[amdrocm-stable] name=ROCm 10.0.0 baseurl=https://stable.repo.amd.com/rocm/core/
# packages/sles15/x86_64 enabled=1 gpgcheck=1" (amd-rocm-programming-guide docs/install/include/200-install.rst
# @ 18f5e21, code index id 69869114788; release_streams.yml core_sdk_10, os_dirs sles: 15 -> sles15), and AGD's
# package-manager-sles.rst (@ 67902e2) amdgpu.repo with baseurl amdgpu/<line>/sle/15.7/main/x86_64/ (the role adds
# repo_rpm_priority, 50, which AMD's RHEL page sets and its SLES page does not). AMD's SLES RPMs carry no dist tag
# (amdgpu-install-7.2.1.70201-1.noarch.rpm in amdgpu-install/7.2.1/sle/15.7). AMD's SLES prerequisites: the
# Desktop Applications, Development Tools and Package Hub modules (SUSEConnect -p ...), kernel-default-devel.
SLES_MODULES = ("Basesystem", "Server-Applications", "Desktop-Applications", "Development-Tools")


def check_core_sdk_sles_host(seen: dict, host: str, release: str) -> None:
    spec = CORE_SDK[release]
    base = f"http://127.0.0.1:{paths.mirror_port()}"
    system = systems.system(HOSTS[host].system)
    profile = load_profile(HOSTS[host].profile)
    gpu = bool(profile.gpus)
    where = f"{host} ({system.key}, ROCm {release})"
    major, service_pack = system.version.split(".")

    repos = {name: ini(text or "") for name, text in seen["zypp_repos"].items()}
    assert repos.pop("amdrocm-stable.repo") == {"amdrocm-stable": {
        "name": f"ROCm {release}", "baseurl": f"{base}/rocm/core/packages/sles{major}/x86_64", "enabled": "1",
        "gpgcheck": "1", "gpgkey": "file:///etc/pki/rpm-gpg/RPM-GPG-KEY-amdrocm"}}, where
    assert repos.pop("amdgpu.repo", None) == ({"amdgpu": {
        "name": f"amdgpu {spec.driver_dir}", "baseurl": f"{base}/amdgpu/{spec.driver_dir}/sle/{system.version}/main/"
        "x86_64/", "enabled": "1", "gpgcheck": "1", "gpgkey": "file:///etc/pki/rpm-gpg/RPM-GPG-KEY-rocm",
        "priority": "50"}} if gpu else None), where
    # The rest is the registration's: each module's repositories, Package Hub's among them, as it left them.
    release_name = f"{major}-SP{service_pack}"
    assert {name for section in repos.values() for name in (entry["name"] for entry in section.values())} == {
        *(f"SLE-Module-{module}{release_name}-{kind}" for module in SLES_MODULES for kind in ("Pool", "Updates")),
        f"SUSE-PackageHub-{release_name}-Backports-Pool"}, f"{where}: repository files nobody wrote: {sorted(repos)}"

    check_rpm_keys_and_release_packages(seen, profile, release, "", where)  # AMD's SLES RPMs: no dist tag
    packages = seen["packages"]
    kernel = seen["cmdline"].split()[0].removeprefix("BOOT_IMAGE=/boot/vmlinuz-")
    if gpu:
        dkms = packages.get("amdgpu-dkms", "")
        assert dkms.startswith(f"1:{spec.module}-") and "." not in dkms.split("-")[-1], (where, dkms)
        # AMD's kernel-default-devel: here kernel-<flavor>-devel of the running kernel at <version>-<source release>.
        flavor, version = kernel.rsplit("-", 1)[1], kernel.rsplit("-", 1)[0]
        assert packages.get(f"kernel-{flavor}-devel", "").startswith(f"{version}."), (where, kernel, packages)
        assert "dkms" in packages, f"{where}: amdgpu-dkms requires Package Hub's dkms"
    # No kernel update policy on zypper yet (roles/packages/README.md): no lock written.
    assert seen["zypp_locks"] is None, where
    # The boot default: GRUB_DEFAULT=saved with no saved entry boots grub.cfg's first entry, the running kernel, with
    # the kernel role's parameters appended to SLES's GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub.
    block = seen["default_grub"].split("# BEGIN rocm-fleet boot parameters", 1)[1]
    parameters = block.split('"${GRUB_CMDLINE_LINUX_DEFAULT} ', 1)[1].split('"', 1)[0].split()
    assert parameters and all(f" {parameter}" in seen["cmdline"] for parameter in parameters), (where, parameters)
    assert "GRUB_DEFAULT=saved" in seen["default_grub"] and "saved_entry" not in (seen["grubenv"] or ""), where
    first = seen["grub_cfg"].split("menuentry '", 1)[1].split("'", 1)[0]
    assert first == f"SLES {major}-SP{service_pack}", (where, first)
    assert (seen["core"], seen["rocm_bin"], (seen["core_version"] or "").strip()) == (
        f"/opt/rocm/core-{spec.series}", f"/opt/rocm/core-{spec.series}/bin", release), where
    assert seen["tools"]["rocm-smi"] is None and seen["tools"]["rocminfo"], where
    assert (seen["amdgpu"] or "").strip() == (spec.module if gpu else ""), where
