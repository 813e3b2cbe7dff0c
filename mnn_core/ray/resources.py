"""What one mnn actor asks Ray for, following its backend.

A host backend (reference, x86, arm) runs on `threads` cores, so the actor takes num_cpus=threads and
Ray packs as many actors on a node as it has cores. A backend whose tensors live on a device (Vulkan,
OpenCL, OpenGL, Metal) takes one GPU and one CPU for the thread that drives it. "auto" places ops on
whatever the node has, so it asks for cores only.

An actor also loads only the plugins its backend needs (`actor_plugins`, applied by `load_only`):
every installed plugin would cost each actor the import and hardware probe of backends it never runs
(device backends look for their drivers), a fixed cost paid in every actor of every run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import ray

from ..backend import HOST
from ..backend.plugins import get_plugins
from ..errors import MnnError


def uses_device(backend: str | Sequence[str]) -> bool:
    """Whether the first backend named keeps its tensors off the host (a GPU backend)."""
    if backend == "auto":
        return False
    first = backend if isinstance(backend, str) else (list(backend) or ["auto"])[0]
    known = get_plugins().backends.get(first)
    return known is not None and known.memory_domain != HOST


def actor_resources(
    backend: str | Sequence[str] = "auto", threads: int = 1, num_gpus: float | None = None, check_cluster: bool = True
) -> dict[str, float]:
    """Ray resource arguments ({"num_cpus": ..., "num_gpus": ...}) for one actor running `backend`.

    `num_gpus` overrides the choice (0 runs a device backend without reserving a GPU: a software
    driver such as lavapipe). With check_cluster, a request no node can meet is an error now rather
    than actors that wait forever."""
    if not isinstance(threads, int) or threads < 1:
        raise MnnError(f"threads must be a positive int, got {threads!r}")
    gpus = float(num_gpus) if num_gpus is not None else (1.0 if uses_device(backend) else 0.0)
    res = {"num_cpus": 1.0 if gpus else float(threads), "num_gpus": gpus}
    if check_cluster and ray.is_initialized():
        total = ray.cluster_resources()
        if gpus and total.get("GPU", 0) < gpus:
            raise MnnError(
                f"backend {backend!r} takes a GPU per actor, but the Ray cluster has "
                f"{total.get('GPU', 0):g}; start nodes with --num-gpus, or pass num_gpus=0 to run "
                "it without reserving one (a software driver)"
            )
        if total.get("CPU", 0) < res["num_cpus"]:
            raise MnnError(
                f"an actor with threads={threads} needs {res['num_cpus']:g} CPUs, but the cluster has "
                f"{total.get('CPU', 0):g}; use fewer threads"
            )
    return res


def actor_plugins(backend: str | Sequence[str] = "auto", suffix: str = ".mnn") -> tuple[str, ...] | None:
    """The plugins (entry-point names) an actor running `backend` on a model file of type `suffix`
    needs, as this process sees them: the backends' own, the one reading `suffix` if a plugin does,
    and those that register no backend (passes, loaders). None where every plugin must load: "auto"
    (ops go wherever they can run), or a backend this process does not know (another node may)."""
    names = [backend] if isinstance(backend, str) else list(backend)
    if not names or "auto" in names:
        return None
    plugins = get_plugins()
    wanted = {r.name for r in plugins.records if r.package != "mnn-core" and not r.backends and not r.error}
    owners = [plugins.backend_plugin.get(name) for name in names]
    if None in owners:
        return None
    owners.append(plugins.loader_plugin.get(suffix.lower()))
    wanted.update(r.name for r in owners if r is not None and r.package != "mnn-core")
    return tuple(sorted(wanted))


def load_only(plugins: Sequence[str] | None) -> None:
    """In an actor's own process, before its first Session: load only `plugins` there (none: the
    core's own backends only). A choice already made in the environment (MNN_LOAD_PLUGINS,
    MNN_DISABLE_PLUGIN_AUTOLOAD) stands, and plugins this process has loaded stay loaded."""
    if plugins is None or "MNN_LOAD_PLUGINS" in os.environ or "MNN_DISABLE_PLUGIN_AUTOLOAD" in os.environ:
        return
    if plugins:
        os.environ["MNN_LOAD_PLUGINS"] = ",".join(plugins)
    else:  # an empty MNN_LOAD_PLUGINS would mean every plugin
        os.environ["MNN_DISABLE_PLUGIN_AUTOLOAD"] = "1"
