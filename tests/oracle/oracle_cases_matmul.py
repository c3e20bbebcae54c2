"""Oracle cases: dot and convolution.

At DEFAULT precision on the TPU, dots and convolutions take bf16-rounded
operands (the MXU's single bf16 pass) and accumulate in f32: references round
the operands to bf16 (nearest even) and sum in f64, and the bound,
K * 2^-24 * sum|a*b| for K products, is hundreds of times tighter than the
error unrounded f32 operands would give. Under --numerics ieee the reference
is the f64 result, within one f32 rounding.
"""
import numpy as np

import oracle_refs as R
from oracle_harness import Ref, Tol, case_adder, f64, normal

CASES = []
case = case_adder(CASES)
F32 = np.float32


def bf16_round(x):
    """The MXU's DEFAULT precision: operands rounded to bf16 (nearest even)."""
    return R.f32_of(R.bf16(x))


def dot_ref(subscripts, round_operands):
    """einsum reference in f64, with sum|terms| as the scale."""
    def expect(a, b):
        a = R.f32_of(a) if a.dtype == R.BF16_DTYPE else a
        b = R.f32_of(b) if b.dtype == R.BF16_DTYPE else b
        if round_operands:
            a, b = bf16_round(a), bf16_round(b)
        return Ref(np.einsum(subscripts, f64(a), f64(b)),
                   np.einsum(subscripts, np.abs(f64(a)), np.abs(f64(b))))
    return expect


MATMUL = """
a = f32[8,32] parameter(0)
b = f32[32,12] parameter(1)
ROOT d = f32[8,12] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"""


def matmul_inputs(r):
    return [normal(r, 8, 32), normal(r, 32, 12)]


case("dot_f32_default_is_bf16_pass", MATMUL, matmul_inputs, dot_ref("ik,kj->ij", True),
     Tol(sums=32))
case("dot_f32_highest", MATMUL + ", operand_precision={highest,highest}", matmul_inputs,
     dot_ref("ik,kj->ij", False), Tol(sums=40))
case("dot_f32_ieee", MATMUL, matmul_inputs, dot_ref("ik,kj->ij", False), Tol(ulps=1, sums=1),
     numerics="ieee")
case("dot_batch_dims", """
a = f32[3,4,16] parameter(0)
b = f32[3,16,5] parameter(1)
ROOT d = f32[3,4,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}""",
     lambda r: [normal(r, 3, 4, 16), normal(r, 3, 16, 5)], dot_ref("bik,bkj->bij", True),
     Tol(sums=16))
case("dot_two_contracting_dims", """
a = f32[6,4,5] parameter(0)
b = f32[4,5,7] parameter(1)
ROOT d = f32[6,7] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}""",
     lambda r: [normal(r, 6, 4, 5), normal(r, 4, 5, 7)], dot_ref("ikl,klj->ij", True),
     Tol(sums=20))
case("dot_bf16_operands_f32_result", """
a = bf16[8,64] parameter(0)
b = bf16[64,8] parameter(1)
ROOT d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""",
     lambda r: [R.bf16(normal(r, 8, 64)), R.bf16(normal(r, 64, 8))],
     dot_ref("ik,kj->ij", False), Tol(sums=64))
case("dot_bf16_result", """
a = bf16[8,64] parameter(0)
b = bf16[64,8] parameter(1)
ROOT d = bf16[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""",
     lambda r: [R.bf16(normal(r, 8, 64)), R.bf16(normal(r, 64, 8))],
     dot_ref("ik,kj->ij", False), Tol(ulps=1, sums=64), out_type="bf16")
case("dot_k300_spans_tiles", """
a = f32[4,300] parameter(0)
b = f32[300,3] parameter(1)
ROOT d = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""",
     lambda r: [normal(r, 4, 300), normal(r, 300, 3)], dot_ref("ik,kj->ij", True),
     Tol(sums=300))
