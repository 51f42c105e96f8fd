"""bytecode_cache: a module_utils module imported from an AnsiballZ-like zip, in a fresh interpreter each time.

Each run is its own Python process, as each module run on a host is: the zip holds the collection's package
path and the real bytecode_cache.py, and the probe module is what the cache keeps.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.common import bytecode_cache

PACKAGE = "ansible_collections/rocm_fleet/core/plugins/module_utils"
# Two levels below module_utils, as the collection's own modules are: the cache must reach them.
PROBE_PACKAGE = "gpu/amd_smi"
RUN = """
import inspect, sys
sys.path.insert(0, sys.argv[1])
from ansible_collections.rocm_fleet.core.plugins.module_utils.common import bytecode_cache
print(bytecode_cache.install(sys.argv[2]))
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import probe
print(probe.VALUE)
print(inspect.getsource(probe).strip())
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the cache is used only as root")


def payload(path: Path, value: int) -> Path:
    """A zip laid out as AnsiballZ lays out a module's payload, with a probe module of ``value``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        parts = f"{PACKAGE}/{PROBE_PACKAGE}".split("/")
        for depth in range(1, len(parts) + 1):
            archive.writestr("/".join(parts[:depth]) + "/__init__.py", "")
        archive.writestr(f"{PACKAGE}/common/__init__.py", "")
        archive.writestr(f"{PACKAGE}/common/bytecode_cache.py", Path(bytecode_cache.__file__).read_text())
        archive.writestr(f"{PACKAGE}/{PROBE_PACKAGE}/probe.py", f"VALUE = {value}\n")
    return path


def run(zip_path: Path, directory: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", RUN, str(zip_path), str(directory)], capture_output=True, text=True,
                          check=True, env={"PATH": os.environ.get("PATH", "")})
    return done.stdout.split("\n", 2)


def kept(directory: Path) -> Path:
    return directory / f"{PROBE_PACKAGE.replace('/', '.')}.probe.{sys.implementation.cache_tag}.pyc"


def test_the_first_run_keeps_the_code_and_the_next_one_runs_what_was_kept(tmp_path):
    cache = tmp_path / "cache" / "bytecode"
    zip_path = payload(tmp_path / "payload.zip", 1)
    assert run(zip_path, cache)[:2] == ["True", "1"]
    assert oct(cache.stat().st_mode & 0o777) == "0o700" and oct(kept(cache).stat().st_mode & 0o777) == "0o600"
    # Same header, other code: the next run must take the kept code, not compile the source again.
    data = kept(cache).read_bytes()
    kept(cache).write_bytes(data[:bytecode_cache.DIGEST_BYTES] + marshal.dumps(compile("VALUE = 2\n", "x", "exec")))
    installed, value, source = run(zip_path, cache)
    assert (installed, value) == ("True", "2")
    assert source.strip() == "VALUE = 1"  # tracebacks and inspect read the zip's source


def test_a_changed_source_is_compiled_again_and_replaces_what_was_kept(tmp_path):
    cache = tmp_path / "bytecode"
    run(payload(tmp_path / "one.zip", 1), cache)
    before = kept(cache).read_bytes()
    assert run(payload(tmp_path / "three.zip", 3), cache)[:2] == ["True", "3"]
    assert kept(cache).read_bytes() != before
    assert run(payload(tmp_path / "one-again.zip", 1), cache)[:2] == ["True", "1"]


def test_a_kept_file_others_may_write_is_not_trusted(tmp_path):
    cache = tmp_path / "bytecode"
    zip_path = payload(tmp_path / "payload.zip", 1)
    run(zip_path, cache)
    data = kept(cache).read_bytes()
    kept(cache).write_bytes(data[:bytecode_cache.DIGEST_BYTES] + marshal.dumps(compile("VALUE = 2\n", "x", "exec")))
    kept(cache).chmod(0o666)
    assert run(zip_path, cache)[:2] == ["True", "1"]


def test_a_corrupt_kept_file_costs_a_compile_not_the_import(tmp_path):
    cache = tmp_path / "bytecode"
    zip_path = payload(tmp_path / "payload.zip", 1)
    run(zip_path, cache)
    kept(cache).write_bytes(kept(cache).read_bytes()[:bytecode_cache.DIGEST_BYTES] + b"\x00garbage")
    assert run(zip_path, cache)[:2] == ["True", "1"]


@pytest.mark.parametrize("mode", [0o770, 0o707])
def test_a_directory_others_may_write_is_not_used(tmp_path, mode):
    cache = tmp_path / "bytecode"
    cache.mkdir(mode=0o700)
    cache.chmod(mode)
    assert run(payload(tmp_path / "payload.zip", 1), cache)[:2] == ["False", "1"]
    assert not kept(cache).exists()


def test_a_parent_others_may_write_is_not_used(tmp_path):
    parent = tmp_path / "shared"
    parent.mkdir()
    parent.chmod(0o777)
    assert run(payload(tmp_path / "payload.zip", 1), parent / "bytecode")[:2] == ["False", "1"]
    assert not (parent / "bytecode").exists()


def test_a_symlinked_directory_is_not_used(tmp_path):
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "bytecode").symlink_to(tmp_path / "elsewhere")
    assert run(payload(tmp_path / "payload.zip", 1), tmp_path / "bytecode")[:2] == ["False", "1"]


def test_only_this_collections_module_utils_are_taken():
    finder = bytecode_cache.CachingFinder("/nonexistent", b"")
    assert finder.find_spec("json") is None
    assert finder.find_spec("ansible.module_utils.basic") is None
    assert finder.find_spec(bytecode_cache.PREFIX + "nonexistent.module") is None


def test_the_packages_above_a_module_are_kept_too(tmp_path):
    cache = tmp_path / "bytecode"
    run(payload(tmp_path / "payload.zip", 1), cache)
    tag = sys.implementation.cache_tag
    assert {path.name for path in cache.iterdir()} == {
        f"gpu.{tag}.pyc", f"gpu.amd_smi.{tag}.pyc", f"gpu.amd_smi.probe.{tag}.pyc"}


# In-process: the pieces the child interpreters above run, one by one.


def test_trusted_takes_only_the_owners_unwritable_files_and_directories(tmp_path):
    path = tmp_path / "kept"
    path.write_bytes(b"")
    path.chmod(0o600)
    uid = os.geteuid()
    assert bytecode_cache.trusted(path.stat(), uid)
    assert not bytecode_cache.trusted(path.stat(), uid + 1)
    path.chmod(0o620)
    assert not bytecode_cache.trusted(path.stat(), uid)
    link = tmp_path / "link"
    link.symlink_to(path)
    assert not bytecode_cache.trusted(link.lstat(), uid)


def test_keep_writes_whole_files_and_read_kept_checks_the_header(tmp_path):
    code = compile("VALUE = 7\n", "probe", "exec")
    expected = bytecode_cache.header(b"VALUE = 7\n", b"magic")
    path = tmp_path / "probe.pyc"
    bytecode_cache.keep(str(path), expected + marshal.dumps(code))
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert not list(tmp_path.glob("*.tmp"))
    namespace = {}
    exec(bytecode_cache.read_kept(str(path), expected), namespace)
    assert namespace["VALUE"] == 7
    assert bytecode_cache.read_kept(str(path), bytecode_cache.header(b"VALUE = 8\n", b"magic")) is None
    assert bytecode_cache.read_kept(str(tmp_path / "missing.pyc"), expected) is None


def test_keep_into_a_directory_it_cannot_write_leaves_nothing(tmp_path):
    bytecode_cache.keep(str(tmp_path / "missing" / "probe.pyc"), b"data")
    assert not (tmp_path / "missing").exists()


def test_usable_directory_makes_a_private_directory_and_refuses_a_shared_parent(tmp_path):
    made = bytecode_cache.usable_directory(str(tmp_path / "cache" / "bytecode"), os.geteuid())
    assert made == str(tmp_path / "cache" / "bytecode")
    assert oct((tmp_path / "cache" / "bytecode").stat().st_mode & 0o777) == "0o700"
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert bytecode_cache.usable_directory(str(shared / "bytecode"), os.geteuid()) is None


def test_install_puts_one_finder_first_and_only_once(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    assert bytecode_cache.install(str(tmp_path / "bytecode")) is True
    assert isinstance(sys.meta_path[0], bytecode_cache.CachingFinder)
    assert bytecode_cache.install(str(tmp_path / "bytecode")) is False
    assert sum(isinstance(finder, bytecode_cache.CachingFinder) for finder in sys.meta_path) == 1


def test_the_finder_wraps_a_module_of_this_collection_found_on_disk(tmp_path):
    from ansible_collections.rocm_fleet.core.plugins.module_utils import gpu

    finder = bytecode_cache.CachingFinder(str(tmp_path), b"magic")
    spec = finder.find_spec(bytecode_cache.PREFIX + "gpu.model", gpu.__path__)  # as the import system asks
    assert isinstance(spec.loader, bytecode_cache.CachingLoader)
    assert spec.loader.path(spec.name) == str(tmp_path / f"gpu.model.{sys.implementation.cache_tag}.pyc")
    code = spec.loader.code(spec)
    assert code.co_filename == spec.origin
    assert (tmp_path / f"gpu.model.{sys.implementation.cache_tag}.pyc").is_file()
    assert spec.loader.code(spec).co_filename == spec.origin  # the second time from the kept file
