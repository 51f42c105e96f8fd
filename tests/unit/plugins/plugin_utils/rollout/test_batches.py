"""A rollout in batches: when it stops, and its report."""

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.batches import (
    failure_reason,
    rollout_report,
    rollout_table,
    stop_rollout,
)
from fleet_testing.dpkg_root import build_deb, dpkg, needs_dpkg, new_root

DONE = {"outcome": "done"}
FAILED = {"outcome": "failed", "step": "install", "reason": "E: Unable to locate package rocm-core7.2.3"}


def test_one_failed_host_stops_a_rollout_that_allows_none():
    assert stop_rollout({"a": DONE, "b": FAILED}, ["a", "b"], 0) is True
    assert stop_rollout({"a": DONE, "b": DONE}, ["a", "b"], 0) is False


def test_the_share_of_the_batch_counts_and_a_host_without_a_finished_result_failed():
    batch = ["a", "b", "c", "d"]
    assert stop_rollout({"a": FAILED, "b": DONE, "c": DONE, "d": DONE}, batch, 25) is False
    assert stop_rollout({"a": FAILED, "b": {"outcome": "running"}, "c": DONE, "d": DONE}, batch, 25) is True
    assert stop_rollout({"a": FAILED, "b": None, "c": DONE, "d": DONE}, batch, 25) is True
    assert stop_rollout({}, [], 0) is False


@pytest.mark.parametrize("bad", [-1, 101, "many", None])
def test_a_percentage_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match="from 0 to 100"):
        stop_rollout({}, ["a"], bad)


def test_the_report_lists_failures_first_and_says_what_to_do():
    plans = {
        "h1": {"action": "upgrade", "from": "6.4.1", "to": "7.2.3"},
        "h2": {"action": "upgrade", "from": "6.3.3", "to": "7.2.3"},
        "h3": {"action": "upgrade", "from": "7.1.1", "to": "7.2.3"},
        "h4": {"action": "skip", "from": "7.2.3", "to": "7.2.3", "reason": "already on 7.2.3"},
    }
    report = rollout_report("upgrade", plans, {"h1": DONE, "h2": FAILED, "h3": None},
                            {"continue_command": "ansible-playbook playbooks/upgrade.yml", "rollback_command": "rb"})
    assert [(h["host"], h["outcome"]) for h in report["hosts"]] == [
        ("h2", "failed"), ("h3", "not_started"), ("h1", "done"), ("h4", "skipped")]
    assert report["complete"] is False
    assert report["summary"] == {"done": 1, "failed": 1, "skipped": 1, "not_started": 1, "total": 4}
    table = rollout_table(report)
    assert table[0].startswith("h2") and "step install: E: Unable to locate package rocm-core7.2.3" in table[0]
    assert "6.3.3 -> 7.2.3" in table[0]
    assert "not started" in table[1] and "h4" in table[3] and "already on 7.2.3" in table[3]
    assert table[4] == "upgrade: 1 done, 1 failed, 1 not started, 1 skipped of 4 hosts"
    assert table[5].endswith("ansible-playbook playbooks/upgrade.yml") and table[6].endswith(": rb")


def test_a_host_that_stopped_answering_is_failed_at_its_step():
    report = rollout_report("upgrade", {"h1": {"action": "upgrade"}}, {"h1": {"outcome": "running", "step": "reboot"}})
    assert report["hosts"][0]["outcome"] == "failed" and report["hosts"][0]["step"] == "reboot"
    assert "stopped answering during this step" in report["hosts"][0]["reason"]


def test_a_finished_rollout_is_complete_and_names_no_command():
    report = rollout_report("upgrade", {"h1": {"action": "upgrade"}}, {"h1": DONE}, {"rollback_command": "rb"})
    assert report["complete"] is True
    assert rollout_table(report)[-1] == "upgrade: 1 done, 0 failed, 0 not started, 0 skipped of 1 hosts"


