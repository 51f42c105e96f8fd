"""Helpers shared by rocm-fleet's tests: lab access, sample trees and data, fake tools, test oracles.

Tests import it as ``fleet_testing`` (pytest's ``pythonpath`` puts tests/ on sys.path); nothing outside
tests/ imports it, and no test imports another test module or a conftest.
"""
