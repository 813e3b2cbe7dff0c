"""Text <-> token ids through the `tokenizers` package (`tokenizer.json`), and chat templates.

A chat template is the Jinja2 text of `tokenizer_config.json`'s "chat_template", rendered as
Hugging Face renders it (messages, add_generation_prompt, the special tokens by name).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import MnnError


class Tokenizer:
    def __init__(self, tokenizer_json: str, config_json: str | None = None, where: str = "tokenizer"):
        """From the texts of tokenizer.json and tokenizer_config.json (from_dir reads them)."""
        try:
            from tokenizers import Tokenizer as HFTokenizer
        except ImportError:
            raise MnnError("text needs the tokenizers package: pip install 'mnn-core[llm]'") from None
        try:
            self._tok = HFTokenizer.from_str(tokenizer_json)
        except Exception as exc:  # the package's own error type
            raise MnnError(f"{where}: tokenizer.json cannot be read ({exc})") from None
        self.config = {}
        if config_json:
            try:
                self.config = json.loads(config_json)
            except ValueError as exc:
                raise MnnError(f"{where}: tokenizer_config.json is not JSON ({exc})") from None
        self.chat_template = self.config.get("chat_template")
        self.eos_token_id = self._special_id("eos_token")
        self.bos_token_id = self._special_id("bos_token")

    @classmethod
    def from_dir(cls, path: str | Path) -> Tokenizer:
        path = Path(path)
        file = path / "tokenizer.json"
        if not file.is_file():
            raise MnnError(f"{path}: no tokenizer.json; pass token ids instead of text, or add a tokenizer.json")
        config = path / "tokenizer_config.json"
        return cls(file.read_text(), config.read_text() if config.is_file() else None, str(path))

    def _special_id(self, key: str) -> int | None:
        token = self.config.get(key)
        if isinstance(token, dict):  # older configs store an AddedToken object
            token = token.get("content")
        return self._tok.token_to_id(token) if isinstance(token, str) else None

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        try:
            return self._tok.encode(text, add_special_tokens=add_special_tokens).ids
        except Exception as exc:  # the package's own error type, e.g. an unknown token with no <unk> in the vocabulary
            raise MnnError(f"the tokenizer cannot encode {text[:40]!r}: {exc}") from None

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        if not self.chat_template:
            raise MnnError("this tokenizer has no chat_template in tokenizer_config.json; pass a plain prompt")
        try:
            import jinja2
        except ImportError:
            raise MnnError("chat templates need jinja2: pip install jinja2") from None
        env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)

        def raise_exception(message):
            raise MnnError(f"chat template: {message}")

        env.globals["raise_exception"] = raise_exception
        special = {
            k: (v.get("content") if isinstance(v, dict) else v) for k, v in self.config.items() if k.endswith("_token")
        }
        return env.from_string(self.chat_template).render(
            messages=messages, add_generation_prompt=add_generation_prompt, **special
        )
