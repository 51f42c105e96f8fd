"""The pull role's archive: the same inputs give the same bytes and digest, the modes are the install's, and a bad
input says which hosts and what to do."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.pull import archive


def wheel(directory: Path, name: str, content: str = "") -> Path:
    path = directory / name
    with zipfile.ZipFile(path, "w") as wheel_file:
        wheel_file.writestr(name.split("-")[0] + "/__init__.py", content)
    return path


@pytest.fixture
def wheels(tmp_path) -> Path:
    """A wheelhouse's directory for one Python: pip's wheel and another, and a file that is no wheel."""
    directory = tmp_path / "wheelhouse" / "3.11"
    directory.mkdir(parents=True)
    wheel(directory, "pip-25.1-py3-none-any.whl")
    wheel(directory, "ansible_core-2.19.4-py3-none-any.whl", "version = '2.19.4'\n")
    (directory / "SHA256SUMS").write_text("not a wheel\n")
    return directory


@pytest.fixture
def inventory(tmp_path) -> Path:
    """A site inventory directory: hosts, group_vars with a secret, and an empty directory."""
    directory = tmp_path / "site"
    (directory / "group_vars").mkdir(parents=True)
    (directory / "hosts.yml").write_text("gpu_servers: {hosts: {gpu-01: {}}}\n")
    (directory / "group_vars" / "all.yml").write_text("vault_password: hunter2\n")
    (directory / "host_vars").mkdir()
    return directory


def built(tmp_path: Path, wheels: Path, inventory: Path | str, name: str = "out") -> dict:
    out = tmp_path / name
    out.mkdir(exist_ok=True)
    return archive.build_archive(str(wheels), str(inventory), "3.11", str(out))


def read_members(path: str) -> list[tarfile.TarInfo]:
    with tarfile.open(path, "r:gz") as tar:
        return tar.getmembers()


def test_the_same_inputs_give_the_same_bytes_and_the_digest_names_them(tmp_path, wheels, inventory):
    first = built(tmp_path, wheels, inventory, "first")
    # Other mtimes, other source modes, the files written again: nothing of that reaches the archive.
    for path in [*wheels.iterdir(), *inventory.rglob("*")]:
        os.utime(path, (1_000_000, 1_000_000))
    (inventory / "hosts.yml").chmod(0o644)
    (inventory / "hosts.yml").write_text((inventory / "hosts.yml").read_text())
    second = built(tmp_path, wheels, inventory, "second")
    data = Path(first["path"]).read_bytes()
    assert data == Path(second["path"]).read_bytes()
    assert first["digest"] == second["digest"] == hashlib.sha256(data).hexdigest()
    assert Path(first["path"]).name == first["name"] == "rocm-fleet-pull-%s.tar.gz" % first["digest"]
    # Check mode computes the same digest and writes nothing.
    assert archive.build_archive(str(wheels), str(inventory), "3.11")["digest"] == first["digest"]


def test_gzip_carries_no_name_and_no_time(tmp_path, wheels, inventory):
    data = Path(built(tmp_path, wheels, inventory)["path"]).read_bytes()
    flags, mtime = data[3], int.from_bytes(data[4:8], "little")
    assert (flags & 0x08, mtime) == (0, 0)  # FNAME unset, MTIME 0
    assert gzip.decompress(data)[:9] == b"inventory"  # the first member's name, with no header before it


def test_members_are_sorted_root_owned_and_root_only_where_the_inventory_is(tmp_path, wheels, inventory):
    result = built(tmp_path, wheels, inventory)
    members = read_members(result["path"])
    assert [(member.name, member.type, oct(member.mode)) for member in members] == [
        ("inventory", tarfile.DIRTYPE, "0o700"),
        ("inventory/group_vars", tarfile.DIRTYPE, "0o700"),
        ("inventory/group_vars/all.yml", tarfile.REGTYPE, "0o600"),
        ("inventory/host_vars", tarfile.DIRTYPE, "0o700"),
        ("inventory/hosts.yml", tarfile.REGTYPE, "0o600"),
        ("wheels", tarfile.DIRTYPE, "0o755"),
        ("wheels/ansible_core-2.19.4-py3-none-any.whl", tarfile.REGTYPE, "0o644"),
        ("wheels/pip-25.1-py3-none-any.whl", tarfile.REGTYPE, "0o644"),
    ]
    assert {(member.uid, member.gid, member.uname, member.gname, member.mtime) for member in members} == {
        (0, 0, "root", "root", 0)}
    assert result["wheels"] == ["ansible_core-2.19.4-py3-none-any.whl", "pip-25.1-py3-none-any.whl"]
    assert result["inventory"] == "directory" and result["python"] == "3.11"
    with tarfile.open(result["path"], "r:gz") as tar:
        assert tar.extractfile("inventory/group_vars/all.yml").read() == b"vault_password: hunter2\n"


def test_the_archive_is_written_root_only_and_nothing_else_is_left(tmp_path, wheels, inventory):
    result = built(tmp_path, wheels, inventory)
    assert stat.S_IMODE(os.stat(result["path"]).st_mode) == 0o600
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [result["name"]]


def test_a_failed_write_leaves_no_partial_file(tmp_path, wheels, inventory, monkeypatch):
    def broken(members, out):
        out.write(b"half")
        raise OSError("No space left on device")

    monkeypatch.setattr(archive, "write_archive", broken)
    with pytest.raises(OSError, match="No space left"):
        built(tmp_path, wheels, inventory)
    assert list((tmp_path / "out").iterdir()) == []


def test_an_inventory_file_is_one_root_only_member(tmp_path, wheels):
    source = tmp_path / "hosts.ini"
    source.write_text("[gpu_servers]\ngpu-01\n")
    result = built(tmp_path, wheels, source)
    assert result["inventory"] == "file"
    inventory = [member for member in read_members(result["path"]) if member.name.startswith("inventory")]
    assert [(member.name, member.isfile(), oct(member.mode)) for member in inventory] == [
        ("inventory", True, "0o600")]


def test_without_an_inventory_only_the_wheels(tmp_path, wheels):
    result = built(tmp_path, wheels, "")
    assert result["inventory"] == ""
    assert next(member.name for member in read_members(result["path"])) == "wheels"
    assert not any(member.name.startswith("inventory") for member in read_members(result["path"]))


def test_links_in_the_inventory_are_followed(tmp_path, wheels, inventory):
    shared = tmp_path / "shared.yml"
    shared.write_text("ntp: pool\n")
    (inventory / "group_vars" / "gpu_servers.yml").symlink_to(shared)
    (inventory / "more").symlink_to(inventory / "group_vars")
    names = {member.name: member for member in read_members(built(tmp_path, wheels, inventory)["path"])}
    assert names["inventory/group_vars/gpu_servers.yml"].isfile()
    assert names["inventory/more"].isdir() and names["inventory/more/all.yml"].isfile()


@pytest.mark.parametrize("change", ["a wheel", "an inventory file", "an inventory file added", "a wheel renamed",
                                    "the inventory as a file"])
def test_one_changed_input_changes_the_digest(tmp_path, wheels, inventory, change):
    before = archive.build_archive(str(wheels), str(inventory), "3.11")["digest"]
    source = inventory
    if change == "a wheel":
        wheel(wheels, "ansible_core-2.19.4-py3-none-any.whl", "version = '2.19.4+local'\n")
    elif change == "an inventory file":
        (inventory / "group_vars" / "all.yml").write_text("vault_password: hunter3\n")
    elif change == "an inventory file added":
        (inventory / "host_vars" / "gpu-01.yml").write_text("{}\n")
    elif change == "a wheel renamed":
        (wheels / "ansible_core-2.19.4-py3-none-any.whl").rename(wheels / "ansible_core-2.19.5-py3-none-any.whl")
    else:
        source = inventory / "hosts.yml"
    assert archive.build_archive(str(wheels), str(source), "3.11")["digest"] != before


def test_hosts_with_the_same_inputs_share_one_build(tmp_path, wheels, inventory):
    other = tmp_path / "wheelhouse" / "3.13"
    shutil.copytree(wheels, other)
    wheel(other, "ansible_core-2.19.4-py3-none-any.whl", "built for 3.13\n")
    out = tmp_path / "out"
    out.mkdir()
    hosts = [{"host": "gpu-01", "python": "3.11", "wheels": str(wheels), "inventory": str(inventory)},
             {"host": "gpu-02", "python": "3.13", "wheels": str(other), "inventory": str(inventory)},
             {"host": "gpu-03", "python": "3.11", "wheels": str(wheels), "inventory": str(inventory)}]
    archives = archive.build_for_hosts(hosts, str(out))
    assert archives["gpu-01"] == archives["gpu-03"] != archives["gpu-02"]
    assert sorted(path.name for path in out.iterdir()) == sorted({archives["gpu-01"]["name"],
                                                                  archives["gpu-02"]["name"]})


def test_a_missing_wheelhouse_directory_names_the_hosts_and_what_to_do(tmp_path, inventory):
    missing = tmp_path / "wheelhouse" / "3.13"
    hosts = [{"host": host, "python": "3.13", "wheels": str(missing), "inventory": str(inventory)}
             for host in ("gpu-02", "gpu-04")]
    with pytest.raises(archive.ArchiveError) as raised:
        archive.build_for_hosts(hosts)
    message = str(raised.value)
    assert message.startswith("hosts gpu-02, gpu-04 (Python 3.13): the wheelhouse has no directory %s" % missing)
    assert "download the wheels for Python 3.13 into it" in message and "pull_wheelhouse" in message
    assert "docs/pull-mode.md" in message


@pytest.mark.parametrize(("wheel_names", "words"), [
    ([], "holds no wheel (*.whl)"),
    (["ansible_core-2.19.4-py3-none-any.whl", "pipx-1.7-py3-none-any.whl"], "holds 2 wheels but none of pip"),
])
def test_a_wheelhouse_without_pip_says_what_it_needs(tmp_path, wheel_names, words):
    directory = tmp_path / "3.11"
    directory.mkdir()
    for name in wheel_names:
        wheel(directory, name)
    with pytest.raises(archive.ArchiveError, match=r"host gpu-01 \(Python 3\.11\): ") as raised:
        archive.build_for_hosts([{"host": "gpu-01", "python": "3.11", "wheels": str(directory)}])
    assert words in str(raised.value) and "pip's own wheel" in str(raised.value)


def test_bad_inventories_say_what_to_do(tmp_path, wheels, inventory):
    with pytest.raises(archive.ArchiveError, match="is neither a file nor a directory: set pull_inventory_source"):
        archive.build_archive(str(wheels), str(tmp_path / "no-such-inventory"), "3.11")
    (inventory / "host_vars" / "gpu-01.yml").symlink_to(tmp_path / "gone.yml")
    with pytest.raises(archive.ArchiveError, match=r"gpu-01\.yml is neither a file nor a directory \(a broken link"):
        archive.build_archive(str(wheels), str(inventory), "3.11")
    (inventory / "host_vars" / "gpu-01.yml").unlink()
    (inventory / "group_vars" / "loop").symlink_to(inventory)
    with pytest.raises(archive.ArchiveError, match=r"links back to .*, a loop"):
        archive.build_archive(str(wheels), str(inventory), "3.11")


def test_gnu_tar_unpacks_it_with_its_modes(tmp_path, wheels, inventory):
    if not shutil.which("tar"):
        pytest.fail("tar is missing")
    result = built(tmp_path, wheels, inventory)
    target = tmp_path / "unpacked"
    target.mkdir()
    # --no-same-permissions would apply the umask: unarchive runs tar as root, which keeps the archive's modes.
    subprocess.run(["tar", "--extract", "--same-permissions", "-z", "-f", result["path"], "-C", str(target)],
                   check=True, timeout=60)
    modes = {str(path.relative_to(target)): oct(stat.S_IMODE(path.stat().st_mode)) for path in target.rglob("*")}
    assert modes["inventory"] == modes["inventory/host_vars"] == "0o700"
    assert modes["inventory/group_vars/all.yml"] == "0o600" and modes["wheels/pip-25.1-py3-none-any.whl"] == "0o644"
    assert (target / "inventory" / "hosts.yml").read_bytes() == (inventory / "hosts.yml").read_bytes()
