"""Expected values and error texts of tests/kernels/cpu/conv3d_ops_test.cc, from TensorFlow.

Run with TF 2.21 (tensorflow-cpu):  TF_ENABLE_ONEDNN_OPTS=0 python conv3d_tf.py
(TF_ENABLE_ONEDNN_OPTS=0: TF's own CPU kernels and texts; with oneDNN's rewrite, 2.21's
_MklNativeConv3D answers a 4-D input with a made-up shape instead of an error.)

Inputs are the test's Pattern(shape, m, off, scale) = ((i % m) - off) * scale over the
row-major index: input x = Pattern(11, 5, 0.5), filter = Pattern(7, 3, 0.25),
out_backprop dy = Pattern(5, 2, 0.5), all NDHWC, x [2, 4, 5, 5, 3], filter [2, 3, 3, 3, 2].
Every product is a multiple of 1/8 and every sum is exact in float, so each result is
printed as integers k (the value k / 8) and the test compares them within 1e-5.

Per case: Conv3D's output, Conv3DBackpropInputV2's and Conv3DBackpropFilterV2's results
(dy shaped as the output). TF's CPU kernels refuse dilations, so the dilated case runs on
the zero-dilated filter (the same convolution, the same SAME pads) and its filter gradient
is that filter's gradient at the dilated taps; the forward result is checked against
tf.nn.convolution(dilations=...) (space_to_batch), too. Conv3DBackpropInput/Filter (V1)
are refused by eager TF 2.21 ("not available in GraphDef version"), so they run from a
GraphDef of producer version 9; the script checks they equal the V2 results. NCDHW (which
TF's CPU kernels refuse) is checked by the test against these tables transposed.
"""
import re

import numpy as np
import tensorflow as tf

r = tf.raw_ops
X_SHAPE = [2, 4, 5, 5, 3]
F_SHAPE = [2, 3, 3, 3, 2]


def pattern(shape, m, off, scale):
    n = int(np.prod(shape))
    return ((np.arange(n) % m - off) * scale).astype(np.float32).reshape(shape)


X = pattern(X_SHAPE, 11, 5, 0.5)
F = pattern(F_SHAPE, 7, 3, 0.25)


def dilate(f, rates):
    """The filter with rate-1 zeros between taps along each spatial dim."""
    kd, kh, kw, i, o = f.shape
    out = np.zeros([(kd - 1) * rates[0] + 1, (kh - 1) * rates[1] + 1,
                    (kw - 1) * rates[2] + 1, i, o], np.float32)
    out[::rates[0], ::rates[1], ::rates[2]] = f
    return out


def eighths(t):
    v = np.asarray(t, np.float64).ravel() * 8
    assert np.all(v == np.round(v)), "not a multiple of 1/8"
    return "{%s}" % ", ".join(str(int(k)) for k in v)


def run_v1(op, a, b, dy, strides, padding):
    """Runs deprecated `op` (inputs a, b, dy) from a GraphDef of producer version 9."""
    g = tf.Graph()
    with g.as_default():
        for name, v in (("a", a), ("b", b), ("dy", dy)):
            tf.compat.v1.placeholder(tf.float32, v.shape, name=name)
    gd = g.as_graph_def()
    n = gd.node.add()
    n.name, n.op = "grad", op
    n.input.extend(["a", "b", "dy"])
    n.attr["T"].type = tf.float32.as_datatype_enum
    n.attr["strides"].list.i.extend(strides)
    n.attr["padding"].s = padding.encode()
    gd.versions.producer = 9
    g2 = tf.Graph()
    with g2.as_default():
        tf.graph_util.import_graph_def(gd, name="")
        with tf.compat.v1.Session() as s:
            return s.run("grad:0", {"a:0": a, "b:0": b, "dy:0": dy})


# (name, padding, spatial strides, spatial dilations)
CASES = [
    ("valid", "VALID", (1, 1, 1), (1, 1, 1)),
    ("same_s2", "SAME", (2, 2, 2), (1, 1, 1)),
    ("valid_s212", "VALID", (2, 1, 2), (1, 1, 1)),
    ("same_dilated", "SAME", (1, 1, 1), (2, 2, 2)),
]

