"""Debian and Ubuntu hosts side by side: lab_os in the inventory picks each host's system and base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rocm_fleet.lab import base, inventory, lab, systems
from rocm_fleet.lab.host import HostSpec, LabHost


def write_inventory(directory: Path, hosts: dict, group_vars: dict | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hosts.yml").write_text(yaml.safe_dump(hosts))
    for relative, data in (group_vars or {}).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data))
    return directory


def host(port: int, **extra) -> dict:
    return {"lab_profile": "nogpu", "ansible_port": port, **extra}


def releases(directory: Path) -> dict[str, str]:
    return {spec.name: spec.system for spec in inventory.committed_hosts(directory)}


def test_a_host_without_lab_os_is_debian_12_and_the_host_or_its_group_can_name_another(tmp_path):
    hosts = {
        "all": {
            "children": {
                "servers": {
                    "hosts": {"old": host(1), "own": host(2, lab_os="debian13"), "ub": host(3, lab_os="ubuntu24.04")}
                },
                "debian13": {"vars": {"lab_os": "debian13"}, "hosts": {"grouped": host(4)}},
            }
        }
    }
    assert releases(write_inventory(tmp_path, hosts)) == {
        "old": "debian12",
        "own": "debian13",
        "ub": "ubuntu24.04",
        "grouped": "debian13",
    }


def test_the_host_beats_its_groups_and_a_child_group_beats_its_parent(tmp_path):
    hosts = {
        "all": {
            "vars": {"lab_os": "debian12"},
            "children": {
                "fleet": {
                    "vars": {"lab_os": "debian12"},
                    "children": {"migrated": {"vars": {"lab_os": "debian13"}, "hosts": {"new": host(1)}}},
                    "hosts": {"pinned": host(2, lab_os="debian12")},
                },
                "debian13": {"vars": {"lab_os": "debian13"}, "hosts": {"pinned": None}},
            },
        }
    }
    assert releases(write_inventory(tmp_path, hosts)) == {"new": "debian13", "pinned": "debian12"}


@pytest.mark.parametrize("value", ["debian14", "13", "trixie", "ubuntu26.04", 13, True, "", None])
def test_an_unknown_system_names_the_host_the_file_and_the_systems_the_lab_installs(tmp_path, value):
    directory = write_inventory(tmp_path, {"all": {"hosts": {"gpu-07": host(1, lab_os=value)}}})
    with pytest.raises(inventory.InventoryError) as error:
        inventory.committed_hosts(directory)
    message = str(error.value)
    assert f"host gpu-07: lab_os {value!r}" in message
    assert str(directory / "hosts.yml") in message
    assert (
        "debian12 (Debian 12), debian13 (Debian 13), ubuntu22.04 (Ubuntu 22.04), ubuntu24.04 (Ubuntu 24.04)" in message
    )


def test_an_unknown_release_set_by_a_group_names_that_group(tmp_path):
    hosts = {"all": {"children": {"debian14": {"vars": {"lab_os": "debian14"}, "hosts": {"gpu-07": host(1)}}}}}
    with pytest.raises(inventory.InventoryError, match=r"\(group debian14\): host gpu-07: lab_os 'debian14'"):
        inventory.committed_hosts(write_inventory(tmp_path, hosts))


def test_two_groups_of_one_depth_that_disagree_are_refused_not_decided_by_name(tmp_path):
    hosts = {
        "all": {
            "children": {
                "debian12": {"vars": {"lab_os": "debian12"}, "hosts": {"gpu-07": host(1)}},
                "debian13": {"vars": {"lab_os": "debian13"}, "hosts": {"gpu-07": None}},
            }
        }
    }
    with pytest.raises(inventory.InventoryError) as error:
        inventory.committed_hosts(write_inventory(tmp_path, hosts))
    assert "host gpu-07: its groups disagree on lab_os (group debian12: 'debian12', group debian13: 'debian13')" in str(
        error.value
    )
    assert "set lab_os on the host itself" in str(error.value)


@pytest.mark.parametrize("relative", ["group_vars/debian13/lab.yml", "host_vars/gpu-07.yml"])
def test_lab_os_in_group_vars_or_host_vars_is_refused_since_the_lab_would_not_see_it(tmp_path, relative):
    directory = write_inventory(tmp_path, {"all": {"hosts": {"gpu-07": host(1)}}}, {relative: {"lab_os": "debian13"}})
    with pytest.raises(inventory.InventoryError) as error:
        inventory.committed_hosts(directory)
    assert str(directory / relative) in str(error.value)
    assert "hosts.yml only" in str(error.value)


def test_a_vault_encrypted_group_vars_file_is_read_without_failing(tmp_path):
    directory = write_inventory(tmp_path, {"all": {"hosts": {"gpu-07": host(1)}}})
    (directory / "group_vars" / "all").mkdir(parents=True)
    (directory / "group_vars" / "all" / "secrets.yml").write_text(
        "---\nsite_token: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6231\n# lab_os: debian13 (a comment)\n"
    )
    assert releases(directory) == {"gpu-07": "debian12"}


def test_the_committed_lab_runs_every_family_in_the_sites_groups():
    specs = inventory.committed_hosts()
    on_13 = [spec for spec in specs if spec.system == "debian13"]
    assert any("radeon_workstations" in spec.groups for spec in on_13)
    assert all("debian13" in spec.groups for spec in on_13)
    assert any(spec.system == "debian12" and spec.profile == "mi300x-8" for spec in specs)
    # The list: RHEL 9 (Rocky) and RHEL 10, SLES 15.7, Ubuntu 22.04 and 24.04 beside Debian.
    assert {spec.system for spec in specs} >= {"rocky9.6", "rhel10.0", "sles15.7", "ubuntu22.04", "ubuntu24.04"}
    sles = [spec for spec in specs if spec.system == "sles15.7"]
    assert sles and all("sles15" in spec.groups and spec.profile.startswith("mi300x") for spec in sles)


def test_each_debian_release_has_a_base_recipe_of_its_suite_with_the_same_contents():
    assert base.SUITES == {"12": "bookworm", "13": "trixie"} and base.SUITE == "bookworm"
    bookworm, trixie = base.recipe("bookworm"), base.recipe("trixie")
    assert (bookworm.suite, trixie.suite) == ("bookworm", "trixie")
    assert (bookworm.packages, bookworm.customize) == (trixie.packages, trixie.customize)
    assert bookworm.path() != trixie.path()
    # A Debian system's base is its suite's, so bases cached before lab_os existed are reused.
    assert base.system_recipe("debian13") == trixie and base.system_recipe("debian12") == bookworm
    assert HostSpec("a", "nogpu", 1, system="debian13").suite == "trixie"
    assert HostSpec("a", "nogpu", 1).suite == "bookworm"


@pytest.mark.parametrize(
    ("key", "suite", "codename", "debian_version"),
    [("ubuntu22.04", "bookworm", "jammy", "bookworm/sid"), ("ubuntu24.04", "trixie", "noble", "trixie/sid")],
)
def test_an_ubuntu_base_is_the_debian_release_it_was_branched_from_with_ubuntus_identity_written_over_it(
    key, suite, codename, debian_version
):
    recipe, debian = base.system_recipe(key), base.recipe(suite)
    assert (recipe.name, recipe.suite) == (key, suite)
    # A copy of the Debian base with what Ubuntu's server image adds.
    assert recipe.parent == debian and recipe.packages == ("lsb-release",)
    written = recipe.customize
    assert {step.rsplit(" > /", 1)[1] for step in written} == {
        "usr/lib/os-release",
        "etc/lsb-release",
        "etc/debian_version",
        "etc/issue",
        "etc/issue.net",
    }
    identity = systems.system(key).identity
    os_release = dict(line.split("=", 1) for line in identity["usr/lib/os-release"].splitlines())
    version = key.removeprefix("ubuntu")
    assert (os_release["ID"], os_release["ID_LIKE"], os_release["VERSION_ID"]) == ("ubuntu", "debian", f'"{version}"')
    assert os_release["VERSION_CODENAME"] == os_release["UBUNTU_CODENAME"] == codename
    assert f"DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE={version}\nDISTRIB_CODENAME={codename}\n" in identity["etc/lsb-release"]
    assert identity["etc/debian_version"] == debian_version + "\n"
    assert recipe.path() != debian.path()


def test_ensure_bases_builds_each_system_once(monkeypatch):
    built = []
    monkeypatch.setattr(base.debroot, "ensure_root", lambda recipe, log: built.append(recipe.name) or recipe.path())
    bases = base.ensure_bases(["debian13", "debian12", "debian13", "ubuntu24.04"])
    assert sorted(built) == ["bookworm", "trixie", "ubuntu24.04"]
    assert bases == {
        "debian12": base.base_path("bookworm"),
        "debian13": base.base_path("trixie"),
        "ubuntu24.04": base.system_recipe("ubuntu24.04").path(),
    }


@pytest.fixture
def fake_lab(tmp_path, monkeypatch):
    """lab.up with everything that touches the machine replaced; records what each host is mounted on."""
    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path / "state"))
    hosts = {
        "all": {
            "children": {
                "servers": {"hosts": {"d12": host(2291), "d13": host(2292), "u24": host(2293, lab_os="ubuntu24.04")}},
                "debian13": {"vars": {"lab_os": "debian13"}, "hosts": {"d13": None}},
            }
        }
    }
    monkeypatch.setenv("ROCM_FLEET_LAB_INVENTORY", str(write_inventory(tmp_path / "inventory", hosts)))
    (tmp_path / "state" / "proc-sys").mkdir(parents=True)
    mounted = {}
    monkeypatch.setattr(base, "ensure_bases", lambda keys, log: {key: Path("/bases", key) for key in keys})
    monkeypatch.setattr(lab.layer, "ensure_layer", lambda boot_loader: Path("/layers", boot_loader))
    monkeypatch.setattr(lab, "_ensure_controller_key", lambda: "ssh-ed25519 KEY")
    monkeypatch.setattr(lab, "_mirror", lambda: (None, None))
    monkeypatch.setattr(lab, "_known_hosts", lambda hosts: None)
    monkeypatch.setattr(LabHost, "is_running", lambda self: False)
    monkeypatch.setattr(
        LabHost, "mount_root", lambda self, base_dir, layer_dir: mounted.update({self.spec.name: base_dir})
    )
    monkeypatch.setattr(LabHost, "configure", lambda self, key: self.dir.mkdir(parents=True, exist_ok=True))
    monkeypatch.setattr(LabHost, "start", lambda self: None)
    monkeypatch.setattr(LabHost, "stop", lambda self: None)
    monkeypatch.setattr(LabHost, "wait_ready", lambda self, deadline: True)
    # The engine is the machine's (systemd-nspawn, a cgroup2 hierarchy), not what this test is about.
    monkeypatch.setattr(lab.nspawn, "require_engine", lambda: "/usr/bin/systemd-nspawn")
    monkeypatch.setattr(lab.nspawn, "cgroup_roots", lambda: [Path("/sys/fs/cgroup")])
    monkeypatch.setattr(LabHost, "system_state", lambda self, wait=0: "running")
    return mounted


def test_up_mounts_each_host_on_the_base_of_its_system(fake_lab):
    result = lab.up(log=lambda *_: None)
    assert fake_lab == {
        "d12": Path("/bases/debian12"),
        "d13": Path("/bases/debian13"),
        "u24": Path("/bases/ubuntu24.04"),
    }
    assert result["reinstalled"] == []


def test_up_reinstalls_a_host_whose_disk_holds_another_system(fake_lab, tmp_path):
    # No "system": a host of a lab before lab_os ("debian": its Debian release; neither: Debian 12).
    for name, recorded in (("d12", {}), ("d13", {"debian": "12"}), ("u24", {"system": "ubuntu24.04"})):
        directory = tmp_path / "state" / "hosts" / name
        (directory / "upper").mkdir(parents=True)
        (directory / "host.json").write_text(json.dumps({"name": name, "profile": "nogpu", "port": 1, **recorded}))
    result = lab.up(log=lambda *_: None)
    assert result["reinstalled"] == ["d13 (debian12 -> debian13)"]
    assert not (tmp_path / "state" / "hosts" / "d13" / "upper").exists()
    assert (tmp_path / "state" / "hosts" / "d12" / "upper").exists()
    assert {host.spec.name: host.spec.system for host in lab.existing_hosts()} == {
        "d12": "debian12",
        "u24": "ubuntu24.04",
    }


@pytest.mark.parametrize(
    ("hosts_yml", "says"),
    [(None, "no such file"), ("all: [unclosed", "not valid YAML"), ("- a list", "must be a mapping")],
)
def test_a_missing_or_broken_lab_inventory_is_named_with_what_to_do_not_a_traceback(
    tmp_path, monkeypatch, capsys, hosts_yml, says
):
    from rocm_fleet import cli

    if hosts_yml is not None:
        (tmp_path / "hosts.yml").write_text(hosts_yml)
    with pytest.raises(inventory.InventoryError, match=says):
        inventory.committed_hosts(tmp_path)
    monkeypatch.setenv("ROCM_FLEET_LAB_INVENTORY", str(tmp_path))
    monkeypatch.setattr("rocm_fleet.lab.cli._require_root", lambda: None)
    monkeypatch.setattr("rocm_fleet.lab.cli._require_lab_keys", lambda: None)
    assert cli.main(["lab", "up"]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"rocm-fleet lab: {tmp_path / 'hosts.yml'}: ") and says in error


def test_up_gives_every_host_it_started_its_share_of_the_wait_for_ssh(fake_lab, monkeypatch):
    """Hosts boot side by side on the controller's cores: 32 started need longer than 2 (a 32-host lab came up
    with its last hosts "NOT REACHABLE" under one fixed deadline)."""
    deadlines = []
    monkeypatch.setattr(LabHost, "wait_ready", lambda self, deadline: deadlines.append(deadline) or True)
    before = lab.time.monotonic()
    lab.up(log=lambda *_: None)
    waited = deadlines[0] - before
    assert lab.ready_timeout(2) <= waited < lab.ready_timeout(2) + 5
    assert lab.ready_timeout(32) - lab.ready_timeout(2) == 30 * lab.READY_SECONDS_PER_STARTED_HOST


def test_each_system_names_the_distribution_ansible_core_reports():
    # ansible-core's distribution collector: RedHat from /etc/redhat-release, the os-release ID otherwise.
    assert {key: system.ansible_distribution for key, system in systems.SYSTEMS.items()} == {
        "debian12": "Debian",
        "debian13": "Debian",
        "ubuntu22.04": "Ubuntu",
        "ubuntu24.04": "Ubuntu",
        "rocky9.6": "Rocky",
        "rhel10.0": "RedHat",
        "sles15.7": "SLES",  # the os-release NAME on SUSE (distribution.py reads /etc/os-release)
    }
