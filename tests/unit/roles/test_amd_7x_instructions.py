"""The repo and packages roles against AMD's ROCm 7.x install instructions, per OS and release.

For Ubuntu 22.04/24.04, RHEL 9/10 and SLES 15 SP7, and ROCm 7.2.3 (driver 30.30.3) and 7.1.1 (driver 30.20.1),
the roles' own data and task expressions are rendered with the decision preflight makes (decide() on a
host of that OS) and compared with the lines AMD's instructions write. Each expected string names its source:
  AGD  ROCm/amdgpu-docs docs/install/detailed-install/package-manager/package-manager-<os>.rst (the driver),
       at tag 30.10.0, main @ 67902e2, 7.0.2-release-update @ 7302d99 and @ 0484577;
  RIL  ROCm/rocm-install-on-linux docs/install/install-methods/package-manager/package-manager-<os>.rst (ROCm),
       ubuntu @ af50ec7, debian @ ef80a05, rhel @ e9b6ead, sles @ 7f3dafd; prerequisites.rst @ 012b141;
  apt  real apt lines and versions quoted in roles/preflight/vars/amdgpu_drivers.yml's sources.
"""

from __future__ import annotations

import configparser

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data import preflight_data
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.preflight import INPUT_KEYS, decide
from fleet_testing.roles import evaluate, find_task, load_yaml, render, render_template

CATALOG, MATRIX, DRIVERS = preflight_data()
PREFLIGHT_DEFAULTS = load_yaml("preflight/defaults/main.yml")
MI300X = {"count": 1, "devices": [{"index": 0, "device_id": "0x74a1", "gfx_target": "gfx942",
                                   "vram_bytes": 192 << 30, "kfd_node": 1}]}
# ansible_facts of each OS; RHEL and SLES kernels are not compared (vendor kernels).
OSES = {
    "ubuntu2204": {"os_family": "Debian", "distribution": "Ubuntu", "distribution_version": "22.04",
                   "distribution_major_version": "22", "distribution_release": "jammy",
                   "kernel": "6.8.0-45-generic", "architecture": "x86_64"},
    "ubuntu2404": {"os_family": "Debian", "distribution": "Ubuntu", "distribution_version": "24.04",
                   "distribution_major_version": "24", "distribution_release": "noble",
                   "kernel": "6.8.0-45-generic", "architecture": "x86_64"},
    "rhel96": {"os_family": "RedHat", "distribution": "RedHat", "distribution_version": "9.6",
               "distribution_major_version": "9", "kernel": "5.14.0-570.12.1.el9_6.x86_64", "architecture": "x86_64"},
    "rhel810": {"os_family": "RedHat", "distribution": "RedHat", "distribution_version": "8.10",
                "distribution_major_version": "8", "kernel": "4.18.0-553.el8_10.x86_64", "architecture": "x86_64"},
    "rhel100": {"os_family": "RedHat", "distribution": "RedHat", "distribution_version": "10.0",
                "distribution_major_version": "10", "kernel": "6.12.0-55.9.1.el10_0.x86_64",
                "architecture": "x86_64"},
    "sles157": {"os_family": "Suse", "distribution": "SLES", "distribution_version": "15.7",
                "distribution_major_version": "15", "kernel": "6.4.0-150700.51-default", "architecture": "x86_64"},
    "debian13": {"os_family": "Debian", "distribution": "Debian", "distribution_version": "13.1",
                 "distribution_major_version": "13", "distribution_release": "trixie",
                 "kernel": "6.12.48+deb13-amd64", "architecture": "x86_64"},
}
FAMILY_FILES = {"Debian": ["Debian"], "RedHat": ["RedHat"], "Suse": ["Suse"]}


def decided(os_name: str, rocm: str, driver: str = "") -> dict:
    """preflight_decision as the role sets it for an MI300X host of ``os_name``."""
    inputs = dict((key, PREFLIGHT_DEFAULTS.get("preflight_" + key)) for key in INPUT_KEYS if key != "host")
    inputs.update(host="gpu-01", rocm_version=rocm, amdgpu_driver=driver)
    outcome = decide(dict(OSES[os_name], gpu=MI300X), inputs, CATALOG, MATRIX, DRIVERS)
    assert outcome["proceed"], outcome["report"]
    return outcome["decision"]


