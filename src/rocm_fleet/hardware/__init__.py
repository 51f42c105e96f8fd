"""Simulated GPU server hardware: profiles and their rendering as sysfs trees."""

from rocm_fleet.hardware.model import CpuNode, Gpu, Link, Profile, ProfileError
from rocm_fleet.hardware.profile import available_profiles, load_profile, profile_from_dict

__all__ = [
    "CpuNode",
    "Gpu",
    "Link",
    "Profile",
    "ProfileError",
    "available_profiles",
    "load_profile",
    "profile_from_dict",
]
