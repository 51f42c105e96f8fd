"""The lab mirror's RPM repositories, for its RHEL-family and SLES hosts (rocm_fleet.lab.systems, package_format
"rpm"): AMD's (rpm_amd.py, rpm_legacy.py) and the distribution's (rpm_distro.py, rpm_sle.py) for each such system,
built with the real rpmbuild, signed with rpmsign and indexed with createrepo_c (rpms.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from rocm_fleet.lab import systems
from rocm_fleet.lab.mirror import amd_packages, core_sdk, rpm_amd, rpm_distro, rpm_legacy, rpm_sle, rpms, signing
from rocm_fleet.lab.mirror.rpms import RpmRepo

RPM_SYSTEMS = {key: system for key, system in systems.SYSTEMS.items() if system.package_format == "rpm"}


def all_repos(
    tools: dict[str, amd_packages.Tools], amd_smi: dict, kernel: str, base_url: str, tool_debs: dict
) -> list[RpmRepo]:
    """Every RPM repository the mirror serves: per RPM system, AMD's and the distribution's (one of each path)."""
    found: dict[str, RpmRepo] = {}
    legacy_drivers = list(
        {release.driver.directory: release.driver for release in rpm_legacy.legacy_releases()}.values()
    )
    for system in RPM_SYSTEMS.values():
        for repo in [
            rpm_amd.core_sdk_repo(system, tools, amd_smi),
            *rpm_amd.driver_line_repos(system),
            *rpm_amd.driver_line_repos(system, legacy_drivers),
            *rpm_legacy.legacy_repos(system, tools, tool_debs),
            *(rpm_sle.distro_repos(system, kernel) if system.family == "sles"
              else rpm_distro.distro_repos(system, kernel, base_url)),
        ]:
            found.setdefault(repo.path, repo)
    return list(found.values())


def build(
    www, tools: dict[str, amd_packages.Tools], tool_debs: dict, kernel: str, base_url: str, cache=None
) -> list[str]:
    """Build, sign and index every RPM repository under ``www``; returns their paths. ``cache``: <cache>/mirror."""
    amd_smi = {}
    for suite, debs in tool_debs.items():
        deb = next((d.path for d in debs if d.name == "amd-smi"), None)
        if deb is not None and tools[suite].suite.amd_smi:
            amd_smi[suite] = core_sdk.amd_smi_files(deb, cache)
    repos = all_repos(tools, amd_smi, kernel, base_url, tool_debs) if RPM_SYSTEMS else []
    jobs = [(repo, spec) for repo in repos for spec in repo.specs]

    def one(job):
        repo, spec = job
        return rpms.build_rpm(spec, www / repo.path / "Packages" / spec.name[0].lower(), cache and cache / "built-rpm")

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, jobs))
    with signing.Signer() as signer:
        for repo in repos:
            (www / repo.path).mkdir(parents=True, exist_ok=True)
            rpms.publish_repository(www / repo.path, signer, repo.key)
    return [repo.path for repo in repos]