def role_variables(role: str, os_name: str, rocm: str, **overrides) -> dict:
    facts = OSES[os_name]
    files = FAMILY_FILES[facts["os_family"]] + (["Ubuntu"] if facts["distribution"] == "Ubuntu" else [])
    variables = {**load_yaml(f"{role}/defaults/main.yml"), **load_yaml(f"{role}/vars/main.yml")}
    for name in files:
        variables.update(load_yaml(f"{role}/vars/{name}.yml"))
    variables.update(ansible_facts=facts, inventory_hostname="gpu-01", repo_source="amd",
                     preflight_decision=decided(os_name, rocm, overrides.pop("driver", "")))
    variables.update(overrides)
    return variables


def apt_sources(os_name: str, rocm: str, **overrides) -> dict[str, str]:
    """The files the repo role writes, by path (deb822 sources on apt, .repo files on dnf)."""
    variables = role_variables("repo", os_name, rocm, **overrides)
    files = {}
    for obj in render("{{ __repo_objects }}", **variables):
        if obj["kind"] == "file" and obj["state"] == "present":
            files[obj["path"]] = obj["content"] if "content" in obj else render_template(
                "repo/templates/" + obj["template"], item=obj, **variables)
    return files


def deb822(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.splitlines() if line and not line.startswith("#"))


def rpm_repositories(os_name: str, rocm: str, manager: str, **overrides) -> dict[str, str]:
    """{repository id: baseurl} of the .repo files the repo role writes, in dnf's or zypper's directory (every one
    with gpgcheck=1: zypper reads the same format)."""
    directory = {"dnf": "/etc/yum.repos.d/", "zypper": "/etc/zypp/repos.d/"}[manager]
    repositories = {}
    for path, text in apt_sources(os_name, rocm, **overrides).items():
        assert path.startswith(directory), path
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text, source=path)
        for section in parser.sections():
            assert parser[section]["gpgcheck"] == "1", (path, section)
            repositories[section] = parser[section]["baseurl"]
    return repositories


def dkms_spec(os_name: str, rocm: str, **overrides) -> str:
    task = find_task("packages/tasks/driver.yml", "Install amdgpu-dkms of the decided driver line")
    variables = role_variables("packages", os_name, rocm, **overrides)
    [item] = render(task["loop"], **variables)
    return render(task["ansible.builtin.package"]["name"], item=item)


# Ubuntu: AGD's amdgpu.list "deb [arch=amd64,i386 signed-by=...] https://repo.radeon.com/amdgpu/<line>/ubuntu
# <codename> main" and RIL's rocm.list "deb [arch=amd64 ...] https://repo.radeon.com/rocm/apt/<ver> <codename>
# main" + "... https://repo.radeon.com/graphics/<ver>/ubuntu <codename> main", pinned by "Pin: release
# o=repo.radeon.com" at 600. The role writes them as deb822 (amd64 only: the i386 half serves 32-bit graphics).
@pytest.mark.parametrize(
    ("os_name", "rocm", "suite", "rocm_uris", "amdgpu_uri"),
    [
        pytest.param("ubuntu2204", "7.2.3", "jammy",
                     "https://repo.radeon.com/rocm/apt/7.2.3 https://repo.radeon.com/graphics/7.2.3/ubuntu",
                     "https://repo.radeon.com/amdgpu/30.30.3/ubuntu",
                     id="ubuntu22.04-7.2.3-AGD-conf-30.30.3-and-apt-lines-code-index-62016764605"),
        pytest.param("ubuntu2404", "7.2.3", "noble",
                     "https://repo.radeon.com/rocm/apt/7.2.3 https://repo.radeon.com/graphics/7.2.3/ubuntu",
                     "https://repo.radeon.com/amdgpu/30.30.3/ubuntu", id="ubuntu24.04-7.2.3-RIL-af50ec7"),
        pytest.param("ubuntu2204", "7.1.1", "jammy",
                     "https://repo.radeon.com/rocm/apt/7.1.1 https://repo.radeon.com/graphics/7.1.1/ubuntu",
                     "https://repo.radeon.com/amdgpu/30.20.1/ubuntu", id="ubuntu22.04-7.1.1"),
        pytest.param("ubuntu2404", "7.1.1", "noble",
                     "https://repo.radeon.com/rocm/apt/7.1.1 https://repo.radeon.com/graphics/7.1.1/ubuntu",
                     "https://repo.radeon.com/amdgpu/30.20.1/ubuntu",
                     id="ubuntu24.04-7.1.1-apt-list-code-index-58171103493"),
        # Debian 13 takes noble (AGD docs/conf.py debian_version_numbers @ 7302d99); the Debian driver line has
        # no i386 either (AGD package-manager-debian.rst).
        pytest.param("debian13", "7.2.3", "noble",
                     "https://repo.radeon.com/rocm/apt/7.2.3 https://repo.radeon.com/graphics/7.2.3/ubuntu",
                     "https://repo.radeon.com/amdgpu/30.30.3/ubuntu", id="debian13-7.2.3-RIL-ef80a05"),
    ],
)
def test_apt_sources_are_amds_lines(os_name, rocm, suite, rocm_uris, amdgpu_uri):
    files = apt_sources(os_name, rocm)
    rocm_source = deb822(files["/etc/apt/sources.list.d/rocm.sources"])
    amdgpu_source = deb822(files["/etc/apt/sources.list.d/amdgpu.sources"])
    assert (rocm_source["URIs"], rocm_source["Suites"], rocm_source["Components"]) == (rocm_uris, suite, "main")
    assert (amdgpu_source["URIs"], amdgpu_source["Suites"], amdgpu_source["Components"]) == (amdgpu_uri, suite,
                                                                                              "main")
    assert rocm_source["Types"] == amdgpu_source["Types"] == "deb"
    assert rocm_source["Signed-By"] == "/etc/apt/keyrings/rocm.asc"
    pin = files["/etc/apt/preferences.d/rocm-pin-600"]
    assert "Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600\n" in pin


