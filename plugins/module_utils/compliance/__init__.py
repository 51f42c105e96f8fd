# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_compliance's evaluator: every item of a host's declared state checked in one pass
(files, packages, apt sources, accounts, sysctls, devices, access, udev, environment, health).

Runs on hosts. May import every other module_utils package; nothing in module_utils imports it.
The controller imports it to read results (the host_compliance action, drift).
Who may import it: the node_compliance module, and controller code that reads its results (the
host_compliance action, filters); no other module_utils package.
"""
