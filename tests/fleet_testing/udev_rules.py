"""A distribution's 70-uaccess.rules, as the udev tests mask it."""

# The shape of systemd's file (Debian 12's 252 and 13's 257 differ only in the device lines).
DISTRIBUTION = """\
#  SPDX-License-Identifier: LGPL-2.1-or-later
#
#  This file is part of systemd.

ACTION=="remove", GOTO="uaccess_end"
ENV{MAJOR}=="", GOTO="uaccess_end"

# DRI video devices
SUBSYSTEM=="drm", KERNEL=="card*", TAG+="uaccess"
# DRI render nodes
SUBSYSTEM=="drm", KERNEL=="renderD*", TAG+="uaccess"

LABEL="uaccess_end"
"""