# RHEL: RIL's rocm.repo "[rocm] baseurl=https://repo.radeon.com/rocm/el<major>/<ver>/main" and "[amdgraphics]
# baseurl=https://repo.radeon.com/graphics/<ver>/el/<9.x | major>/main/x86_64/", AGD's amdgpu.repo
# "baseurl=https://repo.radeon.com/amdgpu/<line>/el/<9.x | 10>/main/x86_64/", all "priority=50, gpgcheck=1".
@pytest.mark.parametrize(
    ("os_name", "rocm", "expected"),
    [
        pytest.param("rhel96", "7.2.3", {
            "rocm-7.2.3": "https://repo.radeon.com/rocm/el9/7.2.3/main",
            "amdgraphics-7.2.3": "https://repo.radeon.com/graphics/7.2.3/el/9.6/main/x86_64/",
            "amdgpu": "https://repo.radeon.com/amdgpu/30.30.3/el/9.6/main/x86_64/"}, id="rhel9.6-7.2.3-RIL-e9b6ead"),
        pytest.param("rhel100", "7.2.3", {
            "rocm-7.2.3": "https://repo.radeon.com/rocm/el10/7.2.3/main",
            "amdgraphics-7.2.3": "https://repo.radeon.com/graphics/7.2.3/el/10/main/x86_64/",
            "amdgpu": "https://repo.radeon.com/amdgpu/30.30.3/el/10/main/x86_64/"},
            id="rhel10-7.2.3-AGD-0484577-el10"),
        # RHEL 8: el/8 for the graphics and the amdgpu trees (AGD's template from 30.10.2, 7302d99: "{% if os_major ==
        # '9' %} el/{{ os_version }} {% else %} el/{{ os_major }}"; RIL prerequisites.rst @ 012b141 links
        # amdgpu/30.30.2/el/8/; docs/research/rpm-families.md).
        pytest.param("rhel810", "7.2.3", {
            "rocm-7.2.3": "https://repo.radeon.com/rocm/el8/7.2.3/main",
            "amdgraphics-7.2.3": "https://repo.radeon.com/graphics/7.2.3/el/8/main/x86_64/",
            "amdgpu": "https://repo.radeon.com/amdgpu/30.30.3/el/8/main/x86_64/"}, id="rhel8.10-7.2.3-AGD-7302d99-el8"),
        pytest.param("rhel96", "7.1.1", {
            "rocm-7.1.1": "https://repo.radeon.com/rocm/el9/7.1.1/main",
            "amdgraphics-7.1.1": "https://repo.radeon.com/graphics/7.1.1/el/9.6/main/x86_64/",
            "amdgpu": "https://repo.radeon.com/amdgpu/30.20.1/el/9.6/main/x86_64/"}, id="rhel9.6-7.1.1"),
        pytest.param("rhel100", "7.1.1", {
            "rocm-7.1.1": "https://repo.radeon.com/rocm/el10/7.1.1/main",
            "amdgraphics-7.1.1": "https://repo.radeon.com/graphics/7.1.1/el/10/main/x86_64/",
            "amdgpu": "https://repo.radeon.com/amdgpu/30.20.1/el/10/main/x86_64/"}, id="rhel10-7.1.1"),
    ],
)
def test_dnf_repositories_are_amds(os_name, rocm, expected):
    assert rpm_repositories(os_name, rocm, "dnf") == expected
    # RIL's rocm.repo and AGD's amdgpu.repo: priority=50 (the stream's, and repo_rpm_priority's for the driver).
    variables = role_variables("repo", os_name, rocm)
    assert [item["priority"] for item in render("{{ __repo_plan.registrations }}", **variables)] == [50]
    assert variables["repo_rpm_priority"] == 50


