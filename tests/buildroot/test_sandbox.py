"""toolkit.buildroot.run_in_root's limits, in the debian-sid-rocm root: `network=False` leaves the command
only a loopback device of its own (a port served on the host's 127.0.0.1 cannot be reached, while with the
network kept it can), and `timeout` kills the command and everything it started, with an error naming the
command and the limit."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from toolkit.buildroot import run_in_root
from toolkit.util.errors import ToolkitError

CONNECT = ("import socket, sys\n"
           "try:\n"
           "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).recv(16)\n"
           "    print('reached')\n"
           "except OSError as exc:\n"
           "    print('unreachable', type(exc).__name__)\n")


@pytest.fixture
def host_port():
    """A TCP port on the host's 127.0.0.1 that answers every connection with b'hello'."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    done.set()
    thread.join(timeout=5)
    server.close()


def test_without_network_the_hosts_port_is_unreachable_and_only_lo_is_there(sid_root: Path, host_port: int):
    kept = run_in_root(sid_root, ["python3", "-c", CONNECT, str(host_port)], capture=True)
    assert kept.stdout.strip() == "reached"  # the host's network is the default: the port is there
    cut = run_in_root(sid_root, ["python3", "-c", CONNECT, str(host_port)], capture=True, network=False)
    assert cut.stdout.strip().startswith("unreachable"), cut.stdout + cut.stderr
    devices = run_in_root(sid_root, ["cat", "/proc/net/dev"], capture=True, network=False).stdout
    names = [line.split(":", 1)[0].strip() for line in devices.splitlines()[2:]]
    assert names == ["lo"], devices


def test_timeout_kills_the_command_and_names_it_and_the_limit(sid_root: Path, tmp_path: Path):
    seconds = f"30.{os.getpid()}"   # sleep 30 s, with a command line no other process has
    started = time.monotonic()
    with pytest.raises(ToolkitError) as info:
        run_in_root(sid_root, ["sh", "-c", f"echo started; sleep {seconds}"], capture=True, timeout=1)
    took = time.monotonic() - started
    assert took < 10, f"the command ran {took:.1f} s past a 1 s limit"
    message = str(info.value)
    assert f"`sh -c 'echo started; sleep {seconds}'`" in message, message
    assert "time limit of 1 s" in message and "killed" in message, message
    assert "started" in message  # what it printed before it was killed
    # Nothing it started is left running.
    deadline = time.monotonic() + 10
    while _running(seconds) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(seconds)
    with pytest.raises(ToolkitError, match="timeout must be a positive number of seconds"):
        run_in_root(sid_root, ["true"], timeout=0)


def _running(seconds: str) -> list[str]:
    """Processes running `sleep SECONDS`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes() == f"sleep\0{seconds}\0".encode():
                found.append(proc.name)
        except OSError:
            pass
    return found
