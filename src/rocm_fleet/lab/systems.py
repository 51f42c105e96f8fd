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

import json
import shlex
from dataclasses import dataclass, field

RPM_FAMILIES = ("rocky", "rhel", "sles")


@dataclass(frozen=True)
class LabSystem:
    key: str  # lab_os in inventory/lab
    family: str  # debian, ubuntu, rocky, rhel, sles
    suite: str  # the Debian suite of the userland underneath
    version: str  # VERSION_ID
    codename: str  # VERSION_CODENAME: what apt sources name
    # Files written over the Debian base, path -> content; empty: Debian's own.
    identity: dict[str, str] = field(default_factory=dict)
    packages: tuple[str, ...] = ()  # beyond the base's (rocm_fleet.lab.base.PACKAGES)
    setup: tuple[str, ...] = ()  # commands run in the base after the identity is written
    # How the host boots: "grub" (grub.cfg by update-grub, Debian and Ubuntu), "bls" (Boot Loader Spec
    # entries in /boot/loader/entries with grub2's blscfg and grubby, the RHEL family) or "grub2" (grub.cfg
    # by grub2-mkconfig in /boot/grub2, SLES).
    boot_loader: str = "grub"
    release_name: str = ""  # what ansible-core reports as distribution_release where there is no codename

    @property
    def ansible_release(self) -> str:
        """ansible_distribution_release: the codename on Debian and Ubuntu, the release name in the RHEL family's
        /etc/redhat-release ("Rocky Linux release 9.6 (Blue Onyx)")."""
        return self.codename or self.release_name

    @property
    def ansible_distribution(self) -> str:
        """ansible_distribution: what ansible-core's distribution collector names the system ("RedHat" for RHEL, read
        from /etc/redhat-release; the os-release ID capitalized otherwise)."""
        return {"rhel": "RedHat", "sles": "SLES"}.get(self.family, self.family.capitalize())

    @property
    def name(self) -> str:
        """How messages name it: "Debian 12", "Ubuntu 24.04", "RHEL 10.0", "SLES 15.7"."""
        return f"{ {'rhel': 'RHEL', 'sles': 'SLES'}.get(self.family, self.family.capitalize())} {self.version}"

    @property
    def package_format(self) -> str:
        """ "rpm" where the host's package manager is dnf (the RHEL family), "deb" on Debian and Ubuntu."""
        return "rpm" if self.family in RPM_FAMILIES else "deb"

    @property
    def package_manager(self) -> str:
        """apt, dnf (the RHEL family) or zypper (SLES)."""
        return {"deb": "apt"}.get(self.package_format, "zypper" if self.family == "sles" else "dnf")

    @property
    def major(self) -> str:
        return self.version.split(".")[0]

    @property
    def core_sdk_directory(self) -> str:
        """AMD's ROCm Core SDK directory of the system (rocm/core/packages/<directory>): debian12, ubuntu2404,
        rhelN for the whole RHEL family, slesN (roles/preflight/vars/release_streams.yml, os_dirs.core)."""
        if self.family == "sles":
            return f"sles{self.major}"
        if self.package_format == "rpm":
            return f"rhel{self.major}"
        return f"{self.family}{self.version.replace('.', '')}"

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


# Builds and installs the rpm database's packages of a RHEL-family base (run by python3 inside the base): the release
# package, and one package per distribution package that the Debian userland provides, at Debian's upstream version.
_RPM_DATABASE_SCRIPT = r"""
import json, os, re, subprocess, sys
wanted = json.loads(sys.argv[1])
top = "/tmp/lab-rpmbuild"
for package in wanted["packages"]:
    version = package.get("version")
    if version is None:
        found = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package["debian"]], capture_output=True,
                               text=True, check=True).stdout
        version = re.split(r"[-+~]", found.split(":", 1)[-1])[0]
    lines = ["Name: " + package["name"], "Version: " + version, "Release: " + wanted["release"],
             "Summary: " + package["summary"], "License: GPL-2.0-or-later", "BuildArch: noarch", "AutoReqProv: no"]
    lines += ["Provides: " + item.replace("@VERSION@", version) for item in package.get("provides", [])]
    lines += ["%description", package["summary"], "%files", ""]
    spec = os.path.join(top, package["name"] + ".spec")
    os.makedirs(top, exist_ok=True)
    with open(spec, "w") as handle:
        handle.write("\n".join(lines))
    subprocess.run(["rpmbuild", "-bb", "--quiet", "--define", "_topdir " + top, spec], check=True)
built = [os.path.join(top, "RPMS/noarch", name) for name in os.listdir(os.path.join(top, "RPMS/noarch"))]
subprocess.run(["rpm", "-i", *built], check=True)
subprocess.run(["rm", "-rf", top], check=True)
"""


