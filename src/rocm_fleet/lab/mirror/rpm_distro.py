"""The distribution's RPM repositories in the lab mirror, as a site's own mirror serves them to its RHEL-family hosts
(signed with the lab's distribution key), and the repository files a host's installer leaves pointing at them.

* the family's own (family_repos): Rocky's BaseOS, AppStream, CRB and extras; RHEL's BaseOS, AppStream and
  CodeReady Linux Builder under Red Hat's CDN paths. BaseOS carries kernel-modules-extra of the machine's kernel and
  the update kernels (kernel_rpms.py), AppStream kernel-headers, kernel-devel and kernel-devel-matched (what AMD's
  RHEL instructions install for $(uname -r)), Rocky's extras epel-release;
* epel/<major>/Everything/x86_64: dkms, which amdgpu-dkms requires (why AMD's instructions need EPEL), and
  epel-release.

What differs from the real packages (docs/lab.md says it for people): the lab's kernel packages are named by the
machine's kernel, which is no RPM version-release, so each also provides <name>-$(uname -r) as dnf resolves it, and
EPEL's dkms is a placeholder (the lab's amdgpu-dkms builds itself, as on Debian hosts).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from rocm_fleet.lab.mirror import kernel_rpms, signing
from rocm_fleet.lab.mirror.rpm_amd import dist_tag
from rocm_fleet.lab.mirror.rpms import RpmRepo, RpmSpec
from rocm_fleet.lab.mirror.signing import DISTRO_KEY

EPEL_DKMS_VERSION = ("3.2.1", "1.el{major}")  # modelled: EPEL's dkms of late 2026 is not recorded here


def epel_release(system, base_url: str) -> RpmSpec:
    """epel-release as Rocky's extras serve it: EPEL's repository file, pointing at the site's mirror, and its key."""
    major = system.major
    key_path = f"/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-{major}"
    repo = (
        f"[epel]\nname=Extra Packages for Enterprise Linux {major} - $basearch\n"
        f"baseurl={base_url}/epel/$releasever/Everything/$basearch/\n"
        f"enabled=1\ngpgcheck=1\ncountme=1\ngpgkey=file://{key_path}\n"
    )
    return RpmSpec(
        "epel-release",
        major,
        f"10.{dist_tag(system)}",  # modelled
        f"Extra Packages for Enterprise Linux repository configuration (rocm-fleet lab mirror at {base_url})",
        arch="noarch",
        license="GPL-2.0-only",
        url="https://docs.fedoraproject.org/en-US/epel/",
        vendor="Fedora Project",
        files={
            "/etc/yum.repos.d/epel.repo": repo.encode(),
            key_path: signing.public_key(signing.DISTRO_KEY).read_bytes(),
        },
    )


def dkms_placeholder(system) -> RpmSpec:
    version, release = EPEL_DKMS_VERSION
    return RpmSpec(
        "dkms",
        version,
        release.format(major=system.major),
        "Dynamic Kernel Module Support Framework (rocm-fleet lab placeholder: the lab's amdgpu-dkms builds itself)",
        arch="noarch",
        license="GPL-2.0-or-later",
        url="https://github.com/dell/dkms",
        vendor="Fedora Project",
        files={"/usr/share/doc/dkms/LAB-PLACEHOLDER": b"rocm-fleet lab placeholder of EPEL's dkms\n"},
    )


@dataclass(frozen=True)
class DistroRepo:
    """One of the distribution's repositories as the host's repository file names it."""

    file: str  # under /etc/yum.repos.d
    ident: str
    name: str
    url_path: str  # under the mirror's base URL, with dnf's $releasever and $basearch
    enabled: bool  # on a fresh host
    content: str  # which packages: baseos, appstream, crb, extras

    def path(self, system) -> str:
        return self.url_path.replace("$releasever", system.major).replace("$basearch", "x86_64").rstrip("/")