case("dot_vector_matrix_ieee", """
a = f32[32] parameter(0)
b = f32[32,5] parameter(1)
ROOT d = f32[5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}""",
     lambda r: [normal(r, 32), normal(r, 32, 5)], dot_ref("k,kj->j", False),
     Tol(ulps=1, sums=1), numerics="ieee")
case("dot_s32", """
a = s32[5,7] parameter(0)
b = s32[7,3] parameter(1)
ROOT d = s32[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""",
     lambda r: [r.integers(-1000, 1000, (5, 7)).astype(np.int32),
                r.integers(-1000, 1000, (7, 3)).astype(np.int32)],
     lambda a, b: (a.astype(np.int64) @ b).astype(np.int32))



# --- ragged-dot ------------------------------------------------------------------------------
def group_masks(sizes, length):
    """[..., g, length] 0/1 masks: index i is in group g when the sizes before
    g sum to at most i and with g's own size to more than i (XLA's dense
    rewrite of ragged-dot)."""
    ends = np.cumsum(sizes, axis=-1)
    starts = ends - sizes
    i = np.arange(length)
    return ((starts[..., None] <= i) & (i < ends[..., None])).astype(np.float64)


def ragged_rows_ref(round_operands):
    """a[b,x,m,k], w[g,b,k,n], sizes[b,x,g]: row m of group g takes w[g]."""
    def expect(a, w, sizes):
        if round_operands:
            a, w = bf16_round(a), bf16_round(w)
        masks = group_masks(sizes, a.shape[2])  # [b,x,g,m]
        return Ref(np.einsum("bxgm,bxmk,gbkn->bxmn", masks, f64(a), f64(w)),
                   np.einsum("bxgm,bxmk,gbkn->bxmn", masks, np.abs(f64(a)), np.abs(f64(w))))
    return expect


def ragged_depth_ref(a, b, sizes):
    """a[m,x,k], b[x,k,n], sizes[x,g]: result g sums over group g's k only."""
    masks = group_masks(sizes, a.shape[2])  # [x,g,k]
    return Ref(np.einsum("xgk,mxk,xkn->gmn", masks, f64(a), f64(b)),
               np.einsum("xgk,mxk,xkn->gmn", masks, np.abs(f64(a)), np.abs(f64(b))))


case("ragged_dot_rows_default", """
a = f32[2,3,9,16] parameter(0)
w = f32[4,2,16,5] parameter(1)
s = s32[2,3,4] parameter(2)
ROOT r = f32[2,3,9,5] ragged-dot(a, w, s), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_ragged_dims={2}, rhs_group_dims={0}""",
     lambda r: [normal(r, 2, 3, 9, 16), normal(r, 4, 2, 16, 5),
                r.integers(0, 4, (2, 3, 4)).astype(np.int32)],
     ragged_rows_ref(True), Tol(sums=16))
case("ragged_dot_depth_ieee", """
a = f32[6,3,20] parameter(0)
b = f32[3,20,4] parameter(1)
s = s64[3,3] parameter(2)
ROOT r = f32[3,6,4] ragged-dot(a, b, s), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}, lhs_ragged_dims={2}""",
     lambda r: [normal(r, 6, 3, 20), normal(r, 3, 20, 4), r.integers(0, 8, (3, 3)).astype(np.int64)],
     ragged_depth_ref, Tol(ulps=1, sums=1), numerics="ieee")

# --- convolution ----------------------------------------------------------------------------
def conv_ref(round_operands, **window):
    def expect(lhs, rhs):
        lhs = R.f32_of(lhs) if lhs.dtype == R.BF16_DTYPE else lhs
        rhs = R.f32_of(rhs) if rhs.dtype == R.BF16_DTYPE else rhs
        if round_operands:
            lhs, rhs = bf16_round(lhs), bf16_round(rhs)
        return Ref(*R.conv2d(lhs, rhs, **window))
    return expect


