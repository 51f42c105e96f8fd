"""The legacy ROCm stream's RPM repositories of the lab mirror (7.x releases), for its RHEL-family hosts.

AMD's RHEL layout from ROCm 7 (roles/preflight/vars/release_streams.yml, legacy's dnf sections; AMD's RHEL
package-manager pages): rocm/el<N>/<dir>/main, graphics/<dir>/el/<9.x, else the major>/main/x86_64, and the release's
driver line in amdgpu/<line>/el/<...>/main/x86_64. The packages are those of amd_packages.release_packages (AMD's
single-version and multi-version sets, the placeholders and the carried Debian tools), as RPMs of AMD's version
scheme: rocm-core7.2.3-7.2.3.70203-90.el9 (the deb's <upstream>-<build>, the dist tag for the Ubuntu one).

Where a deb depends on one of Debian's tool packages (rocm-smi-lib on Debian's rocm-smi and librocm-smi64-1), the RPM
carries that package's files itself: an RPM host has no apt to fetch them, and a Debian package installed beneath
would outlive the release that brought it. ROCm 6.x's RHEL layout (rocm/rhel<N>, amdgpu/<release>/rhel) is not served.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from rocm_fleet.lab.mirror import amd_packages, rpm_amd
from rocm_fleet.lab.mirror.catalog import CODENAMES, HOST_SUITES, RELEASES, RocmRelease
from rocm_fleet.lab.mirror.debs import DebSpec
from rocm_fleet.lab.mirror.rpms import RpmRepo, RpmSpec
from rocm_fleet.lab.mirror.signing import ROCM_KEY


def legacy_releases() -> list[RocmRelease]:
    return [release for release in RELEASES if release.version.split(".")[0] >= "7"]


def amd_codename(system) -> str:
    """AMD's Ubuntu codename whose builds the system's userland takes (Debian 12's: jammy)."""
    return next(codename for codename in CODENAMES if HOST_SUITES[codename] == system.suite)


def os_dir(system) -> str:
    return system.version if system.major == "9" else system.major


def roots(release: RocmRelease, system) -> dict[str, str]:
    if system.family == "sles":  # release_streams.yml, legacy's zypper sections
        return {
            "rocm": f"rocm/zyp/{release.repo_dir}/main",
            "graphics": f"graphics/{release.repo_dir}/sle/{system.version}/main/x86_64",
        }
    return {
        "rocm": f"rocm/el{system.major}/{release.repo_dir}/main",
        "graphics": f"graphics/{release.repo_dir}/el/{os_dir(system)}/main/x86_64",
    }


def rpm_version(deb_version: str, tag: str) -> tuple[int | None, str, str]:
    """(epoch, version, release) of AMD's RPM for a deb version: 1:2.4.125.70203-2327507.22.04 -> (1, 2.4.125.70203,
    2327507.el9); 7.2.3.70203-90~22.04 -> (None, 7.2.3.70203, 90.el9)."""
    epoch, _, rest = deb_version.rpartition(":")
    upstream, _, revision = rest.rpartition("-")
    build = revision.split("~")[0].split(".")[0]
    return (int(epoch) if epoch else None), upstream, f"{build}.{tag}" if tag else build


def debian_payload(deb: Path) -> tuple[dict[str, tuple[int, bytes]], dict[str, str]]:
    """The files and links of a Debian package, by absolute path."""
    files: dict[str, tuple[int, bytes]] = {}
    links: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="lab-deb-") as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        for path in sorted(Path(tmp).rglob("*")):
            name = "/" + path.relative_to(tmp).as_posix()
            if path.is_symlink():
                links[name] = str(path.readlink())
            elif path.is_file():
                files[name] = (path.stat().st_mode & 0o777, path.read_bytes())
    return files, links


def legacy_repos(system, tools: dict[str, amd_packages.Tools], tool_debs: dict) -> list[RpmRepo]:
    codename = amd_codename(system)
    tag = rpm_amd.dist_tag(system)
    allowed = rpm_amd.BENEATH | frozenset(system.packages)
    repos = []
    for release in legacy_releases():
        carried = tools[release.tool_suite(codename).suite]
        debian = {deb.name: deb.path for deb in tool_debs[carried.suite.suite]}
        groups = {
            "rocm": amd_packages.release_packages(release, codename, carried),
            "graphics": amd_packages.graphics_packages(release, codename) if release.graphics else [],
        }
        every = [spec for specs in groups.values() for spec in specs]
        evr_of = {spec.name: _evr(rpm_version(spec.version, tag)) for spec in every}
        for where, specs in groups.items():
            if specs:
                repo = RpmRepo(roots(release, system)[where], ROCM_KEY)
                repo.specs = [_rpm(spec, tag, evr_of, allowed, debian) for spec in specs]
                repos.append(repo)
    return repos