# SLES: RIL's rocm.repo "baseurl=https://repo.radeon.com/rocm/zyp/<ver>/main" and "[amdgraphics]
# baseurl=https://repo.radeon.com/graphics/<ver>/sle/15.7/main/x86_64/"; AGD's amdgpu.repo
# "baseurl=https://repo.radeon.com/amdgpu/<line>/sle/15.7/main/x86_64/".
@pytest.mark.parametrize(
    ("rocm", "expected"),
    [
        pytest.param("7.2.3", {
            "rocm-7.2.3": "https://repo.radeon.com/rocm/zyp/7.2.3/main",
            "amdgraphics-7.2.3": "https://repo.radeon.com/graphics/7.2.3/sle/15.7/main/x86_64/",
            "amdgpu": "https://repo.radeon.com/amdgpu/30.30.3/sle/15.7/main/x86_64/"},
            id="sles15sp7-7.2.3-RIL-7f3dafd"),
        pytest.param("7.1.1", {
            "rocm-7.1.1": "https://repo.radeon.com/rocm/zyp/7.1.1/main",
            "amdgraphics-7.1.1": "https://repo.radeon.com/graphics/7.1.1/sle/15.7/main/x86_64/",
            "amdgpu": "https://repo.radeon.com/amdgpu/30.20.1/sle/15.7/main/x86_64/"}, id="sles15sp7-7.1.1"),
    ],
)
def test_zypper_repositories_are_amds(rocm, expected):
    assert rpm_repositories("sles157", rocm, "zypper") == expected


# amdgpu-dkms of the line: apt "amdgpu-dkms 1:6.16.13.30300300-2327507.22.04" (30.30.3) and
# "1:6.16.6.30200100-2255209.24.04" (30.20.1, apt list); rpm amdgpu-dkms-6.16.6-2255209.el10 (30.20.1) and
# epoch 1 (amdgpu-dkms-1:6.16.6-2238411.el8, ROCm/ROCm#5650). AMD's instructions install the bare name from the
# line's repository; the roles pin the line so that an older driver moves and a rerun stays put.
@pytest.mark.parametrize(
    ("os_name", "rocm", "spec"),
    [
        pytest.param("ubuntu2204", "7.2.3", "amdgpu-dkms=1:6.16.13.30300300-*", id="ubuntu22.04-7.2.3"),
        pytest.param("ubuntu2404", "7.2.3", "amdgpu-dkms=1:6.16.13.30300300-*", id="ubuntu24.04-7.2.3"),
        pytest.param("ubuntu2404", "7.1.1", "amdgpu-dkms=1:6.16.6.30200100-*", id="ubuntu24.04-7.1.1"),
        pytest.param("ubuntu2204", "7.1.1", "amdgpu-dkms=1:6.16.6.30200100-*", id="ubuntu22.04-7.1.1"),
        pytest.param("rhel96", "7.2.3", "amdgpu-dkms >= 1:6.16.13-2327507", id="rhel9.6-7.2.3"),
        pytest.param("rhel100", "7.1.1", "amdgpu-dkms >= 1:6.16.6-2255209", id="rhel10-7.1.1-el10-rpm"),
        pytest.param("sles157", "7.2.3", "amdgpu-dkms>=1:6.16.13-2327507", id="sles15sp7-7.2.3"),
        pytest.param("sles157", "7.1.1", "amdgpu-dkms>=1:6.16.6-2255209", id="sles15sp7-7.1.1"),
    ],
)
def test_amdgpu_dkms_spec_of_the_line(os_name, rocm, spec):
    assert dkms_spec(os_name, rocm) == spec


