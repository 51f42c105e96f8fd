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
from ansible_collections.rocm_fleet.core.plugins.module_utils import bytecode_cache

PACKAGE = "ansible_collections/rocm_fleet/core/plugins/module_utils"
PROBE = "ansible_collections.rocm_fleet.core.plugins.module_utils.probe"
RUN = """
import inspect, sys
sys.path.insert(0, sys.argv[1])
from ansible_collections.rocm_fleet.core.plugins.module_utils import bytecode_cache
print(bytecode_cache.install(sys.argv[2]))
from ansible_collections.rocm_fleet.core.plugins.module_utils import probe
print(probe.VALUE)
print(inspect.getsource(probe).strip())
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the cache is used only as root")


def payload(path: Path, value: int) -> Path:
    """A zip laid out as AnsiballZ lays out a module's payload, with a probe module of ``value``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        parts = PACKAGE.split("/")
        for depth in range(1, len(parts) + 1):
            archive.writestr("/".join(parts[:depth]) + "/__init__.py", "")
        archive.writestr(f"{PACKAGE}/bytecode_cache.py", Path(bytecode_cache.__file__).read_text())
        archive.writestr(f"{PACKAGE}/probe.py", f"VALUE = {value}\n")
    return path


def run(zip_path: Path, directory: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", RUN, str(zip_path), str(directory)], capture_output=True, text=True,
                          check=True, env={"PATH": os.environ.get("PATH", "")})
    return done.stdout.split("\n", 2)


def kept(directory: Path) -> Path:
    return directory / f"probe.{sys.implementation.cache_tag}.pyc"


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
    assert finder.find_spec(bytecode_cache.PREFIX + "x.y") is None
