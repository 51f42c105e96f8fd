"""The preflight role as a play runs it: ansible-playbook, local connection, rendered sysfs trees.

Each host of a generated inventory is one scenario (its lab profile plus the
inventory variables under test), so one playbook run covers many cases. The
hosts read the rendered /sys of their profile through preflight_gpu_facts_sysfs_root
and this machine's real OS and kernel facts.
"""

import json
import os
import platform
import subprocess
from pathlib import Path

import pytest
import yaml

from rocm_fleet.hardware.profile import available_profiles, load_profile
from rocm_fleet.hardware.render import render_profile
from rocm_fleet.lab.inventory import committed_hosts, generated_hosts, write_generated_inventory

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = """---
- name: Preflight
  hosts: all
  gather_facts: false
  roles:
    - role: rocm_fleet.core.preflight
  tasks:
    - name: Return the decision
      ansible.builtin.debug:
        var: preflight_decision
"""
# Accepts whatever kernel this machine runs, so the scenarios below do not depend on it.
ANY_KERNEL = {"what": "kernel", "reason": "tests run on the build machine's kernel"}
DEBIAN_12 = {"what": "os", "value": "debian 12", "reason": "site image is Debian 12"}
# The decision's own first check (bad values, catalog or matrix data) fails in this one task.
BAD_INVENTORY = "Fail on bad inventory values or GPU catalog and support matrix data"
ON_DEBIAN = pytest.mark.skipif(
    not Path("/etc/debian_version").exists(), reason="the scenarios assume a Debian 12 machine (the lab's OS)"
)


@pytest.fixture(scope="module")
def sysfs_roots(tmp_path_factory):
    base = tmp_path_factory.mktemp("sysfs")
    for name in available_profiles():
        render_profile(load_profile(name), base / name)
    return base


