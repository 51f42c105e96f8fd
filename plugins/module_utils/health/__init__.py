# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU health: what sysfs and the vendor tools say of each GPU (driver initialisation, PCIe
link, RAS/ECC counters, firmware) and the per-GPU verdict on each.

Runs on hosts (node_compliance). Imports ``common`` and ``gpu``.
Who may import it: the host and compliance packages, and controller code.
"""
