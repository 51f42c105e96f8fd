"""The preflight role's static contract: typed variables, defaults and the names its checks know."""

import re
from pathlib import Path

import yaml

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
    known = set(load(ROLE / "vars" / "main.yml")["__preflight_role_vars"])
    for path in REPO.glob("roles/*/vars/*.yml"):
        names = {name for name in (load(path) or {}) if name.startswith(PREFIXES)}
        assert names <= known, "%s defines %s" % (path, sorted(names - known))


def test_the_decision_has_every_key_the_other_roles_read():
    assert load(ROLE / "tasks" / "record.yml")[0]["ansible.builtin.set_fact"] == {
        "preflight_decision": "{{ __preflight_decision }}"
    }
    record = load(ROLE / "vars" / "main.yml")["__preflight_decision"]
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
