"""Mount bookkeeping and the committed lab inventory."""

from __future__ import annotations

from rocm_fleet.hardware.profile import available_profiles
from rocm_fleet.lab import inventory
from rocm_fleet.lab.mounts import mounts_under

MOUNTINFO = """\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
90 22 0:50 / /lab/hosts/a/root rw,relatime - overlay overlay rw,lowerdir=/b,upperdir=/lab/hosts/a/upper
91 90 0:51 / /lab/hosts/a/root/proc rw - proc proc rw
92 22 0:52 / /lab/hosts/with\\040space/root rw - overlay overlay rw
93 22 0:53 / /lab-other/x rw - tmpfs tmpfs rw
"""


def test_mounts_under_lists_deepest_first_unescapes_and_stays_inside(tmp_path):
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(MOUNTINFO)
    found = mounts_under("/lab", str(mountinfo))
    assert found[0] == "/lab/hosts/a/root/proc"
    assert set(found) == {"/lab/hosts/a/root/proc", "/lab/hosts/a/root", "/lab/hosts/with space/root"}


def test_committed_inventory_names_known_profiles_and_unique_ports():
    hosts = inventory.committed_hosts()
    assert {spec.profile for spec in hosts} <= set(available_profiles())
    assert len({spec.port for spec in hosts}) == len(hosts)
    assert any(spec.profile == "mi300x-8" for spec in hosts)
    assert any("gpu_servers" in spec.groups for spec in hosts)


def test_generated_hosts_do_not_collide_with_the_committed_ones():
    specs = inventory.desired_hosts(extra=16)
    assert len(specs) == len(inventory.committed_hosts()) + 16
    assert specs[-1].name == "scale-16"
