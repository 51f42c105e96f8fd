"""Health, kernel and Secure Boot checks over rendered host trees: healthy passes, each injected state fails alone."""

from __future__ import annotations

import copy

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import HEALTH_CHECKS, evaluate_health
from fleet_testing import health_tree as tree


def statuses(results):
    out = {}
    for result in results:
        out.setdefault(result["id"], set()).add(result["status"])
    return out


def not_passing(results):
    return sorted((r["id"], r["status"], r["message"]) for r in results if r["status"] != "pass")


@pytest.fixture
def host(tmp_path):
    return tree.healthy(tmp_path)


def run(root, **changes):
    health = copy.deepcopy(tree.HEALTH)
    health.update(changes)
    return evaluate_health(health, str(root))


def test_a_healthy_host_passes_every_check_per_gpu(host):
    results = run(host)
    assert not_passing(results) == []
    assert set(statuses(results)) == set(HEALTH_CHECKS)
    assert len([r for r in results if r["id"] == "ROCM-HEALTH-001"]) == 8
    assert "GPU 3 (0000:35:00.0)" in [r for r in results if r["id"] == "ROCM-HEALTH-001"][3]["message"]


def test_a_link_trained_at_x8_fails_naming_the_gpu(host):
    tree.gpu(host, "0000:25:00.0", width=8, xgmi=[1, 1, 0, 1, 1, 1, 1, 1])
    (failed,) = [r for r in run(host) if r["status"] != "pass"]
    assert failed["id"] == "ROCM-HEALTH-001"
    assert failed["message"].startswith("GPU 2 (0000:25:00.0): PCIe link trained at x8 of x16")


def test_an_uncorrectable_error_fails_003_only(host):
    tree.write(host, "/sys/bus/pci/devices/0000:05:00.0/ras/umc_err_count", "ue: 2\nce: 3\nde: 0\n")
    assert [(i, s) for i, s, _m in not_passing(run(host))] == [("ROCM-HEALTH-003", "fail")]


def test_correctable_errors_above_the_threshold_fail_004(host):
    tree.write(host, "/sys/bus/pci/devices/0000:05:00.0/ras/gfx_err_count", "ue: 0\nce: 11\n")
    (failed,) = not_passing(run(host))
    assert failed[:2] == ("ROCM-HEALTH-004", "fail") and "11 correctable errors, above the threshold 10" in failed[2]
    assert not_passing(run(host, ce_threshold=11)) == []


def test_einval_counters_are_unknown_never_pass(host):
    for block in tree.RAS_BLOCKS:
        path = host / ("sys/bus/pci/devices/0000:05:00.0/ras/%s_err_count" % block)
        path.unlink()
        path.mkdir()  # a read that fails (EISDIR here; EINVAL on a real host): the reason, not a zero
    found = {(i, s) for i, s, _m in not_passing(run(host))}
    assert found == {("ROCM-HEALTH-003", "unknown"), ("ROCM-HEALTH-004", "unknown")}


def test_a_minimum_no_host_reports_is_said_and_skipped_never_unknown_every_night(host):
    # MI200's minimum is an IFWI version (gpu_firmware.yml): no sysfs file or amd-smi field shows it.
    results = run(host, firmware={"IFWI": {"min": "75"}})
    firmware = [r for r in results if r["id"] == "ROCM-HEALTH-005"]
    assert {r["status"] for r in firmware} == {"skipped"}
    assert firmware[0]["message"].endswith(
        "the class's minimum is IFWI 75, which no host file or amd-smi reports: check it with the vendor's flash tool")
    # Beside a minimum the host reports, it is judged by that one and named as checked by hand.
    results = run(host, firmware={"IFWI": {"min": "75"}, "PM": {"min": "85.130"}})
    firmware = [r for r in results if r["id"] == "ROCM-HEALTH-005"]
    assert {r["status"] for r in firmware} == {"pass"}
    assert "(IFWI 75 is checked by hand: no host reports it)" in firmware[0]["message"]


def test_firmware_below_the_class_minimum_fails_with_the_amd_smi_reading(host):
    # mi300x-vf capture: PM 00.85.129.03 and PLDM_BUNDLE 01.25.03.12 as amd-smi prints them.
    tree.gpu(host, "0000:05:00.0", pmfw=0x00558103, xgmi=[0, 1, 1, 1, 1, 1, 1, 1])
    (failed,) = not_passing(run(host))
    assert failed[:2] == ("ROCM-HEALTH-005", "fail")
    assert "PM 00.85.129.03 (PMFW 85.129.3) below minimum 85.130" in failed[2]


