"""A loaded decoder: one Session, its KV cache, prefill in chunks and decode one token at a time.

The cache is allocated once, sized to the context, and handed to every run as the graph's cache
inputs; the session's MatMuls read those arrays where they are (no copy into the arena), and after
each run the new keys and values of the chunk (a few rows per layer) are written into them at the
chunk's positions. Two plans serve generation: S = `chunk` with the logits of each row's last token
only (prefill; a prompt's last chunk is padded, its padding rows never reach the cache) and S = 1
(decode); a third, with the logits of every token of a chunk, is made when feed() first asks for them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import InputError, MnnError
from ..graph.ir import Graph
from .config import LlmConfig, load_config, parse_config
from .graph import NEG, build_decoder
from .quantize import WeightQuant
from .weights import Checkpoint

DEFAULT_CONTEXT = 2048
#: a checkpoint's text files that an exported .mnn carries (as graph metadata)
EXPORTED_FILES = ("tokenizer.json", "tokenizer_config.json")
META_CONFIG, META_CONTEXT, META_FILE = "mnn.llm.config", "mnn.llm.context", "mnn.llm.file."
DEFAULT_CHUNK = 32


class Decoder:
    """The decoder of a checkpoint, planned on `backend` for a context of `context` positions."""

    def __init__(
        self,
        path: str | Path,
        backend="auto",
        threads: int = 1,
        context: int | None = None,
        chunk: int = DEFAULT_CHUNK,
        precision: str = "high",
        weights: str = "fp32",
        group: int = 64,
        symmetric: bool = True,
        batch: int = 1,
        fallback: bool = True,
        head_bits: int | None = 8,
        int8_compute: bool = True,
    ):
        from ..runtime.session import Session

        self.path = Path(path)
        self.quant = WeightQuant.parse(weights, group, symmetric, head_bits=head_bits, int8_compute=int8_compute)
        self.batch = int(batch)
        if self.batch < 1:
            raise MnnError(f"batch must be at least 1, got {batch}")
        if self.path.suffix == ".mnn" and self.path.is_file():  # exported by save(): one mmap, as built
            graph, self.config, self.context, self.files = _load_exported(self.path, context, self.quant)
            saved = int(graph.inputs["ids"].shape[0])
            if batch not in (1, saved):
                raise MnnError(f"{self.path} was exported for a batch of {saved} rows, not {batch}")
            self.batch = saved
        else:
            self.config = load_config(self.path)
            self.context = int(min(context or DEFAULT_CONTEXT, self.config.max_position_embeddings))
            if self.context < 2:
                raise MnnError(f"context must be at least 2 positions, got {self.context}")
            graph = build_decoder(self.config, Checkpoint(self.path), self.context, self.batch, quant=self.quant)
            self.files = {n: (self.path / n).read_text() for n in EXPORTED_FILES if (self.path / n).is_file()}
        cfg = self.config
        self.chunk = max(1, min(int(chunk), self.context))
        self.graph = graph
        # a decoder exported before the head took `logit_rows` gives every row's logits: picked from those
        self._picks_rows = "logit_rows" in graph.inputs
        # Two plans (chunk and one token), both made now. A float32 checkpoint's weights are maps of
        # its file (weights.py): once packed, the session hands their pages back, and the second plan
        # packs from the file again (or finds the first plan's packing). From an export they are the
        # file's mmap, read once above.
        self.session = Session(
            graph,
            backend=backend,
            threads=threads,
            precision=precision,
            release_weights=True,
            batch_parallel="off",
            fallback=fallback,
        )
        shape_k = (self.batch, cfg.num_kv_heads, cfg.head_dim, self.context)
        shape_v = (self.batch, cfg.num_kv_heads, self.context, cfg.head_dim)
        self.k_cache = [np.zeros(shape_k, np.float32) for _ in range(cfg.num_layers)]
        self.v_cache = [np.zeros(shape_v, np.float32) for _ in range(cfg.num_layers)]
        self.lengths = np.zeros(self.batch, np.int64)  # positions of the cache written, per row
        self._windowed = any(cfg.sliding_window)
        self._window = next((w for w in cfg.sliding_window if w), None)
        for size in {self.chunk, 1}:  # both plans now: no planning (weight packing) while generating
            feeds = self._feeds([np.zeros(0, np.int64)] * self.batch, size, last_only=True)
            self.session.resize({n: a.shape for n, a in feeds.items()})

    @property
    def length(self) -> int:
        """Positions written in the cache (the longest row's)."""
        return int(self.lengths.max())

    def _feeds(self, rows: list[np.ndarray], size: int, last_only: bool) -> dict[str, np.ndarray]:
        ids = np.zeros((self.batch, size), np.int64)
        for r, tokens in enumerate(rows):
            ids[r, : len(tokens)] = tokens
        # the head's rows, as indices into the chunk's batch * size rows: each row's last token, or all
        starts = np.arange(self.batch, dtype=np.int64)[:, None] * size
        last = np.array([[max(len(t) - 1, 0)] for t in rows], np.int64)
        picked = last if last_only and size > 1 else np.arange(size, dtype=np.int64)[None, :]
        # padding takes the next positions too (clipped to the table): its keys never reach the cache
        pos = np.minimum(self.lengths[:, None] + np.arange(size), self.context - 1).astype(np.int64)
        feeds = {"ids": ids, "pos": pos, "mask": self._masks(size, None)}
        if self._picks_rows:
            feeds["logit_rows"] = starts + picked
        if self._windowed:
            feeds["mask_window"] = self._masks(size, self._window)
        for i in range(self.config.num_layers):
            feeds[f"k_cache.{i}"] = self.k_cache[i]
            feeds[f"v_cache.{i}"] = self.v_cache[i]
        return feeds

    def save(self, path: str | Path) -> None:
        """Write the decoder as one .mnn file (graph, weights as built, config, context, and the
        tokenizer files), which Decoder / mnn_core.llm.load open with one mmap."""
        save_decoder(self.graph, self.config, self.context, self.files, path)

    def reset(self) -> None:
        """Forget the cache's contents (its slots are masked by length, so nothing is cleared)."""
        self.lengths[:] = 0

    def feed(self, tokens) -> np.ndarray:
        """Run `tokens` after what the cache holds (batch 1); returns their logits [len(tokens), vocab]."""
        if self.batch != 1:
            raise InputError(f"this decoder holds {self.batch} rows: use feed_rows([tokens of each row])")
        tokens = np.asarray(tokens, dtype=np.int64).reshape(-1)
        if len(tokens) == 0:
            raise InputError("feed() needs at least one token")
        return self.feed_rows([tokens])[0]

    def feed_rows(self, rows, last_only: bool = False) -> list[np.ndarray]:
        """Run each row's tokens after what its cache holds (rows may differ in length, or be empty);
        returns each row's logits [its token count, vocab], or with `last_only` those of its last
        token [1, vocab] (an empty row: [0, vocab]), the head run for that token alone."""
        if len(rows) != self.batch:
            raise InputError(f"feed_rows() takes one token list per row: {self.batch}, got {len(rows)}")
        rows = [np.asarray(t, dtype=np.int64).reshape(-1) for t in rows]
        vocab = self.config.vocab_size
        for r, tokens in enumerate(rows):
            if self.lengths[r] + len(tokens) > self.context:
                raise InputError(
                    f"row {r}: {self.lengths[r]} cached + {len(tokens)} new tokens exceed the context "
                    f"of {self.context} positions (load with a larger context=, or reset())"
                )
            bad = tokens[(tokens < 0) | (tokens >= vocab)]
            if len(bad):
                raise InputError(f"token id {bad[0]} is outside the vocabulary [0, {vocab})")
        longest = max(len(t) for t in rows)
        out: list[list[np.ndarray]] = [[] for _ in rows]
        step = 1 if longest == 1 else self.chunk
        for lo in range(0, longest, step):
            part = [t[lo : lo + step] for t in rows]
            for r, logits in enumerate(self._run(part, step, last_only)):
                if not last_only or lo < len(rows[r]) <= lo + step:  # last_only: the chunk of its last token
                    out[r].append(logits)
        return [np.concatenate(o, axis=0) if o else np.zeros((0, vocab), np.float32) for o in out]

    def _run(self, rows: list[np.ndarray], size: int, last_only: bool) -> list[np.ndarray]:
        res = self.session.run(self._feeds(rows, size, last_only), copy=False)
        for r, tokens in enumerate(rows):
            n, start = len(tokens), int(self.lengths[r])
            for i in range(self.config.num_layers):
                self.k_cache[i][r, :, :, start : start + n] = res[f"k_new.{i}"][r, :, :, :n]
                self.v_cache[i][r, :, start : start + n] = res[f"v_new.{i}"][r, :, :n]
            self.lengths[r] = start + n
        if last_only and size > 1:
            at = [0 if self._picks_rows else max(len(t) - 1, 0) for t in rows]
            return [np.array(res["logits"][r, a : a + min(len(t), 1)]) for r, (a, t) in enumerate(zip(at, rows))]
        return [np.array(res["logits"][r, : len(t)]) for r, t in enumerate(rows)]

    def _masks(self, size: int, window: int | None) -> np.ndarray:
        """[B, 1, G*S, C+S]: each row's mask at its own length."""
        return np.ascontiguousarray(np.concatenate([self._mask(int(n), size, window) for n in self.lengths]))

    def _mask(self, start: int, size: int, window: int | None) -> np.ndarray:
        """[1, 1, G*S, C+S]: query row s (position start+s) sees cache slots < start and chunk
        columns <= s, within `window` positions of itself when given (HF: q - k < window)."""
        C = self.context
        q = start + np.arange(size)[:, None]
        keys = np.concatenate([np.arange(C), start + np.arange(size)])[None, :]
        seen = np.concatenate(
            [np.broadcast_to(np.arange(C) < start, (size, C)), np.arange(size)[None, :] <= np.arange(size)[:, None]],
            axis=1,
        )
        if window:
            seen &= (q - keys) < window
        mask = np.where(seen, 0.0, NEG).astype(np.float32)
        return np.ascontiguousarray(np.tile(mask, (self.config.groups, 1))[None, None])


def build_export(
    path: str | Path, context: int | None = None, quant: WeightQuant | None = None
) -> tuple[Graph, LlmConfig, int, dict]:
    """(graph, config, context, tokenizer files) of a checkpoint directory, built as Decoder builds it,
    without planning it (what an export needs)."""
    path = Path(path)
    config = load_config(path)
    context = int(min(context or DEFAULT_CONTEXT, config.max_position_embeddings))
    if context < 2:
        raise MnnError(f"context must be at least 2 positions, got {context}")
    graph = build_decoder(config, Checkpoint(path), context, 1, quant=quant)
    files = {n: (path / n).read_text() for n in EXPORTED_FILES if (path / n).is_file()}
    return graph, config, context, files


def save_decoder(graph: Graph, config: LlmConfig, context: int, files: dict, path: str | Path) -> None:
    """Write a decoder graph as one .mnn with its config, context and tokenizer files as metadata."""
    from ..format import save_mnn

    graph = graph.copy()
    graph.metadata = {
        **graph.metadata,
        META_CONFIG: json.dumps(config.raw),
        META_CONTEXT: str(context),
        **{META_FILE + n: text for n, text in files.items()},
    }
    save_mnn(graph, path)


def _load_exported(path: Path, context: int | None, quant) -> tuple:
    """(graph, config, context, files) of a .mnn that Decoder.save wrote."""
    from ..format import load_mnn

    graph = load_mnn(path)
    meta = graph.metadata
    if META_CONFIG not in meta or META_CONTEXT not in meta:
        raise MnnError(f"{path}: not a decoder exported by mnn_core.llm (no {META_CONFIG} metadata)")
    saved = int(meta[META_CONTEXT])
    if context not in (None, saved):
        raise MnnError(
            f"{path} was exported for a context of {saved} positions, not {context}; "
            "export again from the checkpoint with that context"
        )
    if quant is not None:
        raise MnnError(
            f"{path}: an exported decoder keeps the weights it was exported with; "
            "quantize when exporting from the checkpoint"
        )
    files = {k[len(META_FILE) :]: v for k, v in meta.items() if k.startswith(META_FILE)}
    return graph, parse_config(json.loads(meta[META_CONFIG]), str(path)), saved, files
