"""`mnnx generate MODEL --prompt TEXT`: stream a checkpoint's continuation to the terminal;
`mnnx chat MODEL`: a conversation through the tokenizer's chat template, a turn per line of stdin.

The text goes to stdout as it is generated; the speeds (prefill and decode tokens/s) go to stderr
at the end, so a pipe gets only the text. Without a tokenizer.json, `--ids 1,2,3` gives the prompt
as token ids and the ids generated are printed.
"""

from __future__ import annotations

import argparse
import sys

from .errors import MnnError


def add_parser(sub) -> None:
    s = sub.add_parser("generate", help="generate text from a Hugging Face checkpoint (streams, prints tokens/s)")
    _common(s)
    s.add_argument("--prompt", help="the prompt text")
    s.add_argument("--ids", help="the prompt as token ids 1,2,3 (for a checkpoint without a tokenizer)")
    s.add_argument("--chat", action="store_true", help="wrap the prompt in the tokenizer's chat template")
    s.set_defaults(fn=cmd_generate)
    s = sub.add_parser("chat", help="chat with a checkpoint through its chat template (a turn per input line)")
    _common(s)
    s.add_argument("--system", help="a system message first")
    s.set_defaults(fn=cmd_chat)


def _common(s) -> None:
    s.add_argument("model", help="a checkpoint directory (config.json, *.safetensors, tokenizer.json) or an export")
    s.add_argument("--max-tokens", type=int, default=128, help="tokens to generate at most (default 128)")
    s.add_argument("--backend", default="auto", help="auto, a backend name, or a fallback list a,b (default auto)")
    s.add_argument("--threads", type=int, default=1)
    s.add_argument("--context", type=int, default=None, help="KV cache positions (default 2048, or the model's)")
    s.add_argument(
        "--weights",
        choices=("fp32", "int8", "int4"),
        default="fp32",
        help="projection weights: float32, or quantized group-wise (default fp32)",
    )
    s.add_argument("--group", type=int, default=64, help="quantization group size: 32, 64, 128 or 256 (default 64)")
    s.add_argument("--asymmetric", action="store_true", help="quantize with a zero point per group")
    s.add_argument("--temperature", type=float, default=0.0, help="0 (default): greedy")
    s.add_argument("--top-k", type=int, default=0)
    s.add_argument("--top-p", type=float, default=1.0)
    s.add_argument("--repetition-penalty", type=float, default=1.0)
    s.add_argument("--seed", type=int, default=None)
    s.add_argument("--stop", action="append", default=[], metavar="TEXT", help="stop at this text (repeat)")


def _load(args):
    from .llm import load

    backend = args.backend.split(",") if "," in args.backend else args.backend
    quant = {"weights": args.weights, "group": args.group, "symmetric": not args.asymmetric}
    if args.model.endswith(".mnn"):  # an export has its weights as exported; --weights int8 is an error there
        quant = {"weights": None if args.weights == "fp32" else args.weights}
    llm = load(args.model, backend=backend, threads=args.threads, context=args.context, **quant)
    sampling = dict(
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        repetition_penalty=args.repetition_penalty,
        seed=args.seed,
    )
    return llm, sampling


def cmd_chat(args: argparse.Namespace) -> int:
    llm, sampling = _load(args)
    messages = [{"role": "system", "content": args.system}] if args.system else []
    llm.chat_prompt(messages + [{"role": "user", "content": ""}])  # no template: fail before the first turn
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            print("> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return 0
        messages.append({"role": "user", "content": line.rstrip("\n")})
        # each turn runs the whole conversation again: the template may rewrite earlier turns
        reply = []
        for piece in llm.generate(llm.chat_prompt(messages), args.max_tokens, stream=True, stop=args.stop, **sampling):
            reply.append(piece)
            sys.stdout.write(piece)
            sys.stdout.flush()
        print()
        messages.append({"role": "assistant", "content": "".join(reply)})


def cmd_generate(args: argparse.Namespace) -> int:
    if (args.prompt is None) == (args.ids is None):
        raise MnnError("give the prompt as --prompt TEXT or as --ids 1,2,3 (one of them)")
    llm, sampling = _load(args)
    if args.ids is not None:
        try:
            ids = [int(t) for t in args.ids.split(",") if t.strip()]
        except ValueError:
            raise MnnError(f"--ids takes comma-separated integers, got {args.ids!r}") from None
        for token in llm.generate_ids(ids, args.max_tokens, **sampling):
            print(token, end=" ", flush=True)
    else:
        prompt = llm.chat_prompt([{"role": "user", "content": args.prompt}]) if args.chat else args.prompt
        for piece in llm.generate(prompt, args.max_tokens, stream=True, stop=args.stop, **sampling):
            sys.stdout.write(piece)
            sys.stdout.flush()
    print()
    st = llm.last_stats
    prefill = st["prompt_tokens"] / st["prefill_s"] if st.get("prefill_s") else 0.0
    # the first token comes from the prefill's logits: decode speed counts the tokens after it
    decode = (st["tokens"] - 1) / st["decode_s"] if st.get("tokens", 0) > 1 and st["decode_s"] else 0.0
    print(
        f"prefill {st['prompt_tokens']} tokens {prefill:.1f} tok/s, decode {st['tokens']} tokens {decode:.1f} tok/s",
        file=sys.stderr,
    )
    return 0