def test_a_radeon_without_ras_or_xgmi_or_minimum_is_skipped_with_the_reason(tmp_path):
    tree.healthy(tmp_path, gpus=0)
    tree.gpu(tmp_path, "0000:05:00.0", device="0x744c", klass="0x030000", ras=False, pldm=None)
    by_id = dict((r["id"], r) for r in run(tmp_path, ras=False, xgmi=None, firmware={}))
    assert {i for i, r in by_id.items() if r["status"] == "skipped"} == {
        "ROCM-HEALTH-002", "ROCM-HEALTH-003", "ROCM-HEALTH-004", "ROCM-HEALTH-005"}
    assert "no RAS counters" in by_id["ROCM-HEALTH-003"]["message"]


def test_a_gpu_amdgpu_did_not_initialise_fails_006_once(host):
    (host / "sys/bus/pci/devices/0000:15:00.0/driver").unlink()
    (host / "sys/bus/pci/devices/0000:15:00.0/drm/card1").rmdir()  # no driver, no DRM card: no gpu fact index
    found = not_passing(run(host))
    assert [(i, s) for i, s, _m in found if s != "skipped"] == [("ROCM-HEALTH-006", "fail")]
    assert found[-1][2].startswith("GPU 0000:15:00.0: on the PCI bus but amdgpu did not initialise it (7 of 8")
    assert {i for i, s, _m in found if s == "skipped"} == {
        "ROCM-HEALTH-002", "ROCM-HEALTH-003", "ROCM-HEALTH-004", "ROCM-HEALTH-005"}


def test_amdgpu_not_loaded_leaves_the_cause_to_drv_001(host):
    (host / "sys/module/amdgpu/version").unlink()
    (host / "sys/module/amdgpu").rmdir()
    found = not_passing(run(host))
    assert {s for _i, s, _m in found} == {"skipped"}
    assert all("ROCM-DRV-001" in m for _i, _s, m in found)


def test_an_xgmi_link_down_fails_002_for_that_gpu(host):
    tree.gpu(host, "0000:75:00.0", xgmi=[1, 1, 1, 1, 1, 1, 1, 0][:6] + [0, 0])
    (failed,) = not_passing(run(host))
    assert failed[:2] == ("ROCM-HEALTH-002", "fail") and failed[2].startswith("GPU 7 (0000:75:00.0): XGMI links to 6")


def test_a_new_default_kernel_without_its_module_fails_kern_001_and_003_judges_the_running_ones(host):
    tree.write(host, "/boot/vmlinuz-6.17.0-5-generic", "kernel image\n")
    tree.write(host, "/usr/lib/modules/6.17.0-5-generic/modules.dep", "")
    tree.grub(host, ["6.17.0-5-generic", "6.8.0-60-generic"])
    tree.secure_boot(host)
    found = not_passing(run(host))
    assert [(i, s) for i, s, _m in found] == [("ROCM-KERN-001", "fail")]
    assert "next kernel: amdgpu has no module for 6.17.0-5-generic, and 6.17.0-5-generic is above 6.14" in found[0][2]
    # The running kernel's module unsigned too: both findings, each under its own ID.
    tree.kernel(host, "6.8.0-60-generic", module=b"\x7fELF unsigned module")
    found = not_passing(run(host))
    assert [(i, s) for i, s, _m in found] == [("ROCM-KERN-001", "fail"), ("ROCM-KERN-003", "fail")]
    assert found[1][2].startswith("kernel 6.8.0-60-generic: Secure Boot is on and the DKMS amdgpu module is unsigned")


def test_grubenv_saved_entry_names_the_default(host):
    tree.kernel(host, "6.8.0-61-generic", built=False, installed=False)
    tree.grub(host, ["6.8.0-61-generic", "6.8.0-60-generic"], default="${saved_entry}",
              grubenv="saved_entry=gnulinux-6.8.0-60-generic-advanced")
    assert not_passing(run(host)) == [
        ("ROCM-KERN-001", "warn",
         "next, running kernel: amdgpu 6.16.13-2278356.24.04 is installed for 6.8.0-60-generic; installed kernel "
         "6.8.0-61-generic (not the default): amdgpu has no module for 6.8.0-61-generic (no DKMS build or install "
         "for it)")]


