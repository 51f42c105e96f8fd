# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Repository signing keys: OpenPGP fingerprints of a keyring and which keys a host may trust.

Runs on hosts (compliance) and on the controller (the repo role's filters). Imports ``common``.
Who may import it: the compliance package and controller code (the repo role's filters).
"""
