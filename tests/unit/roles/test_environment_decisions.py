"""The environment role's profile, systemd drop-in and checks, rendered from its own templates."""

from __future__ import annotations

import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import compliance_items
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import ROLES_DIR, read_argument_specs
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.variables import role_variable_problems
from fleet_testing.roles import evaluate, find_task, load_yaml, render, render_template

SPECS = read_argument_specs(ROLES_DIR)

VARIABLES = load_yaml("environment/vars/main.yml")["__environment_variables"]


def exported(overrides: dict, arch: str = "", extra: dict | None = None, rocm_path: str = "/opt/rocm") -> dict:
    return render(
        VARIABLES,
        environment_hsa_overrides=overrides,
        environment_pytorch_rocm_arch=arch,
        environment_variables=extra or {},
        environment_rocm_path=rocm_path,
    )


def profile(tmp_path, **kwargs) -> str:
    path = tmp_path / "rocm.sh"
    text = render_template(
        "environment/templates/rocm.sh.j2",
        environment_rocm_path=kwargs.pop("rocm_path", "/opt/rocm"),
        __environment_variables=exported(**kwargs),
    )
    path.write_text(text)
    return str(path)


def login_shell(script: str, *names: str) -> list[str]:
    # Sourcing twice, as nested login shells do, must not grow PATH.
    printed = " ".join(f'"${name}"' for name in names)
    command = f'PATH=/usr/bin:/bin; . {script}; . {script}; printf "%s\\n" {printed}'
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=True).stdout.splitlines()


