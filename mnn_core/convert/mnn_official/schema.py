"""The parts of MNN's published FlatBuffers schema (schema/default/*.fbs) that mnn reads.

Field numbers are the order of the fields in the schema's tables (a union field
takes two numbers: its type, then its value); enum codes are the schema's.
"""

from __future__ import annotations

#: OpType codes 0..121, in the schema's order; the later ones carry explicit numbers
_OP_TYPES_IN_ORDER = """
    AbsVal QuantizedAdd ArgMax AsString InstanceNorm BatchToSpaceND
    Bias BinaryOp Bnll Cast Concat Const
    Convolution ConvolutionDepthwise Crop CropAndResize Cubic Deconvolution
    DeconvolutionDepthwise Dequantize DetectionOutput Dropout Eltwise ELU
    Unique Exp ExpandDims Fill Flatten FloorMod
    Gather GatherV2 Im2Seq InnerProduct Input Interp
    Log LRN LSTM MatMul MVN NonMaxSuppression
    NonMaxSuppressionV2 Normalize Pack Padding Permute Pooling
    Power PReLU PriorBox Proposal QuantizedAvgPool QuantizedBiasAdd
    QuantizedConcat QuantizedDepthwiseConv2D QuantizedLogistic QuantizedMatMul QuantizedMaxPool QuantizedRelu
    QuantizedRelu6 QuantizedReshape QuantizedSoftmax QuantizeMaxMin QuantizeV2 Range
    Rank ReduceJoin Reduction ReLU ReLU6 RequantizationRange
    Requantize Reshape Resize RNN ROIPooling Scale
    Selu Seq2Out Shape Sigmoid Size Slice
    SliceTf Softmax SpaceToBatchND SpatialProduct Split Segment
    Squeeze StridedSlice StringJoin StringSplit StringToNumber TanH
    TfQuantizedConv2D Threshold Tile TopKV2 Transpose UnaryOp
    Unpack Where Moments RNNSequenceGRU BatchMatMul Unsqueeze
    CosineSimilarity DepthToSpace SpaceToDepth ReverseSequence Pooling3D Convolution3D
    MatrixBandPart GatherND DetectionPostProcess UnravelIndex ScatterNd OneHot
    BroadcastTo Dilation2D
""".split()
OP_TYPES = {code: name for code, name in enumerate(_OP_TYPES_IN_ORDER)}
OP_TYPES.update(
    {
        128: "Raster",
        129: "ConvertTensor",
        130: "ArgMin",
        131: "LinSpace",
        132: "RandomUniform",
        142: "Reverse",
        256: "Plugin",
        257: "Select",
        266: "BatchNorm",
        512: "Extra",
        513: "ConvInt8",
        514: "Int8ToFloat",
        515: "DepthwiseConvInt8",
        516: "PoolInt8",
        517: "FloatToInt8",
        518: "EltwiseInt8",
        600: "While",
        601: "If",
        603: "LayerNorm",
        604: "GridSample",
    }
)

#: OpParameter union members, code 1 onwards (0 is NONE)
_PARAMS_IN_ORDER = """
    QuantizedAdd ArgMax AsString Axis BatchNorm BinaryOp
    Blob CastParam Convolution2D Crop CropAndResize Dequantize
    DetectionOutput Eltwise ExpandDims Fill Flatten Gather
    GatherV2 InnerProduct Input Interp LRN LSTM
    MatMul NonMaxSuppressionV2 Normalize PackParam Permute Plugin
    Pool PRelu PriorBox Proposal QuantizedAvgPool QuantizedBiasAdd
    QuantizedConcat QuantizedLogistic QuantizedMatMul QuantizedMaxPool QuantizedRelu QuantizedRelu6
    QuantizedReshape QuantizedSoftmax QuantizeMaxMin QuantizeV2 Range Rank
    ReduceJoin ReductionParam Relu Relu6 RequantizationRange Requantize
    Reshape Resize RoiPooling Scale Selu Size
    Slice SliceTf SpaceBatch SqueezeParam StridedSliceParam TensorConvertInfo
    TfQuantizedConv2D TopKV2 Transpose UnaryOp MomentsParam RNNParam
    BatchMatMulParam QuantizedFloatParam DepthSpaceParam EltwiseInt8 ReverseSequenceParam Extra
    Pool3D Convolution3D ELU DetectionPostProcessParam OneHotParam PadParam
    WhileParam IfParam RandomUniform LayerNorm TensorArray LSTMBlockCell
    GridSample LoopParam
""".split()
PARAM_TYPES = {code: name for code, name in enumerate(_PARAMS_IN_ORDER, start=1)}

