#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/golden/vision/ops.safetensors: what torch.nn.functional's vision ops give, forward
and backward, for tests/nn/vision_golden_test.cpp.

Every case runs twice, as "f64.NAME" and "f32.NAME", on its own random inputs:
  P.NAME.in0, P.NAME.in1, ...   the inputs that get a gradient (x first), in the case's precision
  P.NAME.dy                     a random gradient of the output
  P.NAME.out, P.NAME.grad0, ... torch's output and the gradients of sum(out * dy), computed in
                                float64 (from the stored inputs, upcast for f32)
  f32.NAME.out_f32, .grad0_f32  what torch computes in float32 (how far a float32 run strays from
                                float64: the float32 test's tolerance is measured from it)
and, for some ops, tensors that take no gradient or that are extra outputs:
  .indices                      max_pool2d's argmax (int64, flat index in the input's H x W plane)
  .running_mean, .running_var   batch_norm's running stats before the call (float64 / float32)
  .running_mean_out, .running_var_out (and _f32) the running stats after a training call

The options of each case are the same in tests/nn/vision_golden_test.cpp (same names); the
file's metadata "cases" lists each case with the call, for a reader. REFUSED lists calls that torch
rejects (the script checks that it still does); the test checks that weft rejects them too.

Run: python3 tests/golden/make_vision_golden.py   (needs torch and safetensors; the tests do not)
"""
import json
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
D = torch.float64


def rnd(*shape, lo=-1.0, hi=1.0):
    return torch.rand(*shape, dtype=D) * (hi - lo) + lo


def bn_call(training, momentum, eps):
    """batch_norm as weft's call: inputs x and (if given) weight, bias; running stats given apart
    (updated in place)."""
    def call(x, stats):
        rm, rv = stats
        weight, bias = (x[1], x[2]) if len(x) == 3 else (None, None)
        return F.batch_norm(x[0], rm, rv, weight, bias, training=training, momentum=momentum, eps=eps)
    return call


def cases():
    """name -> (inputs that get a gradient, running stats or None, call(inputs, stats) -> out or (out, indices), text)."""
    # conv2d: x [N, C, H, W], w [O, C / groups, kH, kW], b [O]
    yield "conv2d_bias", [rnd(2, 3, 7, 6), rnd(4, 3, 3, 3), rnd(4)], None, \
        lambda x, s: F.conv2d(x[0], x[1], x[2]), "conv2d(x, w, b)"
    yield "conv2d_stride_pad", [rnd(2, 3, 7, 6), rnd(4, 3, 3, 2), rnd(4)], None, \
        lambda x, s: F.conv2d(x[0], x[1], x[2], stride=(2, 1), padding=(1, 2)), \
        "conv2d(x, w, b, stride=(2, 1), padding=(1, 2))"
    yield "conv2d_same_dilation", [rnd(1, 3, 6, 7), rnd(2, 3, 3, 4)], None, \
        lambda x, s: F.conv2d(x[0], x[1], padding="same", dilation=(1, 2)), \
        "conv2d(x, w, padding='same', dilation=(1, 2))"
    yield "conv2d_valid_stride", [rnd(2, 2, 7, 7), rnd(3, 2, 3, 3), rnd(3)], None, \
        lambda x, s: F.conv2d(x[0], x[1], x[2], stride=2, padding="valid"), \
        "conv2d(x, w, b, stride=2, padding='valid')"
    yield "conv2d_dilation_pad", [rnd(1, 2, 8, 7), rnd(3, 2, 3, 3), rnd(3)], None, \
        lambda x, s: F.conv2d(x[0], x[1], x[2], padding=2, dilation=2), \
        "conv2d(x, w, b, padding=2, dilation=2)"
    yield "conv2d_groups", [rnd(2, 4, 6, 5), rnd(6, 2, 3, 3), rnd(6)], None, \
        lambda x, s: F.conv2d(x[0], x[1], x[2], stride=2, padding=1, groups=2), \
        "conv2d(x, w, b, stride=2, padding=1, groups=2)"
    yield "conv2d_depthwise", [rnd(2, 4, 6, 6), rnd(8, 1, 3, 3)], None, \
        lambda x, s: F.conv2d(x[0], x[1], padding=1, groups=4), "conv2d(x, w, padding=1, groups=4)"
    # conv1d: x [N, C, L], w [O, C / groups, K]
    yield "conv1d_stride_pad", [rnd(2, 3, 11), rnd(4, 3, 3), rnd(4)], None, \
        lambda x, s: F.conv1d(x[0], x[1], x[2], stride=2, padding=1), "conv1d(x, w, b, stride=2, padding=1)"
    yield "conv1d_same_groups", [rnd(2, 3, 10), rnd(6, 1, 4)], None, \
        lambda x, s: F.conv1d(x[0], x[1], padding="same", dilation=2, groups=3), \
        "conv1d(x, w, padding='same', dilation=2, groups=3)"
    # conv_transpose2d: w [C, O / groups, kH, kW]
    yield "conv_transpose2d_plain", [rnd(2, 3, 4, 5), rnd(3, 2, 3, 3), rnd(2)], None, \
        lambda x, s: F.conv_transpose2d(x[0], x[1], x[2]), "conv_transpose2d(x, w, b)"
    yield "conv_transpose2d_stride_outpad", [rnd(2, 3, 4, 3), rnd(3, 2, 3, 3), rnd(2)], None, \
        lambda x, s: F.conv_transpose2d(x[0], x[1], x[2], stride=2, padding=1, output_padding=1), \
        "conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)"
    yield "conv_transpose2d_groups_dilation", [rnd(1, 4, 3, 4), rnd(4, 2, 2, 3)], None, \
        lambda x, s: F.conv_transpose2d(x[0], x[1], stride=(2, 3), padding=(0, 1), output_padding=(1, 2),
                                        groups=2, dilation=2), \
        "conv_transpose2d(x, w, stride=(2, 3), padding=(0, 1), output_padding=(1, 2), groups=2, dilation=2)"
    # max_pool2d (+ indices: the argmax's flat index in its H x W plane)
    yield "max_pool2d_k2", [rnd(2, 3, 6, 7)], None, \
        lambda x, s: F.max_pool2d(x[0], 2, return_indices=True), "max_pool2d(x, 2)"
    yield "max_pool2d_pad_dilation", [rnd(2, 2, 9, 8)], None, \
        lambda x, s: F.max_pool2d(x[0], 3, stride=2, padding=1, dilation=2, return_indices=True), \
        "max_pool2d(x, 3, stride=2, padding=1, dilation=2)"
    yield "max_pool2d_ceil", [rnd(1, 3, 7, 6)], None, \
        lambda x, s: F.max_pool2d(x[0], (3, 2), stride=2, padding=(1, 0), ceil_mode=True, return_indices=True), \
        "max_pool2d(x, (3, 2), stride=2, padding=(1, 0), ceil_mode=True)"
    # avg_pool2d
    yield "avg_pool2d_k2", [rnd(2, 3, 6, 7)], None, lambda x, s: F.avg_pool2d(x[0], 2), "avg_pool2d(x, 2)"
    yield "avg_pool2d_ceil_pad", [rnd(1, 3, 7, 6)], None, \
        lambda x, s: F.avg_pool2d(x[0], 3, stride=2, padding=1, ceil_mode=True), \
        "avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)"
    yield "avg_pool2d_exclude_pad", [rnd(2, 2, 7, 7)], None, \
        lambda x, s: F.avg_pool2d(x[0], 3, stride=2, padding=1, count_include_pad=False), \
        "avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)"
    yield "avg_pool2d_ceil_exclude", [rnd(1, 2, 6, 8)], None, \
        lambda x, s: F.avg_pool2d(x[0], (3, 2), stride=(2, 3), padding=1, ceil_mode=True, count_include_pad=False), \
        "avg_pool2d(x, (3, 2), stride=(2, 3), padding=1, ceil_mode=True, count_include_pad=False)"
    # adaptive_avg_pool2d
    yield "adaptive_avg_pool2d_global", [rnd(2, 3, 5, 6)], None, \
        lambda x, s: F.adaptive_avg_pool2d(x[0], 1), "adaptive_avg_pool2d(x, 1)"
    yield "adaptive_avg_pool2d_uneven", [rnd(2, 2, 7, 5)], None, \
        lambda x, s: F.adaptive_avg_pool2d(x[0], (3, 4)), "adaptive_avg_pool2d(x, (3, 4))"
    yield "adaptive_avg_pool2d_up", [rnd(1, 2, 3, 3)], None, \
        lambda x, s: F.adaptive_avg_pool2d(x[0], (5, 4)), "adaptive_avg_pool2d(x, (5, 4))"
    # interpolate
    yield "nearest_size", [rnd(2, 2, 4, 3)], None, \
        lambda x, s: F.interpolate(x[0], size=(7, 5), mode="nearest"), "interpolate(x, size=(7, 5), mode='nearest')"
    yield "nearest_scale", [rnd(1, 3, 3, 4)], None, \
        lambda x, s: F.interpolate(x[0], scale_factor=2, mode="nearest"), \
        "interpolate(x, scale_factor=2, mode='nearest')"
    yield "nearest_scale_fraction", [rnd(1, 2, 4, 6)], None, \
        lambda x, s: F.interpolate(x[0], scale_factor=(1.5, 0.75), mode="nearest"), \
        "interpolate(x, scale_factor=(1.5, 0.75), mode='nearest')"
    yield "bilinear_size", [rnd(2, 2, 4, 5)], None, \
        lambda x, s: F.interpolate(x[0], size=(7, 9), mode="bilinear", align_corners=False), \
        "interpolate(x, size=(7, 9), mode='bilinear', align_corners=False)"
    yield "bilinear_size_align", [rnd(2, 2, 4, 5)], None, \
        lambda x, s: F.interpolate(x[0], size=(7, 9), mode="bilinear", align_corners=True), \
        "interpolate(x, size=(7, 9), mode='bilinear', align_corners=True)"
    yield "bilinear_scale", [rnd(1, 3, 3, 4)], None, \
        lambda x, s: F.interpolate(x[0], scale_factor=2, mode="bilinear", align_corners=False), \
        "interpolate(x, scale_factor=2, mode='bilinear', align_corners=False)"
    yield "bilinear_down_align", [rnd(1, 2, 6, 5)], None, \
        lambda x, s: F.interpolate(x[0], size=(3, 2), mode="bilinear", align_corners=True), \
        "interpolate(x, size=(3, 2), mode='bilinear', align_corners=True)"
    # batch_norm: inputs x, weight, bias; running stats (mean, var > 0) apart
    yield "batch_norm_train", [rnd(4, 3, 4, 5, lo=-1, hi=3), rnd(3, lo=0.5, hi=1.5), rnd(3)], \
        [rnd(3), rnd(3, lo=0.5, hi=2)], bn_call(True, 0.1, 1e-5), \
        "batch_norm(x, running_mean, running_var, w, b, training=True, momentum=0.1, eps=1e-5)"
    yield "batch_norm_train_momentum", [rnd(2, 4, 3, 3), rnd(4, lo=0.5, hi=1.5), rnd(4)], \
        [rnd(4), rnd(4, lo=0.5, hi=2)], bn_call(True, 0.3, 1e-3), \
        "batch_norm(x, running_mean, running_var, w, b, training=True, momentum=0.3, eps=1e-3)"
    yield "batch_norm_train_no_affine", [rnd(3, 2, 3, 4, lo=-2, hi=1)], [rnd(2), rnd(2, lo=0.5, hi=2)], \
        bn_call(True, 0.1, 1e-5), "batch_norm(x, running_mean, running_var, None, None, training=True)"
    yield "batch_norm_eval", [rnd(2, 3, 4, 5), rnd(3, lo=0.5, hi=1.5), rnd(3)], \
        [rnd(3), rnd(3, lo=0.5, hi=2)], bn_call(False, 0.1, 1e-5), \
        "batch_norm(x, running_mean, running_var, w, b, training=False, eps=1e-5)"
    # group_norm: x, weight [C], bias [C]
    yield "group_norm", [rnd(2, 6, 3, 4, lo=-1, hi=2), rnd(6, lo=0.5, hi=1.5), rnd(6)], None, \
        lambda x, s: F.group_norm(x[0], 3, x[1], x[2], eps=1e-5), "group_norm(x, 3, w, b, eps=1e-5)"
    yield "group_norm_one_group", [rnd(2, 4, 3, 3), rnd(4, lo=0.5, hi=1.5), rnd(4)], None, \
        lambda x, s: F.group_norm(x[0], 1, x[1], x[2], eps=1e-5), "group_norm(x, 1, w, b, eps=1e-5)"
    yield "group_norm_instance", [rnd(2, 4, 3, 5), rnd(4, lo=0.5, hi=1.5), rnd(4)], None, \
        lambda x, s: F.group_norm(x[0], 4, x[1], x[2], eps=1e-3), "group_norm(x, 4, w, b, eps=1e-3)"
    yield "group_norm_no_affine", [rnd(2, 4, 3, 3, lo=-1, hi=2)], None, \
        lambda x, s: F.group_norm(x[0], 2, eps=1e-5), "group_norm(x, 2, eps=1e-5)"
    # rms_norm: over the last dims (normalized_shape), weight of that shape
    yield "rms_norm_last", [rnd(2, 3, 4, 5), rnd(5, lo=0.5, hi=1.5)], None, \
        lambda x, s: F.rms_norm(x[0], (5,), x[1], eps=1e-6), "rms_norm(x, (5,), w, eps=1e-6)"
    yield "rms_norm_last_two", [rnd(2, 3, 4, 5), rnd(4, 5, lo=0.5, hi=1.5)], None, \
        lambda x, s: F.rms_norm(x[0], (4, 5), x[1], eps=1e-5), "rms_norm(x, (4, 5), w, eps=1e-5)"
    yield "rms_norm_no_weight", [rnd(2, 3, 4, 6)], None, \
        lambda x, s: F.rms_norm(x[0], (6,), eps=1e-6), "rms_norm(x, (6,), eps=1e-6)"


def ones(*shape):
    return torch.ones(*shape, dtype=D)


# name -> a call torch raises for (the same calls are in vision_golden_test.cpp's bad-input case)
REFUSED = {
    "conv2d: weight's input channels differ from x's": lambda: F.conv2d(ones(1, 3, 5, 5), ones(4, 2, 3, 3)),
    "conv2d: channels not divisible by groups": lambda: F.conv2d(ones(1, 3, 5, 5), ones(4, 1, 3, 3), groups=2),
    "conv2d: kernel larger than the padded input": lambda: F.conv2d(ones(1, 3, 2, 2), ones(4, 3, 3, 3)),
    "conv2d: padding 'same' with stride 2": lambda: F.conv2d(ones(1, 3, 5, 5), ones(4, 3, 3, 3), stride=2, padding="same"),
    "conv_transpose2d: output_padding not below stride or dilation":
        lambda: F.conv_transpose2d(ones(1, 3, 5, 5), ones(3, 2, 3, 3), stride=2, output_padding=2),
    "max_pool2d: padding over half the kernel": lambda: F.max_pool2d(ones(1, 3, 5, 5), 2, padding=2),
    "avg_pool2d: kernel larger than the input": lambda: F.avg_pool2d(ones(1, 3, 2, 2), 3),
    "interpolate: nearest with align_corners":
        lambda: F.interpolate(ones(1, 3, 2, 2), size=(4, 4), mode="nearest", align_corners=True),
    "group_norm: channels not divisible by groups": lambda: F.group_norm(ones(2, 6, 3, 3), 4),
    "batch_norm: training on one value per channel":
        lambda: F.batch_norm(ones(1, 3, 1, 1), ones(3), ones(3), training=True),
    "rms_norm: input not ending with normalized_shape": lambda: F.rms_norm(ones(2, 3, 4, 5), (4,), ones(4)),
}


def check_refused():
    for name, call in REFUSED.items():
        try:
            call()
        except (RuntimeError, ValueError):
            continue
        raise AssertionError(f"torch no longer refuses {name}")


def run(call, inputs, stats, dtype):
    """torch's output, indices, gradients of sum(out * dy) and running stats after, in dtype."""
    xs = [x.to(dtype).requires_grad_(True) for x in inputs]
    st = [s.to(dtype).clone() for s in stats] if stats is not None else None
    result = call(xs, st)
    out, indices = result if isinstance(result, tuple) else (result, None)
    return out, indices, xs, st


