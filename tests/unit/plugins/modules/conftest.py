"""Run the collection's modules through their real entry point, main()."""

import json

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.rocm_fleet.core.plugins.modules import gpu_facts, node_compliance


@pytest.fixture
def run_module(capsys, monkeypatch):
    """run(module, path_dirs, **params) -> the module's JSON result plus its exit code as ``rc``.

    PATH holds only ``path_dirs`` and the module's /opt/rocm/bin fallback is off, so
    the machine's own GPU tools never leak into a test.
    """

    def run(module, path_dirs=(), **params):
        monkeypatch.setenv("PATH", ":".join([*map(str, path_dirs), "/nonexistent"]))
        monkeypatch.setattr(module, "ROCM_BIN_DIRS", [])
        with patch_module_args(params), pytest.raises(SystemExit) as exit_info:
            module.main()
        result = json.loads(capsys.readouterr().out)
        result["rc"] = exit_info.value.code
        return result

    return run


@pytest.fixture
def run_gpu_facts(run_module, tmp_path):
    def run(path_dirs=(), **params):
        params.setdefault("sysfs_root", str(tmp_path / "empty-root"))
        return run_module(gpu_facts, path_dirs, **params)

    return run


@pytest.fixture
def run_node_compliance(run_module):
    def run(**params):
        params.setdefault("gpu_sources", ["sysfs"])
        return run_module(node_compliance, **params)

    return run
