"""The lab: simulated AMD GPU servers (namespaces, overlayfs, sshd on loopback, rendered /sys)."""
