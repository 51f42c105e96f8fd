"""The preflight filters as playbooks use them: FQCN lookup, docs, errors, inventory extension."""

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
VARS = REPO / "roles" / "preflight" / "vars"
CATALOG = yaml.safe_load((VARS / "gpu_catalog.yml").read_text())["preflight_gpu_catalog_builtin"]
MATRIX = yaml.safe_load((VARS / "support_matrix.yml").read_text())["preflight_support_matrix_builtin"]
FILTERS = rocm_fleet.FilterModule().filters()
GIB = 1024**3


def gpu_fact(*specs):
    devices = [
        {"index": i, "device_id": did, "gfx_target": gfx, "vram_bytes": gib * GIB, "kfd_node": i + 1}
        for i, (did, gfx, gib) in enumerate(specs)
    ]
    return {"count": len(devices), "devices": devices}


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_every_filter_has_its_doc_file(name):
    doc = yaml.safe_load((REPO / "plugins" / "filter" / ("%s.yml" % name)).read_text())
    assert doc["DOCUMENTATION"]["name"] == name
    assert doc["EXAMPLES"].strip() and doc["RETURN"]["_value"]["description"]


def test_filters_chain_on_plain_data():
    summary = FILTERS["gpu_classify"](gpu_fact(("0x744c", "gfx1100", 24), ("0x73df", "gfx1031", 12)), CATALOG)
    decision = FILTERS["rocm_support"](
        summary,
        MATRIX,
        "6.4.1",
        "Ubuntu",
        "24.04",
        "6.8.0-50-generic",
        acceptances=[{"what": "gpu", "value": "rx6700xt", "reason": "home lab"}],
    )
    assert decision["proceed"] and not decision["supported"]
    assert FILTERS["hsa_overrides"](summary, "6.4.1", MATRIX) == {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}
    assert FILTERS["pytorch_rocm_arch"](summary) == "gfx1031;gfx1100"
    assert "home lab" in FILTERS["preflight_report"](decision, "ws7")
    assert FILTERS["gpu_tuning"](summary)["boot_params"] == []


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("gpu_classify", ({"devices": "x"}, CATALOG), "device list"),
        ("gpu_classify", ({"devices": []}, None), "GPU catalog"),
        ("rocm_support", ({"devices": []}, MATRIX, "6.4", "Ubuntu", "24.04", "6.8"), "gpu_classify"),
        ("hsa_overrides", ({"devices": [], "classes": []}, "9.9", MATRIX), "not in the support matrix"),
        ("pytorch_rocm_arch", ({"devices": [], "classes": []}, "6.4"), "support matrix"),
        ("preflight_report", ({"problems": []}, "h"), "rocm_support"),
        ("rocm_data_problems", ([], MATRIX), "GPU catalog"),
    ],
)
def test_bad_input_fails_with_a_filter_error(name, args, message):
    with pytest.raises(AnsibleFilterError, match=message):
        FILTERS[name](*args)


def test_acceptances_must_be_a_list():
    summary = FILTERS["gpu_classify"](gpu_fact(("0x74a1", "gfx942", 192)), CATALOG)
    with pytest.raises(AnsibleFilterError, match="list"):
        FILTERS["rocm_support"](summary, MATRIX, "6.4.1", "Debian", "12", "6.1.0", acceptances={"what": "os"})


DECISION_INPUTS = {
    "host": "gpu-01", "rocm_version": "6.4.1", "accept_unsupported": [], "expected_class": None,
    "expected_gpu_count": None, "expected_package_count": None, "workload": "general",
    "min_vram_gib_per_gpu": {"general": 0}, "reboot_allowed": False, "gpu_catalog_extra": {},
    "support_matrix_extra": {},
}
DEBIAN_FACTS = {"distribution": "Debian", "distribution_version": "12", "kernel": "6.1.0-28-amd64", "processor": []}


