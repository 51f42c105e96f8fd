"""kernel_update: the boot facts a kernel update reads and whether a new kernel may become the boot default."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.kernel_update import (
    boot_facts,
    build_log,
    grub_entry_path,
    promotion,
)
from fleet_testing import health_tree as tree

from rocm_fleet.lab.paths import GUEST_FILES

RUNNING, NEW = "6.8.0-60-generic", "6.8.0-61-generic"
DKMS = "6.16.13-2278356.24.04"


def lab_grub_cfg(tmp_path, kernels, default="saved"):
    """grub.cfg as the lab's update-grub stand-in (Debian's 10_linux layout) writes it for ``kernels``."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("runs the lab's update-grub in a private mount namespace (root)")
    for kernel in kernels:
        tree.write(tmp_path, "/boot/vmlinuz-%s" % kernel, "image\n")
    tree.write(tmp_path, "/etc/rocm-fleet-lab/root-uuid", "0f0e-uuid\n")
    tree.write(tmp_path, "/etc/default/grub", "GRUB_DEFAULT=%s\nGRUB_DISTRIBUTOR=Debian\n" % default)
    script = ("mount --bind %s/etc /etc && mount --bind %s/boot /boot && sh %s/grub-mkconfig -o /boot/grub/grub.cfg"
              % (tmp_path, tmp_path, GUEST_FILES))
    subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-ec", script], check=True,
                   capture_output=True)
    return (tmp_path / "boot/grub/grub.cfg").read_text()


def test_the_entry_path_names_the_submenu_entry_not_the_recovery_one(tmp_path):
    text = lab_grub_cfg(tmp_path, [os.uname().release, NEW])
    path = grub_entry_path(text, NEW)
    assert path == "gnulinux-advanced-0f0e-uuid>gnulinux-%s-advanced-0f0e-uuid" % NEW
    assert grub_entry_path(text, "6.0.0-1-amd64") is None


def test_a_top_level_entry_is_named_by_its_id():
    text = "menuentry 'Linux' $menuentry_id_option 'simple-1' {\n\tlinux\t/boot/vmlinuz-%s ro\n}\n" % RUNNING
    assert grub_entry_path(text, RUNNING) == "simple-1"
    assert grub_entry_path("", RUNNING) is None and grub_entry_path(None, RUNNING) is None


def host(tmp_path, new_built=True, new_headers=True):
    tree.kernel(tmp_path, RUNNING, DKMS)
    tree.link(tmp_path, "/usr/lib/modules/%s/build" % RUNNING, "/usr/src/linux-headers-%s" % RUNNING)
    tree.kernel(tmp_path, NEW, DKMS, built=new_built, installed=new_built)
    if new_headers:
        tree.link(tmp_path, "/usr/lib/modules/%s/build" % NEW, "/usr/src/linux-headers-%s" % NEW)
    tree.grub(tmp_path, [NEW, RUNNING], default="${saved_entry}",
              grubenv="saved_entry=gnulinux-%s-advanced" % RUNNING)
    tree.write(tmp_path, "/proc/sys/kernel/osrelease", RUNNING + "\n")


def test_a_new_kernel_with_amdgpu_installed_may_become_the_default(tmp_path):
    host(tmp_path)
    facts = boot_facts(str(tmp_path), kernel_max="6.16", expected_version="6.16.13")
    assert facts["running"] == RUNNING and facts["default"] == RUNNING
    assert facts["saved_entry"] == "gnulinux-%s-advanced" % RUNNING
    assert facts["kernels"][NEW]["module_state"] == "pass" and facts["kernels"][NEW]["headers"]
    verdict = promotion(facts, NEW)
    assert verdict["state"] == "pass" and verdict["entry"] == "gnulinux-%s-advanced" % NEW


