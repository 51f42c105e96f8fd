"""rocm_fleet.core.device_acl through main(): the access ACL goes, the mode stays, check mode changes nothing."""

import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.rocm_fleet.core.plugins.modules import device_acl
from fleet_testing.posix_acl import ACL_XATTR, seat_acl


def run(capsys, **params):
    with patch_module_args(params), pytest.raises(SystemExit) as exit_info:
        device_acl.main()
    return dict(json.loads(capsys.readouterr().out), rc=exit_info.value.code)


@pytest.fixture
def nodes(tmp_path):
    """Two stand-in nodes, one with the ACL logind gives a seat's user (skipped where the file system keeps none)."""
    plain, granted = tmp_path / "renderD128", tmp_path / "renderD129"
    for node in (plain, granted):
        node.write_text("")
        node.chmod(0o660)
    try:
        os.setxattr(granted, ACL_XATTR, seat_acl(4242))
    except OSError as exc:
        pytest.skip("this file system keeps no POSIX ACL: %s" % exc)
    return plain, granted


def test_the_acl_is_removed_once_and_check_mode_only_reports_it(capsys, nodes):
    plain, granted = nodes
    globs = [str(plain.parent / "renderD*")]
    checked = run(capsys, globs=globs, vendor="", _ansible_check_mode=True)
    assert (checked["changed"], checked["cleared"]) == (True, [str(granted)])
    assert ACL_XATTR in os.listxattr(granted)
    result = run(capsys, globs=globs, vendor="")
    assert (result["rc"], result["changed"], result["cleared"]) == (0, True, [str(granted)])
    assert ACL_XATTR not in os.listxattr(granted) and granted.stat().st_mode & 0o777 == 0o660
    again = run(capsys, globs=globs, vendor="")
    assert (again["changed"], again["cleared"]) == (False, [])
