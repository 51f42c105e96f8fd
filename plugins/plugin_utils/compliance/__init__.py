# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compliance on the controller: the GPU-class checks of the ``gpu`` fact, the fleet's numbers
for the drift report, and the declared-state cache of host_compliance.

Controller only. Imports module_utils, ``decision`` and ``roles``.
Who may import it: filter and action plugins (host_compliance).
"""