def test_a_blacklist_file_is_reported_before_the_reboot(host):
    tree.write(host, "/etc/modprobe.d/blacklist-amdgpu.conf", "blacklist amdgpu\n")
    (failed,) = not_passing(run(host))
    assert failed[:2] == ("ROCM-KERN-002", "fail") and "/etc/modprobe.d/blacklist-amdgpu.conf:1" in failed[2]


def test_modprobe_blacklist_on_the_default_entry_is_reported(host):
    cfg = host / "boot/grub/grub.cfg"
    cfg.write_text(cfg.read_text().replace("quiet splash", "quiet modprobe.blacklist=amdgpu"))
    assert [(i, s) for i, s, _m in not_passing(run(host))] == [("ROCM-KERN-002", "fail")]


@pytest.mark.parametrize("suffix", [".ko", ".ko.xz"])
def test_secure_boot_with_the_signing_key_enrolled_passes(host, suffix):
    tree.kernel(host, "6.8.0-60-generic", suffix=suffix)
    if suffix != ".ko":
        (host / "usr/lib/modules/6.8.0-60-generic/updates/dkms/amdgpu.ko").unlink()
    tree.secure_boot(host, enrolled=("other", "mok"))
    result = next(r for r in run(host) if r["id"] == "ROCM-KERN-003")
    assert result["status"] == "pass", result["message"]
    assert "signed by DKMS module signing key, an enrolled key" in result["message"]


def test_secure_boot_with_the_key_not_enrolled_fails(host):
    tree.secure_boot(host, enrolled=("other",))
    (failed,) = not_passing(run(host))
    assert failed[:2] == ("ROCM-KERN-003", "fail") and "which is not enrolled" in failed[2]


def test_secure_boot_with_an_unsigned_module_fails(host):
    tree.kernel(host, "6.8.0-60-generic", module=b"\x7fELF unsigned module")
    tree.secure_boot(host)
    (failed,) = not_passing(run(host))
    assert failed[:2] == ("ROCM-KERN-003", "fail") and "unsigned" in failed[2]


def test_a_zstd_module_under_secure_boot_is_unknown_with_the_reason(host):
    tree.kernel(host, "6.8.0-60-generic", suffix=".ko.zst")
    (host / "usr/lib/modules/6.8.0-60-generic/updates/dkms/amdgpu.ko").unlink()
    tree.secure_boot(host)
    (found,) = not_passing(run(host))
    assert found[:2] == ("ROCM-KERN-003", "unknown") and "zstd" in found[2]


def test_secure_boot_disabled_passes_whatever_the_signature(host):
    tree.kernel(host, "6.8.0-60-generic", module=b"unsigned")
    tree.secure_boot(host, enabled=False)
    assert not_passing(run(host)) == []


def test_distribution_amdgpu_skips_the_dkms_checks(host):
    found = {(i, s) for i, s, _m in not_passing(run(host, dkms=False))}
    assert found == {("ROCM-KERN-001", "skipped"), ("ROCM-KERN-003", "skipped")}


def test_skip_and_unknown_keys(host):
    assert "ROCM-HEALTH-001" not in statuses(run(host, skip=["ROCM-HEALTH-001"]))
    (bad,) = evaluate_health({"nonsense": 1}, str(host))
    assert bad["status"] == "error" and "nonsense" in bad["message"]


def test_no_amd_gpu_skips_the_gpu_checks(tmp_path):
    results = evaluate_health(tree.HEALTH, str(tmp_path))
    assert {r["status"] for r in results if r["id"].startswith("ROCM-HEALTH")} == {"skipped"}
    assert {r["id"]: r["status"] for r in results if r["id"].startswith("ROCM-KERN")}["ROCM-KERN-001"] == "unknown"


def test_xgmi_down_folds_topo_001_into_health_002():
    from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import one_cause_once

    topo = {"id": "ROCM-TOPO-001", "status": "fail", "message": "GPU 2-7: link_type PCIE, expected XGMI"}
    down = {"id": "ROCM-HEALTH-002", "status": "fail", "message": "GPU 7: XGMI links to 6 GPU(s), expected 7"}
    assert one_cause_once([topo]) == [topo]
    folded = one_cause_once([down, topo])[1]
    assert folded["status"] == "skipped" and folded["message"].startswith("reported by ROCM-HEALTH-002")


