"""Worker processes that tag (or retag) batches in parallel, their results in input order; and
:func:`in_batches`, which runs batches here or in them.

A :class:`Workers` pool starts its processes on first use, each from a taxonomy and a
configuration (never from a parent's loaded models), with one thread each, Ctrl-C held back
(the parent handles it) and a life no longer than the parent's, however the parent ends (even
kill -9). At most twice as many batches as workers are in flight, so memory stays flat on any
input. Stopped now, it stops its own processes and no other of the host's.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from typing import Any

from ..errors import TaggerError

WORKER_GRACE = 1.0  # seconds a busy worker has to stop before it is terminated

# What one worker process holds at most once its models are loaded (spaCy and MiniLM), by
# backend (every one of config.EMBEDDING_BACKENDS), as measured on the machines this was written
# on: torch itself costs about 400 MB. The static table is 15 MB and runs no transformer: a
# worker's peak over 512 abstracts in batches of 64 was 266 MB, against onnx-int8's 307 MB.
WORKER_MEMORY = {
    "torch": 850 * 2**20,
    "onnx": 450 * 2**20,
    "onnx-int8": 450 * 2**20,
    "static": 400 * 2**20,
}


class Workers:
    """``count`` processes, each set up by ``start(*arguments)`` (in the worker), then running
    ``job`` on one batch at a time."""

    def __init__(
        self,
        count: int,
        start: Callable[..., None],
        arguments: tuple[Any, ...],
        job: Callable[[list[Any]], list[Any]],
        *,
        backend: str,
    ) -> None:
        self.count = count
        self.start = start
        self.arguments = arguments
        self.job = job
        self.backend = backend
        self._pool: Any = None

    def map(self, batches: Iterable[list[Any]]) -> Iterator[Any]:
        """``job``'s results of every batch, in order, a batch's results one by one."""
        pool = self._started()
        pending: deque = deque()
        for batch in batches:
            with no_sigint():  # a worker it starts ignores Ctrl-C from its first instruction
                pending.append(pool.submit(self.job, batch))
            if len(pending) >= 2 * self.count:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()

    def _started(self) -> Any:
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            check_memory(self.count, self.backend)
            # spawn, not fork: forking a process that runs torch can hang
            self._pool = ProcessPoolExecutor(
                self.count,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_started_worker,
                initargs=(os.getpid(), self.start, self.arguments),
            )
        return self._pool

    def close(self, *, wait: bool = True) -> None:
        """Stop the processes, if any were started: once the batches they are tagging are done,
        or, unless ``wait``, now (batches not started are dropped; a worker still busy after
        WORKER_GRACE seconds is terminated)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if wait:
            pool.shutdown(cancel_futures=True)
        else:
            stop_now(pool)


def checked_workers(workers: Any, name: str, embedder_given: bool) -> int:
    """``workers``, if it is a number of processes ``name`` can start."""
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(
            f"The 'workers' parameter of {name} must be an int >= 1. Got {workers!r} instead."
        )
    if workers > 1 and embedder_given:
        raise ValueError(
            f"{name}(workers > 1) starts each worker from the configuration, so it cannot use "
            "an embedder object passed to the Tagger; use workers=1, or name the model in "
            "TaggerConfig.embedding_model"
        )
    return workers


def in_batches(
    items: Iterable[Any],
    size: int,
    workers: int,
    here: Callable[[list[Any]], list[Any]],
    pool: Callable[[int], Workers],
) -> Iterator[Any]:
    """``here(batch)`` of every batch of ``size`` items, in order: in this process with one
    worker, or in ``pool(workers)``'s processes (input that fits in one batch is done here:
    starting workers would cost more than it saves)."""
    batches = _batches(items, size)
    if workers > 1:
        first = list(islice(batches, 2))
        if len(first) < 2:
            workers = 1
        batches = chain(first, batches)
    if workers == 1:
        for batch in batches:
            yield from here(batch)
        return
    yield from pool(workers).map(batches)


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    items = iter(items)
    while batch := list(islice(items, size)):
        yield batch


@contextlib.contextmanager
def process_pool(
    workers: int, *, initializer: Callable[..., Any] | None = None, initargs: tuple = ()
) -> Iterator[Any]:
    """A ProcessPoolExecutor of ``workers`` spawned processes (never forked: forking a process
    that has run torch or BLAS threads can hang), shut down when the block ends; stopped now
    (:func:`stop_now`) if it ends by an exception, Ctrl-C or SIGTERM among them, so that a
    stopped command does not wait for its workers' long tasks."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=initializer,
        initargs=initargs,
    )
    try:
        yield pool
    except BaseException:
        stop_now(pool)
        raise
    pool.shutdown(wait=True)


def process_map(
    function: Callable[[Any, Any], Any], items: Iterable[Any], *, shared: Any, workers: int
) -> Iterator[Any]:
    """``function(shared, item)`` of each item, in order, each yielded when it and those before
    it are done: ``workers`` at a time in spawned processes (:func:`process_pool`), each given
    ``shared`` once and one thread, so that what they compute does not depend on how many run;
    or here, one after another, with one worker or one item. ``function`` is a module-level
    function (a worker imports it by name)."""
    items = list(items)
    if workers > 1 and len(items) > 1:
        with process_pool(min(workers, len(items)), initializer=_hold, initargs=(shared,)) as pool:
            yield from pool.map(_call, [(function, item) for item in items])
    else:
        for item in items:
            yield function(shared, item)


_HELD: list[Any] = []  # in a process_map worker: what its tasks share


def _hold(shared: Any) -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    _HELD[:] = [shared]


def _call(task: tuple[Callable[[Any, Any], Any], Any]) -> Any:
    function, item = task
    return function(_HELD[0], item)


def stop_now(pool: Any) -> None:
    """Stop a ProcessPoolExecutor's workers now: cancel what waits, and terminate a worker still
    running after WORKER_GRACE seconds, so that its manager thread and Python's exit do not
    wait. Only the pool's own processes are stopped (its ``_processes``: the pool has no public
    way to reach them before Python 3.14); the host's other children are not touched."""
    import time

    processes = list((getattr(pool, "_processes", None) or {}).values())
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


def check_memory(workers: int, backend: str) -> None:
    """Refuse a number of workers whose models cannot fit in the memory available now."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            fields = dict(line.split(":", 1) for line in meminfo)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return  # not Linux: nothing to go by
    needed = workers * WORKER_MEMORY[backend]
    if needed > available:
        raise TaggerError(
            f"{workers} workers need about {needed / 2**30:.1f} GB for their "
            f"models, and {available / 2**30:.1f} GB is available: use fewer workers"
        )


def _started_worker(parent: int, start: Callable[..., None], arguments: tuple[Any, ...]) -> None:
    """Runs once in each worker process: one thread, Ctrl-C ignored, the life of the parent;
    then ``start(*arguments)``."""
    import signal

    from threadpoolctl import threadpool_limits

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    end_with_parent(parent)
    threadpool_limits(1)
    start(*arguments)


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
