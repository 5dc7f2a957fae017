"""Expected values of tests/kernels/cpu/activation_grad_ops_test.cc, from TensorFlow.

Run with TF 2.21 (tensorflow-cpu, x86):  python activation_grad_tf.py > tables.txt
It calls each gradient op through tf.raw_ops on the CPU for float, double, half and
bfloat16 and prints C++ initializers: floats/doubles as round-trip literals, half and
bfloat16 as bit patterns.
"""
import numpy as np
import tensorflow as tf

NAN, INF = float("nan"), float("inf")
# Forward inputs/outputs x: signed zeros, Relu6's 0 and 6 edges, NaN, infinities, the
# ELU/SELU saturation values -1 and -scale*alpha, large and tiny magnitudes.
X = [-3.0, -1.5, -0.0, 0.0, 0.25, 2.0, NAN, -INF, INF, 20.0, -20.0, -1e-05, 6.0, 5.999,
     6.001, -0.7, 1.3, 3.7, -5.2, -1.0, -1.7580993, 0.5]
# Incoming gradients: NaN and infinities where a zero factor meets them (inf * 0 = NaN).
G = [1.5, -2.0, 3.0, 0.75, -1.25, 0.5, 1.0, 2.0, -3.0, INF, NAN, 1e-03, -4.0, 2.5,
     -0.3, INF, -INF, 0.1, 7.0, 1.0, -0.6, NAN]
assert len(X) == len(G)

OPS = [("Relu6Grad", "features", {}), ("LeakyReluGrad", "features", {"alpha": 0.3}),
       ("EluGrad", "outputs", {}), ("SeluGrad", "outputs", {}),
       ("SoftplusGrad", "features", {}), ("SoftsignGrad", "features", {})]


def bits(t):
    return [int(b) for b in tf.bitcast(t, tf.uint16).numpy().ravel()]


def lit(v, suffix):
    if np.isnan(v):
        return "kNan"
    if np.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(float(v)) + suffix


def emit(name, values):
    print("const std::vector<%s> %s = {%s};" % (
        "uint16_t" if name.endswith(("Half", "Bf16")) else
        ("float" if name.endswith("F") else "double"), name, ", ".join(values)))


print("// Inputs (bits) for half and bfloat16:")
emit("kXHalf", ["0x%04x" % b for b in bits(tf.constant(X, tf.float16))])
emit("kGHalf", ["0x%04x" % b for b in bits(tf.constant(G, tf.float16))])
emit("kXBf16", ["0x%04x" % b for b in bits(tf.cast(tf.constant(X, tf.float32), tf.bfloat16))])
emit("kGBf16", ["0x%04x" % b for b in bits(tf.cast(tf.constant(G, tf.float32), tf.bfloat16))])
for op, second, attrs in OPS:
    fn = getattr(tf.raw_ops, op)
    print("// %s" % op)
    for dtype, tag in [(tf.float32, "F"), (tf.float64, "D"), (tf.float16, "Half"),
                       (tf.bfloat16, "Bf16")]:
        x = tf.cast(tf.constant(X, tf.float32), dtype)
        g = tf.cast(tf.constant(G, tf.float32), dtype)
        if dtype == tf.float64:  # doubles widened from the float inputs, as the test does
            x = tf.constant(np.array(X, np.float32).astype(np.float64))
            g = tf.constant(np.array(G, np.float32).astype(np.float64))
        y = fn(gradients=g, **{second: x}, **attrs)
        name = "k%s%s" % (op, tag)
        if tag == "F":
            emit(name, [lit(v, "f") for v in y.numpy()])
        elif tag == "D":
            emit(name, [lit(v, "") for v in y.numpy()])
        else:
            emit(name, ["0x%04x" % b for b in bits(y)])