# ROCm itself: AMD's versioned multi-version packages of the release (RIL meta-package table, rocm-core7.2.3).
@pytest.mark.parametrize("os_name", ["ubuntu2204", "rhel100", "sles157"])
def test_rocm_packages_are_the_releases_own(os_name):
    task = find_task("packages/tasks/rocm.yml", "Install the use cases of each ROCm release")
    variables = role_variables("packages", os_name, "7.2.3", packages_rocm_versions=["7.2.3"])
    [item] = render(task["loop"], **variables)
    assert item["names"] == ["rocm-core7.2.3", "rocm-language-runtime7.2.3", "rocminfo7.2.3", "amd-smi-lib7.2.3",
                             "rocm-smi-lib7.2.3", "rocm-hip-runtime7.2.3"]


def test_a_newer_driver_line_takes_its_repository_and_package():
    # ROCm 7.0.2 with the 30.30.3 driver (AMD: 30.30.3 is compatible with ROCm 7.0.x, ROCm/amdgpu-docs#97).
    files = apt_sources("ubuntu2404", "7.0.2", driver="30.30.3")
    assert deb822(files["/etc/apt/sources.list.d/amdgpu.sources"])["URIs"] == (
        "https://repo.radeon.com/amdgpu/30.30.3/ubuntu")
    assert deb822(files["/etc/apt/sources.list.d/rocm.sources"])["URIs"] == (
        "https://repo.radeon.com/rocm/apt/7.0.2 https://repo.radeon.com/graphics/7.0.2/ubuntu")
    assert dkms_spec("ubuntu2404", "7.0.2", driver="30.30.3") == "amdgpu-dkms=1:6.16.13.30300300-*"


def test_x_y_0_releases_use_amds_short_directories():
    # "Hit:5 https://repo.radeon.com/amdgpu/30.20/ubuntu noble / rocm/apt/7.1 noble / graphics/7.1/ubuntu noble"
    # (apt update on Debian 13, code index id 11168654324).
    files = apt_sources("debian13", "7.1.0")
    assert deb822(files["/etc/apt/sources.list.d/rocm.sources"])["URIs"] == (
        "https://repo.radeon.com/rocm/apt/7.1 https://repo.radeon.com/graphics/7.1/ubuntu")
    assert deb822(files["/etc/apt/sources.list.d/amdgpu.sources"])["URIs"] == (
        "https://repo.radeon.com/amdgpu/30.20/ubuntu")


LAB_MIRROR = {"repo_source": "mirror", "repo_mirrors": {"https://repo.radeon.com": "http://127.0.0.1:8650",
                                                         "https://stable.repo.amd.com": "http://127.0.0.1:8650"}}


def test_rocm_6_keeps_its_layout_and_the_lab_mirror():
    # The lab: inventory/lab/group_vars/all/lab_mirror.yml's mirrors, Debian 12 on jammy, ROCm 6.4.1.
    facts = dict(OSES["debian13"], distribution_version="12.7", distribution_major_version="12",
                 distribution_release="bookworm", kernel="6.1.0-28-amd64")
    OSES["debian12"] = facts
    try:
        files = apt_sources("debian12", "6.4.1", **LAB_MIRROR)
    finally:
        del OSES["debian12"]
    rocm = deb822(files["/etc/apt/sources.list.d/rocm.sources"])
    assert (rocm["URIs"], rocm["Suites"]) == ("http://127.0.0.1:8650/rocm/apt/6.4.1", "jammy")
    assert deb822(files["/etc/apt/sources.list.d/amdgpu.sources"])["URIs"] == "http://127.0.0.1:8650/amdgpu/6.4.1/ubuntu"
    assert rpm_repositories("rhel96", "6.4.1", "dnf") == {
        "rocm-6.4.1": "https://repo.radeon.com/rocm/rhel9/6.4.1/main",
        "amdgpu": "https://repo.radeon.com/amdgpu/6.4.1/rhel/9.6/main/x86_64/"}