def _evr(parts: tuple[int | None, str, str]) -> str:
    epoch, version, release = parts
    return f"{epoch}:{version}-{release}" if epoch is not None else f"{version}-{release}"


def _rpm(spec: DebSpec, tag: str, evr_of: dict[str, str], allowed: frozenset[str], debian: dict[str, Path]) -> RpmSpec:
    epoch, version, release = rpm_version(spec.version, tag)
    rpm = rpm_amd.from_deb(spec, version, release, epoch)
    # Debian's tool packages a deb depends on travel inside the RPM (see the module's docstring).
    carried = [name for name in _depend_names(spec.depends) if name in debian and name not in allowed]
    for name in _closure(carried, debian, allowed):
        files, links = debian_payload(debian[name])
        rpm.files.update({path: body for path, body in files.items() if not path.startswith("/usr/share/doc/")})
        rpm.symlinks.update({path: link for path, link in links.items() if not path.startswith("/usr/share/doc/")})
    rpm.scripts = {name: dpkg_arguments(name, text) for name, text in spec.scripts.items()}
    rpm.requires = rpm_amd.requires(spec.depends, evr_of, allowed | frozenset(debian))
    # The single-version package conflicts with its multi-version twin (AMD forbids mixing the sets) but, unlike the
    # deb, does not provide it: dnf would satisfy a twin's dependents with it when the twin is removed (a move's
    # `dnf remove rocm-core7.2.3` installed rocm-core instead of removing what depends on it).
    rpm.conflicts = [_relation(item, evr_of) for item in spec.conflicts]
    rpm.vendor = "Advanced Micro Devices, Inc."
    return rpm


# What dpkg passes a maintainer script, from what rpm passes its scriptlet (the number of the package's instances
# after the transaction): %post configure, %preun remove on erase (0) and upgrade otherwise.
DPKG_ARGUMENTS = {
    "postinst": "set -- configure",
    "prerm": 'if [ "$1" = 0 ]; then set -- remove; else set -- upgrade; fi',
    "preinst": 'if [ "$1" = 1 ]; then set -- install; else set -- upgrade; fi',
    "postrm": 'if [ "$1" = 0 ]; then set -- remove; else set -- upgrade; fi',
}


def dpkg_arguments(name: str, script: str) -> str:
    """A deb maintainer script as an rpm scriptlet that sees dpkg's arguments."""
    shebang, _, body = script.partition("\n")
    if not shebang.startswith("#!"):
        shebang, body = "#!/bin/sh", script
    return f"{shebang}\n{DPKG_ARGUMENTS[name]}  # rocm-fleet lab: dpkg's arguments from rpm's\n{body}"


def _depend_names(depends: list[str]) -> list[str]:
    names = []
    for text in depends:
        for group in text.split(","):
            for alternative in group.split("|"):
                name = alternative.strip().split(" ", 1)[0].split(":", 1)[0]
                if name:
                    names.append(name)
    return names


def _closure(names: list[str], debian: dict[str, Path], allowed: frozenset[str]) -> list[str]:
    """The Debian packages to carry: ``names`` and what they depend on that is neither beneath nor carried yet."""
    found: list[str] = []
    pending = list(names)
    while pending:
        name = pending.pop(0)
        if name in found:
            continue
        found.append(name)
        depends = subprocess.run(
            ["dpkg-deb", "-f", str(debian[name]), "Depends"], capture_output=True, text=True, check=True
        ).stdout
        pending += [dep for dep in _depend_names([depends]) if dep in debian and dep not in allowed]
    return found


def _relation(item: str, evr_of: dict[str, str]) -> str:
    """A deb Provides or Conflicts (name (= version)) as rpm's, the version as the named package's RPM."""
    name = item.split(" ", 1)[0]
    return f"{name} = {evr_of[name]}" if "(" in item and name in evr_of else name
