"""The distribution's RPM repositories in the lab mirror: where each family serves what, and the repository files a
host's installer leaves."""

from __future__ import annotations

import configparser
import shutil
import subprocess

import pytest

from rocm_fleet.lab import systems
from rocm_fleet.lab.mirror import rpm_distro
from rocm_fleet.lab.mirror.rpms import build_rpm

ROCKY = systems.system("rocky9.6")
RHEL = systems.system("rhel10.0")
KERNEL = "6.1.0-28-amd64"


@pytest.mark.skipif(not shutil.which("rpm"), reason="needs rpm (Debian's rpm package)")
def test_the_installers_repository_files_are_written_once_and_the_host_keeps_its_changes(tmp_path):
    rpm_distro.install_sources(tmp_path, "http://127.0.0.1:8080", ROCKY)
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(tmp_path / "etc/yum.repos.d/rocky.repo")
    assert {section: parser[section]["enabled"] for section in parser.sections()} == {
        "baseos": "1",
        "appstream": "1",
        "crb": "0",
    }
    assert parser["baseos"]["baseurl"] == "http://127.0.0.1:8080/rocky/$releasever/BaseOS/$basearch/os/"
    assert parser["baseos"]["gpgcheck"] == "1"
    keys = subprocess.run(
        ["rpm", "--root", str(tmp_path), "--dbpath", "/var/lib/rpm", "-q", "gpg-pubkey"],
        capture_output=True,
        text=True,
    )
    assert keys.returncode == 0 and keys.stdout.startswith("gpg-pubkey-"), keys
    edited = (tmp_path / "etc/yum.repos.d/rocky.repo").read_text().replace("enabled=0", "enabled=1")
    (tmp_path / "etc/yum.repos.d/rocky.repo").write_text(edited)  # `dnf config-manager --set-enabled crb`
    rpm_distro.install_sources(tmp_path, "http://127.0.0.1:8081", ROCKY)
    assert (tmp_path / "etc/yum.repos.d/rocky.repo").read_text() == edited


def test_each_family_serves_the_kernel_packages_where_the_distribution_does():
    repos = {
        repo.path: {spec.name for spec in repo.specs} for repo in rpm_distro.distro_repos(RHEL, KERNEL, "http://x")
    }
    assert repos["rhel/content/dist/rhel10/10/x86_64/baseos/os"] == {
        "kernel",
        "kernel-core",
        "kernel-modules",
        "kernel-modules-extra",
    }
    assert repos["rhel/content/dist/rhel10/10/x86_64/appstream/os"] == {
        "kernel-headers",
        "kernel-devel",
        "kernel-devel-matched",
    }
    assert repos["epel/10/Everything/x86_64"] == {"dkms", "epel-release"}
    assert set(repos) == {repo.path(RHEL) for repo in rpm_distro.family_repos(RHEL)} | {"epel/10/Everything/x86_64"}


@pytest.mark.skipif(not shutil.which("rpmbuild"), reason="needs rpmbuild (Debian's rpm package)")
def test_a_rhel_host_arrives_registered_with_codeready_builder_and_epel_installed(tmp_path):
    www, root = tmp_path / "www", tmp_path / "root"
    build_rpm(rpm_distro.epel_release(RHEL, "http://127.0.0.1:8080"), www / rpm_distro.epel_root(RHEL) / "Packages/e")
    rpm_distro.install_sources(root, "http://127.0.0.1:8080", RHEL, www)
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(root / "etc/yum.repos.d/redhat.repo")
    assert {section: parser[section]["enabled"] for section in parser.sections()} == {
        "rhel-10-for-x86_64-baseos-rpms": "1",
        "rhel-10-for-x86_64-appstream-rpms": "1",
        "codeready-builder-for-rhel-10-x86_64-rpms": "1",
    }
    assert parser["codeready-builder-for-rhel-10-x86_64-rpms"]["baseurl"] == (
        "http://127.0.0.1:8080/rhel/content/dist/rhel10/$releasever/$basearch/codeready-builder/os/"
    )
    installed = subprocess.run(
        ["rpm", "--root", str(root), "--dbpath", "/var/lib/rpm", "-qa", "--qf", "%{NAME}\n"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(installed) == ["epel-release", "gpg-pubkey"]
    assert (root / "etc/yum.repos.d/epel.repo").is_file()
    with pytest.raises(ValueError, match="no epel-release"):
        rpm_distro.install_sources(tmp_path / "other", "http://127.0.0.1:8080", RHEL, tmp_path / "empty")