for name, padding, s, d in CASES:
    strides = [1, s[0], s[1], s[2], 1]
    f = dilate(F, d)
    y = r.Conv3D(input=X, filter=f, strides=strides, padding=padding).numpy()
    if d != (1, 1, 1):
        ref = tf.nn.convolution(X, F, padding=padding, dilations=list(d)).numpy()
        assert np.array_equal(ref, y)
    dy = pattern(y.shape, 5, 2, 0.5)
    dx = r.Conv3DBackpropInputV2(input_sizes=X_SHAPE, filter=f, out_backprop=dy,
                                 strides=strides, padding=padding).numpy()
    df = r.Conv3DBackpropFilterV2(input=X, filter_sizes=list(f.shape), out_backprop=dy,
                                  strides=strides, padding=padding).numpy()
    df = df[::d[0], ::d[1], ::d[2]]
    if d == (1, 1, 1):
        assert np.array_equal(run_v1("Conv3DBackpropInput", X, f, dy, strides, padding), dx)
        assert np.array_equal(run_v1("Conv3DBackpropFilter", X, f, dy, strides, padding), df)
    print("// %s: output %s" % (name, list(y.shape)))
    print("output: %s" % eighths(y))
    print("input grad: %s" % eighths(dx))
    print("filter grad: %s" % eighths(df))


def show_error(label, fn, **kw):
    try:
        fn(**kw)
        print("%s: OK" % label)
    except tf.errors.OpError as e:
        msg = re.sub(r"^\{\{function_node [^}]*\}\} ", "", e.message).split(" [Op:")[0]
        print("%s: %s: %s" % (label, type(e).__name__, msg))


S1 = [1, 1, 1, 1, 1]
DY = pattern([2, 3, 3, 3, 2], 5, 2, 0.5)  # the VALID output's shape
print("# errors")
show_error("Conv3D batch stride", r.Conv3D, input=X, filter=F, strides=[2, 1, 1, 1, 1],
           padding="SAME")
show_error("Conv3D 4-D input", r.Conv3D, input=X[0], filter=F, strides=S1, padding="SAME")
show_error("Conv3D depth", r.Conv3D, input=X, filter=pattern([2, 3, 3, 2, 2], 7, 3, 0.25),
           strides=S1, padding="SAME")
show_error("Conv3D dilations of 4", r.Conv3D, input=X, filter=F, strides=S1,
           dilations=[1, 1, 1, 1], padding="SAME")
show_error("Conv3DBackpropInputV2 channels", r.Conv3DBackpropInputV2, input_sizes=X_SHAPE,
           filter=F, out_backprop=pattern([2, 3, 3, 3, 3], 5, 2, 0.5), strides=S1,
           padding="VALID")
show_error("Conv3DBackpropInputV2 size", r.Conv3DBackpropInputV2, input_sizes=X_SHAPE,
           filter=F, out_backprop=pattern([2, 3, 3, 4, 2], 5, 2, 0.5), strides=S1,
           padding="VALID")
show_error("Conv3DBackpropInputV2 zero stride", r.Conv3DBackpropInputV2, input_sizes=X_SHAPE,
           filter=F, out_backprop=DY, strides=[1, 0, 1, 1, 1], padding="VALID")
show_error("Conv3DBackpropInputV2 2-D sizes", r.Conv3DBackpropInputV2,
           input_sizes=[X_SHAPE], filter=F, out_backprop=DY, strides=S1, padding="VALID")
show_error("Conv3DBackpropFilterV2 batch", r.Conv3DBackpropFilterV2, input=X,
           filter_sizes=F_SHAPE, out_backprop=DY[:1], strides=S1, padding="VALID")
show_error("Conv3DBackpropFilterV2 2-D sizes", r.Conv3DBackpropFilterV2, input=X,
           filter_sizes=[F_SHAPE], out_backprop=DY, strides=S1, padding="VALID")
show_error("Conv3DBackpropFilterV2 4-D out_backprop", r.Conv3DBackpropFilterV2, input=X,
           filter_sizes=F_SHAPE, out_backprop=DY[0], strides=S1, padding="VALID")
print("# empty results")
show_error("Conv3D batch 0", r.Conv3D, input=X[:0], filter=F, strides=S1, padding="SAME")
print("Conv3DBackpropFilterV2 batch 0: %s" % eighths(r.Conv3DBackpropFilterV2(
    input=X[:0], filter_sizes=F_SHAPE, out_backprop=DY[:0], strides=S1, padding="VALID")))