def test_an_unreadable_profile_folds_the_login_shells_missing_rocm_path_into_env_001():
    from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import one_cause_once

    profile = {"id": "ROCM-ENV-001", "status": "fail", "message": "/etc/profile.d/rocm.sh: mode 0600, expected 0644"}
    lacks = {"id": "ROCM-ENV-005", "status": "fail", "message": "the login shell of fleet lacks ROCM_PATH",
             "actual": {"users": {"fleet": {"environment": {"PATH": "/usr/bin"}}}}}
    override = dict(lacks, message="the login shell of fleet has HSA_OVERRIDE_GFX_VERSION=11.0.0",
                    actual={"users": {"fleet": {"environment": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}}}})
    assert one_cause_once([lacks]) == [lacks]
    folded = one_cause_once([profile, lacks])[1]
    assert folded["status"] == "skipped" and folded["message"].startswith("reported by ROCM-ENV-001")
    # An override is a finding of its own, whatever the profile file's state.
    assert one_cause_once([profile, override])[1] == override


def test_a_missing_linker_file_folds_the_loaders_own_findings_into_env_003():
    from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import one_cause_once

    linker = {"id": "ROCM-ENV-003", "status": "fail", "message": "/etc/ld.so.conf.d/rocm.conf does not exist"}
    missing = {"id": "ROCM-ENV-008", "status": "fail", "actual": {"role_files_only": True},
               "message": "the loader's cache has no libamdhip64 of the default release"}
    other = dict(missing, actual={"role_files_only": False},
                 message="libamdhip64.so.6 resolves to /opt/rocm-6.3.3/lib/libamdhip64.so.6")
    assert one_cause_once([missing]) == [missing]
    folded = one_cause_once([linker, missing])[1]
    assert folded["status"] == "skipped" and folded["message"].startswith("reported by ROCM-ENV-003")
    # Another file's or release's finding stays a failure of its own.
    assert one_cause_once([linker, other])[1] == other


def test_a_default_release_link_elsewhere_folds_the_loaders_dangling_entries_into_pkg_001():
    from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import one_cause_once

    link = {"id": "ROCM-PKG-001", "status": "fail", "message": "/opt/rocm points to /usr"}
    dangling = {"id": "ROCM-ENV-008", "status": "fail", "actual": {"role_files_only": False, "other_releases": []},
                "message": "the loader's cache has libamdhip64.so.5 => /opt/rocm/lib/libamdhip64.so.5, which does"
                           " not exist"}
    other = dict(dangling, actual={"other_releases": ["/opt/rocm-7.1.1"]},
                 message="/etc/ld.so.conf.d/00-rocm-7.1.1.conf:1 lists /opt/rocm-7.1.1/lib")
    assert one_cause_once([dangling]) == [dangling]
    folded = one_cause_once([link, dangling])[1]
    assert folded["status"] == "skipped" and folded["message"].startswith("reported by ROCM-PKG-001")
    assert one_cause_once([link, other])[1] == other


PREFLIGHT = dict(dkms=True, before_install=True, skip=sorted(set(HEALTH_CHECKS) - {"ROCM-KERN-003"}))


def test_before_install_secure_boot_without_an_enrolled_dkms_key_fails(tmp_path):
    tree.secure_boot(tmp_path, enrolled=("other",))
    (result,) = evaluate_health(PREFLIGHT, str(tmp_path))
    assert (result["id"], result["status"]) == ("ROCM-KERN-003", "fail")
    assert "DKMS has no signing key" in result["message"]
    tree.write(tmp_path, "/var/lib/dkms/mok.key", "private key\n")
    tree.write(tmp_path, "/var/lib/dkms/mok.pub", (tree.GENERATED / "mok.der").read_bytes())
    (result,) = evaluate_health(PREFLIGHT, str(tmp_path))
    assert result["status"] == "fail" and "/var/lib/dkms/mok.pub is not an enrolled MOK" in result["message"]
    tree.secure_boot(tmp_path, enrolled=("other", "mok"))
    (result,) = evaluate_health(PREFLIGHT, str(tmp_path))
    assert result["status"] == "pass", result["message"]


def test_before_install_without_secure_boot_passes(tmp_path):
    (result,) = evaluate_health(PREFLIGHT, str(tmp_path))
    assert result["status"] == "pass" and "BIOS boot" in result["message"]
