"""The preflight filters as playbooks use them: FQCN lookup, docs, errors, inventory extension."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter import rocm_fleet

REPO = Path(__file__).resolve().parents[4]
FILTER_DIR = REPO / "plugins" / "filter"
FILTERS = rocm_fleet.FilterModule().filters()
GIB = 1024**3


def registered_filters():
    """Every filter name that plugins/filter/*.py register, once per registration."""
    names = []
    for path in sorted(FILTER_DIR.glob("*.py")):
        module = importlib.import_module("ansible_collections.rocm_fleet.core.plugins.filter." + path.stem)
        names.extend(module.FilterModule().filters())
    return names


def gpu_fact(*specs):
    devices = [
        {"index": i, "device_id": did, "gfx_target": gfx, "vram_bytes": gib * GIB, "kfd_node": i + 1}
        for i, (did, gfx, gib) in enumerate(specs)
    ]
    return {"count": len(devices), "devices": devices}


def test_the_preflight_filters_are_the_decision_and_the_package_names():
    assert set(FILTERS) == {"preflight_decide"}


def test_every_filter_has_its_doc_file_and_every_doc_file_its_filter():
    assert sorted(registered_filters()) == sorted(path.stem for path in FILTER_DIR.glob("*.yml"))


@pytest.mark.parametrize("name", sorted(registered_filters()))
def test_every_doc_file_is_complete(name):
    doc = yaml.safe_load((FILTER_DIR / ("%s.yml" % name)).read_text())
    assert doc["DOCUMENTATION"]["name"] == name
    assert doc["EXAMPLES"].strip() and doc["RETURN"]["_value"]["description"]


DECISION_INPUTS = {
    "host": "gpu-01", "rocm_version": "6.4.1", "accept_unsupported": [], "expected_class": None,
    "expected_gpu_count": None, "expected_package_count": None, "workload": "general",
    "min_vram_gib_per_gpu": {"general": 0}, "reboot_allowed": False, "gpu_catalog_extra": {},
    "support_matrix_extra": {}, "amdgpu_driver": "", "amdgpu_drivers_extra": {},
}
DEBIAN_FACTS = {"distribution": "Debian", "distribution_version": "12", "kernel": "6.1.0-28-amd64", "processor": []}


def test_preflight_decide_reads_the_builtin_data_and_the_extras():
    facts = dict(DEBIAN_FACTS, gpu=gpu_fact(("0x74a1", "gfx942", 192), ("0x74a1", "gfx942", 192)))
    outcome = FILTERS["preflight_decide"](facts, DECISION_INPUTS)
    assert outcome["proceed"] and outcome["decision"]["classes"] == ["mi300x"]
    renamed = dict(DECISION_INPUTS, gpu_catalog_extra={"mi300x": {"product": "Site MI300X"}})
    assert FILTERS["preflight_decide"](facts, renamed)["gpus"] == "2 x Site MI300X (gfx942)"
    assert outcome["decision"]["amdgpu_driver"]["line"] == "6.4.1"
    corrected = dict(DECISION_INPUTS, amdgpu_drivers_extra={"6.4.1": {"kernel_module": "6.12.13"}})
    assert FILTERS["preflight_decide"](facts, corrected)["problems"] == [
        "the amdgpu driver lines (built-in, combined with preflight_amdgpu_drivers_extra) are not usable: amdgpu "
        "driver line 6.4.1: amdgpu_dkms.deb 1:6.12.12.60401 does not carry the module version 6.12.13; amdgpu driver "
        "line 6.4.1: amdgpu_dkms.rpm 1:6.12.12 does not carry the module version 6.12.13"]


@pytest.mark.parametrize(
    ("facts", "inputs", "message"),
    [
        ([], DECISION_INPUTS, "preflight_decide expects ansible_facts as a mapping, got list"),
        (DEBIAN_FACTS, "inputs", "expects preflight_decision_inputs as a mapping"),
        (DEBIAN_FACTS, {"host": "h"}, "preflight_decide: the decision inputs lack rocm_version"),
        (DEBIAN_FACTS, dict(DECISION_INPUTS, gpu_catalog_extra=["mi300x"]),
         "preflight_decide: preflight_gpu_catalog_extra must be a mapping, got list"),
        # A class whose match is not a mapping breaks the data checks themselves.
        (DEBIAN_FACTS, dict(DECISION_INPUTS, gpu_catalog_extra={"mi999": {"match": ["0x1"]}}), "preflight_decide: "),
        # A gpu fact whose devices are not a list of mappings.
        (dict(DEBIAN_FACTS, gpu={"devices": "x"}), DECISION_INPUTS, "preflight_decide: "),
        (dict(DEBIAN_FACTS, gpu=["0x74a1"]), DECISION_INPUTS, "preflight_decide: "),
    ],
)
def test_preflight_decide_fails_with_a_filter_error(facts, inputs, message):
    with pytest.raises(AnsibleFilterError, match=message):
        FILTERS["preflight_decide"](facts, inputs)


PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  vars_files:
    - @REPO@/roles/packages/vars/main.yml
  vars:
    facts:
      distribution: Debian
      distribution_version: "12"
      kernel: 6.18.44
      processor: []
      gpu: @GPU@
    inputs: @INPUTS@
    outcome: "{{ facts | rocm_fleet.core.preflight_decide(inputs) }}"
  tasks:
    - ansible.builtin.copy:
        dest: @OUT@
        content: "{{ {'problems': outcome.problems, 'proceed': outcome.proceed,
                       'classes': outcome.decision.classes,
                       'accepted': outcome.decision.accepted | map(attribute='what') | list,
                       'env': outcome.decision.hsa_overrides, 'arch': outcome.decision.pytorch_rocm_arch,
                       'packages': ([outcome.decision.rocm_version] | rocm_fleet.core.rocm_stream_plan(
                         outcome.decision.rocm_version, facts, 'apt', ['base'])).packages[outcome.decision.rocm_version]
                         + ['htop']}
                     | to_json }}"
"""
RADEON_780M = {
    "product": "AMD Radeon 780M", "match": {"device_ids": ["0x1900"]}, "gfx_target": "gfx1103", "arch": "RDNA3",
    "segment": "consumer", "family": "radeon", "vram_gib": None, "devices_per_package": 1, "rocm_listed": False,
    "hsa_override": [{"value": "11.0.0"}], "tuning": {}, "source": "site test bench",
}


@pytest.mark.slow
def test_a_playbook_decides_with_an_inventory_class_and_names_the_packages(tmp_path):
    out = tmp_path / "result.json"
    fact = gpu_fact(("0x1900", "gfx1103", 2), ("0x744c", "gfx1100", 24))
    inputs = dict(DECISION_INPUTS, rocm_version="6.4", gpu_catalog_extra={"radeon780m": RADEON_780M},
                  accept_unsupported=[{"what": "kernel", "reason": "lab"}, {"what": "os", "reason": "lab"},
                                      {"what": "gpu", "reason": "lab"}])
    playbook = (PLAYBOOK.replace("@REPO@", str(REPO)).replace("@GPU@", json.dumps(fact))
                .replace("@INPUTS@", json.dumps(inputs)).replace("@OUT@", str(out)))
    (tmp_path / "play.yml").write_text(playbook)
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    run = subprocess.run(
        [
            str(Path(sys.executable).with_name("ansible-playbook")),
            "-i",
            "localhost,",
            str(tmp_path / "play.yml"),
            "-e",
            "ansible_python_interpreter=%s" % sys.executable,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(out.read_text())
    assert result["problems"] == []
    assert result["classes"] == ["radeon780m", "rx7900xtx"]
    assert result["proceed"] and sorted(result["accepted"]) == ["gpu", "kernel", "os"]
    # Mixed GPUs: only the 780M (KFD node 1) is overridden, and counts as its override target.
    assert result["env"] == {"HSA_OVERRIDE_GFX_VERSION_1": "11.0.0"}
    assert result["arch"] == "gfx1100"
    assert result["packages"] == ["rocm-core6.4.0", "rocm-language-runtime6.4.0", "rocminfo6.4.0",
                                  "rocm-smi-lib6.4.0", "htop"]
