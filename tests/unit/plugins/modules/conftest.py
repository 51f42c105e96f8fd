"""Run rocm_fleet.core.gpu_facts through its real entry point, main()."""

import json

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.rocm_fleet.core.plugins.modules import gpu_facts


@pytest.fixture
def run_gpu_facts(capsys, monkeypatch, tmp_path):
    def run(path_dirs=(), **params):
        params.setdefault("sysfs_root", str(tmp_path / "empty-root"))
        monkeypatch.setenv("PATH", ":".join([*map(str, path_dirs), "/nonexistent"]))
        monkeypatch.setattr(gpu_facts, "ROCM_BIN_DIRS", [])
        with patch_module_args(params), pytest.raises(SystemExit) as exit_info:
            gpu_facts.main()
        result = json.loads(capsys.readouterr().out)
        result["rc"] = exit_info.value.code
        return result

    return run
