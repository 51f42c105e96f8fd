"""Boot parameters, module options and the reboot decision of the kernel role."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.filter.managed import role_os_vars_files
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import ROLES_DIR, read_argument_specs
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.variables import role_variable_problems
from fleet_testing.roles import ROLES, find_task, load_yaml, render, render_template

SPECS = read_argument_specs(ROLES_DIR)

MI300X_PARAMS = ["iommu=pt", "pci=realloc=off"]


def reboot_reasons(cmdline: str, params: list[str], markers: list[str]) -> dict:
    task = find_task("kernel/tasks/reboot_pending.yml", "Record whether the host needs a reboot")
    return render(
        task["ansible.builtin.set_fact"],
        kernel_boot_params=params,
        __kernel_cmdline={"content": base64.b64encode(cmdline.encode()).decode()},
        __kernel_reboot_markers={"files": [{"path": f"/run/rocm-fleet/reboot-required/{name}"} for name in markers]},
        **task["vars"],
    )


def test_active_parameters_need_no_reboot():
    cmdline = "BOOT_IMAGE=/boot/vmlinuz-6.1.0 root=UUID=1 ro quiet iommu=pt pci=realloc=off\n"
    assert reboot_reasons(cmdline, MI300X_PARAMS, []) == {"kernel_reboot_pending": False, "kernel_reboot_reasons": []}


def test_parameters_missing_from_this_boot_need_a_reboot():
    result = reboot_reasons("root=UUID=1 ro quiet iommu=pt\n", MI300X_PARAMS, [])
    assert result["kernel_reboot_pending"] is True
    assert result["kernel_reboot_reasons"] == ["boot parameters not active: pci=realloc=off"]


def test_a_parameter_is_matched_whole_not_as_a_prefix():
    assert reboot_reasons("ro iommu=ptx\n", ["iommu=pt"], [])["kernel_reboot_pending"] is True


def test_markers_of_other_changes_are_reasons():
    result = reboot_reasons("ro\n", [], ["packages-amdgpu-dkms", "kernel-modprobe-options"])
    assert result["kernel_reboot_reasons"] == ["packages-amdgpu-dkms", "kernel-modprobe-options"]


def grubby_entries_without(param: str, info: str) -> list[str]:
    task = find_task("kernel/tasks/boot_params_grubby.yml", "Add each boot parameter that a boot entry lacks")
    return render(
        "{{ __kernel_entries_without }}",
        item=param,
        __kernel_grubby_info={"stdout_lines": info.splitlines()},
        **task["vars"],
    )


GRUBBY_INFO = """index=0
kernel="/boot/vmlinuz-5.14.0-427.el9.x86_64"
args="ro crashkernel=1G-4G:192M iommu=pt rhgb quiet"
root="/dev/mapper/rhel-root"
index=1
kernel="/boot/vmlinuz-5.14.0-362.el9.x86_64"
args="iommu=pt ro pci=realloc=off"
"""


@pytest.mark.parametrize(
    ("param", "lacking"), [("iommu=pt", 0), ("pci=realloc=off", 1), ("quiet", 1), ("pci=realloc", 2)]
)
def test_grubby_adds_a_parameter_only_where_an_entry_lacks_it(param, lacking):
    assert len(grubby_entries_without(param, GRUBBY_INFO)) == lacking


def test_grub_dropin_appends_to_the_distribution_value(tmp_path):
    dropin = tmp_path / "90-rocm-fleet.cfg"
    dropin.write_text(render_template("kernel/templates/grub-dropin.cfg.j2", kernel_boot_params=MI300X_PARAMS))
    # GRUB's scripts source /etc/default/grub and then each drop-in with sh.
    script = f'GRUB_CMDLINE_LINUX_DEFAULT="quiet"; . {dropin}; printf %s "$GRUB_CMDLINE_LINUX_DEFAULT"'
    result = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout == "quiet iommu=pt pci=realloc=off"
    assert dropin.read_text().startswith("#")


def test_modprobe_options_file():
    text = render_template(
        "kernel/templates/modprobe.conf.j2", kernel_modprobe_options={"amdgpu": {"noretry": 0, "mes": 1}}
    )
    options = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert options == ["options amdgpu mes=1 noretry=0"]


def test_boot_parameter_check_refuses_shell_characters():
    # The GRUB drop-in is shell: role_variables refuses what would be more than a parameter (meta/value_syntax.yml).
    good = [*MI300X_PARAMS, "crashkernel=1G-4G:192M", "modprobe.blacklist=amdgpu"]
    assert role_variable_problems({"kernel_boot_params": good}, SPECS, roles=["kernel"]) == []
    for bad in ['iommu=pt"', "a b", "$(reboot)", "x;`id`", "a\\b", "a'b"]:
        problems = role_variable_problems({"kernel_boot_params": [bad]}, SPECS, roles=["kernel"])
        assert len(problems) == 1 and problems[0].startswith("kernel_boot_params[0] contains "), bad
    assert "kernel_boot_params" not in str(find_task("kernel/tasks/preflight.yml", "Check the module options' shape"))


def kernel_objects(family: str, **overrides) -> list[dict]:
    """The role's managed objects from its defaults, vars/main.yml and the OS family's vars."""
    variables = {**load_yaml("kernel/defaults/main.yml"), **load_yaml("kernel/vars/main.yml"),
                 **load_yaml(f"kernel/vars/{family}.yml"), "preflight_decision": {}, **overrides}
    return render("{{ __kernel_objects }}", **variables)


@pytest.mark.parametrize("family", ["Debian", "RedHat", "Suse"])
def test_every_family_names_an_existing_way_to_set_boot_parameters(family):
    data = load_yaml(f"kernel/vars/{family}.yml")
    loader = data["__kernel_boot_loader"]
    include = find_task("kernel/tasks/main.yml",
                        "Set the boot parameters where the boot loader has no drop-in directory")
    assert include["ansible.builtin.include_tasks"] == "boot_params_{{ __kernel_boot_loader }}.yml"
    assert include["when"] == "__kernel_boot_loader != 'grub_dropin'"
    dropins = [obj for obj in kernel_objects(family, kernel_boot_params=MI300X_PARAMS) if obj["id"] == "ROCM-BOOT-001"]
    if loader == "grub_dropin":
        # No task file: the drop-in is one of the role's managed files.
        assert not (ROLES / "kernel/tasks/boot_params_grub_dropin.yml").exists()
        assert [(obj["path"], obj["template"], obj["state"]) for obj in dropins] == [
            (data["__kernel_grub_dropin"], "grub-dropin.cfg.j2", "present")]
        assert (ROLES / "kernel/templates/grub-dropin.cfg.j2").is_file()
    else:
        assert load_yaml(f"kernel/tasks/boot_params_{loader}.yml")
        # grubby: compliance proves every boot entry holds the parameters (the task file adds them). GRUB's
        # defaults file (SLES): the marked block the task file writes, the same object.
        expected = {"grubby": [("boot_entries", MI300X_PARAMS)],
                    "grub_default": [("block", 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} %s"'
                                      % " ".join(MI300X_PARAMS))]}[loader]
        assert [(obj["kind"], obj.get("params", obj.get("block"))) for obj in dropins] == expected
    assert data["__kernel_initramfs_command"][0].startswith("/")


def test_the_grub_dropin_is_removed_when_no_boot_parameters_are_wanted():
    [dropin] = [obj for obj in kernel_objects("Debian", kernel_boot_params=[]) if obj["id"] == "ROCM-BOOT-001"]
    assert dropin["state"] == "absent" and dropin["label"] == "kernel: /etc/default/grub.d/90-rocm-fleet.cfg"


@pytest.mark.parametrize(("family", "grub_file"), [
    ("Debian", "/etc/default/grub.d/90-rocm-fleet.cfg"), ("RedHat", ""),
])
def test_active_boot_parameters_are_repaired_by_a_reboot_not_by_a_task(family, grub_file):
    objects = kernel_objects(family, kernel_boot_params=MI300X_PARAMS, kernel_reboot_allowed=False)
    [active] = [obj for obj in objects if obj["kind"] == "kernel_cmdline"]
    assert (active["id"], active["params"], active["grub_file"]) == ("ROCM-BOOT-002", MI300X_PARAMS, grub_file)
    assert active["repair"].startswith("a reboot in a maintenance window")
    allowed = kernel_objects(family, kernel_boot_params=MI300X_PARAMS, kernel_reboot_allowed=True)
    assert next(obj for obj in allowed if obj["kind"] == "kernel_cmdline")["repair"].startswith("a reboot, which")
    assert not [obj for obj in kernel_objects(family) if obj["kind"] == "kernel_cmdline"]


def test_each_sysctl_is_one_object_labelled_with_its_value():
    objects = kernel_objects("RedHat", kernel_sysctls={"vm.max_map_count": 1048576, "kernel.numa_balancing": 0})
    sysctls = [obj for obj in objects if obj["kind"] == "sysctl"]
    assert [(obj["label"], obj["file"], obj["file_id"]) for obj in sysctls] == [
        ("kernel: kernel.numa_balancing=0", "/etc/sysctl.d/90-rocm-fleet.conf", "ROCM-SYSCTL-002"),
        ("kernel: vm.max_map_count=1048576", "/etc/sysctl.d/90-rocm-fleet.conf", "ROCM-SYSCTL-002"),
    ]
    modprobe = next(obj for obj in objects if obj["id"] == "ROCM-KMOD-001")
    assert (modprobe["path"], modprobe["state"]) == ("/etc/modprobe.d/rocm-fleet.conf", "absent")




@pytest.mark.parametrize(
    ("facts", "packages"),
    [
        ({"os_family": "Debian", "distribution": "Debian"}, ["linux-image-{k}", "linux-headers-{k}"]),
        # AMD's Ubuntu prerequisites add the extra modules, which Ubuntu's image does not pull in.
        ({"os_family": "Debian", "distribution": "Ubuntu"},
         ["linux-image-{k}", "linux-headers-{k}", "linux-modules-extra-{k}"]),
        ({"os_family": "RedHat", "distribution": "RedHat"}, ["kernel-{k}", "kernel-devel-{k}"]),
    ],
)
def test_a_kernel_update_installs_what_the_distribution_and_amd_need_for_amdgpu(facts, packages):
    merged = {}
    for path in role_os_vars_files("kernel", facts):
        merged.update(load_yaml(f"kernel/vars/{Path(path).name}"))
    assert merged["__kernel_update_packages"] == packages