def run_preflight(workdir, sysfs_roots, hosts, inventory_dirs=()):
    """Run the role against ``hosts`` ({name: vars with lab_profile}); return {host: outcome}."""
    local = {
        "ansible_connection": "local",
        "ansible_become": False,
        "ansible_python_interpreter": str(REPO / ".venv" / "bin" / "python"),
        # rocm-smi and friends would read this machine, not the rendered tree.
        "preflight_gpu_facts_sources": ["sysfs"],
        "preflight_gpu_facts_sysfs_root": str(sysfs_roots) + "/{{ lab_profile }}",
    }
    (workdir / "extra.yml").write_text(yaml.safe_dump(local))
    (workdir / "play.yml").write_text(PLAYBOOK)
    inventories = [str(path) for path in inventory_dirs]
    if hosts:
        (workdir / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
        inventories.append(str(workdir / "hosts.yml"))
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
        ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
        ANSIBLE_NOCOLOR="1",
    )
    command = [str(REPO / ".venv" / "bin" / "ansible-playbook"), str(workdir / "play.yml")]
    for inventory in inventories:
        command += ["-i", inventory]
    completed = subprocess.run(
        command + ["-e", "@" + str(workdir / "extra.yml")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    try:
        report = json.loads(completed.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON:\n" + completed.stdout + completed.stderr) from None
    return outcomes(report)


def outcomes(report):
    """{host: {"failed_task", "msg", "decision"}} from the json callback's report."""
    found = {}
    for task in report["plays"][0]["tasks"]:
        name = task["task"]["name"].split(" : ", 1)[-1]  # drop the "rocm_fleet.core.preflight : " prefix
        for host, result in task["hosts"].items():
            outcome = found.setdefault(host, {"failed_task": None, "msg": None, "decision": None})
            if result.get("failed") and not result.get("skipped"):
                outcome["failed_task"] = name
                # A loop's failure carries each item's message in its results.
                items = [item.get("msg", "") for item in result.get("results") or [] if item.get("failed")]
                outcome["msg"] = "\n".join(items) or result.get("msg")
            elif name == "Return the decision":
                outcome["decision"] = result["preflight_decision"]
    return found


@ON_DEBIAN
def test_every_lab_host_passes_with_the_lab_inventory(tmp_path, sysfs_roots):
    # The committed hosts plus generated scale-test hosts, as `rocm-fleet lab up 4` writes them.
    scale = write_generated_inventory(generated_hosts(4), tmp_path / "scale.yml")
    results = run_preflight(tmp_path, sysfs_roots, {}, [REPO / "inventory" / "lab", scale])
    lab_hosts = yaml.safe_load((REPO / "inventory" / "lab" / "hosts.yml").read_text())
    assert {"mi300x-01", "scale-04"} <= set(results) and len(results) == len(committed_hosts()) + 4, results.keys()
    served = yaml.safe_load((REPO / "inventory" / "lab" / "group_vars" / "all" / "lab_mirror.yml").read_text())
    # The hosts read this machine's OS facts: only those of its own system (lab_os) are judged here.
    release = platform.freedesktop_os_release().get("VERSION_ID")
    other_release = {spec.name for spec in committed_hosts() if spec.system != f"debian{release}"}
    for host, outcome in results.items():
        if host in other_release:
            continue
        assert outcome["failed_task"] is None, "%s: %s: %s" % (host, outcome["failed_task"], outcome["msg"])
        assert outcome["decision"]["rocm_version"] in served["repo_available_rocm_versions"], host
        # The lab runs the build machine's kernel: a host whose driver line stops below it records its acceptance
        # with the reason (the legacy lines here; the 31.50 line of the Core SDK builds up to 7.1).
        assert ("kernel" in [item["what"] for item in outcome["decision"]["accepted"]]) == beyond_driver(
            outcome["decision"]), host
    mi300x = results["mi300x-01"]["decision"]
    assert mi300x["classes"] == ["mi300x"]
    # JSON turns the decision's integer device indexes into strings.
    assert mi300x["gpu_classes_by_index"] == dict.fromkeys(map(str, range(8)), "mi300x")
    assert "iommu=pt" in mi300x["tuning"]["boot_params"] and mi300x["tuning"]["sysctls"] == {"kernel.numa_balancing": 0}
    assert mi300x["reboot_allowed"] is True and mi300x["pytorch_rocm_arch"] == "gfx942"
    assert results["mi250x-01"]["decision"]["rocm_version"] == "6.3.3"
    rx6700xt = results["rx6700xt-01"]["decision"]
    assert rx6700xt["hsa_overrides"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert "gpu" in [item["what"] for item in rx6700xt["accepted"]]
    assert results["login-01"]["decision"]["classes"] == [] and results["login-01"]["decision"]["gpu_count"] == 0
    assert lab_hosts["all"]["children"]["service_nodes"]["hosts"]["login-01"]["lab_profile"] == "nogpu"


SCENARIOS = {
    "unknown-class": {"lab_profile": "mi300x-8", "preflight_expected_class": "mi300z"},
    "old-rocm": {"lab_profile": "mi300x-8", "preflight_rocm_version": "6.0.0"},
    # The legacy stream's 7.2.3 lists Debian 12 for Instinct GPUs only.
    "consumer-on-debian": {"lab_profile": "rx7900xtx-1", "preflight_expected_gpu_count": 1,
                           "preflight_rocm_version": "7.2.3"},
    "count-mismatch": {"lab_profile": "mi210-4-pcie", "preflight_expected_gpu_count": 8},
    "wrong-type": {"lab_profile": "mi210-4-pcie", "preflight_expected_gpu_count": "eight"},
    "misspelled": {"lab_profile": "mi210-4-pcie", "preflight_rocm_verison": "6.4.1"},
    "unquoted-version": {"lab_profile": "mi210-4-pcie", "preflight_rocm_version": 6.4},
    "bad-catalog": {"lab_profile": "mi210-4-pcie", "preflight_gpu_catalog_extra": {"mi999": {"product": "X"}}},
    "unknown-workload": {"lab_profile": "mi210-4-pcie", "preflight_workload": "llms"},
    "accepted": {
        "lab_profile": "rx7900xtx-1",
        "preflight_expected_class": "rx7900xtx",
        "preflight_expected_gpu_count": 1,
        "preflight_accept_unsupported": [DEBIAN_12],
        "preflight_rocm_version": "7.2.3",
    },
}


def beyond_driver(decision: dict) -> bool:
    """Whether this machine's kernel is newer than the newest the decided driver line builds for."""
    newest = ((decision.get("amdgpu_driver") or {}).get("kernel") or {}).get("max")
    if not newest:
        return False
    running = [int(part) for part in platform.release().split("-")[0].split(".")[:2]]
    return running > [int(part) for part in str(newest).split(".")[:2]]


@pytest.fixture(scope="module")
def scenario_results(tmp_path_factory, sysfs_roots):
    hosts = {}
    for name, variables in SCENARIOS.items():
        merged = dict(variables)
        merged["preflight_accept_unsupported"] = [ANY_KERNEL] + merged.get("preflight_accept_unsupported", [])
        hosts[name] = merged
    return run_preflight(tmp_path_factory.mktemp("scenarios"), sysfs_roots, hosts)


@ON_DEBIAN
def test_unknown_expected_class_names_host_variable_and_nearest_class(scenario_results):
    outcome = scenario_results["unknown-class"]
    assert outcome["failed_task"] == BAD_INVENTORY
    for word in ("unknown-class", "preflight_expected_class", "mi300z", "did you mean mi300x"):
        assert word in outcome["msg"]


@ON_DEBIAN
def test_unsupported_rocm_version_names_host_gpu_os_kernel_version_and_alternatives(scenario_results):
    message = scenario_results["old-rocm"]["msg"]
    assert scenario_results["old-rocm"]["failed_task"].startswith("Fail on an unsupported combination")
    for word in ("host old-rocm", "ROCm 6.0.0", "Debian 12", platform.release(), "8 x AMD Instinct MI300X"):
        assert word in message
    assert "nearest ROCm versions that would pass on this host: 6.3.1" in message


@ON_DEBIAN
def test_consumer_gpu_on_debian_fails_without_an_acceptance(scenario_results):
    message = scenario_results["consumer-on-debian"]["msg"]
    assert "host consumer-on-debian" in message and "Radeon RX 7900 XTX" in message
    assert "Debian 12" in message and "only for instinct" in message


@ON_DEBIAN
def test_gpu_count_mismatch_fails(scenario_results):
    message = scenario_results["count-mismatch"]["msg"]
    assert "host count-mismatch" in message and "inventory expects 8 GPU devices, the host has 4" in message


@ON_DEBIAN
def test_wrong_type_fails_argument_validation_naming_the_variable(scenario_results):
    outcome = scenario_results["wrong-type"]
    assert outcome["failed_task"].startswith("Validating arguments against arg spec 'main'")
    assert "preflight_expected_gpu_count" in outcome["msg"] and "int" in outcome["msg"]


@ON_DEBIAN
def test_misspelled_variable_fails_with_the_nearest_declared_name(scenario_results):
    outcome = scenario_results["misspelled"]
    assert outcome["failed_task"].startswith("Fail on role variables that no role declares")
    assert "host misspelled" in outcome["msg"] and "unknown variable preflight_rocm_verison" in outcome["msg"]
    assert "did you mean preflight_rocm_version?" in outcome["msg"]


@ON_DEBIAN
def test_unquoted_version_fails_asking_for_quotes(scenario_results):
    outcome = scenario_results["unquoted-version"]
    assert outcome["failed_task"] == BAD_INVENTORY
    assert "preflight_rocm_version must be quoted" in outcome["msg"]


@ON_DEBIAN
def test_bad_catalog_extension_fails_naming_the_class(scenario_results):
    outcome = scenario_results["bad-catalog"]
    assert outcome["failed_task"] == BAD_INVENTORY
    assert "preflight_gpu_catalog_extra" in outcome["msg"]
    assert "gpu catalog class mi999: has no source" in outcome["msg"]


@ON_DEBIAN
def test_unknown_workload_fails_naming_both_variables(scenario_results):
    message = scenario_results["unknown-workload"]["msg"]
    assert "preflight_workload is llms" in message and "preflight_min_vram_gib_per_gpu (general, llm)" in message


@ON_DEBIAN
def test_accepted_combination_proceeds_and_the_decision_lists_the_acceptance(scenario_results):
    outcome = scenario_results["accepted"]
    assert outcome["failed_task"] is None, outcome["msg"]
    decision = outcome["decision"]
    assert decision["supported"] is False
    accepted_os = [item for item in decision["accepted"] if item["what"] == "os"]
    assert accepted_os and accepted_os[0]["reason"] == DEBIAN_12["reason"]
    assert decision["classes"] == ["rx7900xtx"] and decision["gfx_targets"] == ["gfx1100"]
    assert decision["hsa_overrides"] == {} and decision["pytorch_rocm_arch"] == "gfx1100"
    assert set(decision["tuning"]) == {"boot_params", "sysctls", "modprobe_options"}