def family_repos(system) -> list[DistroRepo]:
    """The distribution's repositories of a fresh host of ``system``.

    Rocky Linux: rocky.repo and rocky-extras.repo as rocky-repos writes them, CRB disabled. RHEL: redhat.repo as
    subscription-manager writes it from the site's Satellite (the repository ids of Red Hat's CDN), its activation
    key enabling CodeReady Linux Builder, as sites that install AMD's packages do."""
    major = system.major
    if system.family == "rhel":
        dist = f"rhel/content/dist/rhel{major}/$releasever/$basearch"
        title = f"Red Hat Enterprise Linux {major} for x86_64"
        return [
            DistroRepo(
                "redhat.repo",
                f"rhel-{major}-for-x86_64-baseos-rpms",
                f"{title} - BaseOS (RPMs)",
                f"{dist}/baseos/os/",
                True,
                "baseos",
            ),
            DistroRepo(
                "redhat.repo",
                f"rhel-{major}-for-x86_64-appstream-rpms",
                f"{title} - AppStream (RPMs)",
                f"{dist}/appstream/os/",
                True,
                "appstream",
            ),
            DistroRepo(
                "redhat.repo",
                f"codeready-builder-for-rhel-{major}-x86_64-rpms",
                f"Red Hat CodeReady Linux Builder for RHEL {major} x86_64 (RPMs)",
                f"{dist}/codeready-builder/os/",
                True,
                "crb",
            ),
        ]
    root = "rocky/$releasever"
    return [
        DistroRepo(
            "rocky.repo", "baseos", "Rocky Linux $releasever - BaseOS", f"{root}/BaseOS/$basearch/os/", True, "baseos"
        ),
        DistroRepo(
            "rocky.repo",
            "appstream",
            "Rocky Linux $releasever - AppStream",
            f"{root}/AppStream/$basearch/os/",
            True,
            "appstream",
        ),
        DistroRepo("rocky.repo", "crb", "Rocky Linux $releasever - CRB", f"{root}/CRB/$basearch/os/", False, "crb"),
        DistroRepo(
            "rocky-extras.repo",
            "extras",
            "Rocky Linux $releasever - Extras",
            f"{root}/extras/$basearch/os/",
            True,
            "extras",
        ),
    ]


def family_key(system) -> str:
    """The distribution's key file, as its release package installs it."""
    if system.family == "rhel":
        return "/etc/pki/rpm-gpg/RPM-GPG-KEY-redhat-release"
    return f"/etc/pki/rpm-gpg/RPM-GPG-KEY-{system.family.capitalize()}-{system.major}"


def epel_root(system) -> str:
    return f"epel/{system.major}/Everything/x86_64"


def distro_repos(system, kernel: str, base_url: str) -> list[RpmRepo]:
    """The distribution's repositories and EPEL. As the distribution splits them: kernel-modules-extra in BaseOS,
    kernel-headers and the kernel-devel packages in AppStream; epel-release in Rocky's extras and in EPEL itself."""
    machine = {spec.name: spec for spec in kernel_rpms.kernel_packages(kernel, system)}
    updates = kernel_rpms.update_packages(kernel, system)
    content = {
        "baseos": [machine["kernel-modules-extra"], *updates["baseos"]],
        "appstream": [
            *(machine[name] for name in ("kernel-headers", "kernel-devel", "kernel-devel-matched")),
            *updates["appstream"],
        ],
        "crb": [],
        "extras": [epel_release(system, base_url)],
    }
    repos = [RpmRepo(repo.path(system), DISTRO_KEY, content[repo.content]) for repo in family_repos(system)]
    epel = [dkms_placeholder(system), epel_release(system, base_url)]
    return [*repos, RpmRepo(epel_root(system), DISTRO_KEY, epel)]


def install_sources(root, base_url: str, system, www: Path | None = None) -> None:
    """Point a RHEL-family root at the mirror's distribution repositories as the distribution's own repository files
    name them (family_repos), trusting the lab's distribution key, imported into the rpm database as the installer
    does. On RHEL, EPEL's epel-release from ``www`` too, as the site's kickstart installs it. Once: a root that has
    them keeps them (the host's own changes, crb enabled, stay)."""
    root = Path(root)
    key = family_key(system)
    repos = root / "etc/yum.repos.d"
    repos.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[DistroRepo]] = {}
    for repo in family_repos(system):
        files.setdefault(repo.file, []).append(repo)
    if any((repos / name).exists() for name in files):
        return  # written once, as the installer does
    (root / key.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    (root / key.lstrip("/")).write_bytes(signing.public_key(signing.DISTRO_KEY).read_bytes())
    title = {"rhel": "Red Hat Enterprise Linux", "rocky": "Rocky Linux"}[system.family]
    header = f"# The lab's {title} mirror (rocm-fleet lab; its key is lab-only).\n"
    for name, sections in files.items():
        (repos / name).write_text(
            header
            + "\n".join(
                f"[{repo.ident}]\nname={repo.name}\nbaseurl={base_url}/{repo.url_path}\n"
                f"gpgcheck=1\nenabled={int(repo.enabled)}\n"
                + ("countme=1\nmetadata_expire=6h\n" if system.family == "rocky" else "")
                + f"gpgkey=file://{key}\n"
                for repo in sections
            )
        )
    rpm = ["rpm", "--root", str(root), "--dbpath", "/var/lib/rpm"]
    subprocess.run([*rpm, "--import", str(root / key.lstrip("/"))], check=True, capture_output=True)
    if system.family == "rhel":
        if www is None:
            raise ValueError(f"{system.name}: epel-release comes from the mirror's tree; pass its www directory")
        found = sorted((Path(www) / epel_root(system) / "Packages" / "e").glob("epel-release-*.rpm"))
        if not found:
            raise ValueError(f"{system.name}: the mirror at {www} serves no epel-release in {epel_root(system)}")
        subprocess.run([*rpm, "-i", str(found[-1])], check=True, capture_output=True)