def conv_case(name, lhs, rhs, out, attrs, tol, numerics="tpu", ty="f32", out_ty="f32", **window):
    shape = lambda s: ",".join(map(str, s))  # noqa: E731
    text = f"""
l = {ty}[{shape(lhs)}] parameter(0)
k = {ty}[{shape(rhs)}] parameter(1)
ROOT c = {out_ty}[{shape(out)}] convolution(l, k), {attrs}, dim_labels=b01f_01io->b01f"""
    wrap = R.bf16 if ty == "bf16" else (lambda x: x)
    case(name, text, lambda r: [wrap(normal(r, *lhs)), wrap(normal(r, *rhs))],
         conv_ref(numerics == "tpu" and ty == "f32", **window), tol, numerics=numerics,
         out_type="bf16" if out_ty == "bf16" else None)


conv_case("conv_nhwc_padding_stride", (2, 7, 7, 3), (3, 3, 3, 4), (2, 4, 4, 4),
          "window={size=3x3 stride=2x2 pad=1_1x1_1}", Tol(sums=27),
          stride=(2, 2), padding=((1, 1), (1, 1)))
conv_case("conv_lhs_dilation_ieee", (1, 4, 4, 2), (2, 2, 2, 3), (1, 8, 8, 3),
          "window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2}", Tol(ulps=1, sums=1), numerics="ieee",
          padding=((1, 1), (1, 1)), lhs_dilation=(2, 2))
conv_case("conv_rhs_dilation", (1, 8, 8, 2), (3, 3, 2, 2), (1, 4, 4, 2),
          "window={size=3x3 rhs_dilate=2x2}", Tol(sums=18), rhs_dilation=(2, 2))
conv_case("conv_negative_padding", (1, 6, 6, 2), (2, 2, 2, 3), (1, 4, 6, 3),
          "window={size=2x2 pad=-1_0x0_1}", Tol(sums=8), padding=((-1, 0), (0, 1)))
conv_case("conv_feature_group_count", (1, 5, 5, 4), (3, 3, 2, 6), (1, 3, 3, 6),
          "window={size=3x3}, feature_group_count=2", Tol(sums=18), feature_groups=2)
conv_case("conv_depthwise", (2, 5, 5, 3), (3, 3, 1, 3), (2, 5, 5, 3),
          "window={size=3x3 pad=1_1x1_1}, feature_group_count=3", Tol(sums=9),
          padding=((1, 1), (1, 1)), feature_groups=3)
conv_case("conv_batch_group_count", (2, 5, 5, 3), (3, 3, 3, 4), (1, 3, 3, 4),
          "window={size=3x3}, batch_group_count=2", Tol(sums=27), batch_groups=2)
# Groups of two batches each: output feature f reads batches of group f // 3.
conv_case("conv_batch_group_count_multi_batch", (4, 4, 4, 2), (2, 2, 2, 6), (2, 3, 3, 6),
          "window={size=2x2}, batch_group_count=2", Tol(sums=8), batch_groups=2)
conv_case("conv_bf16_1x1", (2, 4, 4, 8), (1, 1, 8, 4), (2, 4, 4, 4), "window={size=1x1}",
          Tol(ulps=1, sums=8), ty="bf16", out_ty="bf16")


def nchw_conv(lhs, rhs):
    """dim_labels bf01_oi01->bf01: the same convolution in NCHW / OIHW layout."""
    value, scale = R.conv2d(lhs.transpose(0, 2, 3, 1), rhs.transpose(2, 3, 1, 0),
                            padding=((1, 1), (1, 1)))
    return Ref(value.transpose(0, 3, 1, 2), scale.transpose(0, 3, 1, 2))


case("conv_nchw_dim_labels_ieee", """
l = f32[2,3,6,6] parameter(0)
k = f32[4,3,3,3] parameter(1)
ROOT c = f32[2,4,6,6] convolution(l, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01""",
     lambda r: [normal(r, 2, 3, 6, 6), normal(r, 4, 3, 3, 3)], nchw_conv, Tol(ulps=1, sums=1),
     numerics="ieee")

case("dot_batch_dim_not_leading", """
a = f32[4,2,8] parameter(0)
b = f32[8,2,3] parameter(1)
ROOT d = f32[2,4,3] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}""",
     lambda r: [normal(r, 4, 2, 8), normal(r, 8, 2, 3)], dot_ref("ibk,kbj->bij", True),
     Tol(sums=8))
