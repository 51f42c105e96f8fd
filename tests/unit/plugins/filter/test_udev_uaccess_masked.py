"""Filter udev_uaccess_masked: the module_utils function, with the host named in its error."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.udev_uaccess import udev_uaccess_masked

SOURCE = "/usr/lib/udev/rules.d/70-uaccess.rules"


def test_the_copy_names_its_source_and_a_file_without_the_label_fails_naming_host_and_file():
    masked = udev_uaccess_masked('# systemd\nTAG+="uaccess"\nLABEL="uaccess_end"\n', SOURCE, "ws-01")
    assert f"masks {SOURCE}" in masked and masked.index('GOTO="uaccess_end"') < masked.index('TAG+="uaccess"')
    with pytest.raises(AnsibleFilterError, match=rf'^ws-01: {SOURCE} has no line LABEL="uaccess_end"'):
        udev_uaccess_masked('TAG+="uaccess"\n', SOURCE, "ws-01")
