"""The lab mirror's RPM repositories together: per RPM system AMD's and the distribution's, each path served once."""

from __future__ import annotations

from fleet_testing.core_sdk_fakes import AMD_SMI_FILES, tools

from rocm_fleet.lab.mirror import rpm_amd, rpm_distro, rpm_repos, rpm_sle
from rocm_fleet.lab.mirror.catalog import TOOL_SUITES

KERNEL = "6.1.0-28-amd64"


def test_each_rpm_system_gets_amds_and_its_distributions_repositories_once(monkeypatch):
    needs = {f"{package}-needs" for suite in TOOL_SUITES.values() for package in suite.libraries.values()}
    monkeypatch.setattr(rpm_amd, "BENEATH", rpm_amd.BENEATH | needs | {"rocm-smi", "librocm-smi64-1"})
    fakes = {suite: tools(suite) for suite in TOOL_SUITES}
    amd_smi = {suite: (AMD_SMI_FILES, "python3") for suite in TOOL_SUITES if TOOL_SUITES[suite].amd_smi}
    repos = rpm_repos.all_repos(fakes, amd_smi, KERNEL, "http://127.0.0.1:8080", {suite: [] for suite in fakes})
    paths = [repo.path for repo in repos]
    assert len(paths) == len(set(paths))
    assert rpm_repos.RPM_SYSTEMS
    sles = [system for system in rpm_repos.RPM_SYSTEMS.values() if system.family == "sles"]
    el = [system for system in rpm_repos.RPM_SYSTEMS.values() if system.family != "sles"]
    assert sles and el
    for system in el:
        baseos = next(repo for repo in rpm_distro.family_repos(system) if repo.content == "baseos")
        for path in (rpm_amd.core_sdk_root(system), baseos.path(system), f"epel/{system.major}/Everything/x86_64"):
            assert path in paths, path
            assert next(repo for repo in repos if repo.path == path).specs, path
    for system in sles:
        served = {repo.content: repo.url_path for repo in rpm_sle.module_repos(system)}
        for path in (rpm_amd.core_sdk_root(system), served["kernel"], served["dkms"]):
            assert next(repo for repo in repos if repo.path == path).specs, path
    empty = {repo.path(system) for system in el for repo in rpm_distro.family_repos(system)}
    empty |= {repo.url_path for system in sles for repo in rpm_sle.module_repos(system)}
    assert {repo.path for repo in repos if not repo.specs} <= empty
