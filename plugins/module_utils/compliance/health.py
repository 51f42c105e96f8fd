# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU health, kernel/DKMS and Secure Boot checks (issue 11 sections 3 and 4) in the evaluator's result shape.

evaluate_health(health, root) reads the host (health.read, host.boot_read, host.secure_boot_read) and
judges it with the decision functions that already exist (gpu_health_*, host.kernel_driver,
host_boot, host.secure_boot). ``health`` holds what the controller decided from the
class data (host_compliance builds it; docs/compliance-checks.md lists its keys).

One cause, one report (docs/compliance-controls.md):
* amdgpu not loaded at all: ROCM-DRV-001 fails; every check that reads what amdgpu writes
  (HEALTH-002..006) is skipped pointing at it. The PCIe link (HEALTH-001) is the PCI core's
  and still judged.
* amdgpu loaded but not bound to a GPU: HEALTH-006 fails for that GPU; HEALTH-002..005 of
  that GPU are skipped pointing at HEALTH-006.
* no DKMS module for the next kernel: KERN-001 fails, KERN-003 is skipped pointing at it.
States: pass, fail, unknown (not readable or a placeholder: never pass), skipped (does not
apply to this GPU class or host, with the reason), warn (KERN-001: a kernel the boot
loader does not start by default lacks its module).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS, PENDING, UNKNOWN
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.common import gpu_label, is_count
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.firmware import decide_firmware
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.driver_init import decide_init
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.link import decide_link
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.ras import decide_ras
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.boot import MODPROBE_DIRS, amdgpu_disabled_next_boot
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import boot_read as boot
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.read import (
    UNREADABLE_FW_IDS,
    amdgpu_loaded,
    read_gpus,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import secure_boot_read as sb
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.kernel_driver import next_boot_driver
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.secure_boot import (
    dkms_module_trust,
    install_would_load,
    module_signature,
)

HEALTH_CHECKS = {
    "ROCM-HEALTH-001": "PCIe link at the device's maximum width (and speed at max performance)",
    "ROCM-HEALTH-002": "XGMI links up as the class has them",
    "ROCM-HEALTH-003": "no uncorrectable RAS/ECC error",
    "ROCM-HEALTH-004": "correctable RAS/ECC errors at or below the threshold",
    "ROCM-HEALTH-005": "firmware at or above the class minimum",
    "ROCM-HEALTH-006": "amdgpu initialised every AMD GPU the PCI bus shows",
    "ROCM-KERN-001": "amdgpu (DKMS) installed for the boot loader's default kernel and the running one",
    "ROCM-KERN-002": "amdgpu not disabled for the next boot",
    "ROCM-KERN-003": "under Secure Boot, the next boot's amdgpu is signed by an enrolled key",
}
PERSON = "a person: the hardware or its firmware (a reseat, a replacement, a firmware update); site.yml cannot"
REPAIRS = {
    "ROCM-HEALTH-006": "a person (the kernel log of that GPU says why amdgpu failed; often firmware or a reseat)",
    "ROCM-KERN-001": "site.yml (packages installs amdgpu-dkms, which builds for the installed kernels); a person "
                     "where the kernel is above the driver line's maximum: boot an older kernel or change the line",
    "ROCM-KERN-002": "a person: remove the named line (then update-initramfs/dracut and update-grub)",
    "ROCM-KERN-003": "a person: enroll the DKMS key (mokutil --import <certificate>, then a reboot to confirm it)",
}
MAX_PERFORMANCE = ("high", "profile_peak")
# A health or next-boot verdict (common.status.HEALTH_STATES, PENDING) -> the check's status.
STATE_STATUS = {PASS: PASS, FAIL: FAIL, UNKNOWN: UNKNOWN, PENDING: FAIL}
HEALTH_KEYS = ("ce_threshold", "ras", "firmware", "xgmi", "dkms", "kernel_max", "module_version", "skip",
               "before_install")


def _result(check_id, status, expected, actual, message):
    return {"id": check_id, "title": HEALTH_CHECKS[check_id], "kind": "health", "role": None, "label": None,
            "repair": REPAIRS.get(check_id, PERSON), "severity": None, "status": status, "expected": expected,
            "actual": actual, "message": message, "diff": "", "action": ""}


def _from(check_id, verdict, expected=None, actual=None):
    return _result(check_id, STATE_STATUS[verdict["state"]], expected, actual, verdict["reason"])


def _ce(who, blocks, threshold):
    counts = dict((block, c.get("ce")) for block, c in blocks.items() if is_count(c.get("ce")))
    if not counts:
        why = "; ".join(sorted("%s: %s" % (b, c.get("ce")) for b, c in blocks.items())) or "no counter"
        return "unknown", "%s: no correctable count reported (%s)" % (who, why), None
    total = sum(counts.values())
    if total > threshold:
        worst = ", ".join("%s %d" % (b, n) for b, n in sorted(counts.items()) if n)
        return "fail", "%s: %d correctable errors, above the threshold %d (%s)" % (who, total, threshold, worst), total
    return "pass", "%s: %d correctable errors (threshold %d)" % (who, total, threshold), total


def _ue(gpu, threshold):
    """HEALTH-003's part of decide_ras: its uncorrectable failure, else 0 when some UE counter is a real count."""
    verdict = decide_ras(gpu["index"], gpu["ras"], threshold, gpu["bus"])
    counts = [c.get("ue") for c in gpu["ras"].values() if is_count(c.get("ue"))]
    if verdict["state"] == "fail" and verdict.get("uncorrectable"):
        return "fail", verdict["reason"], verdict["uncorrectable"]
    if not counts:
        why = "; ".join(sorted("%s: %s" % (b, c.get("ue")) for b, c in gpu["ras"].items())) or "no counter"
        return "unknown", "%s: no uncorrectable count reported (%s)" % (gpu_label(gpu["index"], gpu["bus"]), why), None
    return "pass", "%s: no uncorrectable error (%d counters)" % (gpu_label(gpu["index"], gpu["bus"]), len(counts)), 0


def _xgmi(who, row, expected_peers):
    if row is None:
        return "unknown", "%s: no xgmi_num_links (the driver reports no XGMI link counts)" % who, None
    if not isinstance(row, list):
        return "unknown", "%s: %s" % (who, row), None
    peers = len([n for n in row if n])
    if peers < expected_peers:
        return "fail", "%s: XGMI links to %d GPU(s), expected %d (links %s)" % (
            who, peers, expected_peers, " ".join(str(n) for n in row)), peers
    return "pass", "%s: XGMI links to %d GPU(s) (%d link(s))" % (who, peers, sum(row)), peers


def _per_gpu(gpu, health, results):
    who = gpu_label(gpu["index"], gpu["bus"])
    link = gpu["link"]
    at_max = True if gpu["perf_level"] in MAX_PERFORMANCE else None
    results.append(_from("ROCM-HEALTH-001", decide_link(gpu["index"], link, gpu["bus"], at_max), None,
                         dict(link, perf_level=gpu["perf_level"])))
    if gpu["driver"] != "amdgpu":
        skip = "%s: not measurable: amdgpu did not initialise this GPU (see ROCM-HEALTH-006)" % who
        for check_id in ("ROCM-HEALTH-002", "ROCM-HEALTH-003", "ROCM-HEALTH-004", "ROCM-HEALTH-005"):
            results.append(_result(check_id, "skipped", None, None, skip))
        return
    xgmi = health.get("xgmi")
    if not xgmi:
        results.append(_result("ROCM-HEALTH-002", "skipped", None, None,
                               "%s: the GPU class has no XGMI links" % who))
    else:
        status, message, peers = _xgmi(who, gpu["xgmi_links"], xgmi["peers"])
        results.append(_result("ROCM-HEALTH-002", status, xgmi, peers, message))
    if gpu["ras"] is None:
        status = "unknown" if health.get("ras") else "skipped"
        why = "the class has RAS but the GPU shows no ras/ directory" if health.get("ras") else \
            "the GPU has no RAS counters (no ras/ directory), as its class"
        for check_id in ("ROCM-HEALTH-003", "ROCM-HEALTH-004"):
            results.append(_result(check_id, status, None, None, "%s: %s" % (who, why)))
    else:
        threshold = health.get("ce_threshold", 0)
        status, message, count = _ue(gpu, threshold)
        results.append(_result("ROCM-HEALTH-003", status, 0, count, message))
        status, message, total = _ce(who, gpu["ras"], threshold)
        results.append(_result("ROCM-HEALTH-004", status, threshold, total, message))
    minimums = health.get("firmware") or {}
    readable = dict((fw_id, spec) for fw_id, spec in minimums.items() if fw_id not in UNREADABLE_FW_IDS)
    by_hand = ", ".join("%s %s" % (fw_id, spec.get("min") if isinstance(spec, dict) else spec)
                        for fw_id, spec in sorted(minimums.items()) if fw_id not in readable)
    if not minimums:
        results.append(_result("ROCM-HEALTH-005", "skipped", None, gpu["firmware"] or None,
                               "%s: no firmware minimum in data for this GPU class" % who))
    elif not readable:
        # Not a failed reading (unknown) but nothing a host reports: said every night, judged by a person.
        results.append(_result("ROCM-HEALTH-005", "skipped", minimums, gpu["firmware"] or None,
                               "%s: the class's minimum is %s, which no host file or amd-smi reports: check it "
                               "with the vendor's flash tool" % (who, by_hand)))
    else:
        verdict = decide_firmware(gpu["index"], gpu["firmware"], readable, gpu["bus"])
        if by_hand:
            verdict["reason"] += " (%s is checked by hand: no host reports it)" % by_hand
        results.append(_from("ROCM-HEALTH-005", verdict, minimums, dict(gpu["firmware"], VBIOS=gpu["vbios"])))


def _with_xgmi_peers(health, gpus):
    """``xgmi.peers`` None: as many as the best-connected GPU of the host reaches, and at least one."""
    xgmi = health.get("xgmi")
    if not xgmi or xgmi.get("peers") is not None:
        return health
    rows = [gpu["xgmi_links"] for gpu in gpus if isinstance(gpu["xgmi_links"], list)]
    best = max([len([n for n in row if n]) for row in rows] or [0])
    return dict(health, xgmi={"peers": max(best, 1), "rule": "as the best-connected GPU of the host"})


def gpu_health(health, root):
    gpus = read_gpus(root)
    results = []
    if not gpus:
        return [_result(check_id, "skipped", None, None, "no AMD GPU on the PCI bus")
                for check_id in sorted(HEALTH_CHECKS) if check_id.startswith("ROCM-HEALTH-")]
    loaded = amdgpu_loaded(root)
    health = _with_xgmi_peers(health, gpus)
    for gpu in gpus:
        if loaded:
            _per_gpu(gpu, health, results)
            continue
        results.append(_from("ROCM-HEALTH-001", decide_link(gpu["index"], gpu["link"], gpu["bus"]), None, gpu["link"]))
        for check_id in ("ROCM-HEALTH-002", "ROCM-HEALTH-003", "ROCM-HEALTH-004", "ROCM-HEALTH-005"):
            results.append(_result(check_id, "skipped", None, None, "%s: not measurable while amdgpu is not loaded "
                                   "(see ROCM-DRV-001)" % gpu_label(gpu["index"], gpu["bus"])))
    if not loaded:
        results.append(_result("ROCM-HEALTH-006", "skipped", None, None,
                               "not measurable while amdgpu is not loaded (see ROCM-DRV-001)"))
        return results
    bound = [gpu["bus"] for gpu in gpus if gpu["driver"] == "amdgpu"]
    verdicts = decide_init([gpu["bus"] for gpu in gpus], bound)
    for gpu in gpus:
        verdict = verdicts[gpu["bus"]]
        reason = verdict["reason"].replace(gpu_label(None, gpu["bus"]), gpu_label(gpu["index"], gpu["bus"]), 1)
        results.append(_result("ROCM-HEALTH-006", STATE_STATUS[verdict["state"]], "amdgpu", gpu["driver"], reason))
    return results


def kernel_health(health, root):
    running = (boot.read_text(boot.host_path(root, "proc/sys/kernel/osrelease"))[0] or "").strip() or None
    next_kernel, how = boot.default_kernel(root)
    kernels = boot.installed_kernels(root)
    results = []
    boot_files = dict((path, text) for path, text in boot.config_files(root, ["boot/grub", "boot/grub2"],
                                                                       "grub.cfg").items())
    boot_files.update(boot.config_files(root, ["boot/loader/entries"]))
    modprobe = boot.config_files(root, MODPROBE_DIRS)
    disabled = amdgpu_disabled_next_boot(modprobe, boot_files, next_kernel)
    results.append(_from("ROCM-KERN-002", disabled, None, [f for f in disabled["findings"] if f["effect"] != "none"]))
    if not health.get("dkms"):
        why = "the host runs the distribution's amdgpu, not amdgpu-dkms (packages_amdgpu_dkms or packages_source)"
        return [_result("ROCM-KERN-001", "skipped", None, None, why), results[0],
                _result("ROCM-KERN-003", "skipped", None, None, why)]
    verdict = next_boot_driver(boot.dkms_records(root), next_kernel, running, health.get("kernel_max"),
                               health.get("module_version"), kernels)
    actual = {"next": next_kernel, "next_from": how, "running": running, "installed": kernels}
    status = STATE_STATUS[verdict["state"]]
    message = verdict["reason"] if next_kernel else "%s (%s)" % (verdict["reason"], how)
    if verdict["warnings"]:
        message += "; " + "; ".join(verdict["warnings"])
        status = "warn" if status == "pass" else status
    expected = {"kernel_max": health.get("kernel_max"), "module_version": health.get("module_version")}
    results.insert(0, _result("ROCM-KERN-001", status, expected, actual, message))
    results.append(_secure_boot(root, [next_kernel, running], health.get("before_install")))
    return results


def _would_load(root, state):
    """Before an install (preflight): will the module DKMS builds load under this Secure Boot state?"""
    signing = sb.dkms_signing(root)
    cert, _path = sb.dkms_certificate(root)
    keys, keys_from = sb.mok_keys(root)
    enrolled = None if keys is None or (signing["certificate"] and cert is None) else \
        bool(cert) and cert["serial"] in [k.get("serial") for k in keys]
    verdict = install_would_load(state, signing, enrolled)
    actual = dict(signing, secure_boot=state["state"], enrolled=[k.get("serial") for k in keys or []],
                  certificate_serial=(cert or {}).get("serial"), mok_list=keys_from)
    return _from("ROCM-KERN-003", verdict, None, actual)


def _secure_boot(root, kernels, before_install=False):
    """ROCM-KERN-003 over the DKMS modules of ``kernels`` (the next boot's and the running one's, where present).

    The running kernel's module counts too: with no module for the next kernel (ROCM-KERN-001's finding), a
    reboot into the running kernel, or a reload, would still meet the signature check.
    """
    state = sb.secure_boot(root)
    if state.get("enforcing") is False:
        return _result("ROCM-KERN-003", "pass", None, {"secure_boot": state["state"]}, state["reason"])
    if before_install:
        return _would_load(root, state)
    kernels = [k for n, k in enumerate(kernels) if k and k not in kernels[:n]]
    modules = [(kernel, boot.installed_module(root, kernel)) for kernel in kernels]
    modules = [(kernel, path) for kernel, path in modules if path]
    if not modules:
        return _result("ROCM-KERN-003", "skipped", None, {"secure_boot": state["state"]},
                       "no DKMS amdgpu module for %s to judge (see ROCM-KERN-001)" % " or ".join(kernels or ["?"]))
    keys, keys_from = sb.mok_keys(root)
    verdicts, actual = [], {"secure_boot": state["state"], "modules": {},
                            "enrolled": [k.get("serial") for k in keys or []]}
    for kernel, path in modules:
        fields, why = sb.module_signer_fields(path)
        if fields is None:
            verdicts.append({"state": "unknown", "reason": "%s: %s" % (path, why)})
            actual["modules"][path] = None
            continue
        signature = module_signature(fields)
        verdict = dkms_module_trust(state, signature, keys)
        if keys is None:
            verdict["reason"] += " (%s)" % keys_from
        verdict["reason"] = "kernel %s: %s" % (kernel, verdict["reason"])
        verdicts.append(verdict)
        actual["modules"][path] = {"signer": signature["signer"], "key": signature["key"]}
    for worst in ("fail", "unknown", "pass"):
        chosen = [v for v in verdicts if v["state"] == worst]
        if chosen:
            reason = "; ".join(v["reason"] for v in chosen)
            return _result("ROCM-KERN-003", STATE_STATUS[worst], None, actual, reason)


def secure_boot_check(root, kernels):
    """ROCM-KERN-003's result for the DKMS modules of ``kernels`` (the kernel update's check before a new default)."""
    return _secure_boot(root, list(kernels))


def evaluate_health(health, root="/"):
    """Results of the health, kernel and Secure Boot checks; one bad reading costs one check, never the call."""
    health = health or {}
    unknown = sorted(set(health) - set(HEALTH_KEYS))
    if unknown:
        return [_result("ROCM-HEALTH-006", "error", None, None, "health: unknown keys %s" % ", ".join(unknown))]
    results = []
    for name, part in (("GPU health", gpu_health), ("kernel and Secure Boot", kernel_health)):
        try:
            results.extend(part(health, root))
        except Exception as exc:  # a reader bug costs its checks, never the module
            check_id = "ROCM-HEALTH-006" if part is gpu_health else "ROCM-KERN-001"
            results.append(_result(check_id, "error", None, None, "%s could not be read: %s: %s"
                                   % (name, type(exc).__name__, exc)))
    skipped = set(health.get("skip") or [])
    return [result for result in results if result["id"] not in skipped]


def _failed(results, check_id):
    return any(r["id"] == check_id and r["status"] == "fail" for r in results)


def _only_rocm_path_findings(result):
    """Whether a failed ROCM-ENV-005 saw no HSA override and no other release's LD_LIBRARY_PATH at all: what it
    lacks is ROCM_PATH/PATH."""
    users = ((result.get("actual") or {}).get("users") or {}).values()
    return not any(name.startswith("HSA_OVERRIDE_GFX_VERSION")
                   for user in users for name in (user.get("environment") or {})) and \
        not any(user.get("other_release_libraries") for user in users)


def one_cause_once(results):
    """Results with a consequence folded into its cause's check (docs/compliance-controls.md, one cause once).

    XGMI links down (ROCM-HEALTH-002 fails) also make the KFD link table differ from the class
    (ROCM-TOPO-001): HEALTH-002 names the GPU and its links, which is what a person repairs, so
    TOPO-001 becomes skipped pointing at it, with its own finding kept in the message. The role's
    profile file differing (ROCM-ENV-001: a mode that users cannot read, a line gone) leaves login
    shells without ROCM_PATH and PATH: ROCM-ENV-005 then points at it, unless it saw an HSA override or
    another release's LD_LIBRARY_PATH, which are findings of their own. The role's linker file differing
    (ROCM-ENV-003: gone, a line missing) leaves the loader without the default release's libraries, or with
    its directory not in the cache: ROCM-ENV-008 then points at it, unless it found another file's or another
    release's libraries. The default release's link pointing elsewhere (ROCM-PKG-001: /opt/rocm at another
    directory) leaves the cache's /opt/rocm/lib entries dangling or judged against the wrong directory: ROCM-ENV-008
    then points at it too, unless it found another release's libraries.
    """
    folds = []
    if _failed(results, "ROCM-HEALTH-002"):
        folds.append(("ROCM-TOPO-001", "ROCM-HEALTH-002 (XGMI links down)", lambda result: True))
    if _failed(results, "ROCM-ENV-001"):
        folds.append(("ROCM-ENV-005", "ROCM-ENV-001 (the role's profile file)", _only_rocm_path_findings))
    if _failed(results, "ROCM-ENV-003"):
        folds.append(("ROCM-ENV-008", "ROCM-ENV-003 (the role's linker file)",
                      lambda result: bool((result.get("actual") or {}).get("role_files_only"))))
    if _failed(results, "ROCM-PKG-001"):
        folds.append(("ROCM-ENV-008", "ROCM-PKG-001 (the default release's link)",
                      lambda result: not (result.get("actual") or {}).get("other_releases")))
    out = []
    for result in results:
        for check_id, cause, applies in folds:
            if result["id"] == check_id and result["status"] == "fail" and applies(result):
                result = dict(result, status="skipped", message="reported by %s: %s" % (cause, result["message"]))
        out.append(result)
    return out
