"""device_visibility items (ROCM-ENV-007): no variable hides GPUs from every login session or service.

Login shells are started through a runner that runs a real ``sh`` on the tree's own /etc/profile and the
user's ~/.profile (fleet_testing.compliance_tree.login_runner); the system manager answers
``systemctl show-environment`` with the environment the test gives it.
"""

import os

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import HostView
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate_item
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.visibility import hides, kept_devices
from fleet_testing.compliance_tree import host_runner, write

PASSWD = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n"
PROFILE = 'for f in "$ROOT"/etc/profile.d/*.sh; do [ -r "$f" ] && . "$f"; done\n'
ENVIRONMENT = 'PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"\nLANG=C.UTF-8\nHIP_VISIBLE_DEVICES=0\n'
EXECUTABLE = "#!/bin/sh\nexit 99\n"  # present so the checker picks it; the runner stands in for it
MANAGER = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "ROCM_PATH": "/opt/rocm"}


@pytest.fixture
def root(tmp_path):
    write(tmp_path, "/etc/passwd", PASSWD)
    write(tmp_path, "/etc/profile", PROFILE)
    write(tmp_path, "/etc/profile.d/rocm.sh", "export ROCM_PATH=/opt/rocm\n")
    write(tmp_path, "/usr/sbin/runuser", EXECUTABLE, 0o755)
    write(tmp_path, "/usr/bin/systemctl", EXECUTABLE, 0o755)
    (tmp_path / "home/alice").mkdir(parents=True)
    (tmp_path / "run/systemd/system").mkdir(parents=True)  # booted with systemd
    return tmp_path


def check(root, manager=None, calls=None, **expect):
    expect.setdefault("users", ["alice"])
    expect.setdefault("gpu_count", 8)
    item = {
        "id": "ROCM-ENV-007",
        "kind": "device_visibility",
        "expect": expect,
        "repair": "a person: remove the setting named, or declare it in environment_device_visibility",
    }
    run = host_runner(root, MANAGER if manager is None else manager, calls)
    return evaluate_item(item, 0, HostView(str(root), run=run))


def test_nothing_set_passes_and_reads_the_login_shell_and_the_manager(root):
    calls = []
    result = check(root, calls=calls)
    assert result["status"] == "pass", result["message"]
    assert result["message"] == (
        "no HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES, "
        "GPU_DEVICE_ORDINAL hides a GPU from every login session or service"
    )
    assert [argv[:3] for argv in calls] == [
        ["/usr/sbin/runuser", "-l", "alice"],
        ["/usr/bin/systemctl", "show-environment"],
    ]


def test_a_setting_in_etc_environment_names_the_line_and_the_gpus_it_hides(root):
    write(root, "/etc/environment", ENVIRONMENT)
    result = check(root)
    assert (result["status"], result["message"]) == (
        "fail",
        "HIP_VISIBLE_DEVICES=0 in /etc/environment:3 hides 7 of 8 GPUs (1-7) from every login session",
    )
    assert result["repair"].startswith("a person: remove the setting named")
    # A MI300X host in CPX: 8 GPUs are 64 logical ones, and the count is what the check is given.
    assert check(root, gpu_count=64)["message"] == (
        "HIP_VISIBLE_DEVICES=0 in /etc/environment:3 hides 63 of 64 GPUs (1-63) from every login session"
    )


def test_a_profile_d_script_is_named_once_though_the_login_shell_has_it_too(root):
    write(root, "/etc/profile.d/zz-gpu.sh", "# pin the jobs\nexport ROCR_VISIBLE_DEVICES=0,1\n")
    result = check(root)
    assert (result["status"], result["message"]) == (
        "fail",
        "ROCR_VISIBLE_DEVICES=0,1 in /etc/profile.d/zz-gpu.sh:2 hides 6 of 8 GPUs (2-7) from every login session",
    )
    assert result["actual"]["users"]["alice"]["read"] is True


def test_what_a_script_computes_is_judged_from_the_login_shell(root):
    write(root, "/etc/profile.d/zz-gpu.sh", 'CUDA_VISIBLE_DEVICES="$(echo 3,5)"; export CUDA_VISIBLE_DEVICES\n')
    result = check(root)
    assert (result["status"], result["message"]) == (
        "fail",
        "CUDA_VISIBLE_DEVICES=3,5 in the login shell of alice (from /etc/profile.d/zz-gpu.sh:1) hides 6 of "
        "8 GPUs (0-2, 4, 6-7) from every login session",
    )


def test_a_users_own_dotfile_hides_gpus_from_that_users_sessions(root):
    write(root, "/home/alice/.profile", "export GPU_DEVICE_ORDINAL=7\n")
    assert check(root)["message"] == (
        "GPU_DEVICE_ORDINAL=7 in /home/alice/.profile:1 hides 7 of 8 GPUs (0-6) from the login sessions of alice"
    )