case("dot_rhs_contracting_last", """
a = f32[6,16] parameter(0)
b = f32[5,16] parameter(1)
ROOT d = f32[6,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}""",
     lambda r: [normal(r, 6, 16), normal(r, 5, 16)], dot_ref("ik,jk->ij", True), Tol(sums=16))


def conv1d(lhs, rhs):
    """b0f_0io->b0f: the 2-D reference with a height of 1."""
    value, scale = R.conv2d(bf16_round(lhs)[:, None], bf16_round(rhs)[None], stride=(1, 2),
                            padding=((0, 0), (1, 1)))
    return Ref(value[:, 0], scale[:, 0])


case("conv_1d_stride_padding", """
l = f32[2,10,3] parameter(0)
k = f32[3,3,4] parameter(1)
ROOT c = f32[2,5,4] convolution(l, k), window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f""",
     lambda r: [normal(r, 2, 10, 3), normal(r, 3, 3, 4)], conv1d, Tol(sums=9))


def conv_nchw_output(lhs, rhs):
    value, scale = R.conv2d(bf16_round(lhs), bf16_round(rhs), stride=(1, 2),
                            rhs_dilation=(2, 1))
    return Ref(value.transpose(0, 3, 1, 2), scale.transpose(0, 3, 1, 2))


case("conv_output_dim_labels_differ", """
l = f32[2,7,7,3] parameter(0)
k = f32[2,3,3,4] parameter(1)
ROOT c = f32[2,4,5,3] convolution(l, k), window={size=2x3 stride=1x2 rhs_dilate=2x1}, dim_labels=b01f_01io->bf01""",
     lambda r: [normal(r, 2, 7, 7, 3), normal(r, 2, 3, 3, 4)], conv_nchw_output, Tol(sums=18))


case("dot_s8_operands_s32_result", """
a = s8[4,16] parameter(0)
b = s8[16,5] parameter(1)
ROOT d = s32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""",
     lambda r: [r.integers(-128, 128, (4, 16)).astype(np.int8),
                r.integers(-128, 128, (16, 5)).astype(np.int8)],
     lambda a, b: (a.astype(np.int64) @ b).astype(np.int32))
case("dot_f16_default_is_bf16_pass", """
a = f16[6,24] parameter(0)
b = f16[24,4] parameter(1)
ROOT d = f16[6,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""",
     lambda r: [normal(r, 6, 24).astype(np.float16), normal(r, 24, 4).astype(np.float16)],
     dot_ref("ik,kj->ij", True), Tol(ulps=1, sums=24), out_type="float16")

case("dot_empty_contraction_is_zero", """
a = f32[2,0] parameter(0)
b = f32[0,3] parameter(1)
ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""",
     lambda r: [np.zeros((2, 0), F32), np.zeros((0, 3), F32)], lambda a, b: np.zeros((2, 3), F32))


# --- dimension numbers in every position -------------------------------------------------------
case("dot_lhs_contracting_first", """
a = f32[16,6] parameter(0)
b = f32[16,5] parameter(1)
ROOT d = f32[6,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}""",
     lambda r: [normal(r, 16, 6), normal(r, 16, 5)], dot_ref("ki,kj->ij", True), Tol(sums=16))
case("dot_two_batch_dims", """
a = f32[2,3,4,8] parameter(0)
b = f32[2,3,8,5] parameter(1)
ROOT d = f32[2,3,4,5] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}""",
     lambda r: [normal(r, 2, 3, 4, 8), normal(r, 2, 3, 8, 5)], dot_ref("abik,abkj->abij", True),
     Tol(sums=8))
case("dot_vector_vector_scalar", """
a = f32[64] parameter(0)
b = f32[64] parameter(1)
ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}""",
     lambda r: [normal(r, 64), normal(r, 64)], dot_ref("k,k->", True), Tol(sums=64))
