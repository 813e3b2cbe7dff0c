"""Prefill and decode tokens/s of mnn_core.llm against transformers' PyTorch (eager) and llama.cpp, batch 1.

    python benchmarks/bench_llm.py --size small --threads 1,2           # a ~30M Qwen2-shaped model
    python benchmarks/bench_llm.py --size 0.5b --prompt 512 --decode 128  # Qwen2-0.5B's shape
    python benchmarks/bench_llm.py --size 0.5b --weights fp32,int8,int4 --group 64 --engines mnn,torch
    python benchmarks/bench_llm.py --size 0.5b --weights fp32,int8,int4 --engines mnn,llama \
        --llama-cpp-src llama_cpp_python-0.3.36/vendor/llama.cpp

A random-weight checkpoint of the chosen shape is built with transformers and saved once under
--dir (no weights are downloaded). Each (engine, threads) runs in a child process with the thread
counts set before numpy or torch load, so peak memory (max RSS) is that engine's alone. Both
engines decode greedily from the same prompt; the decoded tokens are compared and a mismatch is
reported. Prefill: the prompt's tokens/s; decode: tokens after the first, per second (--repeat N:
the best of N runs of each; --rounds R: every engine and format in turn, R times, each weight format's
engines next to each other, the best of all).
--weights runs mnn once per weight format (int8/int4: MatMulNBits, group --group, an int8 head);
PyTorch always runs float32; llama.cpp (llama_cpp_peer.py, skipped with a message where llama_cpp is
not importable) runs the GGUF counterpart of each: f32, q8_0, q4_0; ONNX Runtime GenAI (genai_peer.py,
skipped likewise) its own builder's fp32 and int4 models.
A quantized mnn decoder loads, as llama.cpp loads its GGUF, from a file quantized beforehand: a .mnn
exported once per format, group and context (kept under --dir beside the GGUFs); --mnn-load checkpoint
quantizes the safetensors checkpoint at each load instead.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

#: the peer engines: their modules beside this file (missing(), measure(); llama_cpp_peer.py, genai_peer.py)
#: and their names
PEERS = {"llama": ("llama_cpp_peer", "llama.cpp"), "genai": ("genai_peer", "ONNX Runtime GenAI")}

#: Qwen2-shaped sizes (hidden, intermediate, layers, heads, kv heads, vocab)
SIZES = {
    "tiny": (64, 128, 2, 4, 2, 1000),
    "small": (256, 1024, 6, 8, 2, 32000),
    "0.5b": (896, 4864, 24, 14, 2, 151936),
    "1.5b": (1536, 8960, 28, 12, 2, 151936),
}


def build(size: str, root: Path) -> Path:
    path = root / f"qwen2-{size}"
    if (path / "config.json").is_file():
        return path
    import torch
    import transformers

    hidden, inter, layers, heads, kv, vocab = SIZES[size]
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(
        hidden_size=hidden,
        intermediate_size=inter,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        vocab_size=vocab,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    )
    transformers.Qwen2ForCausalLM(cfg).save_pretrained(path)
    return path


def mnn_export(path: Path, weights: str, group: int, context: int) -> Path:
    """The checkpoint quantized once into a .mnn file (made on first use) that a child loads with one
    mmap, as llama.cpp maps its GGUF. Made in a process of its own: a child's peak memory (max RSS)
    starts from what its parent held when it was started."""
    out = path.parent / f"{path.name}-{weights}-g{group}-c{context}.mnn"
    if not out.is_file():
        cmd = [sys.executable, __file__, "--export", str(path), weights, str(group), str(context), str(out)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"exporting {out.name} failed:\n{res.stderr[-2000:]}")
    return out


def child(
    engine: str, path: str, threads: int, prompt: int, decode: int, weights: str, group: int, repeat: int
) -> dict:
    import resource

    import numpy as np

    ids = np.random.default_rng(0).integers(10, 1000, prompt).tolist()
    if engine in PEERS:
        peer = importlib.import_module(PEERS[engine][0])
        load_s, prefill_s, decode_s, tokens = peer.measure(Path(path), ids, threads, decode, repeat)
    elif engine == "mnn":
        from mnn_core.llm import load

        quant = {} if path.endswith(".mnn") else {"weights": weights, "group": group}  # an export keeps its own
        t = time.perf_counter()
        llm = load(path, backend="x86", threads=threads, context=prompt + decode + 1, chunk=64, **quant)
        load_s = time.perf_counter() - t
        prefill_s = decode_s = float("inf")
        for _ in range(repeat):  # the best of `repeat` runs: the machine may be shared
            tokens = list(llm.generate_ids(ids, max_tokens=decode, eos=False))
            st = llm.last_stats
            prefill_s, decode_s = min(prefill_s, st["prefill_s"]), min(decode_s, st["decode_s"])
    else:
        import torch
        import transformers

        torch.set_num_threads(threads)
        t = time.perf_counter()
        model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
        load_s = time.perf_counter() - t
        prefill_s = decode_s = float("inf")
        with torch.no_grad():
            for _ in range(repeat):
                x = torch.tensor([ids])
                t = time.perf_counter()
                out = model(x, use_cache=True)
                prefill_s = min(prefill_s, time.perf_counter() - t)
                past, token = out.past_key_values, int(out.logits[0, -1].argmax())
                tokens, t = [token], time.perf_counter()
                for _ in range(decode - 1):
                    out = model(torch.tensor([[token]]), past_key_values=past, use_cache=True)
                    past, token = out.past_key_values, int(out.logits[0, -1].argmax())
                    tokens.append(token)
                decode_s = min(decode_s, time.perf_counter() - t)
    return {
        "engine": engine,
        "weights": {"mnn": weights, "genai": weights, "torch": "fp32"}.get(engine) or peer.GGUF_TYPES[weights],
        "threads": threads,
        "load_s": load_s,
        "prefill_tok_s": prompt / prefill_s,
        "decode_tok_s": (decode - 1) / decode_s if decode > 1 else 0.0,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "tokens": tokens,
    }


def peer_files(engines: list[str], engine: str, make) -> dict:
    """{weights: what peer `engine` loads}, made by make(its module) here, once (a child's peak memory
    is its engine's alone); {} where the engine is not asked for, or cannot run: then it is left out of
    `engines`, with a message."""
    if engine not in engines:
        return {}
    module, name = PEERS[engine]
    peer = importlib.import_module(module)
    why = peer.missing()
    if why:
        print(f"{name} skipped: {why}")
        engines.remove(engine)
        return {}
    return make(peer)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=list(SIZES), default="small")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--prompt", type=int, default=128, help="prompt tokens (default 128)")
    ap.add_argument("--decode", type=int, default=32, help="tokens generated (default 32)")
    ap.add_argument("--engines", default="mnn,torch", help="of mnn, torch, llama, genai (default mnn,torch)")
    ap.add_argument("--weights", default="fp32", help="mnn's weight formats, comma-separated: fp32,int8,int4")
    ap.add_argument("--group", type=int, default=64, help="quantization group (default 64)")
    ap.add_argument("--dir", default="/tmp/mnn_bench_llm", help="where the random checkpoints are kept")
    ap.add_argument("--repeat", type=int, default=1, help="runs per engine, the best kept (default 1)")
    ap.add_argument("--rounds", type=int, default=1, help="times every engine runs in turn, the best kept (default 1)")
    ap.add_argument("--llama-cpp-src", help="a llama.cpp source tree, for its GGUF converter (or $LLAMA_CPP_SRC)")
    ap.add_argument(
        "--mnn-load",
        choices=("export", "checkpoint"),
        default="export",
        help="what a quantized mnn decoder loads: a .mnn exported once (default), or the checkpoint, quantized",
    )
    ap.add_argument("--child", nargs=8, help=argparse.SUPPRESS)
    ap.add_argument("--export", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.export:
        from mnn_core.llm import load

        path, weights, group, context, out = args.export
        load(path, backend="x86", context=int(context), weights=weights, group=int(group)).save(out)
        return
    if args.child:
        engine, path, threads, prompt, decode, weights, group, repeat = args.child
        res = child(engine, path, int(threads), int(prompt), int(decode), weights, int(group), int(repeat))
        print(json.dumps(res))
        return
    path = build(args.size, Path(args.dir))
    engines = args.engines.split(",")
    weight_list, thread_list = args.weights.split(","), [int(t) for t in args.threads.split(",")]
    ggufs = peer_files(engines, "llama", lambda p: {w: p.gguf_file(path, w, args.llama_cpp_src) for w in weight_list})
    genai_dirs = peer_files(
        engines, "genai", lambda p: {w: p.model_dir(path, w, thread_list) for w in weight_list if w in p.PRECISIONS}
    )
    exports = {}
    if "mnn" in engines and args.mnn_load == "export":
        context = args.prompt + args.decode + 1
        exports = {w: mnn_export(path, w, args.group, context) for w in args.weights.split(",") if w != "fp32"}
    best: dict[tuple, dict] = {}
    # each weight format's engines back to back, and every round again: a shared machine's load moves
    # within minutes, so engines compared are measured in the same ones
    runs = [(e, w) for w in weight_list for e in engines if e != "torch" and (e != "genai" or w in genai_dirs)]
    runs += [("torch", "fp32")] if "torch" in engines else []
    for _, threads in itertools.product(range(args.rounds), thread_list):
        for engine, weights in runs:
            env = {
                **os.environ,
                "OMP_NUM_THREADS": str(threads),
                "MKL_NUM_THREADS": str(threads),
                "OPENBLAS_NUM_THREADS": str(threads),
            }
            cmd = [
                sys.executable,
                __file__,
                "--child",
                engine,
                str({"llama": ggufs, "genai": genai_dirs}.get(engine, exports).get(weights, path)),
                str(threads),
                str(args.prompt),
                str(args.decode),
                weights,
                str(args.group),
                str(args.repeat),
            ]
            res = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if res.returncode:
                sys.exit(f"{engine} {weights} x{threads} failed:\n{res.stderr[-2000:]}")
            row = json.loads(res.stdout.strip().splitlines()[-1])
            key = (threads, engine, weights)
            if key in best:  # the best of the rounds, the largest peak
                row["peak_mb"] = max(row["peak_mb"], best[key]["peak_mb"])
                for what in ("prefill_tok_s", "decode_tok_s"):
                    row[what] = max(row[what], best[key][what])
            best[key] = row
    rows = list(best.values())
    print(
        f"qwen2-{args.size}: prompt {args.prompt}, decode {args.decode}, best of {args.repeat} x {args.rounds} "
        f"rounds, load {os.getloadavg()[0]:.2f}"
    )
    print("| engine | weights | threads | prefill tok/s | decode tok/s | peak MB | load s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['engine']} | {r['weights']} | {r['threads']} | {r['prefill_tok_s']:.1f} | {r['decode_tok_s']:.2f} "
            f"| {r['peak_mb']:.0f} | {r['load_s']:.2f} |"
        )
    # the float32 reference: PyTorch's tokens where it ran, else llama.cpp's at f32
    ref = {r["threads"]: r["tokens"] for r in rows if r["engine"] == "llama" and r["weights"] == "f32"}
    ref.update({r["threads"]: r["tokens"] for r in rows if r["engine"] == "torch"})
    for r in rows:
        mine = ref.get(r["threads"])
        if mine is not None and mine is not r["tokens"] and r["tokens"] != mine:
            same = next((i for i, (a, b) in enumerate(zip(r["tokens"], mine)) if a != b), None)
            print(
                f"note: {r['engine']} {r['weights']} greedy tokens differ from the float32 reference's "
                f"({r['threads']} threads) from #{same}"
            )


if __name__ == "__main__":
    main()
