"""The distribution's 70-uaccess.rules, masked by a copy that sends AMD render nodes past every uaccess rule."""

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.udev_uaccess import (
    END_LABEL,
    UaccessRulesError,
    masked_uaccess_rules,
)
from fleet_testing.udev_rules import DISTRIBUTION

GUARD = 'SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="0x1002", GOTO="uaccess_end"'


def rules(text):
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_the_guard_is_the_first_rule_and_everything_else_stays_as_the_distribution_wrote_it():
    masked = masked_uaccess_rules(DISTRIBUTION, "/usr/lib/udev/rules.d/70-uaccess.rules")
    assert rules(masked) == [GUARD] + rules(DISTRIBUTION)
    assert masked.startswith(DISTRIBUTION.split("ACTION")[0])  # the leading comments first
    assert "masks /usr/lib/udev/rules.d/70-uaccess.rules" in masked
    assert masked.replace(masked[masked.index("# rocm-fleet"):masked.index("ACTION")], "") == DISTRIBUTION


def test_the_same_text_gives_the_same_copy_and_a_changed_text_a_changed_copy():
    first = masked_uaccess_rules(DISTRIBUTION)
    assert masked_uaccess_rules(DISTRIBUTION) == first
    updated = DISTRIBUTION.replace("# DRI video devices", "# DRI video devices\nSUBSYSTEM==\"accel\", TAG+=\"uaccess\"")
    assert masked_uaccess_rules(updated) != first


def test_the_vendor_is_a_parameter_and_a_file_without_a_final_newline_is_completed():
    masked = masked_uaccess_rules(DISTRIBUTION.rstrip("\n"), vendor="0x8086")
    assert 'ATTRS{vendor}=="0x8086"' in masked and masked.endswith(END_LABEL + "\n")


def test_a_file_that_is_all_comments_gets_the_guard_at_its_end_and_one_without_the_label_is_refused():
    with pytest.raises(UaccessRulesError) as error:
        masked_uaccess_rules("# nothing\n", "/lib/udev/rules.d/70-uaccess.rules")
    assert "/lib/udev/rules.d/70-uaccess.rules has no line LABEL=\"uaccess_end\"" in str(error.value)
    assert "access_udev_rules: false" in str(error.value)
    assert rules(masked_uaccess_rules("# only\n" + END_LABEL + "\n")) == [GUARD, END_LABEL]
    with pytest.raises(UaccessRulesError):
        masked_uaccess_rules(None)
