"""A Ray cluster of several nodes on this machine: `ray start --head` plus `ray start --address` nodes.

    with LocalCluster(nodes=2, cpus_per_node=1) as cluster:
        cluster.connect()              # ray.init(address=...) with the cluster's token
        ...

For tests, benchmarks and trying a multi-node setup on a laptop. Each node is a `ray start --block`
process in a session of its own; Ray's daemons and workers stay in that session (they change their
process group, not their session), so stopping kills exactly the processes this cluster started,
never another Ray on the machine (as `ray stop` would).

Ray 2.60 turns token authentication on for a new cluster and keeps one token in ~/.ray/auth_token,
which every `ray start` and `ray.init` on the machine shares (and may regenerate). The cluster has
a token of its own instead, handed to its nodes and to whoever connects through `env`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import MnnError

#: the object store of each node (bytes): small, since a test's blocks are small and the machine shared
OBJECT_STORE_BYTES = 80 * 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    """Start `nodes` Ray nodes here (the first the head); `stop()` (or leaving `with`) ends them all."""

    def __init__(
        self,
        nodes: int = 2,
        cpus_per_node: int = 1,
        object_store_bytes: int = OBJECT_STORE_BYTES,
        timeout: float = 120.0,
    ):
        if nodes < 1 or cpus_per_node < 1:
            raise MnnError(f"a local cluster needs a node and a CPU per node at least, got {nodes}, {cpus_per_node}")
        self.nodes, self.cpus, self.store, self.timeout = nodes, cpus_per_node, object_store_bytes, timeout
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # short: Ray's Unix sockets live under it and a socket path is at most 107 bytes
        self.temp_dir = tempfile.mkdtemp(prefix="mnnray-", dir="/tmp" if os.path.isdir("/tmp") else None)
        self._procs: list[subprocess.Popen] = []
        #: what a process needs in its environment to join or connect to this cluster
        self.env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}

    def connect(self, **init_kwargs):
        """ray.init() on this cluster from this process (its token goes into os.environ: Ray reads it there)."""
        import ray

        os.environ.update(self.env)
        try:  # Ray caches the mode and token of its first connection: make it read the environment again
            from ray._raylet import AuthenticationTokenLoader, Config

            Config.initialize("")
            AuthenticationTokenLoader.instance().reset_cache()
        except (ImportError, AttributeError):  # a Ray without token authentication
            pass
        init_kwargs.setdefault("logging_level", "ERROR")
        init_kwargs.setdefault("log_to_driver", False)
        return ray.init(address=self.address, **init_kwargs)

    def _ray(self, *args: str) -> subprocess.Popen:
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", **self.env)
        log = open(Path(self.temp_dir) / f"node{len(self._procs)}.log", "w")  # noqa: SIM115 (closed by the child's exit)
        exe = Path(sys.executable).with_name("ray")
        cmd = [
            str(exe) if exe.exists() else "ray",
            "start",
            "--block",
            f"--num-cpus={self.cpus}",
            f"--object-store-memory={self.store}",
            "--node-ip-address=127.0.0.1",
            *args,
        ]
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
        self._procs.append(proc)
        return proc

    def start(self) -> LocalCluster:
        self._ray(
            "--head",
            f"--port={self.port}",
            "--include-dashboard=false",
            f"--temp-dir={self.temp_dir}",
            f"--ray-client-server-port={free_port()}",
            "--disable-usage-stats",
        )
        self._wait(lambda: self._started(0), "the head node")
        for _ in range(self.nodes - 1):
            self._ray(f"--address={self.address}")
        self._wait(lambda: all(self._started(i) for i in range(self.nodes)), f"{self.nodes} nodes to join")
        return self

    def _started(self, i: int) -> bool:
        """`ray start` says so once its node has registered with the head (and stays up: --block)."""
        try:
            return "Ray runtime started" in (Path(self.temp_dir) / f"node{i}.log").read_text()
        except OSError:
            return False

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not ready():
            dead = [p for p in self._procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                logs = "; ".join(_tail(Path(self.temp_dir) / f"node{i}.log") for i in range(len(self._procs)))
                self.stop()
                why = "a node exited" if dead else f"timed out after {self.timeout:g}s"
                raise MnnError(f"local Ray cluster: waiting for {what}, {why}. Logs: {logs}")
            time.sleep(0.5)

    def stop(self) -> None:
        """End every process of this cluster's nodes: TERM, then KILL what is left after a few seconds."""
        sessions = {p.pid for p in self._procs}
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            pids = _pids_in_sessions(sessions)
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            deadline = time.monotonic() + wait
            while _pids_in_sessions(sessions) and time.monotonic() < deadline:
                time.sleep(0.2)
        for p in self._procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._procs.clear()
        shutil.rmtree(self.temp_dir, ignore_errors=True)  # the nodes' sessions and logs: each run leaves a folder

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _pids_in_sessions(sessions: set[int]) -> list[int]:
    """The processes whose session is one of `sessions` (the node processes and all they started)."""
    found = []
    if not os.path.isdir("/proc"):  # no /proc (macOS): the node processes' own groups
        return [pid for pid in sessions if _alive(pid)]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) in sessions:
                    found.append(int(entry))
            except (ProcessLookupError, PermissionError):
                continue
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _tail(path: Path, chars: int = 400) -> str:
    try:
        return f"{path.name}: {path.read_text()[-chars:]!r}"
    except OSError:
        return f"{path.name}: (none)"
