"""host_compliance: its constants equal to what the roles and its documentation say, and the steps of its run.

The action's whole evaluation (the roles' variables as a play gives them, the
decision, the managed objects, skip_checks) runs in
tests/integration/test_host_compliance_localhost.py; here the declared state
is a stand-in, and node_compliance a stand-in that records its arguments.
"""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from ansible.errors import AnsibleActionFail, AnsibleConnectionFailure
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.rocm_fleet.core.plugins.action import host_compliance
from ansible_collections.rocm_fleet.core.plugins.doc_fragments.gpu_tools import ModuleDocFragment
from ansible_collections.rocm_fleet.core.plugins.filter.managed import role_os_vars_files
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.facts import HOST_FACTS
from ansible_collections.rocm_fleet.core.plugins.modules import host_compliance as host_compliance_doc
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.gpu_class import evaluate_gpu

REPO = Path(__file__).resolve().parents[4]
ROLES = REPO / "roles"
HOST = {"inventory_hostname": "gpu-01"}
GPU = {"count": 2, "devices": [{"product": "AMD Radeon PRO W7900", "gfx_target": "gfx1100", "numa_node": 0}] * 2,
       "topology": None, "driver": {"loaded": True, "version": "6.12.12"}, "sources": {"sysfs": "ok"}}
CACHED = {"gpu": GPU, "os_family": "Debian", "distribution": "Ubuntu", "kernel": "6.8.0-40-generic"}
ITEM_RESULT = {"id": "ROCM-ENV-001", "title": "profile", "kind": "file", "role": "rocm_fleet.core.environment",
               "label": "environment: /etc/profile.d/rocm.sh", "repair": None, "severity": None, "status": "pass",
               "expected": {}, "actual": {}, "message": "as expected", "diff": "", "action": ""}


def load(relative: str):
    return yaml.safe_load((ROLES / relative).read_text())


def test_the_facts_compared_are_the_gathered_ones_under_either_name():
    module_facts = {"ansible_os_family": "Debian", "ansible_kernel": "6.8", "gpu": {"count": 1}, "ansible_fqdn": "x"}
    play_facts = {"os_family": "Debian", "kernel": "6.8", "gpu": {"count": 1}, "fqdn": "x"}
    assert host_compliance._decision_inputs(module_facts) == host_compliance._decision_inputs(play_facts) == {
        "os_family": "Debian", "kernel": "6.8", "gpu": {"count": 1}
    }
    assert host_compliance._decision_inputs(None) == {}


def test_the_decision_facts_are_what_node_compliance_reads_again():
    assert host_compliance.DECISION_FACTS == ("gpu",) + HOST_FACTS


def test_newer_facts_replace_the_cached_ones_under_both_names():
    task_vars = dict(HOST, ansible_facts=dict(CACHED, fqdn="gpu-01"), ansible_distribution="Ubuntu",
                     ansible_os_family="Debian", site_value="x")
    now = dict(CACHED, distribution="RedHat", os_family="RedHat")
    variables = host_compliance._with_facts(task_vars, now, injected=CACHED)
    assert variables["ansible_facts"] == dict(now, fqdn="gpu-01")
    assert variables["ansible_distribution"] == variables["ansible_os_family"] == "RedHat"
    assert "ansible_kernel" not in variables and variables["site_value"] == "x"  # only what the play injected
    assert task_vars["ansible_distribution"] == "Ubuntu"  # the play's own variables stay as they were
    assert host_compliance._with_facts(task_vars, now)["ansible_distribution"] == "Ubuntu"


def test_the_roles_evaluated_are_the_roles_that_manage_objects():
    managing = sorted(path.parent.parent.name for path in ROLES.glob("*/vars/main.yml")
                      if f"__{path.parent.parent.name}_objects" in load(f"{path.parent.parent.name}/vars/main.yml"))
    assert managing == sorted(host_compliance.ROLES)
    assert host_compliance.ARGUMENT_SPEC["roles"]["default"] == host_compliance.ROLES
    for role in host_compliance.ROLES:
        assert load(f"{role}/vars/main.yml")[f"__{role}_objects"] == (
            f"{{{{ __{role}_managed | rocm_fleet.core.managed_objects('{role}') }}}}"
        ), role


