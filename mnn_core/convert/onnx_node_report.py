"""The markdown report of an ONNX node-suite run (onnx_node_suite.py): one row and one section per
backend; `parse_report` reads an earlier report back, so a run re-measures some backends and keeps
the others' rows and sections."""

from __future__ import annotations

import os
import platform
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .onnx_node_suite import Result

#: measured on 2026-12-02 (the ONNX issue), for the report's comparison line
OTHERS = {"ONNX Runtime 1.32": 1589, "onnx ReferenceEvaluator (onnx 1.23)": 1862}


def summarize(results: list[Result]) -> dict:
    counts = Counter(r.status for r in results)
    return {
        "passed": counts["passed"],
        "failed": counts["failed"],
        "unsupported": counts["unsupported"],
        "total": len(results),
    }


INTRO = (
    "*unsupported*: the importer or the backend declined the model before running it (an op, a "
    "dtype, a mode or a dynamic input mnn does not take). *failed*: it ran and gave wrong results, "
    "raised, crashed or timed out. A graph with control flow runs its Loop, Scan and If bodies and "
    "the stretches between them planned on the named backend, the control on the host "
    "(runtime/eager.py); sequence/optional values and value-sized outputs (NonZero, Unique, ...) "
    "run only on the reference kernels, so a named backend other than reference declines them "
    "with fallback off."
)
TABLE_HEAD = ["| backend | passed | failed | unsupported | total | measured |", "|---|---:|---:|---:|---:|---|"]


def render(runs: dict[str, list[Result]], meta: dict, keep: dict | None = None) -> str:
    """The markdown report of `runs` (backend -> results) measured as `meta` says; `keep`
    (from `parse_report` of an earlier report) adds the rows and sections of other backends."""
    kept = {b: v for b, v in (keep or {}).items() if b not in runs}
    rows, sections = {}, {}
    for backend, (row, section) in kept.items():
        rows[backend], sections[backend] = row, section
    for backend, results in runs.items():
        s = summarize(results)
        where = (meta.get("where") or {}).get(backend, "")
        rows[backend] = (
            f"| {backend} | {s['passed']} | {s['failed']} | {s['unsupported']} | {s['total']} | "
            f"{meta['date']}, {_cell(where)}, onnx {meta['onnx']} |"
        )
        sections[backend] = _backend_section(backend, results, meta)
    order = list(keep or {}) + [b for b in runs if b not in (keep or {})]  # the earlier order, new ones last
    lines = [
        "# ONNX conformance",
        "",
        f'onnx\'s node test cases (`onnx.backend.test`, kind="node"; {meta["cases"]} with onnx '
        f"{meta['onnx']}) run through `mnn_core.convert.onnx_backend` with fallback off (each model imported "
        "once and run in a `Session`, as a user's code does: inputs that decide shapes, such as a fed Reshape "
        "target, are bound when a plan is made), one row and one section per backend, each measured where "
        "its section says: `python -m mnn_core.conformance --backend "
        "NAME --output docs/CONFORMANCE.md` re-measures NAME and keeps the other backends' rows and "
        "sections.",
        "",
        *TABLE_HEAD,
    ]
    lines += [rows[b] for b in order]
    lines += [
        "",
        "For comparison, measured on 2026-12-02 with the same 1884 cases: "
        + ", ".join(f"{k} passes {v}" for k, v in OTHERS.items())
        + ".",
        "",
        INTRO,
        "",
    ]
    for backend in order:
        lines += sections[backend]
    return "\n".join(lines).rstrip() + "\n"


def parse_report(text: str) -> dict[str, tuple[str, list[str]]]:
    """backend -> (its summary-table row, its section's lines) of a report render() wrote."""
    lines = text.splitlines()
    rows, sections, current = {}, {}, None
    in_table = False
    for line in lines:
        if line.startswith("| backend |"):
            in_table = True
            continue
        if in_table:
            if not line.startswith("|"):
                in_table = False
            elif not line.startswith("|---"):
                rows[line.split("|")[1].strip()] = line
                continue
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        if current is not None:
            sections[current].append(line)
    for section in sections.values():
        while section and not section[-1].strip():
            section.pop()
        section.append("")
    return {b: (rows[b], sections[b]) for b in sections if b in rows}


def _backend_section(backend: str, results: list[Result], meta: dict) -> list[str]:
    s = summarize(results)
    where = (meta.get("where") or {}).get(backend, "")
    lines = [
        f"## {backend}",
        "",
        f"Measured on {meta['date']}{f' on {where}' if where else ''} by `{meta['command']}` "
        f"({meta['seconds']:.0f} s, {meta['jobs']} worker processes, {meta['timeout']:g} s per case; "
        f"onnx {meta['onnx']}, numpy {meta['numpy']}).",
        "",
        f"{s['passed']} passed, {s['failed']} failed, {s['unsupported']} unsupported of {s['total']}.",
        "",
    ]
    failed = defaultdict(list)
    for r in results:
        if r.status == "failed":
            failed[r.op].append(r)
    if failed:
        lines += ["### Failures by op", "", "| op | cases | first failure |", "|---|---:|---|"]
        for op, rs in sorted(failed.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"| {op} | {len(rs)} | `{rs[0].case}`: {_cell(rs[0].detail)} |")
        lines += ["", "<details><summary>every failed case</summary>", ""]
        lines += [f"- `{r.case}` ({r.op}): {_cell(r.detail)}" for rs in failed.values() for r in rs]
        lines += ["", "</details>", ""]
    unsup = defaultdict(list)
    for r in results:
        if r.status == "unsupported":
            unsup[r.op].append(r)
    causes = Counter(_cause(r) for rs in unsup.values() for r in rs)
    if causes:
        lines += ["### Unsupported, by cause", "", "| cause | cases |", "|---|---:|"]
        lines += [f"| {cause} | {n} |" for cause, n in causes.most_common()]
        lines.append("")
    if unsup:
        lines += [
            "### Unsupported, by the op the case tests",
            "",
            "| op | cases | reason (first case) |",
            "|---|---:|---|",
        ]
        for op, rs in sorted(unsup.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"| {op} | {len(rs)} | {_cell(rs[0].detail)} |")
        lines.append("")
    return lines


#: (words in the reason, cause), first match wins
CAUSES = [
    (("Scan before opset 9",), "control flow: Scan of opset 8 (batched, sequence_lens)"),
    (("has dtype", "Cast to", "attribute 'to' is", "'dtype' is", "holds dtype"), "a dtype the IR lacks"),
    (
        ("random", "RandomUniform", "RandomNormal", "Bernoulli", "Multinomial"),
        "random values (no fixed expected output)",
    ),
    (("dynamic",), "a value-dependent shape or attribute"),
    (("no mnn op",), "no mnn op for it"),
    (("not installed",), "backend not installed"),
]


def _cause(r: Result) -> str:
    for words, cause in CAUSES:
        if any(w in r.detail for w in words):
            return cause
    return "an attribute, mode or rank the mnn op does not take"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def device_description(backend) -> str:
    """What a backend ran on, for the report: its device's name, and the machine's processor
    for CPU backends (asked after the run: the workers fork before any device is opened)."""
    cpu = f"{platform.machine()}, {os.cpu_count()} cores"
    if backend is None:
        return cpu
    try:
        device = backend.devices()[0]
    except Exception:  # noqa: BLE001  an unavailable backend still gets its row
        return cpu
    name = device.name
    if getattr(device, "kind", "cpu") != "cpu":
        return name
    return cpu if name == getattr(backend, "name", None) else f"{name}, {cpu}"
