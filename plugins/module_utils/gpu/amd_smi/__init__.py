# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""amd-smi's output (6.x through 27.x: JSON, text, topology, partition) as a SourceReport.

Runs on hosts. Imports ``common`` and ``gpu``.
Who may import it: the gpu package (gather), health (firmware), and controller code.
"""
