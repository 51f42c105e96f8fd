"""The supervisor's wakeups: a file moved into or written in a watched directory, a process's exit and a signal each
end the wait at once; nothing ends it only at its timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest

from rocm_fleet.lab import wakeup


@pytest.fixture
def waker():
    previous = signal.signal(signal.SIGUSR1, lambda *_: None)
    instance = wakeup.Wakeup()
    yield instance
    instance.close()
    signal.signal(signal.SIGUSR1, previous)


def later(action, delay: float = 0.3) -> threading.Timer:
    timer = threading.Timer(delay, action)
    timer.start()
    return timer


def timed_wait(waker, timeout: float, process_fd: int | None = None) -> tuple[bool, float]:
    start = time.monotonic()
    woken = waker.wait(timeout, process_fd)
    return woken, time.monotonic() - start


def test_nothing_happening_waits_the_whole_timeout(waker, tmp_path):
    waker.watch(tmp_path, wakeup.ARRIVED)
    woken, took = timed_wait(waker, 0.5)
    assert not woken and took >= 0.45


def test_a_request_renamed_into_the_inbox_wakes_it(waker, tmp_path):
    waker.watch(tmp_path, wakeup.ARRIVED)
    (tmp_path / "r.tmp").write_text("{}")  # written before the wait: drained by the first wakeup
    waker.wait(0)

    later(lambda: (tmp_path / "r.tmp").rename(tmp_path / "r.json"))
    woken, took = timed_wait(waker, 10)
    assert woken and took < 5
    woken, _ = timed_wait(waker, 0.2)  # the event was drained: nothing new
    assert not woken


def test_a_write_to_a_watched_file_wakes_it_and_a_read_does_not(waker, tmp_path):
    partition = tmp_path / "current_compute_partition"
    partition.write_text("SPX\n")
    waker.watch(tmp_path, wakeup.WRITTEN)
    later(partition.read_text)
    assert timed_wait(waker, 1)[0] is False
    later(lambda: partition.write_text("CPX\n"))
    woken, took = timed_wait(waker, 10)
    assert woken and took < 5


def test_a_directory_made_anew_is_watched_again(waker, tmp_path):
    directory = tmp_path / "device"
    directory.mkdir()
    waker.watch(directory, wakeup.WRITTEN)
    directory.rename(tmp_path / "old")
    directory.mkdir()
    waker.watch(directory, wakeup.WRITTEN)
    waker.wait(0)
    later(lambda: (directory / "current_memory_partition").write_text("NPS4\n"))
    assert timed_wait(waker, 10)[0]


def test_the_exit_of_a_process_wakes_it(waker):
    child = subprocess.Popen(["sleep", "0.3"])
    fd = wakeup.process_fd(child.pid)
    assert fd is not None
    try:
        woken, took = timed_wait(waker, 10, fd)
        assert woken and took < 5 and child.wait(timeout=5) == 0
    finally:
        os.close(fd)


def test_a_signal_wakes_it(waker):
    later(lambda: os.kill(os.getpid(), signal.SIGUSR1))
    woken, took = timed_wait(waker, 10)
    assert woken and took < 5


def test_a_directory_that_is_not_there_is_an_error_naming_it(waker, tmp_path):
    with pytest.raises(OSError, match="missing"):
        waker.watch(tmp_path / "missing", wakeup.ARRIVED)
