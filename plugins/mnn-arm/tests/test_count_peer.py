"""tools/count_plugin.c counts exactly what runs between the markers of tools/count_marks.c: a loop of
known length in a static aarch64 program, on the calling thread and on a second thread.

Needs gcc, aarch64-linux-gnu-gcc and a qemu-aarch64 that loads TCG plugins (MNN_QEMU_AARCH64, or the
one tools/count_peer.py unpacks into ~/.cache/mnn-arm/qemu-user); skipped with the reason otherwise."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))
import count_peer  # noqa: E402

HAVE_QEMU = bool(os.environ.get("MNN_QEMU_AARCH64")) or (count_peer.CACHE / "qemu-user/usr/bin/qemu-aarch64").exists()
ON_HOST = platform.machine().lower() not in ("aarch64", "arm64")  # the tools run qemu; under qemu they do not
pytestmark = pytest.mark.skipif(
    not (ON_HOST and HAVE_QEMU and shutil.which("gcc") and shutil.which("aarch64-linux-gnu-gcc")),
    reason="needs a non-Arm host with gcc, aarch64-linux-gnu-gcc and a plugin-capable qemu-aarch64 "
    "(MNN_QEMU_AARCH64, or run plugins/mnn-arm/tools/count_peer.py count once to unpack Debian's)",
)

GUEST = r"""
#include <pthread.h>
#include <stdlib.h>
void mnn_count_begin(void);
void mnn_count_end(void);
static void spin(long n) { __asm__ volatile("mov x9, %0\n1: subs x9, x9, #1\n b.ne 1b" ::"r"(n) : "x9", "cc"); }
static void *worker(void *n) { spin((long)n); return 0; }
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    pthread_t t;
    mnn_count_begin(); mnn_count_end();
    mnn_count_begin(); spin(n); mnn_count_end();
    mnn_count_begin(); spin(3 * n); mnn_count_end();
    mnn_count_begin(); pthread_create(&t, 0, worker, (void *)n); pthread_join(t, 0); mnn_count_end();
    return 0;
}
"""


@pytest.fixture(scope="module")
def guest(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("count-peer")
    src = out / "guest.c"
    src.write_text(GUEST)
    exe = out / "guest"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-static", "-pthread", str(src), str(TOOLS / "count_marks.c"), "-o", str(exe)],
        check=True,
    )
    plugin = out / "count_plugin.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", str(TOOLS / "count_plugin.c"), "-o", str(plugin)], check=True)
    return exe, plugin


def windows(guest, n: int, mode: str = "") -> list[list[int]]:
    exe, plugin = guest
    qemu, env = count_peer.plugin_qemu()
    out = exe.parent / f"windows{len(mode)}.txt"
    subprocess.run(
        [qemu, "-cpu", "max", "-plugin", f"{plugin},out={out}{mode}", str(exe), str(n)],
        env={**os.environ, **env},
        check=True,
        timeout=120,
    )
    return [[int(f) for f in line.split()] for line in out.read_text().splitlines()]


@pytest.mark.parametrize("n", [1, 99_991])
def test_loop_counted_exactly(guest, n):
    base, more = windows(guest, n), windows(guest, n + 1000)
    assert len(base) == len(more) == 4
    assert 0 < base[0][0] == more[0][0] < 20  # the markers' own calls
    assert more[1][0] - base[1][0] == 2 * 1000  # subs + b.ne per iteration, nothing else varies
    assert more[2][0] - base[2][0] == 2 * 3000
    assert base[1][0] - base[0][0] in range(2 * n, 2 * n + 8)  # the loop and its set-up


def test_per_thread_counts_the_other_thread_apart(guest):
    n = 123_457
    shared, split = windows(guest, n), windows(guest, n, ",per_thread=on")
    assert [w[0] for w in split[:3]] == [w[0] for w in shared[:3]]  # one thread: the same counts
    assert [w[2] for w in split[:3]] == [0, 0, 0]
    own, threads, others = split[3]
    assert threads == 2
    assert 2 * n <= others < 2 * n + 50_000  # the worker's loop, plus its start and exit in libc
    assert own < 2 * n  # creating and joining it: the loop is not the main thread's