case("dot_batch_outer_product_no_contraction", """
a = f32[3,4] parameter(0)
b = f32[3,5] parameter(1)
ROOT d = f32[3,4,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}""",
     lambda r: [normal(r, 3, 4), normal(r, 3, 5)], dot_ref("bi,bj->bij", True), Tol(sums=1))


def reversed_kernel(lhs, rhs):
    """rhs_reversal=1x0: the kernel is mirrored along its first spatial dimension."""
    return Ref(*R.conv2d(bf16_round(lhs), bf16_round(rhs)[::-1], padding=((1, 1), (0, 0))))


case("conv_window_reversal", """
l = f32[1,5,5,2] parameter(0)
k = f32[3,3,2,2] parameter(1)
ROOT c = f32[1,5,3,2] convolution(l, k), window={size=3x3 pad=1_1x0_0 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f""",
     lambda r: [normal(r, 1, 5, 5, 2), normal(r, 3, 3, 2, 2)], reversed_kernel, Tol(sums=18))


def kernel_01oi(lhs, rhs):
    return Ref(*R.conv2d(bf16_round(lhs), bf16_round(rhs).transpose(0, 1, 3, 2), stride=(2, 1)))


case("conv_kernel_labels_01oi", """
l = f32[2,6,4,3] parameter(0)
k = f32[2,2,5,3] parameter(1)
ROOT c = f32[2,3,3,5] convolution(l, k), window={size=2x2 stride=2x1}, dim_labels=b01f_01oi->b01f""",
     lambda r: [normal(r, 2, 6, 4, 3), normal(r, 2, 2, 5, 3)], kernel_01oi, Tol(sums=12))


def feature_major(lhs, rhs):
    """f01b_i01o->01bf: lhs [C,H,W,N], rhs [I,KH,KW,O], out [OH,OW,N,O]."""
    value, scale = R.conv2d(bf16_round(lhs).transpose(3, 1, 2, 0),
                            bf16_round(rhs).transpose(1, 2, 0, 3), padding=((0, 1), (1, 0)))
    return Ref(value.transpose(1, 2, 0, 3), scale.transpose(1, 2, 0, 3))


case("conv_feature_major_input_labels", """
l = f32[3,5,4,2] parameter(0)
k = f32[3,2,2,4] parameter(1)
ROOT c = f32[5,4,2,4] convolution(l, k), window={size=2x2 pad=0_1x1_0}, dim_labels=f01b_i01o->01bf""",
     lambda r: [normal(r, 3, 5, 4, 2), normal(r, 3, 2, 2, 4)], feature_major, Tol(sums=12))


# --- precision and algorithm attributes ----------------------------------------------------------
# HIGH is three bf16 passes (x0*y0 + x0*y1 + x1*y0 of the bf16 pieces): the dropped
# terms are below 2^-16 of each product, so 3 * 256 * 2^-24 per product on top of
# the f32 accumulation; DEFAULT's single pass would be ~2^-9, 64 times more.
case("dot_f32_high_three_passes", MATMUL + ", operand_precision={high,high}", matmul_inputs,
     dot_ref("ik,kj->ij", False), Tol(sums=32 + 768))
case("dot_algorithm_bf16_one_pass", MATMUL + ", algorithm=dot_bf16_bf16_f32", matmul_inputs,
     dot_ref("ik,kj->ij", True), Tol(sums=32))
case("dot_algorithm_bf16_six_passes", MATMUL + ", algorithm=dot_bf16_bf16_f32_x6",
     matmul_inputs, dot_ref("ik,kj->ij", False), Tol(sums=40))
case("conv_highest_precision", """
l = f32[1,6,6,4] parameter(0)
k = f32[3,3,4,2] parameter(1)
ROOT c = f32[1,4,4,2] convolution(l, k), window={size=3x3}, dim_labels=b01f_01io->b01f, operand_precision={highest,highest}""",
     lambda r: [normal(r, 1, 6, 6, 4), normal(r, 3, 3, 4, 2)], conv_ref(False), Tol(sums=44))
