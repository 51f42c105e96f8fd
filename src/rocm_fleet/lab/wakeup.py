"""What wakes a lab host's supervisor: file descriptors, not a timer.

The supervisor (rocm_fleet.lab.supervisor) serves requests that arrive as files, notices the host writing a
partition mode into its rendered /sys, and boots the host again when nspawn exits. It looked for all three five
times a second: ten idle hosts' supervisors took 0.96 CPU-s a minute, all through a CI run's labs (0.05 now). It
now sleeps in select() until one of them happens: inotify reports a file moved into or written in a watched
directory, a pidfd reports nspawn's exit, the signal wakeup fd reports SIGTERM. A timeout stays as a safety net.

Linux only (inotify, pidfd_open: kernel 5.3), like the lab. Imported by rocm_fleet.lab.supervisor alone.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal

# <sys/inotify.h>
IN_MODIFY = 0x00000002
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_TO = 0x00000080
# A request file renamed into the inbox; a file written in place (a partition file, by echo or amd-smi).
ARRIVED = IN_MOVED_TO | IN_CLOSE_WRITE
WRITTEN = IN_MODIFY | IN_CLOSE_WRITE


class Wakeup:
    """One inotify instance and the signal wakeup pipe; :meth:`wait` returns once either or a process fd is ready.

    Create it in the main thread after the signal handlers are set: it takes the process's signal wakeup fd.
    """

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._inotify = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._inotify < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._signals, writer = os.pipe()
        os.set_blocking(self._signals, False)
        os.set_blocking(writer, False)
        self._signal_writer = writer
        signal.set_wakeup_fd(writer, warn_on_full_buffer=False)

    def watch(self, directory: str | os.PathLike, mask: int) -> None:
        """Wake on ``mask``'s events for the files in ``directory`` (watched again after it is made anew)."""
        if self._libc.inotify_add_watch(self._inotify, os.fsencode(directory), mask) < 0:
            error = ctypes.get_errno()
            raise OSError(error, f"inotify_add_watch {directory}: {os.strerror(error)}")

    def wait(self, timeout: float, process_fd: int | None = None) -> bool:
        """Sleep until a watched event, a signal or ``process_fd`` (a pidfd) is ready, at most ``timeout`` s.

        True when something woke it. The events are drained: the caller looks at its files itself.
        """
        fds = [self._inotify, self._signals] + ([process_fd] if process_fd is not None else [])
        ready, _, _ = select.select(fds, [], [], timeout)
        for fd in (self._inotify, self._signals):
            if fd in ready:
                _drain(fd)
        return bool(ready)

    def close(self) -> None:
        signal.set_wakeup_fd(-1)
        for fd in (self._inotify, self._signals, self._signal_writer):
            os.close(fd)


def process_fd(pid: int) -> int | None:
    """A pidfd of ``pid`` (readable once it exits), or None where the kernel has none (before 5.3)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except BlockingIOError:
        pass
