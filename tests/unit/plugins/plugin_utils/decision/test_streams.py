"""Release streams as data: AMD's registrations and package names of each stream, per OS and release.

The expected texts are AMD's own, copied from the pages cited beside them; the only differences are the two
rocm-fleet makes on purpose (as_rocm_fleet_writes says which and why).
"""

import shutil

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import data as rocm_data
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.streams import (
    StreamError,
    conflict_problem,
    default_links,
    host_os,
    host_plan,
    install_root,
    registrations,
    release_package,
    release_packages,
    render,
    stream_name,
    stream_problems,
    stream_tools,
    unlisted_release_packages,
)

STREAMS, KEYS = rocm_data.release_streams()
MATRIX = rocm_data.preflight_data()[1]

# AMD's 10.0.0 install page, "Register ROCm repositories" (rocm.docs.amd.com/en/latest/install/rocm.html,
# code index id 69869114788): the text between `sudo tee /etc/apt/sources.list.d/amdrocm-stable.sources << EOF`
# and EOF, with the directory of each OS.
AMD_10_APT = """X-Repo-Id: amdrocm-stable
Types: deb
URIs: https://stable.repo.amd.com/rocm/core/packages/{os_dir}/
Suites: stable
Components: main
Architectures: amd64
Signed-By: /etc/apt/keyrings/amdrocm.gpg
Enabled: yes
"""
# The same page: /etc/yum.repos.d/amdrocm-stable.repo (RHEL, Oracle Linux, Rocky) and
# /etc/zypp/repos.d/amdrocm-stable.repo (SLES), each named after the page's release.
AMD_10_RPM = """[amdrocm-stable]
name=ROCm {release}
baseurl=https://stable.repo.amd.com/rocm/core/packages/{os_dir}/x86_64
enabled=1
gpgcheck=1
gpgkey=https://stable.repo.amd.com/rocm/gpg/packages.gpg
"""

# (ansible_distribution, version, codename, package manager, AMD's directory, file). The directories: the 10.0.0
# page's os selectors, read in its ASAN twin whose selector labels survive (code index id 65851554848:
# ubuntu-ver=26.04 -> ubuntu2604, debian-ver=13 -> debian13, rhel-ver=10 -> rhel10, sles-ver=15 -> sles15).
HOSTS_10 = [
    ("Ubuntu", "22.04", "jammy", "apt", "ubuntu2204", "/etc/apt/sources.list.d/amdrocm-stable.sources"),
    ("Ubuntu", "24.04", "noble", "apt", "ubuntu2404", "/etc/apt/sources.list.d/amdrocm-stable.sources"),
    ("Ubuntu", "26.04", "resolute", "apt", "ubuntu2604", "/etc/apt/sources.list.d/amdrocm-stable.sources"),
    ("Debian", "12", "bookworm", "apt", "debian12", "/etc/apt/sources.list.d/amdrocm-stable.sources"),
    ("Debian", "13", "trixie", "apt", "debian13", "/etc/apt/sources.list.d/amdrocm-stable.sources"),
    ("RedHat", "9.6", "", "dnf", "rhel9", "/etc/yum.repos.d/amdrocm-stable.repo"),
    ("RedHat", "10.0", "", "dnf", "rhel10", "/etc/yum.repos.d/amdrocm-stable.repo"),
    ("OracleLinux", "10.0", "", "dnf", "rhel10", "/etc/yum.repos.d/amdrocm-stable.repo"),
    ("Rocky", "9.6", "", "dnf", "rhel9", "/etc/yum.repos.d/amdrocm-stable.repo"),
    ("SLES", "15.7", "", "zypper", "sles15", "/etc/zypp/repos.d/amdrocm-stable.repo"),
    ("SLES", "16.0", "", "zypper", "sles16", "/etc/zypp/repos.d/amdrocm-stable.repo"),
]
RELEASES_10 = ("10.0.0", "10.1.0")


