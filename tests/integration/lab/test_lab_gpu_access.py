"""Issue 13 on the lab: only the listed users reach the GPUs, judged by the real udev and by logging in.

- After site.yml the distribution's real udev (``udevadm test`` inside the host, Debian 12 and 13, with
  all of Debian's rules files and the rendered /sys) tags no AMD render node and not /dev/kfd ``uaccess``
  and queues no ``uaccess`` builtin, so no seat user gets an ACL; the nodes keep group render and the
  role's mode. card0 keeps its tag: the judge does see a grant where one happens.
- A user outside access_users who logs in (SSH, the lab's key authorized as a site would) cannot open
  /dev/kfd or a render node: EACCES. A listed user gets past the permission check (the lab's nodes have
  no driver behind them, so that open fails with another errno, or succeeds).
- Three ways around the groups on one host, found by one drift run and taken away by one site.yml run:
  AMD's alternative to the groups, its 70-amdgpu.rules (MODE="0666" on kfd and renderD*), which the lab's udev
  trigger and the real udev both overrule (the role's MODE:= comes later and is final) and drift still reports
  (ROCM-ACCESS-004, naming the file and mode); a seat-style ACL and an unlisted member of render, each letting
  that user in (ROCM-ACCESS-008, ROCM-ACCESS-002). site.yml removes the file, the ACL and the membership, the
  user is refused again and drift is clean afterwards.
"""

from __future__ import annotations

import pytest
import yaml
from fleet_testing.lab_drift import drift, failed_checks
from fleet_testing.lab_helpers import REPO
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import (
    CREATED_USER,
    _quote,
    authorize_login_key,
    login_session,
    revoke_login_key,
    sudo,
)
from fleet_testing.udev_judge import parse

pytestmark = [pytest.mark.lab, pytest.mark.slow]
JUDGED = ("mi300x-01", "rx7900xtx-01")  # Debian 12 (systemd 252) and Debian 13 (257)
HOST = "rx7900xtx-01"
OUTSIDER = "outsider"
DEFAULTS = yaml.safe_load((REPO / "roles" / "access" / "defaults" / "main.yml").read_text())
# Opens each node for reading and writing as the logged-in user; prints "<node> ok" or "<node> <errno name>".
OPEN_NODES = """python3 - <<'EOF'
import errno, glob, os
for node in ["/dev/kfd"] + sorted(glob.glob("/dev/dri/renderD*")):
    try:
        os.close(os.open(node, os.O_RDWR))
        print(node, "ok")
    except OSError as error:
        print(node, errno.errorcode[error.errno])
EOF
"""
# The ACL logind gives a seat's user (user::rw, user:UID:rw, group::rw, mask::rw, other::---), set as root.
SEAT_ACL = """python3 - {uid} {node} <<'EOF'
import os, struct, sys
undefined = 0xFFFFFFFF
entries = [(0x01, 6, undefined), (0x02, 6, int(sys.argv[1])), (0x04, 6, undefined), (0x10, 6, undefined),
           (0x20, 0, undefined)]
blob = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)
os.setxattr(sys.argv[2], "system.posix_acl_access", blob)
EOF
"""


def udevadm_test(lab, host: str, device: str):
    return parse(sudo(lab, host, f"SYSTEMD_DEVICE_VERIFY_SYSFS=0 SYSTEMD_LOG_LEVEL=debug udevadm test {device} 2>&1"))


def group_id(lab, host: str, group: str) -> str:
    return sudo(lab, host, f"getent group {group}").split(":")[2]


def opens(lab, host: str, user: str) -> dict[str, str]:
    output = login_session(lab, host, user, OPEN_NODES)
    found = dict(line.split() for line in output.splitlines() if line.startswith("/dev/") and len(line.split()) == 2)
    assert "/dev/kfd" in found and any(node.startswith("/dev/dri/renderD") for node in found), output
    return found


@pytest.mark.parametrize("host", JUDGED)
def test_the_real_udev_gives_no_seat_user_an_acl_on_the_gpus(lab, converged_lab, host):
    assert sudo(lab, host, "test -f /usr/lib/udev/rules.d/70-uaccess.rules && echo present").strip() == "present"
    render = group_id(lab, host, "render")
    amd_nodes = sudo(lab, host, "grep -l 0x1002 /sys/class/drm/renderD*/device/vendor").split()
    devices = {"/sys/class/kfd/kfd": int(DEFAULTS["access_kfd_mode"], 8)}
    devices.update({path.rsplit("/device/", 1)[0]: int(DEFAULTS["access_render_mode"], 8) for path in amd_nodes})
    assert len(devices) > 1, amd_nodes
    for device, mode in devices.items():
        verdict = udevadm_test(lab, host, device)
        assert not verdict.uaccess, (host, device, verdict)
        assert (verdict.group, verdict.mode) == (render, mode), (host, device, verdict.applied)
    card = udevadm_test(lab, host, "/sys/class/drm/card0")
    assert "uaccess" in card.tags and "uaccess" in card.run, (host, card)


# AMD's "Configure permissions for GPU access" (ROCm 10.0.0 install page,
# https://rocm.docs.amd.com/en/latest/install/rocm.html): its alternative to group membership, verbatim.
AMD_RULES_FILE = "/etc/udev/rules.d/70-amdgpu.rules"
AMD_RULES = """KERNEL=="kfd", GROUP="render", MODE="0666"
SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0666"
"""