def test_the_compliance_role_imports_preflight_and_every_evaluated_role_as_a_play_would():
    imports = [task["ansible.builtin.import_role"] for task in load("compliance/tasks/role_vars.yml")]
    assert imports == [{"name": f"rocm_fleet.core.{role}", "tasks_from": "vars"}
                       for role in ["preflight"] + host_compliance.ROLES]
    evaluate = next(task for task in load("compliance/tasks/evaluate.yml") if "rocm_fleet.core.host_compliance" in task)
    assert set(evaluate["rocm_fleet.core.host_compliance"]) <= set(host_compliance.ARGUMENT_SPEC)
    assert load("compliance/vars/main.yml")["__compliance_roles"] == host_compliance.ROLES
    # The GPU class checks' inputs the action reads are gpu_expectations' own arguments.
    inputs = load("compliance/vars/main.yml")[host_compliance.GPU_INPUTS]
    assert set(inputs) == {"rocm_version", "numa_affinity", "amdgpu_from_amd", "rocm_from_amd", "expected_gpu_count"}


def test_each_role_loads_its_os_files_by_its_own_name_and_its_vars_entry_point_runs_nothing():
    for role in ["preflight", *host_compliance.ROLES]:
        assert load(f"{role}/tasks/vars.yml") == [], role  # the compliance role imports it for the variables alone
        families = ("Debian", "RedHat", "Suse")
        has_os_files = any((ROLES / role / "vars" / f"{family}.yml").exists() for family in families)
        if not has_os_files:
            assert not (ROLES / role / "tasks" / "os_vars.yml").exists(), role
            continue
        [load_task] = load(f"{role}/tasks/os_vars.yml")
        assert load_task["ansible.builtin.include_vars"] == "{{ item }}", role
        assert load_task["loop"] == f"{{{{ '{role}' | rocm_fleet.core.role_os_vars_files(ansible_facts) }}}}", role
    # host_compliance loads every checked role's files itself (no task per host), named by the filter's function.
    assert not [task for task in load("compliance/tasks/evaluate.yml") if "ansible.builtin.include_vars" in task]
    assert host_compliance.os_vars_files is role_os_vars_files.__globals__["os_vars_files"]


