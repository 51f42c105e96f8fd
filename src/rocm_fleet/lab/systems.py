"""The operating systems a lab host is installed with: one row each, its identity over a Debian userland.

Every lab host runs a Debian userland (debootstrap, rocm_fleet.lab.base); its operating system decides what
Ansible and AMD's instructions read of it: /etc/os-release and the family's other release files, the
distribution archive its package manager trusts, and AMD's repository directories. A host names its system
with lab_os in inventory/lab (rocm_fleet.lab.inventory); docs/lab.md says what stays Debian underneath.

An Ubuntu host is the Debian release its Ubuntu release was branched from (Ubuntu's /etc/debian_version says
which: "bookworm/sid" on 22.04, "trixie/sid" on 24.04) with Ubuntu's identity and an Ubuntu archive: the
lab mirror's Debian subset of that release under Ubuntu's codename, plus Ubuntu's kernel packages.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LabSystem:
    key: str  # lab_os in inventory/lab
    family: str  # debian, ubuntu
    suite: str  # the Debian suite of the userland underneath
    version: str  # VERSION_ID
    codename: str  # VERSION_CODENAME: what apt sources name
    # Files written over the Debian base, path -> content; empty: Debian's own.
    identity: dict[str, str] = field(default_factory=dict)
    packages: tuple[str, ...] = ()  # beyond the base's (rocm_fleet.lab.base.PACKAGES)

    @property
    def name(self) -> str:
        """How messages name it: "Debian 12", "Ubuntu 24.04"."""
        return f"{self.family.capitalize()} {self.version}"

    @property
    def archive(self) -> str:
        """The directory of the lab mirror that serves the system's distribution archive."""
        return self.family


def _ubuntu(version: str, point: str, codename: str, adjective: str, suite: str, debian_version: str) -> LabSystem:
    # Ubuntu's base-files: /usr/lib/os-release (/etc/os-release links to it), /etc/lsb-release, /etc/debian_version
    # and /etc/issue of the point release (Ubuntu 22.04.5 and 24.04.4, the ones AMD's ROCm 10.0 install page lists:
    # ../shared/reference/rocm-core-sdk.md, "OS list on the 10.0 install page").
    pretty = f"Ubuntu {point} LTS"
    os_release = (
        f'PRETTY_NAME="{pretty}"\n'
        'NAME="Ubuntu"\n'
        f'VERSION_ID="{version}"\n'
        f'VERSION="{point} LTS ({codename.capitalize()} {adjective})"\n'
        f"VERSION_CODENAME={codename}\n"
        "ID=ubuntu\n"
        "ID_LIKE=debian\n"
        'HOME_URL="https://www.ubuntu.com/"\n'
        'SUPPORT_URL="https://help.ubuntu.com/"\n'
        'BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"\n'
        'PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"\n'
        f"UBUNTU_CODENAME={codename}\n"
        "LOGO=ubuntu-logo\n"
    )
    return LabSystem(
        key=f"ubuntu{version}",
        family="ubuntu",
        suite=suite,
        version=version,
        codename=codename,
        identity={
            "usr/lib/os-release": os_release,
            "etc/lsb-release": (
                f'DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE={version}\nDISTRIB_CODENAME={codename}\nDISTRIB_DESCRIPTION="{pretty}"\n'
            ),
            "etc/debian_version": f"{debian_version}\n",
            "etc/issue": f"{pretty} \\n \\l\n\n",
            "etc/issue.net": f"{pretty}\n",
        },
        # Ubuntu's server images carry lsb_release (ubuntu-minimal depends on lsb-release).
        packages=("lsb-release",),
    )


SYSTEMS: dict[str, LabSystem] = {
    system.key: system
    for system in (
        LabSystem("debian12", "debian", "bookworm", "12", "bookworm"),
        LabSystem("debian13", "debian", "trixie", "13", "trixie"),
        _ubuntu("22.04", "22.04.5", "jammy", "Jellyfish", "bookworm", "bookworm/sid"),
        _ubuntu("24.04", "24.04.4", "noble", "Numbat", "trixie", "trixie/sid"),
    )
}
DEFAULT = "debian12"  # a host without lab_os


def system(key: str) -> LabSystem:
    return SYSTEMS[key]