# "NODE MODE" of /dev/kfd and each AMD render node, as the host's udev left them.
NODE_MODES = """stat -c '%n %a' /dev/kfd
for vendor in /sys/class/drm/renderD*/device/vendor; do
  if grep -q 0x1002 "$vendor"; then node=${vendor%/device/vendor}; stat -c '%n %a' "/dev/dri/${node##*/}"; fi
done"""


def node_modes(lab, host: str) -> dict[str, int]:
    return {node: int(mode, 8) for node, mode in (line.split() for line in sudo(lab, host, NODE_MODES).splitlines())}



@pytest.fixture
def outsider(lab, converged_lab):
    """A user the inventory does not list, who can log in; removed afterwards. Where the test did not end on its
    repair (it failed first), site.yml converges the host again."""
    sudo(lab, HOST, f"useradd --create-home --shell /bin/bash {OUTSIDER}")
    ended = {"repaired": False}
    try:
        authorize_login_key(lab, HOST, OUTSIDER)
        authorize_login_key(lab, HOST, CREATED_USER)
        yield OUTSIDER, ended
    finally:
        sudo(lab, HOST, f"userdel --remove {OUTSIDER} 2>/dev/null; rm -f {AMD_RULES_FILE}; true")
        revoke_login_key(lab, HOST, CREATED_USER)
        if not ended["repaired"]:
            repaired = run_playbook("site.yml", "--limit", HOST)
            assert repaired.returncode == 0, repaired.tail()


def test_only_listed_users_open_the_gpus_and_each_way_around_is_drift_until_site_yml(lab, outsider, tmp_path):
    """Three ways around the groups on one host, one drift and one repair: AMD's 0666 rules file, a seat-style
    ACL and an unlisted member of render."""
    outsider, ended = outsider
    refused = opens(lab, HOST, outsider)
    assert set(refused.values()) == {"EACCES"}, refused
    listed = opens(lab, HOST, CREATED_USER)
    assert not {"EACCES", "EPERM"} & set(listed.values()), listed

    # AMD's rules file, and udev run again for every GPU node as on the next boot or driver load: the role's MODE:=
    # is the last word on the AMD nodes, in the lab's trigger and in the real udev.
    sudo(lab, HOST, f"printf '%s' {_quote(AMD_RULES)} > {AMD_RULES_FILE}")
    sudo(lab, HOST, "udevadm trigger --subsystem-match=kfd --subsystem-match=drm")
    modes = node_modes(lab, HOST)
    kfd_mode, render_mode = int(DEFAULTS["access_kfd_mode"], 8), int(DEFAULTS["access_render_mode"], 8)
    assert len(modes) > 1 and modes.pop("/dev/kfd") == kfd_mode and set(modes.values()) == {render_mode}, modes
    verdict = udevadm_test(lab, HOST, "/sys/class/kfd/kfd")
    assert verdict.mode == kfd_mode and any("70-amdgpu.rules" in line for line in verdict.applied), verdict.applied
    assert set(opens(lab, HOST, outsider).values()) == {"EACCES"}

    # A seat-style ACL on the render node, then membership of render: each lets the outsider past the check.
    render_node = sorted(node for node in refused if node.startswith("/dev/dri/"))[0]
    uid = sudo(lab, HOST, f"id -u {outsider}").strip()
    sudo(lab, HOST, SEAT_ACL.format(uid=uid, node=render_node))
    granted = opens(lab, HOST, outsider)
    assert granted[render_node] != "EACCES" and granted["/dev/kfd"] == "EACCES", granted
    sudo(lab, HOST, f"gpasswd --add {outsider} render")
    assert "EACCES" not in opens(lab, HOST, outsider).values()

    code, report, result = drift(tmp_path / "broken", "--limit", HOST)
    found = report["hosts"][HOST]
    assert code == 2 and failed_checks(found) == {"ROCM-ACCESS-002", "ROCM-ACCESS-004", "ROCM-ACCESS-008"}, (
        found["checks"], result.stderr[-2000:])
    messages = {check["id"]: check["message"] for check in found["checks"] if check["status"] == "fail"}
    assert outsider in messages["ROCM-ACCESS-002"] and render_node in messages["ROCM-ACCESS-008"], messages
    for said in (AMD_RULES_FILE, 'MODE="0666"', "every user", "/dev/kfd", "render nodes",
                 "site.yml (the access role) removes it"):
        assert said in messages["ROCM-ACCESS-004"], messages["ROCM-ACCESS-004"]

    repair = run_playbook("site.yml", "--limit", HOST)
    assert repair.returncode == 0, repair.tail()
    assert set(opens(lab, HOST, outsider).values()) == {"EACCES"}
    assert sudo(lab, HOST, f"test -e {AMD_RULES_FILE} && echo present || echo gone").strip() == "gone"
    # Clean afterwards: drift checks the objects site.yml's compliance step proves before it runs a role. That a
    # second site.yml then changes nothing is test_provision_converge's, over the whole lab.
    code, report, result = drift(tmp_path / "repaired", "--limit", HOST)
    assert code == 0, (failed_checks(report["hosts"][HOST]), result.stderr[-2000:])
    ended["repaired"] = True