def _rpm_database_steps(
    release: str,
    version: str,
    major: str,
    provides: tuple[str, ...],
    twins: dict[str, tuple[str, ...]],
    rpm_release: str = "",
    rpm_family: bool = True,
) -> tuple[str, ...]:
    """Commands that fill the base's rpm database as the distribution's installer leaves it: its release package
    (what dnf reads $releasever from: Provides system-release(releasever)) and, for each distribution package the
    Debian userland provides (twins: rpm name -> (Debian package, file provides...)), an empty package of that name
    and version, so dnf finds installed what the distribution installs (dnf-plugins-core, /bin/sh, ...).
    ``rpm_family``: the release package provides what the RHEL family's do (system-release, $releasever); SUSE's
    provide only their own."""
    release_provides = (f"system-release = {version}", f"system-release(releasever) = {major}") if rpm_family else ()
    packages = [
        {
            "name": release,
            "version": version,
            "summary": f"{release} (rocm-fleet lab: the release package of the system's identity files)",
            "provides": [*release_provides, *provides],
        },
        *(
            {
                "name": name,
                "debian": debian,
                "summary": f"{name} (rocm-fleet lab: Debian's {debian} provides its files)",
                "provides": [f"{name}(rocm-fleet-lab-debian) = @VERSION@", *files],
            }
            for name, (debian, *files) in twins.items()
        ),
    ]
    argument = json.dumps({"release": rpm_release or f"1.el{major}", "packages": packages})
    return (f"python3 -c {shlex.quote(_RPM_DATABASE_SCRIPT)} {shlex.quote(argument)}",)


# What a RHEL-family host needs of Debian's archive for its package manager: dnf 4 with its Python bindings (Ansible's
# dnf module imports them), dnf-plugins-core (versionlock, config-manager), rpm and its Python bindings (package_facts).
RPM_PACKAGES = ("dnf", "python3-dnf", "dnf-plugins-core", "rpm", "python3-rpm")
# The distribution's rpm packages of what Debian's packages provide beneath (rpm name -> Debian package): what a
# minimal RHEL 9 install has of them (versionlock is its own package there; Debian's dnf-plugins-core carries it).
RPM_TWINS = {
    "bash": ("bash", "/bin/sh", "/bin/bash", "/usr/bin/sh", "/usr/bin/bash"),  # what rpm's scriptlets require
    "dnf": ("dnf",),
    "python3-dnf": ("python3-dnf",),
    "dnf-plugins-core": ("dnf-plugins-core",),
    "python3-dnf-plugins-core": ("dnf-plugins-core",),
    "python3-dnf-plugin-versionlock": ("dnf-plugins-core",),
    "rpm": ("rpm",),
    "python3-rpm": ("python3-rpm",),
    "python3": ("python3", "/usr/bin/python3"),
}
# The Debian libraries the lab's AMD RPMs need beneath them: Debian 12's GPU runtime libraries that the RPMs carry
# in /opt link against these (their Debian Depends), which a Debian or Ubuntu host gets from apt with the packages
# (rocm_fleet.lab.mirror.rpm_amd checks every dropped Depends is here or in the base).
RPM_HOST_LIBRARIES = ("libhsa-runtime64-1", "libamd-comgr2", "libhsakmt1", "libnuma1", "libelf1")


def _rpm_system(
    key: str, family: str, version: str, suite: str, release: str, release_name: str, os_release: str, issue: str
) -> LabSystem:
    """A RHEL-family system: its release package's files (/usr/lib/os-release and /etc/<release>, with
    /etc/redhat-release and /etc/system-release linking to it: what ansible-core's distribution collector and AMD's
    instructions read), the distribution's dnf defaults, and an rpm database as its installer leaves it."""
    major = version.split(".")[0]
    links = [f"ln -sf {release} /etc/{name}" for name in ("redhat-release", "system-release") if name != release]
    return LabSystem(
        key=key,
        family=family,
        suite=suite,
        version=version,
        codename="",
        identity={
            "usr/lib/os-release": os_release,
            f"etc/{release}": issue,
            "etc/issue": "\\S\nKernel \\r on an \\m\n\n",
            # dnf's defaults as the distribution's dnf package writes them (Debian's differ: best=False and
            # skip_if_unavailable=True would hide a missing package).
            "etc/dnf/dnf.conf": (
                "[main]\ngpgcheck=1\ninstallonly_limit=3\nclean_requirements_on_remove=True\nbest=True\n"
                "skip_if_unavailable=False\n"
            ),
            # Debian's dnf-plugins-core enables its local-repository plugin; the distribution packages it apart.
            "etc/dnf/plugins/local.conf": "[main]\nenabled = 0\n",
        },
        packages=RPM_PACKAGES + RPM_HOST_LIBRARIES,
        boot_loader="bls",
        release_name=release_name,
        setup=(
            "install -d -m 0755 /etc/yum.repos.d /etc/rpm",
            # The distribution's rpm keeps its database in /var/lib/rpm; Debian's rpm defaults to ~/.rpmdb.
            "printf '%s\\n' '%_dbpath /var/lib/rpm' > /etc/rpm/macros.dbpath",
            *links,
            "rm -f /etc/debian_version",
            # Ansible's package_facts reads apt's database first where python3-apt imports (the Debian base has it
            # for ansible.builtin.apt); the distribution has none.
            "dpkg --purge python3-apt",
            *_rpm_database_steps(
                release, version, major, () if release == "redhat-release" else ("redhat-release",), RPM_TWINS
            ),
        ),
    )