# field numbers, per table
NET = {
    "bizCode": 0,
    "extraTensorDescribe": 1,
    "gpulibrary": 2,
    "oplists": 3,
    "outputName": 4,
    "preferForwardType": 5,
    "sourceType": 6,
    "tensorName": 7,
    "tensorNumber": 8,
    "usage": 9,
    "subgraphs": 10,
}
OP = {"inputIndexes": 0, "main_type": 1, "main": 2, "name": 3, "outputIndexes": 4, "type": 5}
BLOB = {
    "dims": 0,
    "dataFormat": 1,
    "dataType": 2,
    "uint8s": 3,
    "int8s": 4,
    "int32s": 5,
    "int64s": 6,
    "float32s": 7,
    "strings": 8,
    "external": 9,
}
INPUT = {"dims": 0, "dtype": 1, "dformat": 2}
CONV2D = {
    "common": 0,
    "weight": 1,
    "bias": 2,
    "quanParameter": 3,
    "symmetricQuan": 4,
    "sparseParameter": 5,
    "external": 6,
}
CONV2D_COMMON = {
    "padX": 0,
    "padY": 1,
    "kernelX": 2,
    "kernelY": 3,
    "strideX": 4,
    "strideY": 5,
    "dilateX": 6,
    "dilateY": 7,
    "padMode": 8,
    "group": 9,
    "outputCount": 10,
    "inputCount": 11,
    "relu": 12,
    "relu6": 13,
    "pads": 14,
    "outPads": 15,
    "hasOutputShape": 16,
}
POOL = {
    "padX": 0,
    "padY": 1,
    "isGlobal": 2,
    "kernelX": 3,
    "kernelY": 4,
    "strideX": 5,
    "strideY": 6,
    "type": 7,
    "padType": 8,
    "dataType": 9,
    "ceilModel": 10,
    "pads": 11,
    "countType": 12,
}
INNER_PRODUCT = {
    "outputCount": 0,
    "biasTerm": 1,
    "weightSize": 2,
    "weight": 3,
    "bias": 4,
    "axis": 5,
    "transpose": 6,
    "quanParameter": 7,
}
MATMUL = {"T": 0, "transposeA": 1, "transposeB": 2, "weight": 3, "bias": 4}
BATCH_MATMUL = {"adjX": 0, "adjY": 1}
INTERP = {
    "widthScale": 0,
    "heightScale": 1,
    "outputWidth": 2,
    "outputHeight": 3,
    "resizeType": 4,
    "alignCorners": 5,
    "halfPixelCenters": 6,
    "widthOffset": 7,
    "heightOffset": 8,
    "cubicCoeffA": 9,
    "ctm": 10,
}
BATCH_NORM = {
    "channels": 0,
    "slopeData": 1,
    "meanData": 2,
    "varData": 3,
    "biasData": 4,
    "Adata": 5,
    "Bdata": 6,
    "epsilon": 7,
}
SCALE = {"channels": 0, "scaleData": 1, "biasData": 2}
LAYER_NORM = {"axis": 0, "epsilon": 1, "gamma": 2, "beta": 3, "group": 4}
REDUCTION = {"operation": 0, "dim": 1, "coeff": 2, "keepDims": 3}
ELTWISE = {"type": 0, "coeff": 1}
# one-field tables: Axis.axis, Relu.slope, Reshape.dims, Permute.dims, SqueezeParam.squeezeDims,
# BinaryOp.opType, UnaryOp.opType, CastParam (srcT, dstT), Relu6 (minValue, maxValue), Gather.axis is field 3
RELU6 = {"minValue": 0, "maxValue": 1}
CAST = {"srcT": 0, "dstT": 1}
GATHER = {"axis": 3}

#: DataType codes -> numpy dtypes mnn holds
DATA_TYPES = {
    1: "float32",
    2: "float64",
    3: "int32",
    4: "uint8",
    5: "int16",
    6: "int8",
    9: "int64",
    10: "bool",
    17: "uint16",
    19: "float16",
}