def main():
    check_refused()
    torch.manual_seed(42)
    tensors, described = {}, {}
    for precision, dtype in (("f64", torch.float64), ("f32", torch.float32)):
        # cases() draws fresh inputs on each pass; they are rounded to the precision, and the
        # float64 reference runs on those same values
        for name, inputs, stats, call, text in cases():
            described[name] = text
            key = f"{precision}.{name}"
            xs = [x.to(dtype).to(D) for x in inputs]
            st = [s.to(dtype).to(D) for s in stats] if stats is not None else None
            out, indices, leaves, st_after = run(call, xs, st, D)
            dy = rnd(*out.shape).to(dtype).to(D)
            grads = torch.autograd.grad((out * dy).sum(), leaves)
            for k, (x, g) in enumerate(zip(xs, grads)):
                tensors[f"{key}.in{k}"] = x.to(dtype)
                tensors[f"{key}.grad{k}"] = g
            tensors[f"{key}.dy"] = dy.to(dtype)
            tensors[f"{key}.out"] = out
            if indices is not None:
                tensors[f"{key}.indices"] = indices
            if st is not None:
                tensors[f"{key}.running_mean"], tensors[f"{key}.running_var"] = (s.to(dtype) for s in st)
                tensors[f"{key}.running_mean_out"], tensors[f"{key}.running_var_out"] = st_after
            if dtype == torch.float32:
                out32, indices32, leaves32, st32 = run(call, xs, st, dtype)
                if indices is not None:
                    assert torch.equal(indices32, indices), f"{key}: float32 picks other maxima"
                grads32 = torch.autograd.grad((out32 * dy.to(dtype)).sum(), leaves32)
                tensors[f"{key}.out_f32"] = out32
                for k, g in enumerate(grads32):
                    tensors[f"{key}.grad{k}_f32"] = g
                if st32 is not None:
                    tensors[f"{key}.running_mean_out_f32"], tensors[f"{key}.running_var_out_f32"] = st32
    os.makedirs(os.path.join(HERE, "vision"), exist_ok=True)
    path = os.path.join(HERE, "vision", "ops.safetensors")
    save_file({k: v.detach().contiguous() for k, v in tensors.items()}, path,
              metadata={"source": "make_vision_golden.py", "torch": torch.__version__, "cases": json.dumps(described)})
    print(f"wrote {path}: {len(described)} cases, {os.path.getsize(path) // 1024} KiB")


if __name__ == "__main__":
    main()
