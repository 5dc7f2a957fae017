"""Expected values of pool3d_ops_test.cc, from TensorFlow's own 3-D pooling kernels.

Run with TF 2.21 (tensorflow-cpu, x86) and oneDNN off:

    TF_ENABLE_ONEDNN_OPTS=0 python pool3d_tf.py > tables.txt

With oneDNN on (the default), eager MaxPool3D, AvgPool3D and AvgPool3DGrad are rewritten to
oneDNN kernels (they then accept NCDHW, and round differently); with it off the raw ops run
TF's pooling_ops_3d.cc, the kernels the C++ ones follow. It prints C++ initializers: full
tables where short, else Sample lists {index, value} (every 37th element and the last, or
every 4th nonzero one for MaxPool3DGrad) and the sum of all elements (float64). bfloat16
results are printed as the floats they are.
"""
import os
import sys

if os.environ.get("TF_ENABLE_ONEDNN_OPTS") != "0":
    sys.exit("run with TF_ENABLE_ONEDNN_OPTS=0: the tables are TF's own kernels' values")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

raw = tf.raw_ops
SHAPE = [2, 4, 5, 5, 3]  # NDHWC
VALID = dict(ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")
SAME = dict(ksize=[1, 3, 3, 3, 1], strides=[1, 1, 1, 1, 1], padding="SAME")


def seq(n, a, m, off, scale):
    """The C++ test's Seq: ((i * a) % m - off) * scale."""
    i = np.arange(n)
    return (((i * a) % m - off) * scale).astype(np.float32)


def x_input():
    return seq(600, 37, 101, 50, 0.125).reshape(SHAPE)


def tie_input():
    """Values 0..4: most windows hold their maximum more than once."""
    return (np.arange(600) * 7 % 5).astype(np.float32).reshape(SHAPE)


def grad_for(shape):
    return seq(int(np.prod(shape)), 13, 29, 14, 0.25).reshape(shape)


def values(t):
    return tf.cast(t, tf.float32).numpy().ravel()


def floats(v):
    return ["%.9g" % float(x) for x in v]


def emit(decl, items):
    """Prints `decl = {items};` wrapped at 100 columns, as clang-format would."""
    lines, line = [], "    "
    for item in items:
        if len(line) + len(item) + 2 > 100:
            lines.append(line.rstrip())
            line = "    "
        line += item + ", "
    lines.append(line.rstrip().rstrip(","))
    print("%s = {\n%s};" % (decl, "\n".join(lines)))


def table(name, t):
    emit("const std::vector<float> " + name, floats(values(t)))


def pairs(v, idx):
    return ["{%d, %.9g}" % (i, v[i]) for i in idx]


def samples(name, t, nonzero_only=False):
    """Every 37th element and the last (every 4th nonzero one for sparse results)."""
    v = values(t)
    if nonzero_only:
        idx = list(np.nonzero(v)[0][::4])
        print("const int k%sNonzeros = %d;" % (name[1:], np.count_nonzero(v)))
    else:
        idx = list(range(0, len(v), 37)) + [len(v) - 1]
    emit("const std::vector<Sample> " + name, pairs(v, idx))
    print("const double %sSum = %.17g;" % (name, float(np.sum(v.astype(np.float64)))))


def sparse(name, t):
    v = values(t)
    emit("const std::vector<Sample> " + name, pairs(v, np.nonzero(v)[0]))


def forward_tables():
    x = tf.constant(x_input())
    for op in ["MaxPool3D", "AvgPool3D"]:
        f = getattr(raw, op)
        table("k%sValid" % op, f(input=x, **VALID))
        samples("k%sSame" % op, f(input=x, **SAME))


def max_grad_tables():
    for label, x in [("", x_input()), ("Ties", tie_input())]:
        x = tf.constant(x)
        for pad, attrs in [("Valid", VALID), ("Same", SAME)]:
            y = raw.MaxPool3D(input=x, **attrs)
            g = tf.constant(grad_for(y.shape))
            out = raw.MaxPool3DGrad(orig_input=x, orig_output=y, grad=g, **attrs)
            name = "kMaxPool3DGrad%s%s" % (label, pad)
            sparse(name, out) if pad == "Valid" else samples(name, out, nonzero_only=True)


def avg_grad_tables():
    for pad, attrs in [("Valid", VALID), ("Same", SAME)]:
        pooled = raw.AvgPool3D(input=tf.zeros(SHAPE), **attrs).shape
        out = raw.AvgPool3DGrad(orig_input_shape=SHAPE, grad=tf.constant(grad_for(pooled)), **attrs)
        samples("kAvgPool3DGrad%s" % pad, out)


def grad_grad_tables():
    x = tf.constant(x_input())
    gg = tf.constant(seq(600, 11, 23, 11, 0.5).reshape(SHAPE))
    for pad, attrs in [("Valid", VALID), ("Same", SAME)]:
        y = raw.MaxPool3D(input=x, **attrs)
        out = raw.MaxPool3DGradGrad(orig_input=x, orig_output=y, grad=gg, **attrs)
        table("kMaxPool3DGradGrad%s" % pad, out) if pad == "Valid" else samples(
            "kMaxPool3DGradGrad%s" % pad, out)


def broadcast_range_quirk():
    # Planes: input 4, window 5, stride 3, SAME: window 0 is [-2, 3), clipped on both sides.
    attrs = dict(ksize=[1, 5, 1, 1, 1], strides=[1, 3, 1, 1, 1], padding="SAME")
    out = raw.AvgPool3DGrad(orig_input_shape=[1, 4, 1, 1, 1], grad=tf.ones([1, 2, 1, 1, 1]), **attrs)
    print("// AvgPool3DGrad quirk:", ", ".join(floats(values(out))))
    x = tf.constant([1.0, 2.0, 3.0, 3.0], shape=[1, 4, 1, 1, 1])
    out = raw.MaxPool3DGrad(orig_input=x, orig_output=tf.constant([3.0, 3.0], shape=[1, 2, 1, 1, 1]),
                            grad=tf.constant([1.0, 10.0], shape=[1, 2, 1, 1, 1]), **attrs)
    print("// MaxPool3DGrad quirk:", ", ".join(floats(values(out))))
    out = raw.MaxPool3DGrad(orig_input=tf.constant([1.0, 1.000001] + [0.0] * 6, shape=[1, 2, 2, 2, 1]),
                            orig_output=tf.constant(1.000001, shape=[1, 1, 1, 1, 1]),
                            grad=tf.constant(5.0, shape=[1, 1, 1, 1, 1]), **VALID)
    print("// MaxPool3DGrad within 1e-5:", ", ".join(floats(values(out))))


def bfloat16_tables():
    x = tf.constant(x_input(), tf.bfloat16)
    table("kBf16MaxPool3DValid", raw.MaxPool3D(input=x, **VALID))
    table("kBf16AvgPool3DValid", raw.AvgPool3D(input=x, **VALID))
    y = raw.MaxPool3D(input=x, **SAME)
    g = tf.constant(grad_for(y.shape), tf.bfloat16)
    samples("kBf16MaxPool3DGradSame", raw.MaxPool3DGrad(orig_input=x, orig_output=y, grad=g, **SAME),
            nonzero_only=True)
    samples("kBf16AvgPool3DGradSame", raw.AvgPool3DGrad(orig_input_shape=SHAPE, grad=g, **SAME))


def nan_table():
    # 8 channels (one AVX register of floats): NaN at various places of a 2x2x2 window.
    x = np.tile(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2, 1), [1, 1, 1, 1, 8])
    for c in range(7):
        x.reshape(8, 8)[c::3, c] = np.nan  # channel c: NaN at positions c, c+3, c+6
    x[..., 7] = np.nan
    print("// MaxPool3D NaN input (NDHWC [1,2,2,2,8]):", ", ".join(floats(x.ravel())))
    table("kMaxPool3DNan", raw.MaxPool3D(input=tf.constant(x), **VALID))