def test_the_argument_spec_is_the_documented_one():
    documented = yaml.safe_load(host_compliance_doc.DOCUMENTATION)["options"]
    documented.update(yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"])
    assert set(documented) == set(host_compliance.ARGUMENT_SPEC)
    for name, spec in host_compliance.ARGUMENT_SPEC.items():
        for key in ("type", "elements", "default", "choices"):
            assert documented[name].get(key) == spec.get(key), (name, key)


def test_known_facts_count_only_when_read_from_the_same_gpu_sources():
    # roles/compliance/vars/main.yml decides whether the cached facts serve (then facts_fresh is false).
    condition = load("compliance/vars/main.yml")["__compliance_facts_known"]
    gpu = {"count": 1, "sources": {"sysfs": "ok", "rocm_smi": "skipped", "amd_smi": "skipped", "rocminfo": "skipped"}}

    def known(facts, sources):
        templar = Templar(loader=DataLoader(), variables={"ansible_facts": facts, "compliance_gpu_sources": sources})
        return templar.template(trust_as_template(condition))

    assert known({"gpu": gpu, "os_family": "Debian"}, ["sysfs"]) is True
    # gpu_facts' default reads every tool: facts from it would never compare equal with a sysfs read
    assert known({"gpu": gpu, "os_family": "Debian"}, ["sysfs", "rocm_smi"]) is False
    assert known({"gpu": gpu}, ["sysfs"]) is False
    assert known({"os_family": "Debian"}, ["sysfs"]) is False


class Host:
    """node_compliance as the action sees it: records each call's arguments, answers with ``facts_now``."""

    def __init__(self, facts_now=None, failed=None, unreachable=False):
        self.calls, self.facts_now, self.failed, self.unreachable = [], facts_now, failed, unreachable

    def __call__(self, module_name, module_args, task_vars):
        self.calls.append((module_name, copy.deepcopy(module_args)))
        if self.unreachable:
            raise AnsibleConnectionFailure("ssh: connect to host 127.0.0.1 port 2207: Connection refused")
        if self.failed:
            return {"failed": True, "msg": self.failed}
        result = {"changed": False, "results": [dict(ITEM_RESULT)], "summary": {"pass": 1, "total": 1}}
        if module_args.get("facts"):
            result["ansible_facts"] = copy.deepcopy(self.facts_now)
        return result


def run(args=None, facts=None, host=None, declared=None, **variables):
    """One run of the action with a stand-in task, connection, declared state and node_compliance."""
    task_vars = dict(HOST, ansible_facts=copy.deepcopy(CACHED if facts is None else facts), **variables)
    task = SimpleNamespace(args=dict(args or {}), async_val=0, check_mode=True, action="host_compliance")
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    loader = DataLoader()
    action = host_compliance.ActionModule(task, connection, None, loader, Templar(loader=loader, variables=task_vars))
    decided_from = []
    if declared is not False:
        def declared_state(args, task_vars, facts, injected=None):
            decided_from.append(facts)
            items = [{"id": "ROCM-ENV-001", "kind": "file", "expect": {"path": "/etc/profile.d/rocm.sh"}}]
            gpu_expect = declared or {"count": 2, "driver": {"loaded": True, "version": "6.12.*"}}
            return host_compliance.DeclaredState({"gpu_count": facts["gpu"]["count"]}, items, gpu_expect)

        action._declared_state = declared_state
    action._execute_module = host if host is not None else Host()
    return action.run(task_vars=task_vars), decided_from


def test_without_gpu_and_os_facts_the_host_fails_saying_what_to_run_first():
    for facts in ({}, {"gpu": GPU}, {"os_family": "Debian"}):
        result, _decided = run(facts=facts, declared=False)
        assert result["failed"] and result["msg"] == (
            "host gpu-01: no GPU and OS facts: run rocm_fleet.core.gpu_facts host_facts=true first")


def test_a_variable_the_compliance_role_did_not_import_is_named():
    result, _decided = run(declared=False)
    assert result["failed"]
    assert result["msg"].startswith("host gpu-01: preflight_decision_inputs is not defined: ")


def test_cached_facts_that_still_hold_cost_one_call_that_confirms_them():
    host = Host(facts_now=dict(CACHED))
    result, decided = run({"gpu_sources": ["sysfs"]}, host=host)
    assert not result.get("failed"), result.get("msg")
    assert [name for name, _args in host.calls] == ["rocm_fleet.core.node_compliance"]
    assert host.calls[0][1] == {"items": [{"id": "ROCM-ENV-001", "kind": "file",
                                           "expect": {"path": "/etc/profile.d/rocm.sh"}}],
                                "timeout": 30, "facts": True, "gpu_sources": ["sysfs"]}
    assert decided == [CACHED] and result["module_calls"] == 1
    # Facts that still hold are not sent again: the fact cache has them.
    assert "ansible_facts" not in result and result["gpu"] == GPU
    assert result["changed"] is False and result["decision"] == {"gpu_count": 2}


def test_detail_findings_folds_the_passing_results_and_leaves_out_the_decision():
    expect = {"count": 3, "driver": {"loaded": True, "version": "6.12.*"}}
    now = dict(CACHED, kernel="6.8.0-41-generic")
    whole, _decided = run({"gpu_sources": ["sysfs"]}, host=Host(facts_now=dict(now)), declared=expect)
    host = Host(facts_now=dict(now))
    cut, _decided = run({"gpu_sources": ["sysfs"], "detail": "findings"}, host=host, declared=expect)
    # Folded on the host too (the stand-in folds nothing: the action folds what it gets).
    assert [args["detail"] for _name, args in host.calls] == ["findings", "findings"]
    assert "decision" in whole and "decision" not in cut
    assert cut["summary"] == whole["summary"] and cut["ansible_facts"] == whole["ansible_facts"] == now
    # The report's GPU line and picture, no more.
    assert cut["gpu"] == {"count": 2, "devices": [{"product": "AMD Radeon PRO W7900", "numa_node": 0}] * 2,
                          "topology": {"link_type": None}}
    assert cut["results"][0] == {"id": "ROCM-ENV-001", "title": "profile", "status": "pass", "items": 1}
    failed = [result for result in whole["results"] if result["status"] != "pass"]
    assert failed and [result for result in cut["results"] if result["status"] != "pass"] == failed


def test_the_gpu_class_checks_run_on_the_controller_after_the_items():
    expect = {"count": 3, "driver": {"loaded": True, "version": "6.12.*"}}
    result, _decided = run({"gpu_sources": ["sysfs"]}, host=Host(facts_now=dict(CACHED)), declared=expect)
    assert result["results"] == [ITEM_RESULT] + evaluate_gpu(expect, GPU)
    assert [(entry["id"], entry["status"], entry["label"]) for entry in result["results"][1:]] == [
        ("ROCM-DRV-001", "pass", None), ("ROCM-GPU-001", "fail", None)]
    assert result["summary"] == {"pass": 2, "fail": 1, "error": 0, "skipped": 0, "unknown": 0, "warn": 0, "total": 3}


def test_facts_that_changed_since_the_cache_are_decided_from_again_in_a_second_call():
    now = dict(CACHED, gpu=dict(GPU, count=1, devices=GPU["devices"][:1]), kernel="6.8.0-41-generic")
    host = Host(facts_now=now)
    result, decided = run({"gpu_sources": ["sysfs"]}, host=host)
    assert not result.get("failed"), result.get("msg")
    assert decided == [CACHED, now] and result["module_calls"] == 2
    # The second call only evaluates: the facts it would read are the ones just read.
    assert "facts" not in host.calls[1][1] and "gpu_sources" not in host.calls[1][1]
    assert result["decision"] == {"gpu_count": 1} and result["gpu"] == now["gpu"]
    # The facts read by the first call go to the fact cache, not the second call's none.
    assert result["ansible_facts"] == now
    checks = {entry["id"]: entry for entry in result["results"]}
    assert checks["ROCM-GPU-001"]["status"] == "fail"  # the class expects 2; the host now reports 1
    assert checks["ROCM-GPU-001"]["message"] == "expected 2 GPUs, found 1"


def test_an_os_that_changed_since_the_cache_is_decided_from_again_and_kept():
    now = dict(CACHED, distribution="Debian", os_family="Debian")
    host = Host(facts_now=now)
    result, decided = run({"gpu_sources": ["sysfs"]}, host=host)
    assert not result.get("failed"), result.get("msg")
    assert decided == [CACHED, now] and result["module_calls"] == 2
    # A failed task's facts never reach the fact cache: the host's new OS is kept by an ok result.
    assert result["ansible_facts"] == now


def test_fresh_facts_are_not_read_again_nor_returned():
    host = Host()
    result, decided = run({"facts_fresh": True}, host=host)
    assert not result.get("failed"), result.get("msg")
    assert host.calls[0][1] == {"items": [{"id": "ROCM-ENV-001", "kind": "file",
                                           "expect": {"path": "/etc/profile.d/rocm.sh"}}], "timeout": 30}
    assert decided == [CACHED] and result["module_calls"] == 1
    assert "ansible_facts" not in result and result["gpu"] == GPU


def test_an_unreachable_host_stays_unreachable_not_an_error():
    with pytest.raises(AnsibleConnectionFailure):
        run({"gpu_sources": ["sysfs"]}, host=Host(unreachable=True))


def test_a_failed_module_call_is_the_task_result():
    result, _decided = run({"gpu_sources": ["sysfs"]}, host=Host(failed="node_compliance: evaluation failed"))
    assert result["failed"] and result["msg"] == "node_compliance: evaluation failed"
    assert "results" not in result


@pytest.mark.parametrize(("args", "words"), [
    ({"gpu_sources": ["nvidia_smi"]}, "value of gpu_sources must be one or more of: sysfs, rocm_smi"),
    ({"skip": ["ROCM-ENV-001"]}, "Unsupported parameters for .* module: skip"),
])
def test_bad_arguments_fail_the_task(args, words):
    with pytest.raises(AnsibleActionFail, match=words):
        run(args)


def test_the_health_expectations_go_to_the_one_module_call():
    host = Host(facts_now=dict(CACHED))
    action_run = run  # the declared state below carries health, as _declared_state builds it

    def with_health(args, task_vars, facts):
        items = [{"id": "ROCM-ENV-001", "kind": "file", "expect": {"path": "/etc/profile.d/rocm.sh"}}]
        return host_compliance.DeclaredState({"gpu_count": 2}, items, {"count": 2}, {"ce_threshold": 5})

    original = host_compliance.ActionModule._declared_state
    host_compliance.ActionModule._declared_state = lambda self, *a: with_health(*a)
    try:
        result, _decided = action_run({"gpu_sources": ["sysfs"]}, host=host, declared=False)
    finally:
        host_compliance.ActionModule._declared_state = original
    assert not result.get("failed"), result.get("msg")
    assert [name for name, _args in host.calls] == ["rocm_fleet.core.node_compliance"]
    assert host.calls[0][1]["health"] == {"ce_threshold": 5}


def test_the_declared_state_cache_renders_once_while_its_inputs_hold(tmp_path):
    cache = {"gpu_sources": ["sysfs"], "state_cache": str(tmp_path), "state_key": "env-1"}
    first, decided_first = run(cache, host=Host(facts_now=dict(CACHED)))
    again, decided_again = run(cache, host=Host(facts_now=dict(CACHED)))
    assert decided_first == [CACHED] and decided_again == []  # the second run rendered nothing
    assert again["results"] == first["results"] and again["decision"] == first["decision"]
    # Another value of the host's, another caller key, other facts: rendered again.
    _result, changed_variable = run(cache, host=Host(facts_now=dict(CACHED)), site_value="other")
    _result, changed_key = run(dict(cache, state_key="env-2"), host=Host(facts_now=dict(CACHED)))
    kernel = dict(CACHED, kernel="6.8.0-41-generic")
    _result, changed_facts = run(cache, facts=kernel, host=Host(facts_now=dict(kernel)))
    assert changed_variable == [CACHED] and changed_key == [CACHED] and changed_facts == [kernel]


def test_a_declared_state_cache_that_cannot_be_written_leaves_the_check_standing(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    result, decided = run({"gpu_sources": ["sysfs"], "state_cache": str(blocked / "state")},
                          host=Host(facts_now=dict(CACHED)))
    assert not result.get("failed"), result.get("msg")
    assert decided == [CACHED] and result["summary"]["total"] == 3


def test_a_declared_state_json_cannot_keep_is_rendered_again_next_run_and_the_check_stands(tmp_path, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise TypeError("Object of type Undefined is not JSON serializable")

    monkeypatch.setattr(host_compliance.declared_state_cache, "store", refuse)
    result, decided = run({"gpu_sources": ["sysfs"], "state_cache": str(tmp_path)}, host=Host(facts_now=dict(CACHED)))
    assert not result.get("failed"), result.get("msg")
    assert decided == [CACHED] and result["summary"]["total"] == 3


DIGEST = "a" * 64


def test_the_cached_digest_goes_to_the_call_and_the_facts_it_leaves_out_are_the_cached_ones():
    cached = dict(CACHED, host_facts_digest=DIGEST, processor=["0", "AuthenticAMD", "AMD EPYC 9654"])
    # As node_compliance answers a matching digest: the platform facts and the GPU, no distribution or processor.
    now = {"gpu": GPU, "kernel": CACHED["kernel"], "ansible_host_facts_digest": DIGEST}
    host = Host(facts_now=now)
    result, decided = run({"gpu_sources": ["sysfs"]}, facts=cached, host=host)
    assert not result.get("failed"), result.get("msg")
    assert host.calls[0][1]["host_facts_digest"] == DIGEST
    decided_from = {name: value for name, value in cached.items() if name != "host_facts_digest"}
    assert decided == [decided_from] and result["module_calls"] == 1  # nothing changed: no second call
    assert "ansible_facts" not in result  # nothing changed: the fact cache keeps its facts as they were


def test_a_digest_that_changed_takes_the_facts_as_read_and_a_missing_one_is_missing():
    cached = dict(CACHED, host_facts_digest=DIGEST)
    # A new digest, and no distribution read: the cached distribution must not stand in for it.
    now = {"gpu": GPU, "os_family": "Debian", "kernel": CACHED["kernel"], "ansible_host_facts_digest": "b" * 64}
    result, decided = run({"gpu_sources": ["sysfs"]}, facts=cached, host=Host(facts_now=now))
    assert decided[1] == {"gpu": GPU, "os_family": "Debian", "kernel": CACHED["kernel"]}
    assert result["ansible_facts"] == now


def test_without_a_cached_digest_none_is_sent_and_a_fact_read_as_missing_stays_missing():
    host = Host(facts_now={"gpu": GPU, "os_family": "Debian", "kernel": CACHED["kernel"]})
    _result, decided = run({"gpu_sources": ["sysfs"]}, host=host)
    assert "host_facts_digest" not in host.calls[0][1]
    assert decided[1] == {"gpu": GPU, "os_family": "Debian", "kernel": CACHED["kernel"]}
