"""rocm-fleet: Ansible fleet provisioning and compliance for AMD ROCm GPU servers."""

__version__ = "0.1.0"