def test_preflight_decide_reads_the_builtin_data_and_the_extras():
    facts = dict(DEBIAN_FACTS, gpu=gpu_fact(("0x74a1", "gfx942", 192), ("0x74a1", "gfx942", 192)))
    outcome = FILTERS["preflight_decide"](facts, DECISION_INPUTS)
    assert outcome["proceed"] and outcome["decision"]["classes"] == ["mi300x"]
    renamed = dict(DECISION_INPUTS, gpu_catalog_extra={"mi300x": {"product": "Site MI300X"}})
    assert FILTERS["preflight_decide"](facts, renamed)["gpus"] == "2 x Site MI300X (gfx942)"


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
    - @VARS@/gpu_catalog.yml
    - @VARS@/support_matrix.yml
  vars:
    preflight_gpu_catalog_extra:
      radeon780m:
        product: AMD Radeon 780M
        match: {device_ids: ["0x1900"]}
        gfx_target: gfx1103
        arch: RDNA3
        segment: consumer
        family: radeon
        vram_gib: null
        devices_per_package: 1
        rocm_listed: false
        hsa_override: [{value: "11.0.0"}]
        tuning: {}
        source: site test bench
    catalog: "{{ preflight_gpu_catalog_builtin | combine(preflight_gpu_catalog_extra, recursive=true) }}"
    gpu: @GPU@
    summary: "{{ gpu | rocm_fleet.core.gpu_classify(catalog) }}"
    decision: >-
      {{ summary | rocm_fleet.core.rocm_support(preflight_support_matrix_builtin, '6.4', 'Debian', '12', '6.18.44',
           acceptances=[{'what': 'kernel', 'reason': 'lab'}, {'what': 'os', 'reason': 'lab'},
                        {'what': 'gpu', 'reason': 'lab'}]) }}
  tasks:
    - ansible.builtin.copy:
        dest: @OUT@
        content: "{{ {'problems': catalog | rocm_fleet.core.rocm_data_problems(preflight_support_matrix_builtin),
                       'classes': summary.classes, 'proceed': decision.proceed,
                       'accepted': decision.accepted | map(attribute='what') | list,
                       'env': summary | rocm_fleet.core.hsa_overrides('6.4.0', preflight_support_matrix_builtin),
                       'arch': summary | rocm_fleet.core.pytorch_rocm_arch} | to_json }}"
"""


@pytest.mark.slow
def test_playbook_extends_the_catalog_from_inventory(tmp_path):
    out = tmp_path / "result.json"
    fact = json.dumps(gpu_fact(("0x1900", "gfx1103", 2), ("0x744c", "gfx1100", 24)))
    playbook = PLAYBOOK.replace("@VARS@", str(VARS)).replace("@GPU@", fact).replace("@OUT@", str(out))
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
    assert result["env"] == {"HSA_OVERRIDE_GFX_VERSION_1": "11.0.0"}
    assert result["arch"] == "gfx1100;gfx1103"


PACKAGES_VARS = yaml.safe_load((REPO / "roles" / "packages" / "vars" / "main.yml").read_text())
USECASE_SETS = PACKAGES_VARS["__packages_amd_usecase_sets"]


@pytest.mark.parametrize(
    ("release", "usecases", "expected"),
    [
        ("6.4.1", ["base", "hip"],
         ["rocm-core6.4.1", "rocm-language-runtime6.4.1", "rocminfo6.4.1", "rocm-smi-lib6.4.1",
          "rocm-hip-runtime6.4.1"]),
        # ROCm 7 replaces rocm-smi-lib with amd-smi-lib in the base set.
        ("7.0.2", ["base"], ["rocm-core7.0.2", "rocm-language-runtime7.0.2", "rocminfo7.0.2", "amd-smi-lib7.0.2"]),
    ],
)
def test_release_packages_pick_the_set_of_the_release(release, usecases, expected):
    assert FILTERS["rocm_release_packages"](USECASE_SETS, release, usecases) == expected


def test_release_packages_add_the_extra_names_once_and_unchanged():
    names = FILTERS["rocm_release_packages"](USECASE_SETS, "6.3.3", ["base", "base"], ["htop"])
    assert names[-1] == "htop" and names.count("rocm-core6.3.3") == 1


@pytest.mark.parametrize(
    ("release", "usecases", "message"),
    [("6.4.1", ["gaming"], "unknown use case(s) gaming for ROCm 6.4.1; known: base, dev, hip"),
     ("4.5.0", ["base"], "no use-case set applies to ROCm 4.5.0"),
     ("six", ["base"], "'six' is not an x.y.z ROCm release")],
)
def test_release_packages_name_the_bad_input(release, usecases, message):
    with pytest.raises(AnsibleFilterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FILTERS["rocm_release_packages"](USECASE_SETS, release, usecases)