def _rocky(version: str, suite: str) -> LabSystem:
    # Rocky Linux's rocky-release (Rocky Linux 9.6's /usr/lib/os-release).
    major = version.split(".")[0]
    pretty = f"Rocky Linux {version} (Blue Onyx)"
    os_release = (
        'NAME="Rocky Linux"\n'
        f'VERSION="{version} (Blue Onyx)"\n'
        'ID="rocky"\n'
        'ID_LIKE="rhel centos fedora"\n'
        f'VERSION_ID="{version}"\n'
        f'PLATFORM_ID="platform:el{major}"\n'
        f'PRETTY_NAME="{pretty}"\n'
        'ANSI_COLOR="0;32"\n'
        'LOGO="fedora-logo-icon"\n'
        f'CPE_NAME="cpe:/o:rocky:rocky:{major}::baseos"\n'
        'HOME_URL="https://rockylinux.org/"\n'
        'BUG_REPORT_URL="https://bugs.rockylinux.org/"\n'
        f'ROCKY_SUPPORT_PRODUCT="Rocky-Linux-{major}"\n'
        f'ROCKY_SUPPORT_PRODUCT_VERSION="{version}"\n'
        'REDHAT_SUPPORT_PRODUCT="Rocky Linux"\n'
        f'REDHAT_SUPPORT_PRODUCT_VERSION="{version}"\n'
    )
    release = f"Rocky Linux release {version} (Blue Onyx)\n"
    return _rpm_system(f"rocky{version}", "rocky", version, suite, "rocky-release", "Blue Onyx", os_release, release)


def _rhel(version: str, suite: str) -> LabSystem:
    # Red Hat Enterprise Linux's redhat-release (RHEL 10.0 "Coughlan": its /usr/lib/os-release and
    # /etc/redhat-release; /etc/system-release links to it).
    major = version.split(".")[0]
    os_release = (
        'NAME="Red Hat Enterprise Linux"\n'
        f'VERSION="{version} (Coughlan)"\n'
        'ID="rhel"\n'
        'ID_LIKE="centos fedora"\n'
        f'VERSION_ID="{version}"\n'
        f'PLATFORM_ID="platform:el{major}"\n'
        f'PRETTY_NAME="Red Hat Enterprise Linux {version} (Coughlan)"\n'
        'ANSI_COLOR="0;31"\n'
        'LOGO="fedora-logo-icon"\n'
        f'CPE_NAME="cpe:/o:redhat:enterprise_linux:{major}::baseos"\n'
        'HOME_URL="https://www.redhat.com/"\n'
        'VENDOR_NAME="Red Hat"\n'
        'VENDOR_URL="https://www.redhat.com/"\n'
        'BUG_REPORT_URL="https://issues.redhat.com/"\n'
        f'REDHAT_BUGZILLA_PRODUCT="Red Hat Enterprise Linux {major}"\n'
        f"REDHAT_BUGZILLA_PRODUCT_VERSION={version}\n"
        'REDHAT_SUPPORT_PRODUCT="Red Hat Enterprise Linux"\n'
        f'REDHAT_SUPPORT_PRODUCT_VERSION="{version}"\n'
    )
    release = f"Red Hat Enterprise Linux release {version} (Coughlan)\n"
    return _rpm_system(f"rhel{version}", "rhel", version, suite, "redhat-release", "Coughlan", os_release, release)


