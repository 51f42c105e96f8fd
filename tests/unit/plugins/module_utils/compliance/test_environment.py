"""job_environment items: what a listed user's login shell and the systemd manager give a job, against a temp tree.

The login shell is started through an injected runner that runs a real ``sh`` on the
tree's own /etc/profile (and the user's ~/.profile) and then the module's own command,
so the environment parsed is what ``env -0`` really printed.
"""

import os
import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import (
    CommandUnavailable,
    HostView,
    run_live,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.environment import (
    manager_default_environment,
    override_problems,
    rocm_path_problems,
    shell_assignments,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate_item
from fleet_testing.compliance_tree import write

PASSWD = (
    "root:x:0:0:root:/root:/bin/bash\n"
    "alice:x:1000:1000::/home/alice:/bin/bash\n"
    "svc:x:998:998::/nonexistent:/usr/sbin/nologin\n"
)
PROFILE = 'for f in "$ROOT"/etc/profile.d/*.sh; do [ -r "$f" ] && . "$f"; done\n'
# As the environment role's rocm.sh sets them.
ROCM_SH = (
    "export ROCM_PATH=/opt/rocm\n"
    'case ":${PATH}:" in\n  *":${ROCM_PATH}/bin:"*) ;;\n  *) PATH="${PATH}:${ROCM_PATH}/bin" ;;\nesac\n'
    "export PATH\n"
)
EXECUTABLE = "#!/bin/sh\nexit 99\n"  # present so the checker picks it; the injected runner stands in for it


@pytest.fixture
def root(tmp_path):
    write(tmp_path, "/etc/passwd", PASSWD)
    write(tmp_path, "/etc/group", "root:x:0:\nrender:x:105:alice\n")
    write(tmp_path, "/etc/profile", PROFILE)
    write(tmp_path, "/etc/profile.d/rocm.sh", ROCM_SH)
    write(tmp_path, "/usr/sbin/runuser", EXECUTABLE, 0o755)
    (tmp_path / "opt/rocm-6.4.1/bin").mkdir(parents=True)
    (tmp_path / "opt/rocm-6.3.3/bin").mkdir(parents=True)
    os.symlink("/opt/rocm-6.4.1", tmp_path / "opt/rocm")
    (tmp_path / "home/alice").mkdir(parents=True)
    (tmp_path / "run/systemd/system").mkdir(parents=True)  # booted with systemd
    return tmp_path


def login_runner(root, calls):
    """Run the checker's login command with a real sh that reads the tree's profile and the user's ~/.profile."""

    def run(argv, timeout):
        calls.append(argv)
        user = argv[argv.index("-c") - 1]
        script = '. "$ROOT/etc/profile"; [ -r "$HOME/.profile" ] && . "$HOME/.profile"; %s' % argv[-1]
        home = "%s/home/%s" % (root, user)
        done = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "HOME=" + home, "ROOT=" + str(root),
                               "sh", "-c", script], capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout, done.stderr

    return run


def check(root, run=None, item_id="ROCM-ENV-005", **expect):
    expect.setdefault("scope", "login")
    if expect["scope"] == "login":
        expect.setdefault("users", ["alice"])
    expect.setdefault("rocm_path", "/opt/rocm")
    expect.setdefault("release_dir", "/opt/rocm-6.4.1")
    expect.setdefault("gfx_targets", ["gfx942"])
    item = {"id": item_id, "kind": "job_environment", "expect": expect}
    return evaluate_item(item, 0, HostView(str(root), run=run))


def test_a_clean_login_shell_passes_and_shows_what_it_got(root):
    calls = []
    result = check(root, run=login_runner(root, calls))
    assert result["status"] == "pass", result["message"]
    assert calls == [["/usr/sbin/runuser", "-l", "alice", "-c", calls[0][-1]]]
    got = result["actual"]["users"]["alice"]
    assert got["read"] is True and got["environment"]["ROCM_PATH"] == "/opt/rocm"
    assert got["environment"]["PATH"].endswith(":/opt/rocm/bin")


def test_a_foreign_override_from_another_profile_file_fails_naming_file_and_line(root):
    write(root, "/etc/profile.d/zz-site.sh", "# site tuning\nexport HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    result = check(root, run=login_runner(root, []))
    assert result["status"] == "fail"
    assert result["message"].startswith(
        "the login shell of alice has HSA_OVERRIDE_GFX_VERSION=11.0.0 (from /etc/profile.d/zz-site.sh:2), not "
        "wanted: HSA_OVERRIDE_GFX_VERSION: ROCm supports gfx942 natively")
    assert "/etc/profile.d/zz-site.sh:2 sets HSA_OVERRIDE_GFX_VERSION=11.0.0" in result["message"]
    assert result["repair"] is None and result["action"] == "none"


def test_a_per_device_override_in_a_dotfile_fails_too(root):
    write(root, "/home/alice/.profile", "export HSA_OVERRIDE_GFX_VERSION_3=9.4.2\n")
    result = check(root, run=login_runner(root, []))
    assert result["status"] == "fail"
    assert "HSA_OVERRIDE_GFX_VERSION_3=9.4.2 (from /home/alice/.profile:1)" in result["message"]


def test_a_needed_override_with_another_value_fails_and_the_right_one_passes(root):
    needed = {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    write(root, "/etc/profile.d/rocm.sh", ROCM_SH + "export HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    assert check(root, run=login_runner(root, []), hsa_overrides=needed,
                 gfx_targets=["gfx1031"])["status"] == "pass"
    write(root, "/etc/profile.d/zz-site.sh", "HSA_OVERRIDE_GFX_VERSION=10.3.1; export HSA_OVERRIDE_GFX_VERSION\n")
    result = check(root, run=login_runner(root, []), hsa_overrides=needed, gfx_targets=["gfx1031"])
    assert result["status"] == "fail"
    assert result["message"].startswith("the login shell of alice has HSA_OVERRIDE_GFX_VERSION=10.3.1 "
                                        "(from /etc/profile.d/zz-site.sh:1), expected 10.3.0")


def test_another_release_on_rocm_path_and_path_fails(root):
    write(root, "/etc/profile.d/zz-old.sh", "export ROCM_PATH=/opt/rocm-6.3.3\nexport PATH=/opt/rocm-6.3.3/bin:$PATH\n")
    result = check(root, run=login_runner(root, []))
    assert result["status"] == "fail"
    assert "has ROCM_PATH=/opt/rocm-6.3.3, not the default release /opt/rocm (/opt/rocm-6.4.1)" in result["message"]
    assert "finds /opt/rocm-6.3.3/bin first on PATH, not the default release's /opt/rocm/bin" in result["message"]


def test_the_release_directory_itself_is_the_default_release(root):
    write(root, "/etc/profile.d/rocm.sh", "export ROCM_PATH=/opt/rocm-6.4.1\nexport PATH=$PATH:/opt/rocm-6.4.1/bin\n")
    # No release_dir given: the /opt/rocm link on the host says which directory is the default.
    result = check(root, run=login_runner(root, []), release_dir=None)
    assert result["status"] == "pass", result["message"]


@pytest.fixture
def core_sdk_root(root):
    """A Core SDK host: /opt/rocm a directory whose bin is the rocm-bin alternative of the default release."""
    os.unlink(root / "opt/rocm")
    for series in ("10.0", "10.1"):
        (root / ("opt/rocm/core-%s/bin" % series)).mkdir(parents=True)
    os.symlink("/opt/rocm/core-10.1", root / "opt/rocm/core")
    os.symlink("/opt/rocm/core-10.1/bin", root / "opt/rocm/bin")
    return root


def test_on_the_core_sdk_the_bin_link_and_the_release_directory_are_the_default(core_sdk_root):
    assert check(core_sdk_root, run=login_runner(core_sdk_root, []), release_dir="/opt/rocm/core-10.1")[
        "status"] == "pass"
    write(core_sdk_root, "/etc/profile.d/zz-job.sh", "export PATH=/opt/rocm/core-10.1/bin:$PATH\n")
    assert check(core_sdk_root, run=login_runner(core_sdk_root, []), release_dir="/opt/rocm/core-10.1")[
        "status"] == "pass"


def test_on_the_core_sdk_an_older_release_first_on_path_fails(core_sdk_root):
    write(core_sdk_root, "/etc/profile.d/zz-old.sh", "export PATH=/opt/rocm/core-10.0/bin:$PATH\n")
    result = check(core_sdk_root, run=login_runner(core_sdk_root, []), release_dir="/opt/rocm/core-10.1")
    assert result["status"] == "fail"
    assert "finds /opt/rocm/core-10.0/bin first on PATH, not the default release's /opt/rocm/bin" in result["message"]


def test_nologin_users_get_sh_and_su_stands_in_for_runuser(root):
    os.remove(root / "usr/sbin/runuser")
    write(root, "/usr/bin/su", EXECUTABLE, 0o755)
    calls = []
    check(root, run=login_runner(root, calls), users=["svc"])
    assert calls[0][:5] == ["/usr/bin/su", "-", "-s", "/bin/sh", "svc"]


def test_without_a_login_shell_the_files_decide_what_they_can_and_the_rest_is_unknown(root):
    # No runner and not the live system: nothing can run.
    result = check(root)
    assert result["status"] == "unknown"
    assert result["message"].startswith("unknown: the login shell of alice: %s is not the live system" % root)
    write(root, "/etc/profile.d/zz-site.sh", "export HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    result = check(root)
    assert result["status"] == "fail"
    assert result["message"].startswith("/etc/profile.d/zz-site.sh:1 sets HSA_OVERRIDE_GFX_VERSION=11.0.0")
    assert "; not seen: the login shell of alice:" in result["message"]


def test_a_hung_login_shell_is_killed_and_unknown(root):
    def hangs(argv, timeout):
        return run_live(["sleep", "30"], timeout)

    result = check(root, run=hangs, timeout=1)
    assert result["status"] == "unknown"
    assert "sleep 30 did not finish within 1s" in result["message"]


def test_a_failing_login_shell_is_unknown_with_its_last_line(root):
    def refuses(argv, timeout):
        return run_live(["sh", "-c", "echo 'runuser: user alice does not exist' >&2; exit 1"], timeout)

    result = check(root, run=refuses)
    assert result["status"] == "unknown"
    assert "/usr/sbin/runuser -l exited 1: runuser: user alice does not exist" in result["message"]


def test_a_user_that_does_not_exist_is_unknown_here(root):
    result = check(root, run=login_runner(root, []), users=["mallory"])
    assert (result["status"], result["message"]) == (
        "unknown", "unknown: the login shell of mallory: user mallory does not exist; the files read set nothing wrong")


def test_the_manager_files_decide_without_systemctl_naming_the_drop_in(root):
    write(root, "/etc/systemd/system.conf.d/rocm-fleet.conf", '[Manager]\nDefaultEnvironment="ROCM_PATH=/opt/rocm"\n')
    result = check(root, item_id="ROCM-ENV-006", scope="service")
    assert result["status"] == "unknown", result["message"]
    assert result["actual"]["default_environment"] == {"ROCM_PATH": "/etc/systemd/system.conf.d/rocm-fleet.conf:2"}
    # Drop-ins are read in name order: 50-site.conf's ROCM_PATH comes before the role's, which wins.
    write(root, "/etc/systemd/system.conf.d/50-site.conf",
          '[Manager]\nDefaultEnvironment="HSA_OVERRIDE_GFX_VERSION=11.0.0" "ROCM_PATH=/opt/rocm-6.3.3"\n')
    result = check(root, item_id="ROCM-ENV-006", scope="service")
    assert result["status"] == "fail"
    assert result["message"].startswith(
        "/etc/systemd/system.conf.d/50-site.conf:2 sets HSA_OVERRIDE_GFX_VERSION=11.0.0, not wanted")
    assert "ROCM_PATH" not in result["message"]
    os.rename(root / "etc/systemd/system.conf.d/50-site.conf", root / "etc/systemd/system.conf.d/zz-site.conf")
    result = check(root, item_id="ROCM-ENV-006", scope="service")
    assert ("the DefaultEnvironment in effect (ROCM_PATH from /etc/systemd/system.conf.d/zz-site.conf:2) has "
            "ROCM_PATH=/opt/rocm-6.3.3, not the default release") in result["message"]


def test_a_host_not_booted_with_systemd_has_no_service_environment_to_check(root):
    write(root, "/etc/systemd/system.conf.d/50-site.conf",
          '[Manager]\nDefaultEnvironment="HSA_OVERRIDE_GFX_VERSION=11.0.0"\n')
    os.rmdir(root / "run/systemd/system")
    result = check(root, item_id="ROCM-ENV-006", scope="service")
    assert (result["status"], result["message"]) == (
        "skipped", "not booted with systemd (no /run/systemd/system): no service manager environment to check")
    # The login shell is another matter: it is checked all the same.
    assert check(root, run=login_runner(root, []))["status"] == "pass"


def test_user_managers_environment_d_is_read(root):
    write(root, "/etc/environment.d/90-gpu.conf", "HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    result = check(root, item_id="ROCM-ENV-006", scope="service", require_rocm_path=False)
    assert result["message"].startswith("/etc/environment.d/90-gpu.conf:1 sets HSA_OVERRIDE_GFX_VERSION=11.0.0")


def test_systemctl_that_cannot_reach_a_manager_is_unknown(root):
    """This machine's own systemctl, where it runs; without systemd as PID 1 it says why it cannot."""
    write(root, "/usr/bin/systemctl", EXECUTABLE, 0o755)
    try:
        rc, _out, err = run_live(["systemctl", "show-environment"], 10)
    except CommandUnavailable:
        pytest.skip("no systemctl on this machine")
    result = check(root, run=lambda argv, timeout: run_live(["systemctl"] + argv[1:], timeout),
                   item_id="ROCM-ENV-006", scope="service", require_rocm_path=False)
    if rc == 0:
        assert result["actual"]["read"] is True and "PATH" in result["actual"]["environment"]
    else:
        assert result["status"] == "unknown"
        assert "systemctl show-environment exited %d: %s" % (rc, err.strip().splitlines()[0]) in result["message"]


def test_invalid_items_are_errors():
    host = HostView("/nonexistent")
    result = evaluate_item({"id": "X-1", "kind": "job_environment", "expect": {"scope": "login"}}, 0, host)
    assert result["message"] == "X-1: expect.users: must not be empty for scope login"
    result = evaluate_item({"id": "X-1", "kind": "job_environment",
                            "expect": {"scope": "service", "hsa_overrides": {"PATH": "x"}}}, 0, host)
    assert result["status"] == "error" and "hsa_overrides.PATH" in result["message"]


def test_shell_assignments_are_read_as_written():
    text = ('export A=1 B="two words"\nif true; then export HSA_OVERRIDE_GFX_VERSION=11.0.0; fi\n'
            "# export C=3\necho D=4\n")
    assert [(entry["name"], entry["value"], entry["line"]) for entry in shell_assignments(text, "/f")] == [
        ("A", "1", 1), ("B", "two words", 1), ("HSA_OVERRIDE_GFX_VERSION", "11.0.0", 2)]


def test_default_environment_follows_systemd_order_and_reset():
    files = [("/etc/systemd/system.conf", '[Manager]\nDefaultEnvironment="A=1" B=2\n'),
             ("/etc/systemd/system.conf.d/a.conf", "[Manager]\nDefaultEnvironment=\n"),
             ("/etc/systemd/system.conf.d/b.conf",
              "[Manager]\nDefaultEnvironment=B=3\n[Other]\nDefaultEnvironment=C=4\n")]
    assert manager_default_environment(files) == [
        {"name": "B", "value": "3", "path": "/etc/systemd/system.conf.d/b.conf", "line": 2}]


def test_override_and_path_decisions():
    assert override_problems({"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}, {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}) == []
    assert override_problems({}, {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}) == [
        "the environment lacks HSA_OVERRIDE_GFX_VERSION_2, expected 10.3.0"]
    assert override_problems({"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"})[0] \
        .endswith("not wanted: HSA_OVERRIDE_GFX_VERSION: this host needs only HSA_OVERRIDE_GFX_VERSION_2=10.3.0")

    def is_default(directory):
        return directory in ("/usr", "/opt/rocm")

    assert rocm_path_problems({"ROCM_PATH": "/usr", "PATH": "/usr/local/bin:/usr/bin:/opt/rocm-6.3.3/bin"},
                              "/usr", "", is_default) == []
    assert rocm_path_problems({"ROCM_PATH": "/opt/rocm", "PATH": "/usr/bin"}, "/opt/rocm", "", is_default) == [
        "the environment has no ROCm directory on PATH, expected /opt/rocm/bin"]
    assert rocm_path_problems({"PATH": "/usr/bin"}, "/opt/rocm", "", is_default, require_rocm_path=False,
                              require_path=False) == []


# ---- ROCM-ENV-006: DefaultEnvironment written but not applied (pending daemon-reexec or the next boot) -------------

DROP_IN = "/etc/systemd/system.conf.d/rocm-fleet.conf"


def manager_runner(environment, calls=None):
    """``systemctl show-environment`` of a manager that runs with ``environment`` (one NAME=VALUE line each, as it
    prints a value without special characters)."""

    def run(argv, timeout):
        if calls is not None:
            calls.append(argv)
        assert argv[1:] == ["show-environment"], argv
        return 0, "".join("%s=%s\n" % item for item in sorted(environment.items())), ""

    return run


@pytest.fixture
def manager_root(root):
    write(root, "/usr/bin/systemctl", EXECUTABLE, 0o755)
    write(root, DROP_IN, '[Manager]\nDefaultEnvironment="ROCM_PATH=/opt/rocm"\n')
    return root


def service_check(root, environment, **expect):
    expect.setdefault("role_files", [DROP_IN])
    return check(root, run=manager_runner(environment), item_id="ROCM-ENV-006", scope="service", **expect)


def test_a_default_environment_that_the_running_manager_has_passes(manager_root):
    calls = []
    result = check(manager_root, run=manager_runner({"PATH": "/usr/bin:/bin", "ROCM_PATH": "/opt/rocm"}, calls),
                   item_id="ROCM-ENV-006", scope="service", role_files=[DROP_IN])
    assert result["status"] == "pass", result["message"]
    assert calls == [["/usr/bin/systemctl", "show-environment"]]
    assert result["actual"]["pending"] == []


def test_a_pending_wrong_override_fails_saying_it_is_pending_and_what_applies_it(manager_root):
    write(manager_root, "/etc/systemd/system.conf.d/50-site.conf",
          '[Manager]\nDefaultEnvironment="HSA_OVERRIDE_GFX_VERSION=11.0.0"\n')
    result = service_check(manager_root, {"PATH": "/usr/bin:/bin", "ROCM_PATH": "/opt/rocm"})
    assert result["status"] == "fail"
    assert result["message"] == (
        "/etc/systemd/system.conf.d/50-site.conf:2 sets HSA_OVERRIDE_GFX_VERSION=11.0.0, not wanted: "
        "HSA_OVERRIDE_GFX_VERSION: ROCm supports gfx942 natively, and an override makes the runtime load another "
        "target's code objects (pending: the running manager has none yet; systemctl daemon-reexec or the next boot "
        "applies it)")
    assert result["actual"]["pending"] == [{"name": "HSA_OVERRIDE_GFX_VERSION", "value": "11.0.0", "running": None,
                                            "path": "/etc/systemd/system.conf.d/50-site.conf", "line": 2}]
    # Not the role's file: a person's, who removes it (or applies it).
    assert result["repair"].startswith("a person applies the pending settings of "
                                       "/etc/systemd/system.conf.d/50-site.conf (systemctl daemon-reexec")
    # Once applied, the running manager has it: the same finding, no longer pending.
    result = service_check(manager_root, {"ROCM_PATH": "/opt/rocm", "HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    assert result["status"] == "fail" and "pending" not in result["message"]
    assert result["message"].startswith("the systemd manager environment has HSA_OVERRIDE_GFX_VERSION=11.0.0 "
                                        "(from /etc/systemd/system.conf.d/50-site.conf:2), not wanted")


def test_a_running_value_that_differs_from_the_files_is_pending_too(manager_root):
    needed = {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    write(manager_root, DROP_IN,
          '[Manager]\nDefaultEnvironment="ROCM_PATH=/opt/rocm" "HSA_OVERRIDE_GFX_VERSION=10.3.0"\n')
    result = service_check(manager_root, {"ROCM_PATH": "/opt/rocm", "HSA_OVERRIDE_GFX_VERSION": "11.0.0"},
                           hsa_overrides=needed, gfx_targets=["gfx1031"])
    assert result["status"] == "fail"
    assert result["message"].split("; ") == [
        "the systemd manager environment has HSA_OVERRIDE_GFX_VERSION=11.0.0 (in no DefaultEnvironment file now: "
        "set by systemctl set-environment, or removed from the files and gone at the next daemon-reexec or boot), "
        "expected 10.3.0",
        "pending: %s:2 sets HSA_OVERRIDE_GFX_VERSION=10.3.0, the running manager has HSA_OVERRIDE_GFX_VERSION=11.0.0 "
        "(systemctl daemon-reexec or the next boot applies it)" % DROP_IN]
    # Only the role's own drop-in waits, and applied it leaves nothing wrong: site.yml re-executes the manager.
    assert result["repair"] == ("site.yml re-executes the systemd manager (systemctl daemon-reexec) where %s is not "
                                "applied yet" % DROP_IN)
    assert result["action"] == "reexec"


def test_the_roles_pending_drop_in_is_site_yml_s_a_foreign_one_a_persons(manager_root):
    item = {"id": "ROCM-ENV-006", "kind": "job_environment", "repair": "a person: remove the setting named",
            "expect": {"scope": "service", "role_files": [DROP_IN], "gfx_targets": ["gfx942"],
                       "release_dir": "/opt/rocm-6.4.1"}}
    # The role's drop-in, written, not applied: the manager lacks ROCM_PATH.
    result = evaluate_item(item, 0, HostView(str(manager_root), run=manager_runner({"PATH": "/usr/bin"})))
    assert result["status"] == "fail"
    assert result["message"] == (
        "the systemd manager environment lacks ROCM_PATH, expected /opt/rocm; pending: %s:2 sets "
        "ROCM_PATH=/opt/rocm, the running manager has none (systemctl daemon-reexec or the next boot applies it)"
        % DROP_IN)
    assert result["repair"].startswith("site.yml re-executes the systemd manager")
    # Not listed as the role's: a person's to apply.
    result = evaluate_item(dict(item, expect=dict(item["expect"], role_files=[])), 0,
                           HostView(str(manager_root), run=manager_runner({"PATH": "/usr/bin"})))
    assert result["repair"] == (
        "a person: remove the setting named; a person applies the pending settings of %s (systemctl "
        "daemon-reexec, or the next boot) or removes them" % DROP_IN)


def test_another_releases_library_path_fails_in_login_shells_and_services(manager_root):
    write(manager_root, "/etc/profile.d/zz-old.sh", "export LD_LIBRARY_PATH=/opt/rocm-6.3.3/lib\n")
    result = check(manager_root, run=login_runner(manager_root, []))
    assert result["status"] == "fail"
    assert ("the login shell of alice has LD_LIBRARY_PATH with /opt/rocm-6.3.3/lib (from /etc/profile.d/zz-old.sh:1): "
            "another release's libraries, which the loader takes before its cache") in result["message"]
    assert result["actual"]["users"]["alice"]["other_release_libraries"] == 1
    # Without the shell, the file line says it.
    assert "/etc/profile.d/zz-old.sh:1 sets LD_LIBRARY_PATH with /opt/rocm-6.3.3/lib" in check(manager_root)["message"]
    # The default release's own directory is no finding.
    write(manager_root, "/etc/profile.d/zz-old.sh", "export LD_LIBRARY_PATH=/opt/rocm/lib:/opt/rocm-6.4.1/lib\n")
    assert check(manager_root, run=login_runner(manager_root, []))["status"] == "pass"
    result = service_check(manager_root, {"ROCM_PATH": "/opt/rocm", "LD_LIBRARY_PATH": "/opt/rocm-6.3.3/lib64"})
    assert result["status"] == "fail"
    assert result["message"].startswith("the systemd manager environment has LD_LIBRARY_PATH with "
                                        "/opt/rocm-6.3.3/lib64 (in no DefaultEnvironment file now")