def as_rocm_fleet_writes(amd_text):
    """AMD's text as rocm-fleet writes it. Both differences keep a key that no one checked off the host:
    rocm-fleet checks the key's fingerprints on the controller and installs that text itself, armored, so apt
    reads it from a .asc keyring (AMD dearmors into amdrocm.gpg), and dnf and zypper read it from the file AMD's
    own amdrocm-repo package uses (AMD's page has them fetch the key URL at import)."""
    return amd_text.replace("/etc/apt/keyrings/amdrocm.gpg", "/etc/apt/keyrings/amdrocm.asc").replace(
        "gpgkey=https://stable.repo.amd.com/rocm/gpg/packages.gpg", "gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-amdrocm")


@pytest.mark.parametrize("release", RELEASES_10)
@pytest.mark.parametrize(("distribution", "version", "codename", "manager", "os_dir", "path"), HOSTS_10)
def test_a_10x_host_registers_amds_one_repository(distribution, version, codename, manager, os_dir, path, release):
    host = host_os(distribution, version, codename)
    [registration] = registrations(STREAMS, KEYS, MATRIX, [release], host, manager)
    amd = (AMD_10_APT if manager == "apt" else AMD_10_RPM).format(os_dir=os_dir, release=release)
    assert (registration["path"], registration["key"]) == (path, "amdrocm")
    assert render(registration) == as_rocm_fleet_writes(amd)


# Package names: AMD's "ROCm meta packages" table (7.14.0 installation include, code index id 59807416391) with the
# 10.x series (the 10.0.0 page installs amdrocm10.0-gfx942; amdrocm-core-dev10.0-gfx1151 and
# amdrocm-core-devel10.0-gfx1150 in user reports, code index ids 57475275019, 71639242434); -dev on deb, -devel on
# rpm, SLES included (TheRock docs/packaging/native_packaging.md).
@pytest.mark.parametrize("release", RELEASES_10)
@pytest.mark.parametrize(("distribution", "version", "codename", "manager", "os_dir", "path"), HOSTS_10)
def test_a_10x_host_installs_amds_per_target_packages(distribution, version, codename, manager, os_dir, path,
                                                       release):
    series = release.rsplit(".", 1)[0]
    package_format = "deb" if manager == "apt" else "rpm"
    dev = "dev" if package_format == "deb" else "devel"
    names = release_packages(STREAMS, MATRIX, release, ["base", "hip", "dev"], ["gfx942", "gfx950"], package_format)
    assert names == [f"amdrocm{series}-gfx942", f"amdrocm{series}-gfx950",
                     f"amdrocm-core-{dev}{series}-gfx942", f"amdrocm-core-{dev}{series}-gfx950"]
    everything = release_packages(STREAMS, MATRIX, release, ["base", "dev", "profiler"], ["gfx942"], package_format,
                                  all_targets=True)
    assert everything == [f"amdrocm{series}", f"amdrocm-core-{dev}{series}", f"amdrocm-developer-tools{series}"]


def test_a_host_without_gpu_targets_gets_every_targets_package():
    assert release_packages(STREAMS, MATRIX, "10.0.0", ["base", "sdk"], [], "deb") == [
        "amdrocm10.0", "amdrocm-core-sdk10.0"]


def test_714_registers_amds_one_line_source_and_rocm_repo():
    # AMD's 7.14.0 installation include (code index id 59807416391), Ubuntu 24.04 and RHEL 10.
    ubuntu = registrations(STREAMS, KEYS, MATRIX, ["7.14.0"], host_os("Ubuntu", "24.04", "noble"), "apt")
    assert [(item["path"], render(item)) for item in ubuntu] == [(
        "/etc/apt/sources.list.d/rocm.list",
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/amdrocm-7.14.asc] "
        "https://repo.amd.com/rocm/packages-multi-arch/ubuntu2404 stable main\n")]
    [rhel] = registrations(STREAMS, KEYS, MATRIX, ["7.14.0"], host_os("RedHat", "10.0"), "dnf")
    assert render(rhel) == (
        "[rocm]\nname=ROCm 7.14.0\nbaseurl=https://repo.amd.com/rocm/packages-multi-arch/rhel10/x86_64\n"
        "enabled=1\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-amdrocm-7.14\npriority=50\n")