def error_texts():
    x = tf.zeros([1, 4, 4, 4, 1])
    g = tf.zeros([1, 2, 2, 2, 1])
    cases = [
        ("MaxPool3D depth window", lambda: raw.MaxPool3D(
            input=x, ksize=[1, 2, 2, 2, 2], strides=[1, 2, 2, 2, 1], padding="VALID")),
        ("AvgPool3D ksize 0", lambda: raw.AvgPool3D(
            input=x, ksize=[1, 0, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")),
        ("MaxPool3D stride 0", lambda: raw.MaxPool3D(
            input=x, ksize=[1, 2, 2, 2, 1], strides=[1, 0, 2, 2, 1], padding="VALID")),
        ("MaxPool3D window too large", lambda: raw.MaxPool3D(
            input=x, ksize=[1, 7, 1, 1, 1], strides=[1, 1, 1, 1, 1], padding="VALID")),
        ("MaxPool3D rank 4", lambda: raw.MaxPool3D(
            input=tf.zeros([1, 4, 4, 1]), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1],
            padding="VALID")),
        ("MaxPool3DGrad grad shape", lambda: raw.MaxPool3DGrad(
            orig_input=x, orig_output=g, grad=tf.zeros([1, 2, 2, 3, 1]),
            ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")),
        ("AvgPool3DGrad batch", lambda: raw.AvgPool3DGrad(
            orig_input_shape=[2, 4, 4, 4, 1], grad=g, ksize=[1, 2, 2, 2, 1],
            strides=[1, 2, 2, 2, 1], padding="VALID")),
        ("AvgPool3DGrad ksize 0", lambda: raw.AvgPool3DGrad(
            orig_input_shape=[1, 4, 4, 4, 1], grad=g, ksize=[1, 0, 2, 2, 1],
            strides=[1, 2, 2, 2, 1], padding="VALID")),
        ("MaxPool3DGradGrad depth window", lambda: raw.MaxPool3DGradGrad(
            orig_input=x, orig_output=g, grad=x, ksize=[1, 2, 2, 2, 2],
            strides=[1, 2, 2, 2, 1], padding="VALID")),
        ("MaxPool3DGradGrad empty", lambda: raw.MaxPool3DGradGrad(
            orig_input=tf.zeros([0, 4, 4, 4, 1]), orig_output=tf.zeros([0, 2, 2, 2, 1]),
            grad=tf.zeros([0, 4, 4, 4, 1]), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1],
            padding="VALID")),
        ("MaxPool3D NCDHW (TF's CPU kernel refuses it)", lambda: raw.MaxPool3D(
            input=tf.zeros([1, 1, 4, 4, 4]), ksize=[1, 1, 2, 2, 2], strides=[1, 1, 2, 2, 2],
            padding="VALID", data_format="NCDHW")),
    ]
    for name, fn in cases:
        try:
            fn()
            print("// %s: OK" % name)
        except tf.errors.OpError as e:
            print("// %s: %s: %s" % (name, type(e).__name__, e.message.split("}}")[-1].strip()))


if __name__ == "__main__":
    forward_tables()
    max_grad_tables()
    avg_grad_tables()
    grad_grad_tables()
    broadcast_range_quirk()
    bfloat16_tables()
    nan_table()
    error_texts()
