"""Worker processes' lives: stopped at once when the run is (stop_now), started with Ctrl-C held
back (no_sigint), and ended with the process that started them (end_with_parent)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

WORKER_GRACE = 1.0  # seconds a busy worker has to stop before it is terminated


def stop_now(pool: Any) -> None:
    """Stop a ProcessPoolExecutor's workers now: cancel what waits, and terminate a worker still
    running after WORKER_GRACE seconds, so that its manager thread and Python's exit do not
    wait. The pool has no public way to reach its processes before Python 3.14; they are this
    process's children (multiprocessing.active_children), and a tagging run starts no other."""
    import multiprocessing
    import time

    processes = multiprocessing.active_children()
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + WORKER_GRACE
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
        process.join(5)
        if process.is_alive():
            process.kill()
            process.join()
    pool.shutdown(wait=True)


@contextlib.contextmanager
def no_sigint() -> Iterator[None]:
    """SIGINT held back while a worker process is started, so that it starts with it blocked
    (its Ctrl-C is the parent's to handle, and one during its start would print a traceback);
    one that came meanwhile reaches this process after."""
    import signal

    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, ValueError, OSError):  # no such call here, or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def end_with_parent(parent: int) -> None:
    """Linux sends this process SIGTERM when its parent ends; elsewhere, and in case the parent
    ended before that was set, a watchdog thread checks once a second."""
    import threading
    import time

    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="tagger-parent-watch").start()