def test_legacy_releases_keep_amds_per_release_layout():
    # AMD's 7.x rocm.list: rocm/apt/<release> and graphics/<release>/ubuntu; Debian 12 reads jammy
    # (ROCm/rocm-install-on-linux package-manager-debian.rst @ ef80a05).
    [apt] = registrations(STREAMS, KEYS, MATRIX, ["6.4.1", "7.2.3"], host_os("Debian", "12", "bookworm"), "apt")
    assert dict(apt["fields"])["URIs"].split() == [
        "https://repo.radeon.com/rocm/apt/6.4.1", "https://repo.radeon.com/rocm/apt/7.2.3",
        "https://repo.radeon.com/graphics/7.2.3/ubuntu"]
    assert dict(apt["fields"])["Suites"] == "jammy"
    [rpm] = registrations(STREAMS, KEYS, MATRIX, ["6.4.1", "7.2.3"], host_os("RedHat", "9.6"), "dnf")
    assert [(section["id"], section["baseurl"]) for section in rpm["sections"]] == [
        ("rocm-6.4.1", "https://repo.radeon.com/rocm/rhel9/6.4.1/main"),
        ("rocm-7.2.3", "https://repo.radeon.com/rocm/el9/7.2.3/main"),
        ("amdgraphics-7.2.3", "https://repo.radeon.com/graphics/7.2.3/el/9.6/main/x86_64/")]
    assert release_packages(STREAMS, MATRIX, "6.4.1", ["base", "hip"], ["gfx942"], "deb") == [
        "rocm-core6.4.1", "rocm-language-runtime6.4.1", "rocminfo6.4.1", "rocm-smi-lib6.4.1", "rocm-hip-runtime6.4.1"]


def test_each_stream_has_its_install_root_default_and_tools():
    assert stream_name(MATRIX, "7.2.3") == "legacy" and stream_name(MATRIX, "10.1.0") == "core_sdk_10"
    assert install_root(STREAMS, MATRIX, "7.2.3") == "/opt/rocm-7.2.3"
    assert install_root(STREAMS, MATRIX, "10.1.0") == "/opt/rocm/core-10.1"
    assert default_links(STREAMS, MATRIX, "7.2.3") == [
        {"alternative": "rocm", "link": "/opt/rocm", "path": "/opt/rocm-7.2.3"}]
    links = {item["alternative"]: (item["link"], item["path"]) for item in default_links(STREAMS, MATRIX, "10.1.0")}
    assert links["core"] == ("/opt/rocm/core", "/opt/rocm/core-10.1")
    assert links["core-10"] == ("/opt/rocm/core-10", "/opt/rocm/core-10.1")
    assert links["rocm-bin"] == ("/opt/rocm/bin", "/opt/rocm/core-10.1/bin")
    # "As of ROCm 10.0, ROCm SMI is no longer included in TheRock builds".
    assert "rocm-smi" not in stream_tools(STREAMS, MATRIX, "10.0.0")
    assert "rocm-smi" in stream_tools(STREAMS, MATRIX, "7.2.3")


def test_a_target_the_release_does_not_build_names_the_package_it_needed():
    matrix = dict(MATRIX, **{"10.0.0": dict(MATRIX["10.0.0"], gfx_targets=["gfx942"])})
    with pytest.raises(StreamError, match=r"ROCm 10.0.0 is not built for gfx1100 .*builds it for gfx942\): "
                                          r"amdrocm10.0-gfx1100 would have been needed"):
        release_packages(STREAMS, matrix, "10.0.0", ["base"], ["gfx942", "gfx1100"], "deb")


def test_an_os_the_stream_has_no_directory_for_is_named():
    with pytest.raises(StreamError, match=r"the ROCm Core SDK 10.x has no core repository for Ubuntu 20.04 "
                                          r"\(AMD builds it for Debian 12, 13; .*Ubuntu 22.04, 24.04, 26.04\)"):
        registrations(STREAMS, KEYS, MATRIX, ["10.0.0"], host_os("Ubuntu", "20.04", "focal"), "apt")


