"""Generation: a prompt in, text (or a stream of text pieces, or token ids) out.

    llm = mnn_core.llm.load("path/to/checkpoint", backend="x86", threads=2)
    print(llm.generate("Once upon a time", max_tokens=64))
    for piece in llm.generate("Once upon a time", stream=True, temperature=0.8, top_p=0.9, seed=1):
        print(piece, end="", flush=True)

Generation stops at max_tokens, at an end-of-sequence token (the config's eos ids and the
tokenizer's), at a stop string (not included in the text), at the end of the context, or when
`cancel()` is called from another thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from ..errors import InputError, MnnError
from .model import Decoder
from .sampling import Sampler, SamplingParams


class LLM:
    def __init__(self, path: str | Path, backend="auto", threads: int = 1, context: int | None = None, **kw):
        """kw: Decoder's chunk, precision, weights ("fp32", "int8", "int4"), group, symmetric, head_bits
        (the quantized head's, None: float), int8_compute, batch, fallback (False: an op the backend cannot
        run is an error)."""
        self.decoder = Decoder(path, backend=backend, threads=threads, context=context, **kw)
        self.config = self.decoder.config
        self.tokenizer = None
        files = self.decoder.files
        if "tokenizer.json" in files:  # read at load from the checkpoint, or carried by an export
            from .tokenizer import Tokenizer

            self.tokenizer = Tokenizer(files["tokenizer.json"], files.get("tokenizer_config.json"), str(path))
        self._cancel = threading.Event()
        self.last_stats: dict = {}

    # -- text ---------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        if self.tokenizer is None:
            raise MnnError(
                f"{self.decoder.path} has no tokenizer.json: give token ids (generate_ids; mnnx generate --ids)"
            )
        return self.tokenizer.encode(text)

    def chat_prompt(self, messages: list[dict]) -> str:
        if self.tokenizer is None:
            raise MnnError(f"{self.decoder.path} has no tokenizer.json: chat needs one")
        return self.tokenizer.apply_chat_template(messages)

    def generate(
        self, prompt: str, max_tokens: int = 128, stream: bool = False, stop: Sequence[str] = (), **sampling
    ) -> str | Iterator[str]:
        """The continuation of `prompt` as text, or with stream=True an iterator of its pieces."""
        pieces = self._text_stream(self.encode(prompt), max_tokens, list(stop), sampling)
        return pieces if stream else "".join(pieces)

    def _text_stream(self, ids: list[int], max_tokens: int, stop: list[str], sampling: dict) -> Iterator[str]:
        tok = self.tokenizer
        out: list[int] = []
        sent = 0  # characters of the decoded text already yielded
        hold = max((len(s) for s in stop), default=1) - 1  # a stop string may still be forming

        def first_stop(text: str) -> int:
            return min((i for i in (text.find(s, max(0, sent - hold)) for s in stop) if i >= 0), default=-1)

        for token in self.generate_ids(ids, max_tokens, **sampling):
            out.append(token)
            text = tok.decode(out)
            if text.endswith("\ufffd"):  # a character split across tokens: wait for the rest
                continue
            cut = first_stop(text)
            if cut >= 0:
                if cut > sent:
                    yield text[sent:cut]
                return
            ready = len(text) - hold if stop else len(text)
            if ready > sent:
                yield text[sent:ready]
                sent = ready
        text = tok.decode(out)  # the rest, held back above; a stop string in it still ends the text
        cut = first_stop(text)
        end = cut if cut >= 0 else len(text)
        if end > sent:
            yield text[sent:end]

    # -- token ids ----------------------------------------------------------------------

    def generate_ids(
        self,
        ids: Sequence[int],
        max_tokens: int = 128,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        repetition_penalty: float = 1.0,
        seed: int | None = None,
        eos: bool = True,
    ) -> Iterator[int]:
        """Yield generated token ids one at a time (the cache starts empty each call)."""
        for step in self._rows([ids], max_tokens, eos, temperature, top_k, top_p, repetition_penalty, seed):
            yield from (token for _, token in step)

    def generate_batch_ids(
        self, prompts: Sequence[Sequence[int]], max_tokens: int = 128, eos: bool = True, **sampling
    ) -> list[list[int]]:
        """Each prompt's generated ids; prompts of different lengths decode side by side, one row of
        the cache each (load with batch= at least len(prompts)). A row's sampler is seeded seed + row."""
        out: list[list[int]] = [[] for _ in prompts]
        for step in self._rows(prompts, max_tokens, eos, **sampling):
            for r, token in step:
                out[r].append(token)
        return out

    def generate_batch(self, prompts: Sequence[str], max_tokens: int = 128, **sampling) -> list[str]:
        """Each prompt's continuation as text (generate_batch_ids, decoded)."""
        ids = self.generate_batch_ids([self.encode(p) for p in prompts], max_tokens, **sampling)
        return [self.tokenizer.decode(row) for row in ids]

    def _rows(
        self,
        prompts,
        max_tokens: int,
        eos: bool,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        repetition_penalty: float = 1.0,
        seed: int | None = None,
    ) -> Iterator[list]:
        """Per step, the (row, token) of each row still generating."""
        import time

        dec = self.decoder
        prompts = [[int(i) for i in p] for p in prompts]
        if not prompts or len(prompts) > dec.batch:
            raise InputError(
                f"give 1 to {dec.batch} prompts (the batch this model was loaded with), got {len(prompts)}"
            )
        if not all(prompts):
            raise InputError("a prompt is empty: give at least one token")
        if max_tokens < 0:
            raise InputError(f"max_tokens must be >= 0, got {max_tokens}")
        samplers = [
            Sampler(SamplingParams(temperature, top_k, top_p, repetition_penalty, None if seed is None else seed + r))
            for r in range(len(prompts))
        ]
        stops = set(self.config.eos_token_ids) if eos else set()
        if eos and self.tokenizer is not None and self.tokenizer.eos_token_id is not None:
            stops.add(self.tokenizer.eos_token_id)
        self._cancel.clear()
        dec.reset()
        idle = [[] for _ in range(dec.batch - len(prompts))]  # rows this call does not use
        history = [list(p) for p in prompts]
        t0 = time.perf_counter()
        logits = [row[-1] for row in dec.feed_rows(prompts + idle, last_only=True)[: len(prompts)]]
        t1 = time.perf_counter()
        self.last_stats = {"prompt_tokens": sum(map(len, prompts)), "prefill_s": t1 - t0, "tokens": 0, "decode_s": 0.0}
        active, n = list(range(len(prompts))), 0
        while active and n < max_tokens and not self._cancel.is_set():
            step = [(r, samplers[r](logits[r], np.asarray(history[r]))) for r in active]
            n += 1
            for r, token in step:
                history[r].append(token)
            self.last_stats.update(tokens=self.last_stats["tokens"] + len(step), decode_s=time.perf_counter() - t1)
            yield step
            active = [r for r, token in step if token not in stops and dec.lengths[r] < dec.context]
            if not active or n >= max_tokens:
                break
            feed = [[history[r][-1]] if r in active else [] for r in range(dec.batch)]
            rows = dec.feed_rows(feed)
            logits = [rows[r][0] if r in active else None for r in range(len(prompts))]

    def save(self, path: str | Path) -> None:
        """Export to one .mnn file (Decoder.save) that load() opens with one mmap."""
        self.decoder.save(path)

    def cancel(self) -> None:
        """Stop a generation in progress (another thread's) after its current token."""
        self._cancel.set()


def load(path: str | Path, backend="auto", threads: int = 1, context: int | None = None, **kw) -> LLM:
    """Load a Hugging Face checkpoint directory (config.json, *.safetensors, tokenizer.json), or a
    .mnn file that LLM.save exported."""
    return LLM(path, backend=backend, threads=threads, context=context, **kw)