def test_a_failed_build_names_the_kernel_and_ends_with_dkms_make_log(tmp_path):
    host(tmp_path, new_built=False)
    log = ["DKMS make.log for amdgpu-%s for kernel %s (x86_64)" % (DKMS, NEW)] + ["line %d" % n for n in range(30)]
    tree.write(tmp_path, "/var/lib/dkms/amdgpu/%s/build/make.log" % DKMS, "\n".join(log) + "\n")
    facts = boot_facts(str(tmp_path), kernel_max="6.16")
    verdict = promotion(facts, NEW)
    assert verdict["state"] == "fail"
    assert NEW in verdict["reason"] and "make.log" in verdict["reason"] and "line 29" in verdict["reason"]
    assert "line 10" not in verdict["reason"]  # the tail only


def test_the_last_build_log_of_another_kernel_is_not_this_kernel_s(tmp_path):
    tree.write(tmp_path, "/var/lib/dkms/amdgpu/%s/build/make.log" % DKMS,
               "DKMS make.log for amdgpu-%s for kernel %s (x86_64)\nok\n" % (DKMS, RUNNING))
    assert build_log(str(tmp_path), NEW) == (None, None)
    tree.write(tmp_path, "/var/lib/dkms/amdgpu/%s/%s/x86_64/log/make.log" % (DKMS, NEW), "error: dkms 3 log\n")
    path, tail = build_log(str(tmp_path), NEW)
    assert path.endswith("/%s/x86_64/log/make.log" % NEW) and "dkms 3 log" in tail


def test_missing_headers_are_the_reason_before_the_module(tmp_path):
    host(tmp_path, new_built=False, new_headers=False)
    verdict = promotion(boot_facts(str(tmp_path)), NEW)
    assert verdict["state"] == "fail" and "linux-headers-%s" % NEW in verdict["reason"]


def test_secure_boot_refusal_and_an_absent_kernel_fail(tmp_path):
    host(tmp_path)
    facts = boot_facts(str(tmp_path))
    refused = promotion(facts, NEW, {"status": "fail", "message": "signed by no enrolled key"})
    assert refused["state"] == "fail" and "Secure Boot" in refused["reason"]
    assert promotion(facts, NEW, {"status": "skipped", "message": ""})["state"] == "pass"
    assert "not installed" in promotion(facts, "6.9.0-1-generic")["reason"]


def bls_host(tmp_path):
    """A RHEL 9 host: grub2's grub.cfg only loads blscfg; each kernel has its Boot Loader Spec entry."""
    running, new = "5.14.0-570.12.1.el9_6.x86_64", "5.14.0-570.17.1.el9_6.x86_64"
    for kernel in (running, new):
        tree.kernel(tmp_path, kernel, DKMS)
        tree.link(tmp_path, "/usr/lib/modules/%s/build" % kernel, "/usr/src/kernels/%s" % kernel)
        tree.write(tmp_path, "/boot/vmlinuz-%s" % kernel, "image\n")
        tree.write(tmp_path, "/boot/loader/entries/abc-%s.conf" % kernel,
                   "title Rocky Linux (%s) 9.6\nversion %s\nlinux /vmlinuz-%s\ninitrd /initramfs-%s.img\n"
                   "options root=UUID=1 ro\n" % (kernel, kernel, kernel, kernel))
    tree.write(tmp_path, "/boot/grub2/grub.cfg", "set default=\"${saved_entry}\"\ninsmod blscfg\nblscfg\n")
    tree.write(tmp_path, "/boot/grub2/grubenv", "# GRUB Environment Block\nsaved_entry=abc-%s\n" % running)
    tree.write(tmp_path, "/proc/sys/kernel/osrelease", running + "\n")
    return running, new


def test_on_the_rhel_family_a_kernel_s_entry_is_its_boot_loader_spec_file(tmp_path):
    running, new = bls_host(tmp_path)
    facts = boot_facts(str(tmp_path), kernel_max="6.16", expected_version="6.16.13")
    assert facts["default"] == running and facts["kernels"][new]["entry"] == "abc-%s" % new
    verdict = promotion(facts, new)
    assert verdict["state"] == "pass" and verdict["entry"] == "abc-%s" % new, verdict
    (tmp_path / ("boot/loader/entries/abc-%s.conf" % new)).unlink()
    assert "has no boot menu entry" in promotion(boot_facts(str(tmp_path), kernel_max="6.16"), new)["reason"]