def test_an_unknown_release_or_stream_is_named():
    with pytest.raises(StreamError, match=r"ROCm 10.9.0 is not in the support matrix"):
        release_packages(STREAMS, MATRIX, "10.9.0", ["base"], [], "deb")
    matrix = dict(MATRIX, **{"10.0.0": dict(MATRIX["10.0.0"], stream="core_sdk_11")})
    with pytest.raises(StreamError, match=r"names the release stream 'core_sdk_11'"):
        registrations(STREAMS, KEYS, matrix, ["10.0.0"], host_os("Debian", "13", "trixie"), "apt")
    with pytest.raises(StreamError, match=r"no use case 'games'"):
        release_packages(STREAMS, MATRIX, "10.0.0", ["games"], ["gfx942"], "deb")


def test_the_built_in_tables_have_no_problems_and_planted_ones_are_found():
    assert stream_problems(STREAMS, KEYS, MATRIX) == []
    streams = {name: dict(stream) for name, stream in STREAMS.items()}
    streams["core_sdk_10"].update(key="nokey", packges={})
    del streams["core_sdk_10"]["source"]
    keys = dict(KEYS, amdrocm=dict(KEYS["amdrocm"], apt_keyring=""))
    matrix = dict(MATRIX, **{"10.1.0": dict(MATRIX["10.1.0"], stream="core_sdk_1O")})
    problems = stream_problems(streams, keys, matrix)
    assert "release stream core_sdk_10: unknown keys packges" in problems[0]
    assert "release stream core_sdk_10: has no source" in problems
    assert "release stream core_sdk_10: key 'nokey' is not in preflight_repository_keys" in problems
    assert "repository key amdrocm: has no apt_keyring" in problems
    assert any(problem.startswith("ROCm 10.1.0: stream 'core_sdk_1O' is not a release stream") for problem in problems)


def test_a_new_release_of_a_stream_is_a_matrix_row_only(tmp_path, monkeypatch):
    """A scratch copy of the data with a 10.3.0 row added: its repository lines and package names follow, with no
    change anywhere else."""
    vars_dir = tmp_path / "preflight" / "vars"
    shutil.copytree(rocm_data.data_file(".."), tmp_path / "preflight")
    matrix_file = vars_dir / "support_matrix.yml"
    text = matrix_file.read_text()
    row = yaml.safe_load(text)["preflight_support_matrix_builtin"]["10.2.0"]
    row = dict(row, released=None, source="a scratch row of this test")
    matrix_file.write_text(text + yaml.safe_dump({"preflight_support_matrix_builtin": {"10.3.0": row}})
                           .split("\n", 1)[1])
    monkeypatch.setattr(rocm_data, "ROLES_DIR", str(tmp_path))
    monkeypatch.setattr(rocm_data, "_builtin", {})
    streams, keys = rocm_data.release_streams()
    matrix = rocm_data.preflight_data()[1]
    assert "10.3.0" in matrix and "10.3.0" not in MATRIX
    [rhel] = registrations(streams, keys, matrix, ["10.3.0"], host_os("RedHat", "10.0"), "dnf")
    assert render(rhel) == as_rocm_fleet_writes(AMD_10_RPM.format(os_dir="rhel10", release="10.3.0"))
    assert release_packages(streams, matrix, "10.3.0", ["base", "dev"], ["gfx950"], "deb") == [
        "amdrocm10.3-gfx950", "amdrocm-core-dev10.3-gfx950"]
    assert install_root(streams, matrix, "10.3.0") == "/opt/rocm/core-10.3"
    assert release_package(streams, matrix, "10.3.0") == "amdrocm-sysdeps10.3"


