"""llama.cpp (through llama-cpp-python) as a peer of bench_llm.py: the same random checkpoint as GGUF.

The checkpoint is converted by llama.cpp's own converter, `convert_hf_to_gguf.py` of a llama.cpp
source tree (the one llama-cpp-python's source distribution vendors: `--llama-cpp-src`, or
$LLAMA_CPP_SRC), to an f32 GGUF; q8_0 and q4_0 are made from it by llama.cpp's quantizer
(`llama_model_quantize`), as the int8 and int4 peers. The converter needs a tokenizer, which the random
checkpoint lacks: a small byte-level BPE is trained with `tokenizers` into a directory beside the
checkpoint (ids beyond it become llama.cpp's padding tokens), and its pre-tokenizer, which the
converter recognizes by hashing known tokenizers' output, is declared Qwen2's. The benchmark feeds
token ids, so the tokenizer never changes what is measured.

llama-cpp-python is a benchmark-only dependency: without it the engine is skipped with a message.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

#: mnn's weight format -> the GGUF type llama.cpp compares with it
GGUF_TYPES = {"fp32": "f32", "int8": "q8_0", "int4": "q4_0"}

#: runs the vendored converter with the two changes a tokenizer-less random checkpoint needs
CONVERT = r"""
import sys
from pathlib import Path
src, model, out = sys.argv[1:4]
sys.path[:0] = [src, str(Path(src) / "gguf-py")]
sys.argv = ["convert_hf_to_gguf.py", model, "--outfile", out, "--outtype", "f32"]
import convert_hf_to_gguf
from conversion.base import TextModel
from conversion.qwen import Qwen2Model
TextModel.get_vocab_base_pre = lambda self, tokenizer: "qwen2"  # a trained BPE has no known hash
Qwen2Model.set_vocab = TextModel._set_vocab_gpt2  # no sentencepiece model to look for
convert_hf_to_gguf.main()
"""


def missing() -> str | None:
    """Why llama.cpp cannot run here, or None."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        return (
            f"llama_cpp is not importable ({exc}): build it from the source distribution, e.g. "
            "CMAKE_ARGS=-DGGML_NATIVE=ON pip install --no-binary llama-cpp-python llama-cpp-python"
        )
    return None


def _tokenizer_dir(checkpoint: Path) -> Path:
    """A directory with the checkpoint's config and weights (linked) and a trained BPE tokenizer."""
    out = checkpoint.parent / (checkpoint.name + "-with-bpe")
    if (out / "tokenizer.json").is_file():
        return out
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    out.mkdir(parents=True, exist_ok=True)
    for item in checkpoint.iterdir():
        if not (out / item.name).exists():
            (out / item.name).symlink_to(item.resolve())
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text = ["the quick brown fox jumps over the lazy dog " * 4, "a tokenizer for a random-weight checkpoint"] * 50
    tok.train_from_iterator(
        text, trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    )
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text('{"tokenizer_class": "PreTrainedTokenizerFast"}')
    return out


def gguf_file(checkpoint: Path, weights: str, src: str | None) -> Path:
    """The checkpoint as a GGUF of mnn's `weights` counterpart (made once, kept beside it)."""
    kind = GGUF_TYPES[weights]
    out = checkpoint.parent / f"{checkpoint.name}-{kind}.gguf"
    if out.is_file():
        return out
    f32 = checkpoint.parent / f"{checkpoint.name}-f32.gguf"
    if not f32.is_file():
        src = src or os.environ.get("LLAMA_CPP_SRC")
        if not src or not (Path(src) / "convert_hf_to_gguf.py").is_file():
            sys.exit(
                "llama.cpp needs its converter: give --llama-cpp-src (or $LLAMA_CPP_SRC), a llama.cpp source "
                "tree with convert_hf_to_gguf.py (llama-cpp-python's sdist has one under vendor/llama.cpp)"
            )
        cmd = [sys.executable, "-c", CONVERT, src, str(_tokenizer_dir(checkpoint)), str(f32)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"convert_hf_to_gguf.py failed:\n{res.stderr[-3000:]}")
    if kind != "f32":
        import llama_cpp

        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = {"q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0, "q4_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0}[kind]
        params.nthread = os.cpu_count() or 1
        if llama_cpp.llama_model_quantize(str(f32).encode(), str(out).encode(), params) != 0:
            sys.exit(f"llama_model_quantize {f32} -> {kind} failed")
    return out


def measure(gguf: Path, ids: list[int], threads: int, decode: int, repeat: int) -> tuple[float, float, float, list]:
    """(load s, best prefill s, best decode s, greedy tokens): the prompt in one batch, then one token at a
    time, each chosen as the argmax of llama.cpp's logits."""
    import llama_cpp
    import numpy as np

    t = time.perf_counter()
    llm = llama_cpp.Llama(
        model_path=str(gguf),
        n_ctx=len(ids) + decode + 1,
        n_batch=len(ids),
        n_ubatch=len(ids),
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    load_s = time.perf_counter() - t
    vocab = llm.n_vocab()

    def argmax() -> int:
        logits = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
        return int(np.ctypeslib.as_array(logits, shape=(vocab,)).argmax())

    prefill_s = decode_s = float("inf")
    for _ in range(repeat):
        llm.reset()
        t = time.perf_counter()
        llm.eval(ids)
        token = argmax()
        prefill_s = min(prefill_s, time.perf_counter() - t)
        tokens, t = [token], time.perf_counter()
        for _ in range(decode - 1):
            llm.eval([token])
            token = argmax()
            tokens.append(token)
        decode_s = min(decode_s, time.perf_counter() - t)
    return load_s, prefill_s, decode_s, tokens
