"""Reaching a Dask cluster: a LocalCluster started here, or a scheduler at an address, proved to
be one before the run leans on it.

    parse_address("local:2")              # "local:2"; "foo", "http://h:1": ValueError saying why
    connect("tcp://10.0.0.5:8786")        # a Client, or a TaggerError saying what answered

Dask's client waits for a scheduler's handshake without a limit, so an address where something
else listens (a web server, a port that accepts and says nothing) would hang a run. Before the
client connects, :func:`check_scheduler` asks the address for its identity within Dask's connect
timeout, and when no scheduler answers, looks once more at what does: nothing (refused, no such
host), an HTTP server (the dashboard's port?), a banner, or silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import socket
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..config import usable_cores
from ..errors import TaggerError


def parse_address(address: str) -> str:
    """``address`` as :func:`connect` takes it: ``local``, ``local:N`` (N >= 1), or a Dask
    scheduler's address (``tcp://host:port``; ``host:port`` means tcp). A ValueError says what
    is wrong with anything else (the CLI turns it into a usage error)."""
    text = address.strip()
    if text == "local":
        return text
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if not (count.isascii() and count.isdecimal()) or int(count) < 1:
            raise ValueError(
                f"{address!r}: local:N starts N worker processes here, N a whole number >= 1 "
                "(local: one per core)"
            )
        return f"local:{int(count)}"
    from distributed.comm import registry
    from distributed.comm.addressing import parse_host_port

    scheme, separator, location = text.rpartition("://")
    if not separator:
        scheme = "tcp"  # host:port, as Dask reads it
    usable = sorted(set(registry.backends) - {"inproc"}, key=lambda name: (name != "tcp", name))
    give = (
        f"give tcp://HOST:PORT ({', '.join(usable[1:])} work too), e.g. tcp://10.0.0.5:8786 "
        "(8786: the port `dask scheduler` listens on by default), or local / local:N"
    )
    if scheme == "inproc":
        raise ValueError(
            f"{address!r}: inproc:// names a scheduler inside another Python process, which "
            f"tagger cannot reach; {give}"
        )
    if scheme not in usable:
        dashboard = " (a scheduler's dashboard is, on port 8787)" if "http" in scheme else ""
        raise ValueError(
            f"{address!r}: a Dask scheduler is not reached by {scheme}://{dashboard}; {give}"
        )
    try:
        host, port = parse_host_port(location)
    except ValueError as exc:
        raise ValueError(f"{address!r} is not a scheduler's address ({exc}); {give}") from None
    if not host or not 0 < int(port) < 65536:
        raise ValueError(
            f"{address!r} is not a scheduler's address: it needs a host, and a port from 1 to "
            f"65535; {give}"
        )
    if not _HOST.fullmatch(host) and not _is_ip(host):
        missing = " (a scheme is followed by ://)" if "/" in host else ""
        raise ValueError(
            f"{address!r} is not a scheduler's address: {host!r} is neither a host name nor an "
            f"IP address{missing}; {give}"
        )
    return f"{scheme}://{location}"


_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?"  # of a host name, between its dots
_HOST = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?")


def _is_ip(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def reachable(address: str) -> str:
    """``address`` as :func:`parse_address` gives it, the scheduler it names (if not ``local``)
    proved to answer as :func:`check_scheduler` does: what a run checks before it reads its
    inputs, so that a wrong address fails at once, not after the planning."""
    address = parse_address(address)
    if not address.startswith("local"):
        check_scheduler(address, connect_timeout())
    return address


def connect(address: str) -> Any:
    """A Dask client: ``local`` or ``local:N`` starts a LocalCluster here (N worker processes,
    default one per core, one thread each); anything else is a scheduler's address, which must
    answer as a Dask scheduler (:func:`check_scheduler`)."""
    from dask.distributed import Client

    address = parse_address(address)
    match = re.fullmatch(r"local(?::(\d+))?", address)
    if match:
        return Client(_local_cluster(int(match.group(1)) if match.group(1) else usable_cores()))
    timeout = connect_timeout()
    check_scheduler(address, timeout)
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise TaggerError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def connect_timeout() -> float:
    """Seconds a scheduler has to answer: Dask's connect timeout, ``distributed.comm.timeouts.
    connect`` (30 s; ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=10s`` sets it)."""
    import dask

    return dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"))


def _local_cluster(workers: int) -> Any:
    """A LocalCluster of ``workers`` processes, one thread each, made in a thread that blocks
    SIGINT: its event loop's threads, and so every worker process they start (now, or again
    after one is lost), inherit the blocked signal. Ctrl-C then reaches this process alone,
    which closes the cluster; the workers print no KeyboardInterrupt of their own."""
    import importlib.util
    from multiprocessing import resource_tracker

    import dask
    from dask.distributed import LocalCluster

    dashboard = ":0" if importlib.util.find_spec("bokeh") else None  # it needs bokeh
    made: dict[str, Any] = {}

    def make() -> None:
        # multiprocessing's resource tracker, when it starts, unblocks SIGINT in the thread that
        # starts it: start it first, or the loop thread would undo the mask with its first queue
        resource_tracker.ensure_running()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            with dask.config.set(
                {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
            ):
                made["cluster"] = LocalCluster(  # see _undo_malloc_trim
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=dashboard,
                    # its scheduler and workers: a failure reaches the client as the task's
                    # exception (said in one line); logged too, it would come twice, and a
                    # worker closing after Ctrl-C would complain of the scheduler it lost
                    silence_logs=logging.CRITICAL,
                )
        except BaseException as exc:  # raised again in the caller's thread
            made["error"] = exc

    thread = threading.Thread(target=make, name="tagger: start a LocalCluster")
    thread.start()
    thread.join()
    if "error" in made:
        raise made["error"]
    return made["cluster"]


def check_scheduler(address: str, timeout: float) -> None:
    """Return when a Dask scheduler answers at ``address`` (asked for its identity) within
    ``timeout`` seconds; else raise a TaggerError saying what answered there instead."""
    wait = min(1.5, timeout / 10)  # each of the three looks at what answers, if none did
    try:
        identity = _identity(address, timeout - 3 * wait)
    except Exception:  # whatever fails here, no scheduler answered: say what did
        raise TaggerError(
            f"cannot reach a Dask scheduler at {address} within {timeout:g} s: "
            f"{_what_answers(address, wait)}"
        ) from None
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        raise TaggerError(
            f"a Dask {kind or 'server'} answered at {address}, not a scheduler: give the "
            "scheduler's address (`dask scheduler` prints it, and writes it to --scheduler-file)"
        )


def _identity(address: str, timeout: float) -> Any:
    """What the Dask server at ``address`` says it is, asked in a thread of its own (a caller
    may be running an event loop), all within ``timeout`` seconds."""
    from distributed.core import rpc
    from distributed.security import Security

    async def ask() -> Any:
        arguments = Security().get_connection_args("client")
        async with rpc(address, timeout=timeout, connection_args=arguments) as server:
            return await server.identity()

    async def bounded() -> Any:
        return await asyncio.wait_for(ask(), timeout)

    with ThreadPoolExecutor(1, thread_name_prefix="tagger: ask the scheduler") as pool:
        return pool.submit(asyncio.run, bounded()).result()


def _what_answers(address: str, wait: float) -> str:
    """What listens at a tcp:// address, in words: looked at once, in at most three waits of
    ``wait`` seconds (connect, what it says unasked, what it answers an HTTP request)."""
    from distributed.comm.addressing import parse_address as split
    from distributed.comm.addressing import parse_host_port

    scheme, location = split(address)
    host, port = parse_host_port(location)
    try:
        connection = socket.create_connection((host, port), timeout=wait)
    except TimeoutError:
        return f"no connection within {wait:g} s (no such host, or a firewall?)"
    except OSError as exc:
        return f"cannot connect ({exc.strerror or exc})"
    with connection:
        if scheme != "tcp":
            return (
                f"something accepts connections there, but no Dask scheduler answered {scheme}://"
            )
        said = _received(connection, wait)
        if not said:  # a Dask scheduler speaks first; a web server waits for a request
            with contextlib.suppress(OSError):
                connection.sendall(f"HEAD / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            said = _received(connection, wait)
    if said.startswith(b"HTTP/"):
        status = said.splitlines()[0]
        return (
            f"an HTTP server answered ({_shown(status)}), not a Dask scheduler; "
            "a scheduler listens on port 8786 by default, its dashboard on 8787"
        )
    if len(said) >= 8 and struct.unpack("<Q", said[:8])[0] < 1 << 20:
        return f"a Dask server is there, but it did not say what it is within {wait:g} s"
    if said:
        return f"something that is no Dask scheduler answered: {_shown(said)}"
    return (
        "something accepts connections there but answers nothing (not even an HTTP request): "
        "it is no Dask scheduler"
    )


def _received(connection: socket.socket, wait: float) -> bytes:
    connection.settimeout(wait)
    try:
        return connection.recv(256)
    except OSError:  # TimeoutError included
        return b""


def _shown(data: bytes) -> str:
    """Bytes from the network as printable text: control characters and the rest escaped."""
    return repr(data[:60])[2:-1] + ("..." if len(data) > 60 else "")
