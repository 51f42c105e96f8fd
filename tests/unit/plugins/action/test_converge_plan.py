"""converge_plan: which provisioning roles a converge runs, proven in one node_compliance call.

The declared state is a stand-in (host_compliance renders it the same way for drift: test_host_compliance.py and
tests/integration/test_host_compliance_localhost.py); node_compliance is the real evaluator over a temporary root,
so each object is proven or not by the checks drift runs.
"""

from __future__ import annotations

import grp
import os
import pwd
from types import SimpleNamespace

import pytest
import yaml
from ansible.errors import AnsibleConnectionFailure
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible_collections.rocm_fleet.core.plugins.action import converge_plan, host_compliance
from ansible_collections.rocm_fleet.core.plugins.modules import converge_plan as converge_plan_doc
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import normalize
from fleet_testing.compliance_host import Host
from fleet_testing.roles import load_yaml, provisioning_roles

MINE = {"owner": pwd.getpwuid(os.geteuid()).pw_name, "group": grp.getgrgid(os.getegid()).gr_name}
FACTS = {"gpu": {"count": 1, "driver": {"loaded": True}}, "os_family": "Debian", "kernel": "6.1.0-37-amd64"}
MARKERS = "/run/rocm-fleet/reboot-required"


def objects():
    """One object per role of the kinds its tasks write, on paths under the temporary root."""
    raw = {
        "repo": [dict(MINE, kind="file", id="ROCM-REPO-003", path="/etc/apt/preferences.d/rocm-pin-600",
                      content="Pin: release o=repo.radeon.com\n")],
        "kernel": [dict(MINE, kind="file", id="ROCM-KMOD-001", path="/etc/modprobe.d/rocm-fleet.conf",
                        content="options amdgpu ras_enable=1\n")],
        "access": [dict(MINE, kind="directory", id="ROCM-ACCESS-004", path="/etc/rocm-fleet")],
        # A line: its file's owner, group and mode are proven too, as lineinfile sets them.
        "environment": [dict(MINE, kind="line", id="ROCM-ENV-002", path="/etc/environment", key="ROCM_PATH",
                             value="/opt/rocm", mode="0644")],
    }
    return dict((role, normalize(raw.get(role, []), role)) for role in provisioning_roles())


def converge(unproven=None, absent=None):
    return dict((role, {"absent": (absent or {}).get(role, []), "unproven": (unproven or {}).get(role, [])})
                for role in provisioning_roles())


def run(host, converge_data=None, facts=FACTS, args=None):
    task_vars = {"inventory_hostname": "gpu-01", "ansible_facts": facts}
    task = SimpleNamespace(args=args or {}, async_val=0, check_mode=True, action="converge_plan")
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    loader = DataLoader()
    action = converge_plan.ActionModule(task, connection, None, loader, Templar(loader=loader, variables=task_vars))
    action._execute_module = host

    def declared(_args, _task_vars, _facts, injected=None):
        items = [item for role, objs in objects().items() for obj in objs for item in action._items_of(obj)]
        state = host_compliance.DeclaredState({}, items, {}, None, [])
        state.extras = converge_data or converge()
        return state

    action._declared_state = declared
    return action.run(task_vars=task_vars)


def put(root, path, text, mode=0o644):
    full = root / path.lstrip("/")
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    full.chmod(mode)


@pytest.fixture
def converged(tmp_path):
    # The checks name owners from the root's own account files.
    put(tmp_path, "/etc/passwd", "%s:x:%d:%d::/:/bin/sh\n" % (MINE["owner"], os.geteuid(), os.getegid()))
    put(tmp_path, "/etc/group", "%s:x:%d:\n" % (MINE["group"], os.getegid()))
    put(tmp_path, "/etc/apt/preferences.d/rocm-pin-600", "Pin: release o=repo.radeon.com\n")
    put(tmp_path, "/etc/modprobe.d/rocm-fleet.conf", "options amdgpu ras_enable=1\n")
    (tmp_path / "etc/rocm-fleet").mkdir(mode=0o755)
    (tmp_path / "etc/rocm-fleet").chmod(0o755)
    put(tmp_path, "/etc/environment", "ROCM_PATH=/opt/rocm\n")
    return tmp_path


def test_a_converged_host_runs_no_role_in_one_call_and_each_object_is_proven_by_its_label(converged):
    host = Host(converged)
    result = run(host)
    assert not result.get("failed"), result
    assert result["roles"] == [] and result["module_calls"] == 1 and len(host.calls) == 1, result["reasons"]
    assert result["proven"]["kernel"] == ["kernel: /etc/modprobe.d/rocm-fleet.conf"]
    assert result["proven"]["partitions"] == []


def test_a_changed_file_runs_its_role_and_every_role_after_it(converged):
    put(converged, "/etc/modprobe.d/rocm-fleet.conf", "options amdgpu ras_enable=0\n")
    result = run(Host(converged))
    assert result["roles"] == ["kernel", "partitions", "access", "environment"]
    assert result["reasons"]["kernel"][0].startswith("kernel: /etc/modprobe.d/rocm-fleet.conf fail")
    assert set(result["proven"]) == {"repo", "packages"}


def test_a_line_in_place_in_a_file_of_the_wrong_mode_is_not_proven(converged):
    (converged / "etc/environment").chmod(0o600)
    assert run(Host(converged))["roles"] == ["environment"]


def test_a_reboot_marker_runs_the_kernel_role_which_reads_it(converged):
    data = converge(absent={"kernel": [MARKERS]})
    assert run(Host(converged), data)["roles"] == []
    put(converged, MARKERS + "/packages-amdgpu-dkms", "amdgpu-dkms installed\n")
    result = run(Host(converged), data)
    assert result["roles"][0] == "kernel"
    assert any(MARKERS in reason for reason in result["reasons"]["kernel"])


def test_what_a_role_says_its_objects_cannot_prove_runs_it(converged):
    result = run(Host(converged), converge(unproven={"packages": ["packages_remove_unlisted_versions"]}))
    assert result["roles"] == provisioning_roles()[1:]


def test_results_that_are_not_one_per_item_prove_nothing(converged):
    assert run(Host(converged, truncate=True))["roles"] == provisioning_roles()


def test_a_failed_module_call_fails_the_host_saying_so(converged):
    result = run(Host(converged, failed="python3 not found"))
    assert result["failed"] and result["msg"] == (
        "host gpu-01: the managed objects could not be checked: python3 not found")


def test_an_unreachable_host_stays_unreachable(converged):
    with pytest.raises(AnsibleConnectionFailure):
        run(Host(converged, unreachable=True))


def test_without_gpu_and_os_facts_the_host_fails_saying_what_to_run_first(converged):
    result = run(Host(converged), facts={})
    assert result["failed"] and "run rocm_fleet.core.gpu_facts host_facts=true first" in result["msg"]


def test_every_role_declares_what_its_objects_cannot_prove():
    for role in provisioning_roles():
        converge_data = load_yaml("%s/vars/main.yml" % role)["__%s_converge" % role]
        assert set(converge_data) == {"absent", "unproven"}, role


def test_the_argument_spec_is_the_documented_one():
    documented = yaml.safe_load(converge_plan_doc.DOCUMENTATION)["options"]
    assert set(documented) == set(converge_plan.ARGUMENT_SPEC)
    assert documented["roles"]["default"] == provisioning_roles() == converge_plan.ROLES
