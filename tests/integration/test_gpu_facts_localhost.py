"""`ansible localhost -m rocm_fleet.core.gpu_facts` on this machine, which has no AMD GPU."""

from fleet_testing.localhost_ansible import localhost_result, run_on_localhost


def run_ansible(*args):
    return run_on_localhost("rocm_fleet.core.gpu_facts", *args, timeout=120)


def host_result(completed):
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return localhost_result(completed)


def test_machine_without_gpus_reports_zero_and_does_not_fail():
    result = host_result(run_ansible())
    gpu = result["ansible_facts"]["gpu"]
    assert result.get("failed") is not True
    assert gpu["schema"] == 2
    assert gpu["count"] == 0
    assert gpu["devices"] == []
    assert gpu["topology"] is None
    assert gpu["sources"]["sysfs"] == "ok"
    assert set(gpu["sources"]) == {"sysfs", "rocm_smi", "amd_smi", "rocminfo"}


def test_check_mode_reads_the_same_facts():
    result = host_result(run_ansible("-a", "sources=sysfs", "--check"))
    assert result["changed"] is False
    assert result["ansible_facts"]["gpu"]["sources"]["rocm_smi"] == "skipped"


def test_invalid_option_fails_with_a_clear_message():
    completed = run_ansible("-a", "sources=nvml")
    assert completed.returncode != 0
    message = localhost_result(completed)["msg"]
    assert "sources" in message and "nvml" in message
    assert "Traceback" not in completed.stdout