def test_a_host_plan_gathers_what_the_roles_write():
    plan = host_plan(STREAMS, KEYS, MATRIX, ["10.0.0", "10.1.0"], "10.1.0", host_os("Debian", "13", "trixie"), "apt",
                     ["base", "dev"], ["gfx942"])
    assert plan["stream"] == "core_sdk_10" and plan["streams"] == ["core_sdk_10"]
    assert [item["path"] for item in plan["registrations"]] == ["/etc/apt/sources.list.d/amdrocm-stable.sources"]
    assert plan["registrations"][0]["content"] == as_rocm_fleet_writes(AMD_10_APT.format(os_dir="debian13"))
    assert list(plan["keys"]) == ["amdrocm"]
    assert plan["packages"] == {"10.0.0": ["amdrocm10.0-gfx942", "amdrocm-core-dev10.0-gfx942"],
                                "10.1.0": ["amdrocm10.1-gfx942", "amdrocm-core-dev10.1-gfx942"]}
    assert plan["roots"] == {"10.0.0": "/opt/rocm/core-10.0", "10.1.0": "/opt/rocm/core-10.1"}
    assert plan["defaults"][0] == {"alternative": "core", "link": "/opt/rocm/core", "path": "/opt/rocm/core-10.1"}
    assert plan["tools"] == ["amd-smi", "rocminfo"]


def test_a_legacy_and_a_10x_release_cannot_sit_side_by_side():
    # "If you have ROCm 7.2.4 or older installed, please uninstall it before proceeding." (AMD's 10.0.0 page)
    problem = conflict_problem(STREAMS, MATRIX, ["7.2.3", "10.0.0"])
    assert problem.startswith("ROCm 7.2.3 (the legacy ROCm stream) and 10.0.0 (the ROCm Core SDK 10.x) cannot be "
                              "installed side by side")
    assert "move the host with playbooks/upgrade.yml" in problem
    assert conflict_problem(STREAMS, MATRIX, ["6.4.1", "7.2.3"]) is None
    with pytest.raises(StreamError, match="cannot be installed side by side"):
        host_plan(STREAMS, KEYS, MATRIX, ["7.2.3", "10.0.0"], "10.0.0", host_os("Debian", "13", "trixie"), "apt",
                  ["base"], [])
    with pytest.raises(StreamError, match=r"the default release 10.1.0 is not among the host's releases 10.0.0"):
        host_plan(STREAMS, KEYS, MATRIX, ["10.0.0"], "10.1.0", host_os("Debian", "13", "trixie"), "apt", ["base"], [])


def test_the_release_package_of_each_stream():
    assert [release_package(STREAMS, MATRIX, release) for release in ("6.4.1", "7.2.3", "7.14.0", "10.1.0")] == [
        "rocm-core6.4.1", "rocm-core7.2.3", "amdrocm-sysdeps7.14", "amdrocm-sysdeps10.1"]


def test_the_releases_a_host_no_longer_lists_are_their_release_packages_of_any_stream():
    installed = ["rocm-core", "rocm-core7.2.3", "rocm-core6.4.1", "rocm-core7.2.3-dev", "amdrocm-sysdeps10.0",
                 "amdrocm-sysdeps10.1", "amdrocm-sysdeps10.1-extra", "amdrocm10.1-gfx942", "rocm-smi-lib7.2.3"]
    # The move off the legacy stream: every legacy release goes, and the Core SDK release not listed.
    assert unlisted_release_packages(STREAMS, MATRIX, installed, ["10.1.0"]) == [
        "amdrocm-sysdeps10.0", "rocm-core6.4.1", "rocm-core7.2.3"]
    # A rollback to 7.2.3: the Core SDK's releases go.
    assert unlisted_release_packages(STREAMS, MATRIX, installed, ["7.2.3"]) == [
        "amdrocm-sysdeps10.0", "amdrocm-sysdeps10.1", "rocm-core6.4.1"]
    assert unlisted_release_packages(STREAMS, MATRIX, installed, ["6.4.1", "7.2.3", "10.0.0", "10.1.0"]) == []
    # What stands in the way of installing a release: only another stream's, which cannot sit beside it.
    assert unlisted_release_packages(STREAMS, MATRIX, installed, ["10.1.0"], conflicting_only=True) == [
        "rocm-core6.4.1", "rocm-core7.2.3"]
    assert unlisted_release_packages(STREAMS, MATRIX, installed, ["7.2.3"], conflicting_only=True) == [
        "amdrocm-sysdeps10.0", "amdrocm-sysdeps10.1"]
    with pytest.raises(StreamError, match=r"9\.9\.9 is not in the support matrix"):
        unlisted_release_packages(STREAMS, MATRIX, installed, ["9.9.9"])
