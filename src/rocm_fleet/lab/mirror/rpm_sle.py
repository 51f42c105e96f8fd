"""The distribution's repositories in the lab mirror for its SLES hosts, as a site's registration server (RMT) serves
them, and the repository files a registered host has.

A SLES host registered with SUSEConnect gets the modules' repositories through its services; AMD's prerequisites add
Desktop Applications, Development Tools and SUSE Package Hub (ROCm/amdgpu-docs package-manager-sles.rst: the three
``SUSEConnect -p <module>/15.7/x86_64`` lines). The lab writes each repository as the service leaves it, without the
service (no registration server runs):

* Basesystem's Updates: kernel-<flavor>-devel of the machine's kernel (AMD's SLES prerequisite kernel-default-devel);
* Package Hub's backports: dkms, which amdgpu-dkms requires (why AMD's instructions need Package Hub);
* the others empty: what the lab's packages need of them, the Debian userland beneath carries.

What differs from SUSE's packages (docs/lab.md): the lab's kernel is the machine's, so its flavor is whatever the
machine's `uname -r` ends in ("6.18.44-fc-v1272": flavor v1272, kernel-v1272-devel = 6.18.44-fc), and Package Hub's dkms
is a placeholder (the lab's amdgpu-dkms builds itself, as on the other hosts).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from rocm_fleet.lab.mirror import rpm_distro, signing
from rocm_fleet.lab.mirror.rpms import RpmRepo, RpmSpec
from rocm_fleet.lab.mirror.signing import DISTRO_KEY

KEY_FILE = "/usr/lib/rpm/gnupg/keys/gpg-pubkey-lab-sles.asc"  # modelled: SUSE's keys ship in suse-build-key


@dataclass(frozen=True)
class SleRepo:
    alias: str  # the repository's alias as the module's service names it: <service>:<repository>
    name: str
    url_path: str  # under the mirror's base URL, as RMT lays out SUSE's repositories
    content: str  # which packages: kernel, dkms or none


def suse_kernel(kernel: str) -> tuple[str, str, str]:
    """(flavor, version, release) of a kernel named as SUSE names them, <version>-<source release>-<flavor>
    ("6.4.0-150700.51-default" -> ("default", "6.4.0", "150700.51")); the part before the first "-" is the version."""
    rest, _, flavor = kernel.rpartition("-")
    version, _, release = rest.partition("-")
    if not (flavor and version and release) or "-" in release:
        raise ValueError(f"{kernel!r} is no <version>-<release>-<flavor> kernel release")
    return flavor, version, release


def module_repos(system) -> list[SleRepo]:
    """The repositories of a SLES host registered with the modules AMD's prerequisites name."""
    major, sp = system.version.split(".")
    release = f"{major}-SP{sp}"
    flat = f"{major}_SP{sp}_x86_64"

    def module(service: str, product: str, content: str = "none") -> list[SleRepo]:
        return [
            SleRepo(f"{service}_{flat}:SLE-Module-{product}{release}-Pool", f"SLE-Module-{product}{release}-Pool",
                    f"SUSE/Products/SLE-Module-{product}/{release}/x86_64/product", "none"),
            SleRepo(f"{service}_{flat}:SLE-Module-{product}{release}-Updates", f"SLE-Module-{product}{release}-Updates",
                    f"SUSE/Updates/SLE-Module-{product}/{release}/x86_64/update", content),
        ]  # fmt: skip

    return [
        *module("Basesystem_Module", "Basesystem", "kernel"),
        *module("Server_Applications_Module", "Server-Applications"),
        *module("Desktop_Applications_Module", "Desktop-Applications"),
        *module("Development_Tools_Module", "Development-Tools"),
        SleRepo(f"SUSE_Package_Hub_{flat}:SUSE-PackageHub-{release}-Backports-Pool",
                f"SUSE-PackageHub-{release}-Backports-Pool", f"SUSE/Backports/SLE-{release}_x86_64/standard", "dkms"),
    ]  # fmt: skip


def kernel_devel(kernel: str) -> RpmSpec:
    """kernel-<flavor>-devel of ``kernel``, providing its name at <version>-<source release> as SUSE's kernel packages
    do (what ``zypper install kernel-default-devel=<uname -r without -default>`` matches), with the header tree the
    lab's DKMS build looks for and /lib/modules/<kernel>/build."""
    flavor, version, release = suse_kernel(kernel)
    tree = f"/usr/src/linux-{version}-{release}-obj/x86_64/{flavor}"
    return RpmSpec(
        f"kernel-{flavor}-devel",
        version,
        f"{release}.1",  # SUSE's kernel packages: <source release>.<build counter>
        f"Development files necessary for building kernel modules ({kernel}, rocm-fleet lab)",
        license="GPL-2.0-only",
        url="https://www.kernel.org/",
        vendor="SUSE LLC <https://www.suse.com/>",
        provides=[f"kernel-{flavor}-devel = {version}-{release}", "multiversion(kernel)"],
        files={
            f"{tree}/Makefile": f"# rocm-fleet lab stub\nKERNELRELEASE = {kernel}\n".encode(),
            f"{tree}/include/config/kernel.release": f"{kernel}\n".encode(),
            f"{tree}/include/generated/utsrelease.h": f'#define UTS_RELEASE "{kernel}"\n'.encode(),
        },
        symlinks={f"/usr/lib/modules/{kernel}/build": tree},
    )


def distro_repos(system, kernel: str) -> list[RpmRepo]:
    content = {"kernel": [kernel_devel(kernel)], "dkms": [rpm_distro.dkms_placeholder(system)], "none": []}
    return [RpmRepo(repo.url_path, DISTRO_KEY, content[repo.content]) for repo in module_repos(system)]


def install_sources(root, base_url: str, system) -> None:
    """Point a SLES root at the mirror's module repositories, one .repo file each as the services leave them, trusting
    the lab's distribution key, imported into the rpm database as the installer does. Once: a root that has them keeps
    them."""
    root = Path(root)
    repos = root / "etc/zypp/repos.d"
    repos.mkdir(parents=True, exist_ok=True)
    wanted = module_repos(system)
    if any((repos / f"{repo.alias}.repo").exists() for repo in wanted):
        return  # written once, as the registration does
    key = root / KEY_FILE.lstrip("/")
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_bytes(signing.public_key(signing.DISTRO_KEY).read_bytes())
    for repo in wanted:
        (repos / f"{repo.alias}.repo").write_text(
            f"[{repo.alias}]\nname={repo.name}\nenabled=1\nautorefresh=1\n"
            f"baseurl={base_url}/{repo.url_path}\ntype=rpm-md\nkeeppackages=0\n"
        )
    subprocess.run(["rpm", "--root", str(root), "--dbpath", "/var/lib/rpm", "--import", str(key)], check=True,
                   capture_output=True)  # fmt: skip