def test_a_check_run_says_nothing_changed_and_what_would_run():
    plans = {"h1": {"action": "upgrade", "from": "6.4.1", "to": "7.2.3"}}
    report = dict(rollout_report("upgrade", plans, {"h1": DONE}), check_mode=True)
    table = rollout_table(report)
    assert table[0].startswith("--check: nothing was changed")
    assert table[1].split()[:3] == ["h1", "would", "run"]


def test_a_failed_loop_gives_its_failed_items_words_and_stderr_is_kept():
    result = {"failed": True, "msg": "One or more items failed", "results": [
        {"failed": False, "msg": "ok"},
        {"failed": True, "msg": "'/usr/bin/apt-get -y install rocm-core7.2.3' failed: E: Package 'rocm-core7.2.3' has "
         "no installation candidate\n", "stderr": "E: Package 'rocm-core7.2.3' has no installation candidate\n"}]}
    reason = failure_reason(result, "Install the use cases of each ROCm release")
    assert reason.startswith('task "Install the use cases of each ROCm release": ')
    assert reason.count("no installation candidate") == 1 and "One or more items" not in reason
    assert failure_reason({"msg": "non-zero return code", "stderr": "scontrol: error: Invalid node name"}) == \
        "non-zero return code: scontrol: error: Invalid node name"
    assert failure_reason({}) == "failed"


def test_a_move_between_streams_names_the_stream_left_and_reached():
    plans = {
        "h1": {"action": "upgrade", "from": "7.2.3", "to": "10.1.0", "from_stream": "legacy",
               "to_stream": "core_sdk_10"},
        "h2": {"action": "upgrade", "from": "10.0.0", "to": "10.1.0", "from_stream": "core_sdk_10",
               "to_stream": "core_sdk_10"},
    }
    report = rollout_report("upgrade", plans, {"h1": DONE, "h2": DONE})
    entries = {entry["host"]: entry for entry in report["hosts"]}
    assert (entries["h1"]["from_stream"], entries["h1"]["to_stream"]) == ("legacy", "core_sdk_10")
    table = rollout_table(report)
    assert table[0].split(None, 2)[2].strip() == "7.2.3 (legacy) -> 10.1.0 (core_sdk_10)"
    assert table[1].split(None, 2)[2].strip() == "10.0.0 -> 10.1.0"


@needs_dpkg
def test_dpkgs_own_error_from_apts_output_is_in_the_reason(tmp_path):
    """apt's message only says dpkg failed; dpkg's lines (real ones: a file two packages ship) say why."""
    root = new_root(tmp_path)
    dpkg(root, "-i", str(build_deb(tmp_path, "site-files", "1.0", {"/opt/rocm/core-10.1/VERSION": "site\n"})))
    refused = dpkg(root, "-i", str(build_deb(tmp_path, "amdrocm-sysdeps10.1", "10.1.0-1",
                                             {"/opt/rocm/core-10.1/VERSION": "10.1.0\n"})), check=False)  # fmt: skip
    assert refused.returncode != 0
    result = {"failed": True, "msg": "'/usr/bin/apt-get -y install amdrocm-sysdeps10.1' failed: E: Sub-process "
              "/usr/bin/dpkg returned an error code (1)\n", "stdout": "Unpacking ...\n" + refused.stderr}  # fmt: skip
    reason = failure_reason(result, "Install")
    # dpkg's own lines, as this dpkg words them (releases differ: "site-files 1.0", "site-files (1.0)").
    lines = [line.strip() for line in refused.stderr.splitlines() if line.strip()]
    first = next(index for index, line in enumerate(lines) if line.startswith("dpkg: error processing archive"))
    error, why = lines[first], lines[first + 1]
    assert error in reason and why in reason, (reason, refused.stderr)
    assert "/opt/rocm/core-10.1/VERSION" in why and "site-files" in why, refused.stderr
