# Converts an fp32 ONNX model to fp16 the way onnxruntime.transformers.float16
# .convert_float_to_float16 does (onnxruntime's Python package is not installable here; only
# python3-onnx is), for the test fixtures `make models-fp16` builds:
#   - float initializers and Constant tensors become float16, clipped to +-1e4 and with nonzero
#     magnitudes below 1e-7 raised to 1e-7 (onnxruntime's max_finite_val / min_positive_val:
#     BERT's -3.4e38 attention-mask constant would otherwise become -inf and 0 * -inf = NaN);
#   - Cast nodes to float cast to float16;
#   - with --keep-io-types, float graph inputs and outputs stay float32 behind Cast nodes
#     (what Xenova-style fp16 exports and onnxruntime's keep_io_types=True produce); without
#     it, they become float16.
# Usage: python3 to_fp16.py IN.onnx OUT.onnx [--keep-io-types]
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

MAX_FINITE, MIN_POSITIVE = 1e4, 1e-7


def to_half(t):
    a = nh.to_array(t).astype(np.float32)
    small = (a != 0) & (np.abs(a) < MIN_POSITIVE)
    a = np.where(small, np.sign(a) * MIN_POSITIVE, a)
    a = np.clip(a, -MAX_FINITE, MAX_FINITE)
    return nh.from_array(a.astype(np.float16), t.name)


def convert(model, keep_io_types):
    g = model.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == T.FLOAT:
            g.initializer[i].CopyFrom(to_half(t))
    for n in g.node:
        if n.op_type == "Cast":
            for a in n.attribute:
                if a.name == "to" and a.i == T.FLOAT:
                    a.i = T.FLOAT16
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == T.FLOAT:
                a.t.CopyFrom(to_half(a.t))
    del g.value_info[:]  # stale float32 shapes; onnxruntime infers them again
    casts_in, casts_out = [], []
    for vi in g.input:
        if vi.type.tensor_type.elem_type != T.FLOAT:
            continue
        if keep_io_types:
            half = vi.name + "_fp16"
            for n in g.node:
                n.input[:] = [half if x == vi.name else x for x in n.input]
            casts_in.append(h.make_node("Cast", [vi.name], [half], to=T.FLOAT16, name=half + "_cast"))
        else:
            vi.type.tensor_type.elem_type = T.FLOAT16
    for vi in g.output:
        if vi.type.tensor_type.elem_type != T.FLOAT:
            continue
        if keep_io_types:
            half = vi.name + "_fp16"
            for n in g.node:
                n.output[:] = [half if x == vi.name else x for x in n.output]
                n.input[:] = [half if x == vi.name else x for x in n.input]
            casts_out.append(h.make_node("Cast", [half], [vi.name], to=T.FLOAT, name=vi.name + "_cast"))
        else:
            vi.type.tensor_type.elem_type = T.FLOAT16
    nodes = casts_in + list(g.node) + casts_out
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--keep-io-types"):
        sys.exit("usage: to_fp16.py IN.onnx OUT.onnx [--keep-io-types]")
    m = convert(onnx.load(sys.argv[1]), len(sys.argv) == 4)
    onnx.save(m, sys.argv[2] + ".part")
    import os
    os.replace(sys.argv[2] + ".part", sys.argv[2])