# What a SLES host needs of Debian's archive for its package manager: zypper 1.14 with libzypp, rpm and its Python
# bindings (package_facts), and the libraries beneath AMD's RPMs.
ZYPPER_PACKAGES = ("zypper", "rpm", "python3-rpm")
# The distribution's rpm packages of what Debian's packages provide beneath (rpm name -> Debian package, provides).
ZYPPER_TWINS = {
    "bash": ("bash", "/bin/sh", "/bin/bash", "/usr/bin/sh", "/usr/bin/bash"),
    "zypper": ("zypper",),
    "rpm": ("rpm",),
    "python3-rpm": ("python3-rpm",),
    "python3": ("python3", "/usr/bin/python3"),
}


def _sles(version: str, suite: str) -> LabSystem:
    # SLES 15 SP7: sles-release's /usr/lib/os-release and product file (/etc/products.d/SLES.prod, which
    # baseproduct links to: libzypp's $releasever and the registration read it), and the zypp.conf lines the
    # distribution sets (kernels install side by side; zypper keeps the newest two and the running one).
    major, service_pack = version.split(".")
    pretty = f"SUSE Linux Enterprise Server {major} SP{service_pack}"
    os_release = (
        'NAME="SLES"\n'
        f'VERSION="{major}-SP{service_pack}"\n'
        f'VERSION_ID="{version}"\n'
        f'PRETTY_NAME="{pretty}"\n'
        'ID="sles"\n'
        'ID_LIKE="suse"\n'
        'ANSI_COLOR="0;32"\n'
        f'CPE_NAME="cpe:/o:suse:sles:{major}:sp{service_pack}"\n'
        'DOCUMENTATION_URL="https://documentation.suse.com/"\n'
    )
    product = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<product schemeversion="0">\n  <vendor>SUSE</vendor>\n'
        f"  <name>SLES</name>\n  <version>{version}</version>\n  <release>0</release>\n  <arch>x86_64</arch>\n"
        f"  <cpeid>cpe:/o:suse:sles:{major}:sp{service_pack}</cpeid>\n  <productline>sles</productline>\n"
        f"  <register>\n    <target>sle-{major}-x86_64</target>\n  </register>\n  <summary>{pretty}</summary>\n"
        "</product>\n"
    )
    rpm_release = f"{major}0{service_pack}00.1"  # SLES 15 SP7's packages: <version>-150700.<build>
    return LabSystem(
        key=f"sles{version}",
        family="sles",
        suite=suite,
        version=version,
        codename="",
        identity={
            "usr/lib/os-release": os_release,
            "etc/issue": f"\nWelcome to {pretty}  (x86_64) - Kernel \\r (\\l).\n\n",
            "etc/zypp/zypp.conf": (
                "[main]\nmultiversion = provides:multiversion(kernel)\nmultiversion.kernels = latest,latest-1,running\n"
            ),
        },
        packages=ZYPPER_PACKAGES + RPM_HOST_LIBRARIES,
        boot_loader="grub2",
        release_name=service_pack,
        setup=(
            "install -d -m 0755 /etc/zypp/repos.d /etc/rpm /etc/products.d",
            f"printf %s {shlex.quote(product)} > /etc/products.d/SLES.prod",
            "ln -sf SLES.prod /etc/products.d/baseproduct",
            # The distribution's rpm keeps its database in /var/lib/rpm; Debian's rpm defaults to ~/.rpmdb.
            "printf '%s\\n' '%_dbpath /var/lib/rpm' > /etc/rpm/macros.dbpath",
            "rm -f /etc/debian_version",
            # Ansible's package_facts reads apt's database first where python3-apt imports; SLES has none.
            "dpkg --purge python3-apt",
            *_rpm_database_steps(
                "sles-release",
                version,
                major,
                # sles-release's product provides (its register target, sle-15-x86_64, is no version rpm 4.18 takes).
                ("product() = SLES", f"product(SLES) = {version}-0", "distribution-release"),
                ZYPPER_TWINS,
                rpm_release,
                rpm_family=False,
            ),
        ),
    )


SYSTEMS: dict[str, LabSystem] = {
    system.key: system
    for system in (
        LabSystem("debian12", "debian", "bookworm", "12", "bookworm"),
        LabSystem("debian13", "debian", "trixie", "13", "trixie"),
        _ubuntu("22.04", "22.04.5", "jammy", "Jellyfish", "bookworm", "bookworm/sid"),
        _ubuntu("24.04", "24.04.4", "noble", "Numbat", "trixie", "trixie/sid"),
        _rocky("9.6", "bookworm"),
        _rhel("10.0", "bookworm"),
        # Debian 12's zypper 1.14 (libzypp 17.25) beneath.
        _sles("15.7", "bookworm"),
    )
}
DEFAULT = "debian12"  # a host without lab_os


def system(key: str) -> LabSystem:
    return SYSTEMS[key]
