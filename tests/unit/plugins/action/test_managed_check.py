"""managed_check: the objects the common role's apply tasks would change, proven in one node_compliance call.

node_compliance is the real evaluator here (module_utils.compliance.evaluate) over a temporary root, so each
object is proven or not by the checks drift runs; only the transport is a stand-in.
"""

from __future__ import annotations

import grp
import os
import pwd
from types import SimpleNamespace

import pytest
from ansible.errors import AnsibleConnectionFailure
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible_collections.rocm_fleet.core.plugins.action import managed_check
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import normalize
from fleet_testing.compliance_host import Host

OWNER = pwd.getpwuid(os.geteuid()).pw_name
GROUP = grp.getgrgid(os.getegid()).gr_name
MINE = {"owner": OWNER, "group": GROUP}


def run(objects, host, **variables):
    task_vars = dict({"inventory_hostname": "gpu-01"}, **variables)
    task = SimpleNamespace(args={"objects": objects}, async_val=0, check_mode=True, action="managed_check")
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    loader = DataLoader()
    action = managed_check.ActionModule(task, connection, None, loader, Templar(loader=loader, variables=task_vars))
    action._execute_module = host
    return action.run(task_vars=task_vars)


def put(root, path, text, mode=0o644):
    full = root / path.lstrip("/")
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    full.chmod(mode)


@pytest.fixture
def template(tmp_path):
    source = tmp_path / "templates" / "rocm.sh.j2"
    source.parent.mkdir()
    source.write_text("export ROCM_PATH={{ environment_rocm_path }}\n")
    return str(source)


def objects(template):
    raw = [
        dict(MINE, kind="file", id="ROCM-ENV-001", path="/etc/profile.d/rocm.sh", template="rocm.sh.j2"),
        dict(MINE, kind="file", id="ROCM-ENV-003", path="/etc/ld.so.conf.d/rocm.conf", content="/opt/rocm/lib\n"),
        dict(MINE, kind="directory", id="ROCM-ENV-004", path="/etc/rocm-fleet"),
        dict(MINE, kind="line", id="ROCM-ENV-002", path="/etc/environment", key="ROCM_PATH", value="/opt/rocm"),
        {"kind": "link", "id": "ROCM-PKG-001", "path": "/opt/rocm", "target": "/etc/alternatives/rocm"},
        # Checked only: never applied by the common role, so never proven or returned here.
        {"kind": "runtime_libraries", "id": "ROCM-ENV-008", "libraries": ["libamdhip64.so.*"]},
    ]
    normalized = normalize(raw, "environment")
    normalized[0]["template_path"] = template
    return normalized


def converged(root):
    # The checks name owners from the root's own account files.
    put(root, "/etc/passwd", "%s:x:%d:%d::/:/bin/sh\n" % (OWNER, os.geteuid(), os.getegid()))
    put(root, "/etc/group", "%s:x:%d:\n" % (GROUP, os.getegid()))
    put(root, "/etc/profile.d/rocm.sh", "export ROCM_PATH=/opt/rocm\n")
    put(root, "/etc/ld.so.conf.d/rocm.conf", "/opt/rocm/lib\n")
    (root / "etc/rocm-fleet").mkdir(mode=0o755)
    (root / "etc/rocm-fleet").chmod(0o755)
    put(root, "/etc/environment", "LANG=C\nROCM_PATH=/opt/rocm\n")
    (root / "opt").mkdir()
    os.symlink("/etc/alternatives/rocm", root / "opt/rocm")


def labels(result):
    assert not result.get("failed"), result.get("msg")
    assert [obj["label"] for obj in result["objects"]] == result["differ"]
    return result["differ"]


def test_a_converged_host_returns_no_object_after_one_call(tmp_path, template):
    root = tmp_path / "root"
    converged(root)
    host = Host(root)
    result = run(objects(template), host, environment_rocm_path="/opt/rocm")
    assert labels(result) == [] and result["checked"] == 5 and result["module_calls"] == 1
    assert result["changed"] is False
    assert [name for name, _args in host.calls] == ["rocm_fleet.core.node_compliance"]
    # The template, rendered on the controller, went as content; the checked-only object went nowhere.
    items = host.calls[0][1]["items"]
    assert items[0]["expect"]["content"] == "export ROCM_PATH=/opt/rocm\n" and "template" not in items[0]["expect"]
    assert "runtime_libraries" not in [item["kind"] for item in items]


def test_each_object_that_differs_is_returned_and_only_it(tmp_path, template):
    root = tmp_path / "root"
    converged(root)
    # A template value changed in the inventory: the rendered file differs, nothing else does.
    result = run(objects(template), Host(root), environment_rocm_path="/opt/rocm-7.2.3")
    assert labels(result) == ["environment: /etc/profile.d/rocm.sh"]
    # The line is there, but its file's mode is not what lineinfile sets.
    (root / "etc/environment").chmod(0o600)
    (root / "etc/ld.so.conf.d/rocm.conf").write_text("/opt/rocm-6.4.1/lib\n")
    (root / "opt/rocm").unlink()
    os.symlink("/opt/rocm-6.4.1", root / "opt/rocm")
    (root / "etc/rocm-fleet").rmdir()
    result = run(objects(template), Host(root), environment_rocm_path="/opt/rocm")
    assert labels(result) == ["environment: /etc/ld.so.conf.d/rocm.conf", "environment: /etc/rocm-fleet",
                              "environment: /etc/environment ROCM_PATH", "environment: /opt/rocm"]


def test_what_cannot_be_proven_is_returned(tmp_path, template):
    root = tmp_path / "root"
    converged(root)
    every = ["environment: /etc/profile.d/rocm.sh", "environment: /etc/ld.so.conf.d/rocm.conf",
             "environment: /etc/rocm-fleet", "environment: /etc/environment ROCM_PATH", "environment: /opt/rocm"]
    # Not one result per item: nothing is proven.
    assert labels(run(objects(template), Host(root, truncate=True), environment_rocm_path="/opt/rocm")) == every
    # A file that cannot be read is not proven either (the evaluator says error, not pass).
    os.chmod(root / "etc/profile.d", 0o000)
    try:
        result = run(objects(template), Host(root), environment_rocm_path="/opt/rocm")
    finally:
        os.chmod(root / "etc/profile.d", 0o755)
    if os.geteuid() != 0:  # root reads it anyway
        assert "environment: /etc/profile.d/rocm.sh" in labels(result)


def test_a_failed_call_fails_the_host_naming_it_and_an_unreachable_host_is_unreachable(tmp_path, template):
    root = tmp_path / "root"
    converged(root)
    result = run(objects(template), Host(root, failed="MODULE FAILURE"), environment_rocm_path="/opt/rocm")
    assert result["failed"] and result["msg"] == "host gpu-01: managed objects not checked: MODULE FAILURE"
    with pytest.raises(AnsibleConnectionFailure):
        run(objects(template), Host(root, unreachable=True), environment_rocm_path="/opt/rocm")


def test_an_undefined_template_variable_fails_the_host_naming_it(tmp_path, template):
    result = run(objects(template), Host(tmp_path))
    assert result["failed"] and result["msg"].startswith("host gpu-01: managed objects: ")
    assert "environment_rocm_path" in result["msg"]


def test_no_object_to_prove_makes_no_call(tmp_path):
    host = Host(tmp_path)
    only_checked = normalize([{"kind": "runtime_libraries", "id": "ROCM-ENV-008"}], "environment")
    result = run(only_checked, host)
    assert labels(result) == [] and result["module_calls"] == 0 and result["checked"] == 0 and not host.calls