def test_rx6700xt_gets_the_gfx1030_override(tmp_path):
    script = profile(tmp_path, overrides={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, arch="gfx1030")
    assert login_shell(script, "ROCM_PATH", "PATH", "HSA_OVERRIDE_GFX_VERSION", "PYTORCH_ROCM_ARCH") == [
        "/opt/rocm",
        "/usr/bin:/bin:/opt/rocm/bin",
        "10.3.0",
        "gfx1030",
    ]


def test_supported_targets_get_no_override(tmp_path):
    script = profile(tmp_path, overrides={}, arch="gfx942")
    with open(script) as handle:
        text = handle.read()
    assert "HSA_OVERRIDE" not in text
    assert "LD_LIBRARY_PATH" not in text
    assert login_shell(script, "PYTORCH_ROCM_ARCH") == ["gfx942"]


def test_mixed_hosts_get_per_device_overrides(tmp_path):
    overrides = {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}
    script = profile(tmp_path, overrides=overrides, arch="gfx1030;gfx1100")
    assert login_shell(script, "HSA_OVERRIDE_GFX_VERSION_2", "PYTORCH_ROCM_ARCH") == ["10.3.0", "gfx1030;gfx1100"]


def test_a_host_without_gpus_gets_only_rocm_path(tmp_path):
    assert exported(overrides={}) == {}
    assert login_shell(profile(tmp_path, overrides={}), "ROCM_PATH") == ["/opt/rocm"]


def test_systemd_dropin_quotes_each_assignment():
    text = render_template(
        "environment/templates/systemd-rocm.conf.j2",
        environment_rocm_path="/opt/rocm",
        __environment_variables={"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "PYTORCH_ROCM_ARCH": "gfx1030"},
    )
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines == [
        "[Manager]",
        'DefaultEnvironment="ROCM_PATH=/opt/rocm" "HSA_OVERRIDE_GFX_VERSION=10.3.0" "PYTORCH_ROCM_ARCH=gfx1030"',
    ]


def test_linker_paths_follow_rocm_path():
    defaults = load_yaml("environment/defaults/main.yml")
    dirs = defaults["environment_ld_library_dirs"]
    assert render(dirs, environment_rocm_path="/opt/rocm") == ["/opt/rocm/lib", "/opt/rocm/lib64"]
    assert render(dirs, environment_rocm_path="/usr") == []


@pytest.mark.parametrize(("source", "path"), [("amd", "/opt/rocm"), ("mirror", "/opt/rocm"), ("distro", "/usr")])
def test_rocm_path_follows_the_source(source, path):
    default = load_yaml("environment/defaults/main.yml")["environment_rocm_path"]
    assert render(default, repo_source=source) == path


def environment_objects(family: str = "Debian", **overrides) -> list[dict]:
    """The role's managed objects from its defaults, vars/main.yml and the OS family's vars."""
    variables = {**load_yaml("environment/defaults/main.yml"), **load_yaml("environment/vars/main.yml"),
                 **load_yaml(f"environment/vars/{family}.yml"), "preflight_decision": {"rocm_version": "6.4.1"},
                 **overrides}
    return render("{{ __environment_objects }}", **variables)


@pytest.mark.parametrize(("family", "directory"), [
    ("Debian", "/etc/environment-modules/modules/rocm"), ("RedHat", "/etc/modulefiles/rocm"),
])
def test_a_modulefile_object_per_listed_release_in_the_family_directory(family, directory):
    modulefiles = [obj for obj in environment_objects(family, environment_modulefiles=True,
                                                      environment_rocm_versions=["6.3.3", "6.4.1"])
                   if obj["id"] == "ROCM-ENV-004"]
    assert [(obj["kind"], obj["label"]) for obj in modulefiles] == [
        ("directory", f"environment: {directory}"),
        ("file", f"environment: {directory}/6.3.3"),
        ("file", f"environment: {directory}/6.4.1"),
    ]
    assert [obj.get("name") for obj in modulefiles[1:]] == ["6.3.3", "6.4.1"]
    assert all(obj["template"] == "modulefile.j2" and obj["mode"] == "0644" for obj in modulefiles[1:])
    assert not [obj for obj in environment_objects(family, environment_rocm_versions=["6.3.3"])
                if obj["id"] == "ROCM-ENV-004"]


def test_modulefile_starts_with_the_magic_cookie():
    [obj] = [obj for obj in environment_objects(environment_modulefiles=True, environment_rocm_versions=["6.3.3"])
             if obj["kind"] == "file" and obj["id"] == "ROCM-ENV-004"]
    # The common role's template task gives the object as its loop item, with the role's variables.
    roots = {"6.3.3": "/opt/rocm-6.3.3", "10.1.0": "/opt/rocm/core-10.1"}
    text = render_template("environment/templates/modulefile.j2", item=obj, __environment_release_roots=roots)
    assert text.startswith("#%Module")
    assert "setenv ROCM_PATH /opt/rocm-6.3.3" in text
    assert "prepend-path PATH /opt/rocm-6.3.3/bin" in text
    # A Core SDK release's modulefile names its install root (release_streams.yml install_root).
    text = render_template("environment/templates/modulefile.j2", item=dict(obj, name="10.1.0"),
                           __environment_release_roots=roots)
    assert "setenv ROCM_PATH /opt/rocm/core-10.1" in text and "prepend-path PATH /opt/rocm/core-10.1/bin" in text


def test_the_release_roots_follow_each_stream():
    variables = {**load_yaml("environment/defaults/main.yml"), **load_yaml("environment/vars/main.yml"),
                 "preflight_decision": {"rocm_version": "10.1.0"}, "environment_rocm_versions": ["7.2.3", "10.1.0"]}
    assert render("{{ __environment_release_roots }}", **variables) == {
        "7.2.3": "/opt/rocm-7.2.3", "10.1.0": "/opt/rocm/core-10.1"}
    assert render("{{ __environment_release_dir }}", **variables) == "/opt/rocm/core-10.1"


def test_the_base_objects_follow_the_switches():
    labels = [obj["label"] for obj in environment_objects()]
    assert labels == ["environment: /etc/profile.d/rocm.sh", "environment: /etc/systemd/system.conf.d",
                      "environment: /etc/systemd/system.conf.d/rocm-fleet.conf",
                      "environment: /etc/ld.so.conf.d/rocm.conf", "environment: the environment services get",
                      "environment: no variable hides GPUs from every login session or service",
                      "environment: the loader resolves the ROCm runtime libraries to the default release"]
    states = {obj["path"]: obj.get("state") for obj in environment_objects(environment_systemd_dropin=False,
                                                                          packages_source="distro") if "path" in obj}
    assert "/etc/systemd/system.conf.d" not in states
    assert states["/etc/systemd/system.conf.d/rocm-fleet.conf"] == "absent"
    assert states["/etc/ld.so.conf.d/rocm.conf"] == "absent"  # /usr needs no linker path


def test_names_and_values_that_break_out_of_the_files_are_refused_by_the_one_check():
    # profile.d and the systemd drop-in: names are identifiers, values have no " or \ or newline (value_syntax.py).
    for extra in ({"BAD NAME": "1"}, {"X": 'a"b'}, {"X": "a\nb"}, {"X": "a\\b"}):
        problems = role_variable_problems({"environment_variables": extra}, SPECS, roles=["environment"])
        assert len(problems) == 1 and problems[0].startswith("environment_variables"), extra
    fine = {"X": "gfx90a;gfx942", "Y": "$(quoted) `too`"}
    assert role_variable_problems({"environment_variables": fine}, SPECS, roles=["environment"]) == []


@pytest.mark.parametrize(
    ("overrides", "extra", "visibility", "valid"),
    [
        ({"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {}, {}, True),
        ({"HSA_OVERRIDE_GFX_VERSION_3": "11.0.0"}, {"HIP_FORCE_DEV_KERNARG": "1"}, {}, True),
        ({"HSA_OVERRIDE_GFX_VERSION": ""}, {}, {}, False),
        ({"HSA_OVERRIDE_GFX_VERSION": "gfx1030"}, {}, {}, False),
        ({"HSA_OVERRIDE": "10.3.0"}, {}, {}, False),
        ({}, {"LD_LIBRARY_PATH": "/opt/rocm/lib"}, {}, False),
        ({}, {"PATH": "/opt/rocm/bin"}, {}, False),
        # The device visibility variables are declared (ROCM-ENV-007), never written by the role.
        ({}, {}, {"HIP_VISIBLE_DEVICES": "0,1", "GPU_DEVICE_ORDINAL": 0}, True),
        ({}, {}, {"VISIBLE_DEVICES": "0"}, False),
        ({}, {"ROCR_VISIBLE_DEVICES": "0"}, {}, False),
    ],
)
def test_variable_checks(overrides, extra, visibility, valid):
    task = find_task("environment/tasks/preflight.yml", "Check the variable names and values")
    variables = exported(overrides=overrides, extra=extra)
    results = [
        evaluate(
            condition,
            __environment_variables=variables,
            environment_hsa_overrides=overrides,
            environment_modulefiles=False,
            environment_rocm_versions=[],
            environment_device_visibility=visibility,
            __environment_visibility_names=load_yaml("environment/vars/main.yml")["__environment_visibility_names"],
        )
        for condition in task["ansible.builtin.assert"]["that"]
    ]
    assert all(results) is valid


def test_the_job_environment_checks_take_the_written_overrides_and_the_default_release():
    decision = {"rocm_version": "6.4.1", "gfx_targets": ["gfx1031"], "hsa_overrides": {}}
    checked = [obj for obj in environment_objects(
        preflight_decision=decision, access_users=[{"name": "alice"}],
        environment_hsa_overrides={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
        environment_pytorch_rocm_arch="gfx1030", environment_rocm_path="/opt/rocm",
        environment_variables={"HSA_ENABLE_SDMA": "0"}) if obj["kind"] == "job_environment"]
    assert [(obj["id"], obj["scope"], obj["users"]) for obj in checked] == [
        ("ROCM-ENV-005", "login", ["alice"]), ("ROCM-ENV-006", "service", [])]
    for obj in checked:
        assert obj["hsa_overrides"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
        assert (obj["rocm_path"], obj["release_dir"], obj["gfx_targets"]) == (
            "/opt/rocm", "/opt/rocm-6.4.1", ["gfx1031"])
    assert checked[1]["require_rocm_path"] is True
    # What is pending in the role's own drop-in, site.yml applies (tasks/main.yml re-executes the manager).
    assert checked[1]["role_files"] == ["/etc/systemd/system.conf.d/rocm-fleet.conf"] and "role_files" not in checked[0]
    # Without listed users no login shell is started; the distribution's ROCm has no release directory.
    checked = [obj for obj in environment_objects(environment_rocm_path="/usr") if obj["kind"] == "job_environment"]
    assert [(obj["id"], obj["release_dir"]) for obj in checked] == [("ROCM-ENV-006", "")]


def test_the_device_visibility_check_takes_the_hosts_logical_gpus_and_the_declared_settings():
    def visibility(**overrides):
        [obj] = [obj for obj in environment_objects(**overrides) if obj["kind"] == "device_visibility"]
        return obj

    detected = {"rocm_version": "6.4.1", "gpu_count": 8, "partitions": {"expected_gpu_count": None}}
    obj = visibility(preflight_decision=detected, access_users=[{"name": "alice"}])
    assert (obj["id"], obj["gpu_count"], obj["declared"], obj["users"]) == ("ROCM-ENV-007", 8, {}, ["alice"])
    # Declared partition modes: their logical count (8 MI300X in CPX: 64); the inventory's count wins over both.
    cpx = dict(detected, partitions={"expected_gpu_count": 64})
    assert visibility(preflight_decision=cpx)["gpu_count"] == 64
    assert visibility(preflight_decision=cpx, preflight_expected_gpu_count=16)["gpu_count"] == 16
    assert visibility(preflight_decision=detected, preflight_expected_gpu_count=None)["gpu_count"] == 8
    declared = {"HIP_VISIBLE_DEVICES": "0,1"}
    assert visibility(preflight_decision=detected, environment_device_visibility=declared)["declared"] == declared
    # Nothing known: no count, which the check says.
    [item] = compliance_items([visibility(preflight_decision={"rocm_version": "6.4.1"})])
    assert "gpu_count" not in item["expect"] and item["kind"] == "device_visibility"


def test_the_loader_check_takes_the_default_release_and_the_roles_linker_file():
    [obj] = [obj for obj in environment_objects() if obj["kind"] == "runtime_libraries"]
    assert (obj["id"], obj["rocm_path"], obj["release_dir"], obj["role_files"]) == (
        "ROCM-ENV-008", "/opt/rocm", "/opt/rocm-6.4.1", ["/etc/ld.so.conf.d/rocm.conf"])
    # The distribution's ROCm: no linker file of the role's, ROCM_PATH /usr.
    [obj] = [obj for obj in environment_objects(packages_source="distro") if obj["kind"] == "runtime_libraries"]
    assert (obj["rocm_path"], obj["release_dir"], obj["role_files"]) == ("/usr", "", [])


def test_what_is_pending_in_the_roles_files_calls_their_handlers():
    """tasks/main.yml reads ROCM-ENV-006 and ROCM-ENV-008 for the role's own files; what they report pending there
    notifies the handler that applies it (and only the role's files: another file's pending change is a person's)."""
    task = find_task("environment/tasks/main.yml",
                     "Read what the systemd manager and the loader's cache have not applied of the role's files")
    variables = {**load_yaml("environment/defaults/main.yml"), **load_yaml("environment/vars/main.yml"),
                 **load_yaml("environment/vars/Debian.yml"), "preflight_decision": {"rocm_version": "6.4.1"}}
    objects = render(task["loop"], **variables)
    assert [(obj["id"], obj["kind"]) for obj in objects] == [("ROCM-ENV-006", "job_environment"),
                                                             ("ROCM-ENV-008", "runtime_libraries")]
    items = [render(task["rocm_fleet.core.node_compliance"]["items"], item=obj, **variables)[0] for obj in objects]
    assert items[0]["expect"]["scope"] == "service" and "users" not in items[0]["expect"]
    assert items[1]["expect"] == {"rocm_path": "/opt/rocm", "release_dir": "/opt/rocm-6.4.1",
                                  "role_files": ["/etc/ld.so.conf.d/rocm.conf"]}
    dropin, linker = "/etc/systemd/system.conf.d/rocm-fleet.conf", "/etc/ld.so.conf.d/rocm.conf"
    registered = {"results": [
        {"item": objects[0], "results": [{"kind": "job_environment", "actual": {"pending": [
            {"name": "ROCM_PATH", "path": dropin}, {"name": "HIP_VISIBLE_DEVICES", "path": "/etc/x.conf"}]}}]},
        {"item": objects[1], "results": [{"kind": "runtime_libraries", "actual": {"pending": [
            {"path": "/etc/ld.so.conf.d/zz-old.conf", "line": 1}]}}]},
    ]}
    assert render("{{ __environment_pending_manager }}", __environment_pending=registered, **variables) == [dropin]
    assert render("{{ __environment_pending_loader }}", __environment_pending=registered, **variables) == []
    registered["results"][1]["results"][0]["actual"]["pending"].append({"path": linker, "line": 2})
    assert render("{{ __environment_pending_loader }}", __environment_pending=registered, **variables) == [linker]
    # A skipped loop (no role files) or an item in error (no actual) is nothing pending.
    errored = {"results": [{"item": objects[0], "results": [{"kind": "job_environment", "actual": None}]},
                           {"item": objects[1], "skipped": True}]}
    assert render("{{ __environment_pending_manager }}", __environment_pending=errored, **variables) == []
    assert render("{{ __environment_pending_manager }}", **variables) == []
    for name, handler in (("Re-execute the systemd manager where the role's drop-in is not applied yet",
                           "environment systemd manager changed"),
                          ("Rebuild the dynamic linker cache where it lacks the role's linker paths",
                           "environment linker paths changed")):
        assert find_task("environment/tasks/main.yml", name)["notify"] == handler
