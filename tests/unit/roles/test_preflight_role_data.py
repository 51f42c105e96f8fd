"""The preflight role's static contract: typed variables, defaults and the names its checks know."""

import re
from pathlib import Path

import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.variables import role_results
from fleet_testing.roles import render

REPO = Path(__file__).resolve().parents[3]
ROLE = REPO / "roles" / "preflight"
PREFIXES = ("preflight_", "repo_", "packages_", "kernel_", "access_", "environment_")


def load(path):
    return yaml.safe_load(path.read_text())


def test_every_default_is_declared_and_typed():
    options = load(ROLE / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
    defaults = load(ROLE / "defaults" / "main.yml")
    assert set(defaults) == set(options)
    for name, spec in options.items():
        assert spec.get("type"), name
        assert spec.get("description"), name


def test_argument_spec_defaults_match_the_role_defaults():
    options = load(ROLE / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
    defaults = load(ROLE / "defaults" / "main.yml")
    for name, spec in options.items():
        if "default" in spec:
            assert spec["default"] == defaults[name], name


def test_role_prefixed_data_in_vars_files_is_known_to_the_misspelling_check():
    known = set(role_results())
    for path in REPO.glob("roles/*/vars/*.yml"):
        names = {name for name in (load(path) or {}) if name.startswith(PREFIXES)}
        assert names <= known, "%s defines %s" % (path, sorted(names - known))


# A host as the decision sees it: two MI300X on Debian 12.
MI300X_FACTS = {
    "distribution": "Debian", "distribution_version": "12.7", "kernel": "6.1.0-28-amd64", "processor": [],
    "gpu": {"count": 2, "devices": [{"index": i, "device_id": "0x74a1", "gfx_target": "gfx942",
                                     "vram_bytes": 192 << 30, "kfd_node": i + 2} for i in range(2)]},
}


def decide_as_the_role_does(**variables):
    """decide.yml's set_fact over vars/main.yml's preflight_decision_inputs and the role defaults."""
    values = dict(load(ROLE / "defaults" / "main.yml"), inventory_hostname="gpu-01", ansible_facts=MI300X_FACTS)
    values.update(load(ROLE / "vars" / "main.yml"), **variables)
    outcome = load(ROLE / "tasks" / "decide.yml")[0]["ansible.builtin.set_fact"]["__preflight_outcome"]
    return render(outcome, **values)


def test_the_tasks_read_one_outcome():
    assert load(ROLE / "tasks" / "decide.yml")[0]["ansible.builtin.set_fact"] == {
        "__preflight_outcome": "{{ ansible_facts | rocm_fleet.core.preflight_decide(preflight_decision_inputs) }}"
    }
    assert load(ROLE / "tasks" / "record.yml")[0]["ansible.builtin.set_fact"] == {
        "preflight_decision": "{{ __preflight_outcome.decision }}"
    }
    assert set(load(ROLE / "vars" / "main.yml")) == {"preflight_decision_inputs", "__preflight_gpu_facts_read"}


def test_the_role_variables_reach_the_decision_with_their_types():
    outcome = decide_as_the_role_does(preflight_expected_class=["mi300x"], preflight_reboot_allowed=True)
    assert outcome["proceed"] and outcome["report"].startswith("host gpu-01: ROCm 10.1.0")
    assert outcome["decision"]["expected_classes"] == ["mi300x"] and outcome["decision"]["reboot_allowed"] is True
    # An unquoted version reaches the check as the number YAML made of it.
    assert decide_as_the_role_does(preflight_rocm_version=6.4)["problems"] == [
        'preflight_rocm_version must be quoted ("6.4.1"), got the number 6.4'
    ]


def test_the_decision_has_every_key_the_other_roles_read():
    record = decide_as_the_role_does()["decision"]
    promised = {"rocm_version", "classes", "gpu_classes_by_index", "tuning", "hsa_overrides", "pytorch_rocm_arch",
                "reboot_allowed", "accepted"}
    assert promised <= set(record)
    assert set(record["tuning"]) == {"boot_params", "sysctls", "modprobe_options"}
    read = set()
    for path in REPO.glob("roles/*/*/*.yml"):
        read.update(re.findall(r"preflight_decision\.([a-z_]+)(?:\.([a-z_]+))?", path.read_text()))
    for key, subkey in read:
        assert key in record, key
        assert not subkey or subkey in record[key], "%s.%s" % (key, subkey)
