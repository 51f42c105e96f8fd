# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pull mode on the controller: the one archive a host's install receives (the wheels of its Python
and the copy of the site's inventory), built deterministically and named by its sha256.

Controller only (it reads the controller's wheelhouse and inventory). Imports the standard library only.
Who may import it: the pull_archive action plugin.
"""
