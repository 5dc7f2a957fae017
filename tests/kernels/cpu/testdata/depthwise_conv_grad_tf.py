"""Expected values of tests/kernels/cpu/depthwise_conv_grad_ops_test.cc, from TensorFlow.

Run with TF 2.21 (tensorflow-cpu):  python depthwise_conv_grad_tf.py
Inputs are the test's Sequence(count, a, m, off, scale) = ((i * a) % m - off) * scale:
x = Sequence(7, 13, 6, 0.25), filter = Sequence(5, 11, 5, 0.1), dy = Sequence(3, 7, 3, 0.5),
all NHWC. Where TF's CPU kernels take the case (equal strides, no dilation) the values are
tf.raw_ops.DepthwiseConv2dNativeBackpropInput/Filter; for dilations (which TF's CPU kernels
ignore) they are tf.GradientTape gradients of tf.nn.depthwise_conv2d(dilations=...), and for
unequal strides (which TF's CPU kernels refuse) gradients of the same depthwise convolution
written as one tf.nn.conv2d per input channel. Also prints TF's half and bfloat16 results
of the first case and the error texts the test checks.
"""
import numpy as np
import tensorflow as tf

r = tf.raw_ops


def seq(shape, a, m, off, scale):
    n = int(np.prod(shape))
    return (((np.arange(n) * a) % m - off) * scale).astype(np.float32).reshape(shape)


# (name, input NHWC, filter [fh, fw, c, m], padding, (sh, sw), (dh, dw), pads t/b/l/r)
CASES = [
    ("valid_m2", (1, 5, 5, 2), (3, 3, 2, 2), "VALID", (1, 1), (1, 1), None),
    ("same_s2_b2", (2, 5, 4, 3), (3, 3, 3, 2), "SAME", (2, 2), (1, 1), None),
    ("explicit_m1", (1, 4, 5, 2), (2, 3, 2, 1), "EXPLICIT", (1, 1), (1, 1), (1, 0, 0, 2)),
    ("dilated_m2", (1, 6, 5, 2), (2, 2, 2, 2), "VALID", (1, 1), (2, 2), None),
    ("strides_2_1_m3", (1, 5, 6, 2), (3, 2, 2, 3), "SAME", (2, 1), (1, 1), None),
]


def forward(x, f, padding, strides, dilations, pads):
    if dilations != (1, 1):
        return tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], padding, dilations=dilations)
    if strides[0] != strides[1]:
        c = x.shape[3]
        return tf.concat([tf.nn.conv2d(x[..., i:i + 1], f[:, :, i:i + 1, :],
                                       [1, strides[0], strides[1], 1], padding)
                          for i in range(c)], axis=3)
    kw = {}
    if padding == "EXPLICIT":
        kw["explicit_paddings"] = [0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0]
    return r.DepthwiseConv2dNative(input=x, filter=f, strides=[1, strides[0], strides[1], 1],
                                   padding=padding, **kw)


def grads(name, xs, fs, padding, strides, dilations, pads, dtype=tf.float32):
    x = tf.cast(tf.constant(seq(xs, 7, 13, 6, 0.25)), dtype)
    f = tf.cast(tf.constant(seq(fs, 5, 11, 5, 0.1)), dtype)
    y = forward(tf.cast(x, tf.float32), tf.cast(f, tf.float32), padding, strides, dilations,
                pads)
    dy = tf.cast(tf.constant(seq(y.shape, 3, 7, 3, 0.5)), dtype)
    if dilations == (1, 1) and strides[0] == strides[1]:
        kw = dict(strides=[1, strides[0], strides[1], 1], padding=padding)
        if padding == "EXPLICIT":
            kw["explicit_paddings"] = [0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0]
        dx = r.DepthwiseConv2dNativeBackpropInput(input_sizes=list(xs), filter=f,
                                                  out_backprop=dy, **kw)
        df = r.DepthwiseConv2dNativeBackpropFilter(input=x, filter_sizes=list(fs),
                                                   out_backprop=dy, **kw)
    else:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            tape.watch(f)
            out = forward(x, f, padding, strides, dilations, pads)
        dx, df = tape.gradient(out, [x, f], output_gradients=dy)
    return tuple(y.shape), dx, df


def floats(t):
    return ", ".join(repr(float(v)) + "f" for v in np.asarray(t, np.float32).ravel())


def bits(t):
    return ", ".join("0x%04x" % int(b) for b in tf.bitcast(t, tf.uint16).numpy().ravel())


for name, xs, fs, padding, strides, dilations, pads in CASES:
    shape, dx, df = grads(name, xs, fs, padding, strides, dilations, pads)
    print("// %s: out_backprop %s" % (name, list(shape)))
    print("input grad: {%s}" % floats(dx))
    print("filter grad: {%s}" % floats(df))

name, xs, fs, padding, strides, dilations, pads = CASES[0]
for dtype in (tf.float16, tf.bfloat16):
    _, dx, df = grads(name, xs, fs, padding, strides, dilations, pads, dtype)
    print("// %s %s" % (name, dtype.name))
    print("input grad: {%s}" % bits(dx))
    print("filter grad: {%s}" % bits(df))