def test_a_mirror_stands_in_for_every_url_of_the_origins_it_maps():
    files = apt_sources("ubuntu2404", "7.2.3", **LAB_MIRROR)
    assert deb822(files["/etc/apt/sources.list.d/rocm.sources"])["URIs"] == (
        "http://127.0.0.1:8650/rocm/apt/7.2.3 http://127.0.0.1:8650/graphics/7.2.3/ubuntu")
    variables = role_variables("repo", "ubuntu2404", "7.2.3", **LAB_MIRROR)
    assert [key["url"] for key in render("{{ __repo_keys }}", **variables)] == [
        "http://127.0.0.1:8650/rocm/rocm.gpg.key"]
    # A mirror that maps none of the origins the releases need fails the host before any change, naming them.
    task = find_task("repo/tasks/preflight.yml", "Check the releases through their release streams (AMD's "
                                                  "registrations for this OS, the mirrors)")
    unmapped = role_variables("repo", "ubuntu2404", "7.2.3", repo_source="mirror",
                              repo_mirrors={"https://stable.repo.amd.com": "http://m"})
    assert evaluate(task["ansible.builtin.assert"]["that"], **unmapped) is False
    assert render("{{ __repo_plan.problem }}", **unmapped).startswith(
        "repo_source is mirror, but repo_mirrors names no mirror for https://repo.radeon.com (rocm)")


# RHEL-family prerequisites (RIL prerequisites.rst @ 012b141: "Add the EPEL repository ... Enable the CodeReady
# Linux Builder (CRB) repository": epel-release-latest-<major>.noarch.rpm, `sudo crb enable`).
REPOLIST_ROCKY = "repo id                 repo name\nappstream               Rocky Linux 9 - AppStream\n" \
                 "baseos                  Rocky Linux 9 - BaseOS\n"


@pytest.mark.parametrize(
    ("os_name", "distribution", "repolist", "missing", "how"),
    [
        pytest.param("rhel96", "RedHat", "repo id   repo name\nrhel-9-for-x86_64-baseos-rpms  BaseOS\n",
                     ["EPEL", "CodeReady Linux Builder"],
                     "EPEL: dnf install https://dl.fedoraproject.org/pub/epel/epel-release-latest-9.noarch.rpm; "
                     "CodeReady Linux Builder: subscription-manager repos --enable "
                     "codeready-builder-for-rhel-9-x86_64-rpms", id="rhel9-both-missing"),
        pytest.param("rhel96", "Rocky", REPOLIST_ROCKY + "epel     Extra Packages for Enterprise Linux 9\n",
                     ["CRB"], "CRB: dnf config-manager --set-enabled crb", id="rocky9-crb-missing"),
        pytest.param("rhel96", "OracleLinux", "repo id  repo name\nol9_baseos_latest  BaseOS\n",
                     ["EPEL (ol9_developer_EPEL)", "CodeReady Builder (ol9_codeready_builder)"],
                     "EPEL (ol9_developer_EPEL): dnf install oracle-epel-release-el9; CodeReady Builder "
                     "(ol9_codeready_builder): dnf config-manager --set-enabled ol9_codeready_builder", id="ol9"),
    ],
)
def test_missing_epel_and_crb_fail_preflight_naming_what_to_enable(os_name, distribution, repolist, missing, how):
    OSES["probe"] = dict(OSES[os_name], distribution=distribution)
    try:
        variables = role_variables("repo", "probe", "7.2.3", __repo_dnf_repolist={"stdout": repolist})
    finally:
        del OSES["probe"]
    task = find_task("repo/tasks/preflight.yml",
                     "Check that EPEL and CodeReady Builder are enabled, or that this role may enable them")
    assert [item["name"] for item in render("{{ __repo_missing_prerequisites }}", **variables)] == missing
    assert evaluate(task["ansible.builtin.assert"]["that"], **variables) is False
    message = render(task["ansible.builtin.assert"]["fail_msg"], **variables)
    assert message.startswith("gpu-01: AMD's ROCm packages for %s " % distribution)
    assert how in message and "repo_enable_epel_crb: true" in message
    assert evaluate(task["ansible.builtin.assert"]["that"], **dict(variables, repo_enable_epel_crb=True)) is True


def test_the_probe_is_read_only_and_enabled_repositories_pass():
    probe = find_task("repo/tasks/preflight.yml", "Read the enabled dnf repositories")
    assert (probe["check_mode"], probe["changed_when"]) == (False, False)
    assert probe["ansible.builtin.command"] == "dnf -q repolist --enabled"
    repolist = "repo id   repo name\ncodeready-builder-for-rhel-9-x86_64-rpms  CRB\nepel  EPEL 9\n"
    variables = role_variables("repo", "rhel96", "7.2.3", __repo_dnf_repolist={"stdout": repolist})
    assert render("{{ __repo_missing_prerequisites }}", **variables) == []
    # Debian and SLES have none to check.
    assert render("{{ __repo_prerequisites }}", **role_variables("repo", "ubuntu2404", "7.2.3")) == []