def test_a_default_environment_setting_hides_gpus_from_every_service(root):
    write(
        root, "/etc/systemd/system.conf.d/50-gpu.conf", '[Manager]\nDefaultEnvironment="HIP_VISIBLE_DEVICES=0,1,2,3"\n'
    )
    result = check(root, manager=dict(MANAGER, HIP_VISIBLE_DEVICES="0,1,2,3"))
    assert (result["status"], result["message"]) == (
        "fail",
        "HIP_VISIBLE_DEVICES=0,1,2,3 in /etc/systemd/system.conf.d/50-gpu.conf:2 hides 4 of 8 GPUs (4-7) from "
        "every service",
    )
    # Written, not applied yet: the same finding, pending.
    assert check(root)["message"] == (
        "HIP_VISIBLE_DEVICES=0,1,2,3 in /etc/systemd/system.conf.d/50-gpu.conf:2 hides 4 of 8 GPUs (4-7) from every "
        "service (pending: the running manager has none yet; systemctl daemon-reexec or the next boot applies it)"
    )


def test_the_running_manager_and_environment_d_count_too(root):
    result = check(root, manager=dict(MANAGER, GPU_DEVICE_ORDINAL="1"))
    assert result["message"] == (
        "GPU_DEVICE_ORDINAL=1 in the systemd manager environment (in no DefaultEnvironment file now: set by systemctl "
        "set-environment, or removed from the files and gone at the next daemon-reexec or boot) hides 7 of 8 GPUs "
        "(0, 2-7) from every service"
    )
    write(root, "/etc/environment.d/60-gpu.conf", "CUDA_VISIBLE_DEVICES=\n")
    assert check(root)["message"] == (
        "CUDA_VISIBLE_DEVICES= in /etc/environment.d/60-gpu.conf:1 hides 8 of 8 GPUs (0-7) from every user service "
        "(systemd --user)"
    )


def test_a_declared_setting_with_its_value_passes_and_another_value_fails(root):
    write(root, "/etc/environment", ENVIRONMENT)
    for declared in ("0", 0):
        result = check(root, declared={"HIP_VISIBLE_DEVICES": declared})
        assert result["status"] == "pass", result["message"]
        assert result["message"].endswith("(as declared: HIP_VISIBLE_DEVICES=0 in /etc/environment:3)")
    result = check(root, declared={"HIP_VISIBLE_DEVICES": "0,1"})
    assert (result["status"], result["message"]) == (
        "fail",
        "HIP_VISIBLE_DEVICES=0 in /etc/environment:3, not the declared 0,1, hides 7 of 8 GPUs (1-7) from "
        "every login session",
    )
    # Declaring one variable allows no other.
    write(root, "/etc/profile.d/zz-gpu.sh", "export ROCR_VISIBLE_DEVICES=0\n")
    result = check(root, declared={"HIP_VISIBLE_DEVICES": "0"})
    assert result["message"] == (
        "ROCR_VISIBLE_DEVICES=0 in /etc/profile.d/zz-gpu.sh:1 hides 7 of 8 GPUs (1-7) from every login session"
    )


def test_what_cannot_be_read_is_unknown_and_a_host_without_systemd_has_the_files_only(root):
    result = evaluate_item(
        {"id": "ROCM-ENV-007", "kind": "device_visibility", "expect": {"users": ["alice"]}}, 0, HostView(str(root))
    )
    assert result["status"] == "unknown"
    assert result["message"].startswith("unknown: the login shell of alice: %s is not the live system" % root)
    assert "the systemd manager environment: " in result["message"]
    os.rmdir(root / "run/systemd/system")
    result = check(root, users=[])
    assert result["status"] == "pass"
    assert result["message"].endswith(
        "; services: not booted with systemd (no /run/systemd/system): only the files were read"
    )
    write(root, "/etc/systemd/system.conf.d/50-gpu.conf", '[Manager]\nDefaultEnvironment="HIP_VISIBLE_DEVICES=1"\n')
    assert check(root, users=[])["status"] == "fail"


def test_invalid_items_are_errors():
    host = HostView("/nonexistent")
    result = evaluate_item({"id": "X-1", "kind": "device_visibility", "expect": {"declared": {"PATH": "0"}}}, 0, host)
    assert result["status"] == "error"
    assert result["message"] == (
        "X-1: expect.declared.PATH: must be one of HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, "
        "CUDA_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL"
    )
    result = evaluate_item({"id": "X-1", "kind": "device_visibility", "expect": {"gpu_count": -1}}, 0, host)
    assert result["message"] == "X-1: expect.gpu_count: must not be negative"


@pytest.mark.parametrize(
    ("value", "count", "kept"),
    [
        ("0", 8, ([0], [])),
        ("3,1,3", 8, ([3, 1], [])),
        ("0,1,9,2", 8, ([0, 1], [])),  # the runtimes stop at an index that does not exist
        ("", 8, ([], [])),
        ("-1", 8, ([], [])),
        ("GPU-5fb1e6c4d2a3b7e9,1", 8, ([1], ["GPU-5fb1e6c4d2a3b7e9"])),
        ("12", None, ([12], [])),
    ],
)
def test_the_devices_a_runtime_keeps(value, count, kept):
    assert kept_devices(value, count) == kept


def test_what_a_value_hides():
    assert hides("0,1,2,3,4,5,6,7", 8, "every service") == (
        "hides none of the 8 GPUs now, yet fixes which ones every service sees and in what order"
    )
    assert hides("GPU-5fb1e6c4d2a3b7e9", 8, "x") == "hides 7 of 8 GPUs (all but 1 named by UUID) from x"
    assert hides("0,2", None, "x") == "leaves only GPU 0, 2 to x (the host's GPU count is not known)"
    assert hides("", 0, "x") == "hides every GPU from x"
