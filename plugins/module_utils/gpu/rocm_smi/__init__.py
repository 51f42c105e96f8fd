# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rocm-smi's output (every generation: 5.x text, 6.x JSON) as a SourceReport.

Runs on hosts. Imports ``common`` and ``gpu``.
Who may import it: the gpu package (gather), and controller code.
"""
