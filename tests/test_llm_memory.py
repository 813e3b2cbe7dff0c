"""What a loaded float32 decoder holds: its weights once (packed by the kernels, the checkpoint's file
mapped, not copied) and its KV cache once (the arena's slot for a cache input read in place is never
touched).

Each measurement runs in a child process that imports no torch, so its resident memory is the
decoder's: resident pages (anonymous and file-backed, /proc/self/status) before and after loading, and
the peak (VmHWM, reset before loading) over the load and a short generation.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("safetensors")
pytestmark = pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc/self/status (Linux)")

HIDDEN, LAYERS, HEADS, KV_HEADS = 256, 4, 8, 2
#: (intermediate size, vocabulary) of the two checkpoints whose difference is measured
SIZES = {"small": (512, 8000), "large": (2048, 40000)}

CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from mnn_core.llm import load
    from mnn_core.backend.plugins import get_plugins

    def status(*keys):
        fields = dict(line.split(":", 1) for line in open("/proc/self/status"))
        return sum(int(fields[k].split()[0]) for k in keys) * 1024

    path, backend, context, chunk = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    get_plugins()  # the backends' modules loaded before the baseline
    np.zeros(1 << 20).sum()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak (VmHWM) starts again from here
    before = status("RssAnon", "RssFile")
    llm = load(path, backend=backend, threads=1, context=context, chunk=chunk)
    for cache in llm.decoder.k_cache + llm.decoder.v_cache:
        cache.fill(0.0)  # every page of the cache resident, as at the end of a long context
    tokens = list(llm.generate_ids(list(range(3, 11)), max_tokens=4, eos=False))
    after = status("RssAnon", "RssFile")
    print(json.dumps({"held": after - before, "peak": status("VmHWM") - before, "tokens": tokens}))
    """
)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("llm_memory")
    for name, (inter, vocab) in SIZES.items():
        torch.manual_seed(0)
        cfg = transformers.Qwen2Config(
            hidden_size=HIDDEN,
            intermediate_size=inter,
            num_hidden_layers=LAYERS,
            num_attention_heads=HEADS,
            num_key_value_heads=KV_HEADS,
            vocab_size=vocab,
            max_position_embeddings=32768,
            tie_word_embeddings=True,
        )
        transformers.Qwen2ForCausalLM(cfg).save_pretrained(root / name)
    return root


def weight_bytes(inter: int, vocab: int) -> int:
    per_layer = HIDDEN * (HIDDEN * 2 + 2 * (HIDDEN // HEADS * KV_HEADS)) + 3 * HIDDEN * inter
    return 4 * (LAYERS * per_layer + vocab * HIDDEN)  # the tied table counted once, as PyTorch holds it


def measure(path: Path, backend: str = "x86", context: int = 64, chunk: int = 16) -> dict:
    res = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), backend, str(context), str(chunk)], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_float32_weights_are_held_once(checkpoints):
    pytest.importorskip("mnn_x86")
    # what the larger checkpoint's 52 MB more weights cost, so the session's own memory cancels out
    weights = weight_bytes(*SIZES["large"]) - weight_bytes(*SIZES["small"])
    small, large = measure(checkpoints / "small"), measure(checkpoints / "large")
    held, peak = large["held"] - small["held"], large["peak"] - small["peak"]
    # Before the graph mapped the file, it held the weights (and a transposed copy of the tied head)
    # beside the kernels' packed copy: 2.3 times the weights, held and at the peak. The peak now is the
    # packed weights and the pages of the one being packed (the head, 0.8 of the difference here).
    assert held < 1.2 * weights, f"held {held / 1e6:.1f} MB more for {weights / 1e6:.1f} MB more weights"
    assert peak < 1.85 * weights, f"peak {peak / 1e6:.1f} MB more for {weights / 1e6:.1f} MB more weights"


def test_a_mapped_constant_keeps_its_values_and_gives_back_its_pages(tmp_path):
    from mnn_core.graph.ir import Graph
    from mnn_core.runtime.weights import ReleasedWeights, drop_mapped_pages

    values = np.arange(1 << 20, dtype=np.float32)
    values.tofile(tmp_path / "w.bin")
    mapped = np.memmap(tmp_path / "w.bin", dtype=np.float32, mode="r", offset=4096 + 12, shape=(1000, 1000))
    assert float(mapped.sum()) == float(values[1027:1001027].sum())  # every page read: resident
    graph = Graph("g")
    graph.initializers["w"] = mapped
    released = ReleasedWeights(Graph("model"), lambda g: g)
    assert not released.release(graph, "w")  # not freed (nothing to re-derive), its pages handed back
    assert graph.initializers["w"] is mapped and len(released) == 0
    assert float(mapped.sum()) == float(values[1027:1001027].sum())  # read again from the file
    assert drop_mapped_pages(np.asarray(mapped).T)  # a view of the map is one too
    heap = values.copy()
    assert not drop_mapped_pages(heap) and heap[5] == 5  # anonymous memory is never dropped (it would zero)
    writable = np.memmap(tmp_path / "w.bin", dtype=np.float32, mode="r+", shape=(10,))
    assert not drop_mapped_pages(writable)


def test_kv_cache_is_allocated_once(checkpoints):
    pytest.importorskip("mnn_x86")
    # one plan (chunk 1): what grows with the context is the cache, the packing space of the products
    # that read it (one per thread) and the scores' rows; a second copy of the cache (the arena's slot
    # written at each run, or a packing buffer per product as before) would make it 1.9 times or more
    small, large = 256, 16384
    path = checkpoints / "small"
    grown = measure(path, context=large, chunk=1)["held"] - measure(path, context=small, chunk=1)["held"]
    cache = 4 * LAYERS * 2 * KV_HEADS * (HIDDEN // HEADS) * (large - small)  # keys and values, float32
    assert 0.9 * cache < grown < 1.6 * cache, f"{grown / 1e6:.1f} MB more for {cache / 1e6:.1f} MB of cache"
