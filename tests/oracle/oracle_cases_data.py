"""Oracle cases: data movement, reductions, windows, gather, scatter, sort,
top-k and control flow.

Sums of floats have no fixed order in XLA's semantics, so their references
are f64 sums with the bound of any summation order: n terms in f32 move the
result by at most n * 2^-24 * sum|terms| (Tol.sums = n).
"""
import numpy as np

import oracle_refs as R
from oracle_harness import Ref, Tol, case_adder, f64, normal

CASES = []
case = case_adder(CASES)
F32 = np.float32


def scalar_computation(name, ty, root):
    return f"""{name} {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT r = {root}
}}"""


ADD_F32 = scalar_computation("add_f32", "f32", "f32[] add(a, b)")
ADD_S32 = scalar_computation("add_s32", "s32", "s32[] add(a, b)")
MAX_F32 = scalar_computation("max_f32", "f32", "f32[] maximum(a, b)")
SECOND_F32 = scalar_computation("second_f32", "f32", "f32[] copy(b)")  # overwrite
GE_F32 = scalar_computation("ge_f32", "f32", "pred[] compare(a, b), direction=GE")
LT_F32 = scalar_computation("lt_f32", "f32", "pred[] compare(a, b), direction=LT")
GT_S32 = scalar_computation("gt_s32", "s32", "pred[] compare(a, b), direction=GT")
LT_TOTAL_F32 = scalar_computation("lt_total", "f32",
                                  "pred[] compare(a, b), direction=LT, type=TOTALORDER")

# --- data movement ---------------------------------------------------------------------
case("iota_two_dimensions", """
i0 = s32[4,6] iota(), iota_dimension=1
i1 = f32[4,6] iota(), iota_dimension=0
ROOT t = (s32[4,6], f32[4,6]) tuple(i0, i1)""", lambda r: [],
     lambda: [np.broadcast_to(np.arange(6, dtype=np.int32), (4, 6)),
              np.broadcast_to(np.arange(4, dtype=F32)[:, None], (4, 6))])
case("broadcast_middle_dimension", """
p = f32[3] parameter(0)
ROOT b = f32[2,3,4] broadcast(p), dimensions={1}""", lambda r: [normal(r, 3)],
     lambda p: np.broadcast_to(p[None, :, None], (2, 3, 4)))
case("reshape_row_major", """
p = f32[4,6] parameter(0)
ROOT b = f32[2,3,4] reshape(p)""", lambda r: [normal(r, 4, 6)], lambda p: p.reshape(2, 3, 4))
case("transpose_3d", """
p = f32[2,3,4] parameter(0)
ROOT t = f32[4,2,3] transpose(p), dimensions={2,0,1}""", lambda r: [normal(r, 2, 3, 4)],
     lambda p: np.transpose(p, (2, 0, 1)))
case("slice_with_strides", """
p = f32[10,8] parameter(0)
ROOT s = f32[3,4] slice(p), slice={[1:9:3], [0:8:2]}""", lambda r: [normal(r, 10, 8)],
     lambda p: p[1:9:3, 0:8:2])


def clamped(start, dim, size):
    """XLA clamps dynamic-slice and dynamic-update-slice starts to [0, dim - size]."""
    return int(np.clip(start, 0, dim - size))


case("dynamic_slice_clamps_starts", """
p = f32[8,6] parameter(0)
i = s32[] parameter(1)
j = s32[] parameter(2)
ROOT s = f32[3,4] dynamic-slice(p, i, j), dynamic_slice_sizes={3,4}""",
     lambda r: [normal(r, 8, 6), np.int32(7), np.int32(-2)],
     lambda p, i, j: p[clamped(i, 8, 3):clamped(i, 8, 3) + 3, clamped(j, 6, 4):clamped(j, 6, 4) + 4])


def update_slice(p, u, i, j):
    out = p.copy()
    i, j = clamped(i, p.shape[0], u.shape[0]), clamped(j, p.shape[1], u.shape[1])
    out[i:i + u.shape[0], j:j + u.shape[1]] = u
    return out


case("dynamic_update_slice_clamps_starts", """
p = f32[8,6] parameter(0)
u = f32[3,4] parameter(1)
i = s32[] parameter(2)
j = s32[] parameter(3)
ROOT s = f32[8,6] dynamic-update-slice(p, u, i, j)""",
     lambda r: [normal(r, 8, 6), normal(r, 3, 4), np.int32(2), np.int32(5)], update_slice)
case("pad_negative_and_interior", """
p = f32[4,5] parameter(0)
v = f32[] parameter(1)
ROOT q = f32[10,10] pad(p, v), padding=1_-1_2x-2_3_1""",
     lambda r: [normal(r, 4, 5), F32(-7.5)],
     lambda p, v: R.xla_pad(p, v, [(1, -1, 2), (-2, 3, 1)]))
case("concatenate_three", """
a = f32[2,3] parameter(0)
b = f32[4,3] parameter(1)
c = f32[1,3] parameter(2)
ROOT k = f32[7,3] concatenate(a, b, c), dimensions={0}""",
     lambda r: [normal(r, 2, 3), normal(r, 4, 3), normal(r, 1, 3)],
     lambda a, b, c: np.concatenate([a, b, c]))
case("reverse_two_dimensions", """
p = f32[3,4,5] parameter(0)
ROOT v = f32[3,4,5] reverse(p), dimensions={0,2}""", lambda r: [normal(r, 3, 4, 5)],
     lambda p: p[::-1, :, ::-1])

# --- reductions and windows ---------------------------------------------------------------
case("reduce_sum_f32_rows", ("""
p = f32[16,200] parameter(0)
z = f32[] constant(0)
ROOT s = f32[16] reduce(p, z), dimensions={1}, to_apply=add_f32""", ADD_F32),
     lambda r: [normal(r, 16, 200)],
     lambda p: Ref(f64(p).sum(1), np.abs(f64(p)).sum(1)), Tol(sums=200))
case("reduce_max_two_dimensions", ("""
p = f32[3,4,5] parameter(0)
z = f32[] constant(-inf)
ROOT s = f32[4] reduce(p, z), dimensions={0,2}, to_apply=max_f32""", MAX_F32),
     lambda r: [normal(r, 3, 4, 5)], lambda p: p.max(axis=(0, 2)))
case("reduce_sum_s32_all_wraps", ("""
p = s32[6,7] parameter(0)
z = s32[] constant(0)
ROOT s = s32[] reduce(p, z), dimensions={0,1}, to_apply=add_s32""", ADD_S32),
     lambda r: [r.integers(-2**31, 2**31, (6, 7)).astype(np.int32)],
     lambda p: R.wrap(p.astype(np.int64).sum(), np.int32))
ARGMAX = """argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lower)
  take_a = pred[] or(gt, tie)
  v = f32[] select(take_a, a, b)
  i = s32[] select(take_a, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}"""
case("reduce_variadic_argmax_first_of_ties", ("""
p = f32[5,12] parameter(0)
idx = s32[5,12] iota(), iota_dimension=1
v0 = f32[] constant(-inf)
i0 = s32[] constant(0)
ROOT r = (f32[5], s32[5]) reduce(p, idx, v0, i0), dimensions={1}, to_apply=argmax""", ARGMAX),
     lambda r: [r.integers(0, 6, (5, 12)).astype(F32)],
     lambda p: [p.max(1), p.argmax(1).astype(np.int32)])
case("reduce_window_max_pool", ("""
p = f32[1,6,6,2] parameter(0)
z = f32[] constant(-inf)
ROOT m = f32[1,3,3,2] reduce-window(p, z), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max_f32""",
                                MAX_F32),
     lambda r: [normal(r, 1, 6, 6, 2)],
     lambda p: R.reduce_window(p, -np.inf, np.max, (1, 2, 2, 1), (1, 2, 2, 1), [(0, 0)] * 4))
case("reduce_window_sum_padded_strided", ("""
p = f32[7,9] parameter(0)
z = f32[] constant(0)
ROOT m = f32[4,5] reduce-window(p, z), window={size=3x2 stride=2x2 pad=1_1x0_1}, to_apply=add_f32""",
                                          ADD_F32),
     lambda r: [normal(r, 7, 9)],
     lambda p: Ref(R.reduce_window(f64(p), 0.0, np.sum, (3, 2), (2, 2), [(1, 1), (0, 1)]),
                   R.reduce_window(np.abs(f64(p)), 0.0, np.sum, (3, 2), (2, 2), [(1, 1), (0, 1)])),
     Tol(sums=6))


def select_and_scatter(size, stride, padding):
    def expect(operand, source):
        value, scale = R.select_and_scatter_ge_add(f64(operand), f64(source), size, stride,
                                                   padding)
        return Ref(value, scale)
    return expect


case("select_and_scatter_max_pool_gradient", ("""
p = f32[6,8] parameter(0)
g = f32[3,4] parameter(1)
z = f32[] constant(0)
ROOT s = f32[6,8] select-and-scatter(p, g, z), window={size=2x2 stride=2x2}, select=ge_f32, scatter=add_f32""",
                                              GE_F32, ADD_F32),
     lambda r: [normal(r, 6, 8), normal(r, 3, 4)],
     select_and_scatter((2, 2), (2, 2), [(0, 0), (0, 0)]), Tol(sums=1))
case("select_and_scatter_overlapping_padded", ("""
p = f32[5,5] parameter(0)
g = f32[3,3] parameter(1)
z = f32[] constant(0)
ROOT s = f32[5,5] select-and-scatter(p, g, z), window={size=3x3 stride=2x2 pad=1_1x1_1}, select=ge_f32, scatter=add_f32""",
                                               GE_F32, ADD_F32),
     lambda r: [normal(r, 5, 5), normal(r, 3, 3)],
     select_and_scatter((3, 3), (2, 2), [(1, 1), (1, 1)]), Tol(sums=9))


# --- gather and scatter ------------------------------------------------------------------------
case("gather_embedding_lookup", """
t = f32[10,4] parameter(0)
i = s32[5] parameter(1)
ROOT g = f32[5,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}""",
     lambda r: [normal(r, 10, 4), r.integers(0, 10, 5).astype(np.int32)], lambda t, i: t[i])


def gather_windows(t, idx):
    """Slices [2,3] at (row, col) starts clamped into the operand (XLA gather clamps)."""
    out = []
    for row, col in idx:
        row, col = clamped(row, 5, 2), clamped(col, 6, 3)
        out.append(t[row:row + 2, col:col + 3, 0])
    return np.stack(out)


case("gather_two_index_dims_clamped", """
t = f32[5,6,3] parameter(0)
i = s32[4,2] parameter(1)
ROOT g = f32[4,2,3] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={2}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3,1}""",
     lambda r: [normal(r, 5, 6, 3), r.integers(-2, 8, (4, 2)).astype(np.int32)], gather_windows)
SCATTER_ROWS = "update_window_dims={1}, inserted_window_dims={0}, " \
               "scatter_dims_to_operand_dims={0}, index_vector_dim=1"


def scatter_add(o, i, u, scale=False):
    """Rows of u added at rows i; an index outside the operand skips its update."""
    out = f64(np.abs(o) if scale else o).copy() if o.dtype.kind == "f" else o.astype(np.int64)
    for row, update in zip(i, u):
        if 0 <= row < o.shape[0]:
            out[row] += np.abs(update) if scale else update
    return out


case("scatter_add_s32_duplicates_and_out_of_bounds", (f"""
o = s32[6,3] parameter(0)
i = s32[12] parameter(1)
u = s32[12,3] parameter(2)
ROOT s = s32[6,3] scatter(o, i, u), {SCATTER_ROWS}, to_apply=add_s32""", ADD_S32),
     lambda r: [r.integers(-99, 99, (6, 3)).astype(np.int32),
                np.concatenate([r.integers(0, 3, 10), [6, -1]]).astype(np.int32),
                r.integers(-99, 99, (12, 3)).astype(np.int32)],
     lambda o, i, u: scatter_add(o, i, u).astype(np.int32))
case("scatter_add_f32_duplicates", (f"""
o = f32[6,3] parameter(0)
i = s32[10] parameter(1)
u = f32[10,3] parameter(2)
ROOT s = f32[6,3] scatter(o, i, u), {SCATTER_ROWS}, to_apply=add_f32""", ADD_F32),
     lambda r: [normal(r, 6, 3), r.integers(0, 3, 10).astype(np.int32), normal(r, 10, 3)],
     lambda o, i, u: Ref(scatter_add(o, i, u), scatter_add(o, i, u, scale=True)), Tol(sums=11))


def signed_zero_and_nan(r):
    """Updates whose bits must arrive unchanged: -0 and NaN among normals."""
    u = normal(r, 4, 3)
    u[0, :2] = [-0.0, np.nan]
    return u


def overwrite(o, i, u):
    out = o.copy()
    out[i] = u
    return out


case("scatter_overwrite_unique_indices", (f"""
o = f32[6,3] parameter(0)
i = s32[4] parameter(1)
u = f32[4,3] parameter(2)
ROOT s = f32[6,3] scatter(o, i, u), {SCATTER_ROWS}, to_apply=second_f32""", SECOND_F32),
     lambda r: [normal(r, 6, 3), r.permutation(6)[:4].astype(np.int32), signed_zero_and_nan(r)],
     overwrite)

# --- sort and top-k ------------------------------------------------------------------------------
case("sort_f32_ascending", ("""
p = f32[50] parameter(0)
ROOT s = f32[50] sort(p), dimensions={0}, to_apply=lt_f32""", LT_F32),
     lambda r: [normal(r, 50)], np.sort)
case("sort_s32_descending_along_dim1", ("""
p = s32[4,20] parameter(0)
ROOT s = s32[4,20] sort(p), dimensions={1}, to_apply=gt_s32""", GT_S32),
     lambda r: [r.integers(-50, 50, (4, 20)).astype(np.int32)], lambda p: -np.sort(-p, axis=1))
KEY_LT = """key_lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  va = f32[] parameter(2)
  vb = f32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}"""


def stable_by_key(k, v):
    order = np.argsort(k, kind="stable")
    return [k[order], v[order]]


case("sort_key_value_stable", ("""
k = s32[40] parameter(0)
v = f32[40] parameter(1)
ROOT s = (s32[40], f32[40]) sort(k, v), dimensions={0}, is_stable=true, to_apply=key_lt""",
                               KEY_LT),
     lambda r: [r.integers(0, 5, 40).astype(np.int32), normal(r, 40)], stable_by_key)


def total_order_inputs(r):
    x = normal(r, 24)
    x[:6] = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf]
    return [x]


case("sort_f32_total_order_nan_and_zeros", ("""
p = f32[24] parameter(0)
ROOT s = f32[24] sort(p), dimensions={0}, to_apply=lt_total""", LT_TOTAL_F32),
     total_order_inputs, lambda x: x[np.argsort(R.total_order_key(x), kind="stable")])


def top3(x):
    order = np.argsort(-x, axis=1, kind="stable")[:, :3]
    return [np.take_along_axis(x, order, 1), order.astype(np.int32)]


case("topk_largest", """
p = f32[3,10] parameter(0)
ROOT t = (f32[3,3], s32[3,3]) topk(p), k=3, largest=true""", lambda r: [normal(r, 3, 10)], top3)

# --- control flow and computations ------------------------------------------------------------
MUL_ADD_ONE = """mul_add_one {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] multiply(a, b)
  one = f32[] constant(1)
  ROOT r = f32[] add(m, one)
}"""
case("map_scalar_computation", ("""
a = f32[16] parameter(0)
b = f32[16] parameter(1)
ROOT m = f32[16] map(a, b), dimensions={0}, to_apply=mul_add_one""", MUL_ADD_ONE),
     lambda r: [normal(r, 16), normal(r, 16)], lambda a, b: a * b + F32(1))
LOOP = ("""cond {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT c = pred[] compare(i, n), direction=LT
}""", """body {
  s = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[8] get-tuple-element(s), index=1
  x = f32[8] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  half = f32[] constant(0.5)
  halves = f32[8] broadcast(half), dimensions={}
  scaled = f32[8] multiply(acc, halves)
  acc1 = f32[8] add(scaled, x)
  ROOT t = (s32[], f32[8], f32[8]) tuple(i1, acc1, x)
}""")


def loop_reference(x):
    acc = np.zeros(8, F32)
    for _ in range(10):
        acc = acc * F32(0.5) + x
    return [np.int32(10), acc, x]


case("while_loop_ten_iterations", ("""
x = f32[8] parameter(0)
zero = s32[] constant(0)
z = f32[] constant(0)
zeros = f32[8] broadcast(z), dimensions={}
init = (s32[], f32[8], f32[8]) tuple(zero, zeros, x)
ROOT w = (s32[], f32[8], f32[8]) while(init), condition=cond, body=body""", *LOOP),
     lambda r: [normal(r, 8)], loop_reference)
BRANCHES = ("""negate_branch {
  x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x)
}""", """double_branch {
  x = f32[8] parameter(0)
  ROOT d = f32[8] add(x, x)
}""", """square_branch {
  x = f32[8] parameter(0)
  ROOT s = f32[8] multiply(x, x)
}""")
PRED_CONDITIONAL = """
p = pred[] parameter(0)
x = f32[8] parameter(1)
ROOT c = f32[8] conditional(p, x, x), true_computation=negate_branch, false_computation=double_branch"""
for flag in (True, False):
    case(f"conditional_pred_{str(flag).lower()}", (PRED_CONDITIONAL, *BRANCHES[:2]),
         lambda r, flag=flag: [np.bool_(flag), normal(r, 8)],
         lambda p, x: -x if p else x + x)
INDEX_CONDITIONAL = """
b = s32[] parameter(0)
x = f32[8] parameter(1)
ROOT c = f32[8] conditional(b, x, x, x), branch_computations={negate_branch, double_branch, square_branch}"""
for index in (1, -3, 7):  # XLA: an index outside [0, 3) runs the last branch
    case(f"conditional_index_{index}".replace("-", "minus"), (INDEX_CONDITIONAL, *BRANCHES),
         lambda r, index=index: [np.int32(index), normal(r, 8)],
         lambda b, x: [-x, x + x, x * x][b if 0 <= b < 3 else 2])
FUSED = """fused_mul_sub {
  a = f32[16] parameter(0)
  b = f32[16] parameter(1)
  c = f32[16] parameter(2)
  m = f32[16] multiply(a, b)
  ROOT s = f32[16] subtract(m, c)
}"""
case("fusion_loop_kind", ("""
a = f32[16] parameter(0)
b = f32[16] parameter(1)
c = f32[16] parameter(2)
ROOT f = f32[16] fusion(a, b, c), kind=kLoop, calls=fused_mul_sub""", FUSED),
     lambda r: [normal(r, 16), normal(r, 16), normal(r, 16)], lambda a, b, c: a * b - c)
case("call_computation", ("""
a = f32[16] parameter(0)
b = f32[16] parameter(1)
c = f32[16] parameter(2)
ROOT f = f32[16] call(a, b, c), to_apply=fused_mul_sub""", FUSED),
     lambda r: [normal(r, 16), normal(r, 16), normal(r, 16)], lambda a, b, c: a * b - c)
case("tuple_parameter_and_get_tuple_element", """
p = (f32[4], s32[3]) parameter(0)
a = f32[4] get-tuple-element(p), index=0
b = s32[3] get-tuple-element(p), index=1
twice = f32[4] add(a, a)
ROOT t = (s32[3], f32[4]) tuple(b, twice)""",
     lambda r: [(normal(r, 4), r.integers(-9, 9, 3).astype(np.int32))],
     lambda p: [p[1], p[0] + p[0]])

# --- more structure: dimension orders, dilations, window placement -------------------------------
case("copy_and_bitcast", """
p = f32[4,6] parameter(0)
c = f32[4,6] copy(p)
ROOT b = f32[24] bitcast(c)""", lambda r: [normal(r, 4, 6)], lambda p: p.reshape(24))
case("broadcast_scalar_s32", """
p = s32[] parameter(0)
ROOT b = s32[2,3,4] broadcast(p), dimensions={}""", lambda r: [np.int32(-7)],
     lambda p: np.full((2, 3, 4), p, np.int32))
case("reduce_window_base_and_window_dilation", ("""
p = f32[6,5] parameter(0)
z = f32[] constant(-inf)
ROOT m = f32[5,4] reduce-window(p, z), window={size=2x2 stride=2x1 pad=0_0x1_0 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=max_f32""",
                                                MAX_F32),
     lambda r: [normal(r, 6, 5)],
     lambda p: R.reduce_window(p, -np.inf, np.max, (2, 2), (2, 1), [(0, 0), (1, 0)],
                               base_dilation=(2, 1), window_dilation=(1, 2)))
MIN_F32 = scalar_computation("min_f32", "f32", "f32[] minimum(a, b)")
MUL_S32 = scalar_computation("mul_s32", "s32", "s32[] multiply(a, b)")


def rows_with_nan(r):
    x = normal(r, 4, 9)
    x[1, 3] = np.nan
    return [x]


case("reduce_min_propagates_nan", ("""
p = f32[4,9] parameter(0)
z = f32[] constant(inf)
ROOT m = f32[4] reduce(p, z), dimensions={1}, to_apply=min_f32""", MIN_F32),
     rows_with_nan, lambda p: np.min(p, axis=1))
case("reduce_product_s32_wraps", ("""
p = s32[3,10] parameter(0)
one = s32[] constant(1)
ROOT m = s32[10] reduce(p, one), dimensions={0}, to_apply=mul_s32""", MUL_S32),
     lambda r: [r.integers(-2**31, 2**31, (3, 10)).astype(np.int32)],
     lambda p: np.prod(p.astype(np.int64), axis=0).astype(np.int32))
def gather_middle_offset(t, idx):
    """out[b0, k, b1] = t[idx[b0, b1], k]: the offset dimension sits between batch dims."""
    return np.transpose(t[idx], (0, 2, 1))


case("gather_offset_dim_between_batch_dims", """
t = f32[10,4] parameter(0)
i = s32[3,2] parameter(1)
ROOT g = f32[3,4,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,4}""",
     lambda r: [normal(r, 10, 4), r.integers(0, 10, (3, 2)).astype(np.int32)],
     gather_middle_offset)


def scatter_columns(o, i, u):
    out = o.astype(np.int64)
    for j, column in enumerate(i):
        out[:, column] += u[:, j]
    return out.astype(np.int32)


case("scatter_window_dim_first", ("""
o = s32[3,6] parameter(0)
i = s32[5] parameter(1)
u = s32[3,5] parameter(2)
ROOT s = s32[3,6] scatter(o, i, u), update_window_dims={0}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=add_s32""",
                                    ADD_S32),
     lambda r: [r.integers(-99, 99, (3, 6)).astype(np.int32), r.integers(0, 6, 5).astype(np.int32),
                r.integers(-99, 99, (3, 5)).astype(np.int32)], scatter_columns)


def bottom3(x):
    order = np.argsort(x, axis=1, kind="stable")[:, :3]
    return [np.take_along_axis(x, order, 1), order.astype(np.int32)]


case("topk_smallest", """
p = f32[4,9] parameter(0)
ROOT t = (f32[4,3], s32[4,3]) topk(p), k=3, largest=false""", lambda r: [normal(r, 4, 9)],
     bottom3)
GT_KEY_F32 = """gt_key {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=GT
}"""


def descending_columns(k, v):
    order = np.argsort(-k, axis=0, kind="stable")
    return [np.take_along_axis(k, order, 0), np.take_along_axis(v, order, 0)]


case("sort_key_value_descending_dim0", ("""
k = f32[12,3] parameter(0)
v = s32[12,3] iota(), iota_dimension=0
ROOT s = (f32[12,3], s32[12,3]) sort(k, v), dimensions={0}, to_apply=gt_key""", GT_KEY_F32),
     lambda r: [normal(r, 12, 3)], lambda k: descending_columns(k, np.broadcast_to(
         np.arange(12, dtype=np.int32)[:, None], (12, 3))))
ROW_LOOP = ("""rows_cond {
  s = (s32[], f32[4], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(8)
  ROOT c = pred[] compare(i, n), direction=LT
}""", """rows_body {
  s = (s32[], f32[4], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[4] get-tuple-element(s), index=1
  x = f32[8,4] get-tuple-element(s), index=2
  zero = s32[] constant(0)
  row = f32[1,4] dynamic-slice(x, i, zero), dynamic_slice_sizes={1,4}
  flat = f32[4] reshape(row)
  acc1 = f32[4] add(acc, flat)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[8,4]) tuple(i1, acc1, x)
}""")
case("while_sums_rows_with_dynamic_slice", ("""
x = f32[8,4] parameter(0)
zero = s32[] constant(0)
z = f32[] constant(0)
acc = f32[4] broadcast(z), dimensions={}
init = (s32[], f32[4], f32[8,4]) tuple(zero, acc, x)
w = (s32[], f32[4], f32[8,4]) while(init), condition=rows_cond, body=rows_body
ROOT sum = f32[4] get-tuple-element(w), index=1""", *ROW_LOOP),
     # integer-valued floats: every order of the additions gives the same exact sum
     lambda r: [r.integers(-1000, 1000, (8, 4)).astype(F32)], lambda x: x.sum(axis=0))

# --- index forms, partial windows, more operands ---------------------------------------------------
def gather_permuted(t, idx):
    """index_vector_dim=0: column b of idx is one start vector; start_index_map={1,0}
    sends idx[0] to dimension 1 and idx[1] to dimension 0; starts are clamped."""
    out = []
    for b in range(idx.shape[1]):
        row, col = clamped(idx[1, b], 6, 2), clamped(idx[0, b], 7, 1)
        out.append(t[row:row + 2, col])
    return np.stack(out)


case("gather_index_vector_dim_0_permuted_map", """
t = f32[6,7] parameter(0)
i = s32[2,3] parameter(1)
ROOT g = f32[3,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1,0}, index_vector_dim=0, slice_sizes={2,1}""",
     lambda r: [normal(r, 6, 7), r.integers(-2, 9, (2, 3)).astype(np.int32)], gather_permuted)


def scatter_blocks(o, i, u):
    """[2,4] blocks added at row i; a block that does not fit is skipped whole."""
    out = o.astype(np.int64)
    for row, block in zip(i, u):
        if 0 <= row <= o.shape[0] - 2:
            out[row:row + 2] += block
    return out.astype(np.int32)


case("scatter_partial_window_skipped_whole", ("""
o = s32[6,4] parameter(0)
i = s32[5] parameter(1)
u = s32[5,2,4] parameter(2)
ROOT s = s32[6,4] scatter(o, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s32""",
                                                ADD_S32),
     lambda r: [r.integers(-99, 99, (6, 4)).astype(np.int32), np.array([0, 4, 5, -1, 2], np.int32),
                r.integers(-99, 99, (5, 2, 4)).astype(np.int32)], scatter_blocks)
THREE_LT = """three_lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  fa = f32[] parameter(2)
  fb = f32[] parameter(3)
  ua = u8[] parameter(4)
  ub = u8[] parameter(5)
  ROOT r = pred[] compare(a, b), direction=LT
}"""


def sort_three_middle(k, v, w):
    order = np.argsort(k, axis=1, kind="stable")
    return [np.take_along_axis(a, order, 1) for a in (k, v, w)]


case("sort_three_operands_middle_dim_stable", ("""
k = s32[2,10,3] parameter(0)
v = f32[2,10,3] parameter(1)
w = u8[2,10,3] parameter(2)
ROOT s = (s32[2,10,3], f32[2,10,3], u8[2,10,3]) sort(k, v, w), dimensions={1}, is_stable=true, to_apply=three_lt""",
                                                THREE_LT),
     lambda r: [r.integers(0, 4, (2, 10, 3)).astype(np.int32), normal(r, 2, 10, 3),
                r.integers(0, 256, (2, 10, 3)).astype(np.uint8)], sort_three_middle)


def window_argmax(p):
    windows = np.lib.stride_tricks.sliding_window_view(p, 3)
    first = windows.argmax(axis=1)
    return [windows.max(axis=1), (np.arange(len(first)) + first).astype(np.int32)]


case("reduce_window_variadic_argmax", ("""
p = f32[10] parameter(0)
idx = s32[10] iota(), iota_dimension=0
v0 = f32[] constant(-inf)
i0 = s32[] constant(0)
ROOT r = (f32[8], s32[8]) reduce-window(p, idx, v0, i0), window={size=3}, to_apply=argmax""",
                                        ARGMAX),
     lambda r: [r.integers(0, 4, 10).astype(F32)], window_argmax)
case("iota_bf16_rounds_large_values", """
ROOT i = bf16[300] iota(), iota_dimension=0""", lambda r: [],
     lambda: R.bf16(np.arange(300, dtype=F32)))
case("pad_negative_crops_into_interior", """
p = s32[5] parameter(0)
v = s32[] parameter(1)
ROOT q = s32[4] pad(p, v), padding=-3_-2_1""",
     lambda r: [r.integers(-9, 9, 5).astype(np.int32), np.int32(0)],
     lambda p, v: R.xla_pad(p, v, [(-3, -2, 1)]))
case("concatenate_middle_dim_s32", """
a = s32[2,3,2] parameter(0)
b = s32[2,1,2] parameter(1)
ROOT k = s32[2,4,2] concatenate(a, b), dimensions={1}""",
     lambda r: [r.integers(-9, 9, (2, 3, 2)).astype(np.int32),
                r.integers(-9, 9, (2, 1, 2)).astype(np.int32)],
     lambda a, b: np.concatenate([a, b], axis=1))
case("dynamic_slice_unsigned_index_clamps", """
p = s32[10] parameter(0)
i = u8[] parameter(1)
ROOT s = s32[3] dynamic-slice(p, i), dynamic_slice_sizes={3}""",
     lambda r: [r.integers(-9, 9, 10).astype(np.int32), np.uint8(200)], lambda p, i: p[7:10])
# --- empty arrays: the semantics still fix the result ------------------------------------------------
case("reduce_of_empty_dimension_is_init", ("""
p = f32[0,3] parameter(0)
z = f32[] constant(-inf)
ROOT m = f32[3] reduce(p, z), dimensions={0}, to_apply=max_f32""", MAX_F32),
     lambda r: [np.zeros((0, 3), F32)], lambda p: np.full(3, -np.inf, F32))
case("pad_of_empty_array", """
p = s32[0,2] parameter(0)
v = s32[] parameter(1)
ROOT q = s32[3,2] pad(p, v), padding=1_2_0x0_0_0""",
     lambda r: [np.zeros((0, 2), np.int32), np.int32(42)], lambda p, v: np.full((3, 2), 42, np.int32))
case("concatenate_with_empty_operand", """
a = f32[2,0] parameter(0)
b = f32[2,3] parameter(1)
ROOT k = f32[2,3] concatenate(a, b), dimensions={1}""",
     lambda r: [np.zeros((2, 0), F32), normal(r, 2, 3)], lambda a, b: b)
case("slice_to_empty", """
p = f32[5] parameter(0)
ROOT s = f32[0] slice(p), slice={[3:3]}""", lambda r: [normal(r, 5)], lambda p: p[3:3])

# --- comparators and selectors that read every parameter ---------------------------------------------
LEX_LT = """lex_lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  va = f32[] parameter(2)
  vb = f32[] parameter(3)
  key_lt = pred[] compare(a, b), direction=LT
  key_eq = pred[] compare(a, b), direction=EQ
  value_gt = pred[] compare(va, vb), direction=GT
  tie_break = pred[] and(key_eq, value_gt)
  ROOT r = pred[] or(key_lt, tie_break)
}"""


def lexicographic(k, v):
    order = np.lexsort((-v, k))  # key ascending, then value descending
    return [k[order], v[order]]


case("sort_lexicographic_comparator", ("""
k = s32[30] parameter(0)
v = f32[30] parameter(1)
ROOT s = (s32[30], f32[30]) sort(k, v), dimensions={0}, to_apply=lex_lt""", LEX_LT),
     lambda r: [r.integers(0, 4, 30).astype(np.int32), normal(r, 30)], lexicographic)
LE_F32 = scalar_computation("le_f32", "f32", "pred[] compare(a, b), direction=LE")


def min_pool_gradient(operand, source):
    """select=LE keeps the first minimum of each 2x2 window."""
    value, scale = R.select_and_scatter_ge_add(-f64(operand), f64(source), (2, 2), (2, 2),
                                               [(0, 0), (0, 0)])
    return Ref(value, scale)


case("select_and_scatter_min_pool_le", ("""
p = f32[4,6] parameter(0)
g = f32[2,3] parameter(1)
z = f32[] constant(0)
ROOT s = f32[4,6] select-and-scatter(p, g, z), window={size=2x2 stride=2x2}, select=le_f32, scatter=add_f32""",
                                         LE_F32, ADD_F32),
     lambda r: [normal(r, 4, 6), normal(r, 2, 3)], min_pool_gradient, Tol(sums=1))


def scatter_points(o, i, u):
    """Each update lands on one element at (i[0, b], i[1, b])."""
    out = o.astype(np.int64)
    for b in range(i.shape[1]):
        out[i[0, b], i[1, b]] += u[b]
    return out.astype(np.int32)


case("scatter_points_index_vector_dim_0", ("""
o = s32[4,5] parameter(0)
i = s32[2,9] parameter(1)
u = s32[9] parameter(2)
ROOT s = s32[4,5] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add_s32""",
                                            ADD_S32),
     lambda r: [r.integers(-9, 9, (4, 5)).astype(np.int32),
                np.stack([r.integers(0, 4, 9), r.integers(0, 5, 9)]).astype(np.int32),
                r.integers(-9, 9, 9).astype(np.int32)], scatter_points)

# --- shapes at the edges and control flow that does little ---------------------------------------
case("transpose_4d_permutation", """
p = s32[2,3,4,5] parameter(0)
ROOT t = s32[5,3,2,4] transpose(p), dimensions={3,1,0,2}""",
     lambda r: [r.integers(-99, 99, (2, 3, 4, 5)).astype(np.int32)],
     lambda p: np.transpose(p, (3, 1, 0, 2)))
case("reshape_to_scalar_and_broadcast_two_dims", """
p = f32[1,1] parameter(0)
q = f32[3,2] parameter(1)
s = f32[] reshape(p)
b = f32[3,4,2] broadcast(q), dimensions={0,2}
ROOT t = (f32[], f32[3,4,2]) tuple(s, b)""", lambda r: [normal(r, 1, 1), normal(r, 3, 2)],
     lambda p, q: [p.reshape(()), np.broadcast_to(q[:, None, :], (3, 4, 2))])
case("slice_stride_beyond_size", """
p = f32[3,7] parameter(0)
ROOT s = f32[2,1] slice(p), slice={[0:3:2], [2:7:9]}""", lambda r: [normal(r, 3, 7)],
     lambda p: p[0:3:2, 2:7:9])
ZERO_TRIP = ("""never_cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(0)
  ROOT c = pred[] compare(i, n), direction=LT
}""", """never_body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  y = f32[4] negate(x)
  ROOT t = (s32[], f32[4]) tuple(i, y)
}""")
case("while_zero_iterations_returns_init", ("""
x = f32[4] parameter(0)
five = s32[] constant(5)
init = (s32[], f32[4]) tuple(five, x)
ROOT w = (s32[], f32[4]) while(init), condition=never_cond, body=never_body""", *ZERO_TRIP),
     lambda r: [normal(r, 4)], lambda x: [np.int32(5), x])
TUPLE_BRANCHES = ("""swap_branch {
  t = (f32[3], s32[3]) parameter(0)
  a = f32[3] get-tuple-element(t), index=0
  b = s32[3] get-tuple-element(t), index=1
  c = f32[3] convert(b)
  d = s32[3] convert(a)
  ROOT r = (f32[3], s32[3]) tuple(c, d)
}""", """keep_branch {
  t = (f32[3], s32[3]) parameter(0)
  ROOT r = (f32[3], s32[3]) copy(t)
}""")


def tuple_conditional(p, a, b):
    if p:
        return [b.astype(F32), np.trunc(a).astype(np.int32)]
    return [a, b]


for flag in (True, False):
    case(f"conditional_tuple_operand_and_result_{str(flag).lower()}", ("""
p = pred[] parameter(0)
a = f32[3] parameter(1)
b = s32[3] parameter(2)
t = (f32[3], s32[3]) tuple(a, b)
ROOT c = (f32[3], s32[3]) conditional(p, t, t), true_computation=swap_branch, false_computation=keep_branch""",
                                                                           *TUPLE_BRANCHES),
         lambda r, flag=flag: [np.bool_(flag), normal(r, 3, scale=50),
                               r.integers(-99, 99, 3).astype(np.int32)], tuple_conditional)
FUSED_REDUCE = ("""fused_row_max {
  p = f32[4,6] parameter(0)
  two = f32[] constant(2)
  twos = f32[4,6] broadcast(two), dimensions={}
  scaled = f32[4,6] multiply(p, twos)
  z = f32[] constant(-inf)
  ROOT m = f32[4] reduce(scaled, z), dimensions={1}, to_apply=max_f32
}""", MAX_F32)
case("fusion_with_reduce_and_constants", ("""
p = f32[4,6] parameter(0)
ROOT f = f32[4] fusion(p), kind=kInput, calls=fused_row_max""", *FUSED_REDUCE),
     lambda r: [normal(r, 4, 6)], lambda p: (p * F32(2)).max(axis=1))
case("opt_barrier_and_tokens_pass_values", """
p = f32[5] parameter(0)
tok = token[] after-all()
t = (f32[5], token[]) tuple(p, tok)
b = (f32[5], token[]) opt-barrier(t)
v = f32[5] get-tuple-element(b), index=0
ROOT d = f32[5] add-dependency(v, tok)""", lambda r: [normal(r, 5)], lambda p: p)

# --- combiners that make duplicates exact, variadic forms, non-zero init values --------------------
def scatter_max(o, i, u):
    """maximum is exact and order-free, so duplicate indices have one answer."""
    out = o.copy()
    np.maximum.at(out, i, u)
    return out


case("scatter_max_f32_duplicates_exact", (f"""
o = f32[6,3] parameter(0)
i = s32[12] parameter(1)
u = f32[12,3] parameter(2)
ROOT s = f32[6,3] scatter(o, i, u), {SCATTER_ROWS}, to_apply=max_f32""", MAX_F32),
     lambda r: [normal(r, 6, 3), r.integers(0, 3, 12).astype(np.int32), normal(r, 12, 3)],
     scatter_max)
ADD_BOTH = """add_both {
  a = s32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = f32[] parameter(3)
  s = s32[] add(a, c)
  m = f32[] maximum(b, d)
  ROOT t = (s32[], f32[]) tuple(s, m)
}"""


def scatter_pair(o1, o2, i, u1, u2):
    """Variadic scatter: the first operand sums its updates, the second keeps the max."""
    s, m = o1.astype(np.int64), o2.copy()
    np.add.at(s, i, u1)
    np.maximum.at(m, i, u2)
    return [s.astype(np.int32), m]


case("scatter_variadic_two_operands", (f"""
o1 = s32[5,2] parameter(0)
o2 = f32[5,2] parameter(1)
i = s32[8] parameter(2)
u1 = s32[8,2] parameter(3)
u2 = f32[8,2] parameter(4)
ROOT s = (s32[5,2], f32[5,2]) scatter(o1, o2, i, u1, u2), {SCATTER_ROWS}, to_apply=add_both""",
                                         ADD_BOTH),
     lambda r: [r.integers(-9, 9, (5, 2)).astype(np.int32), normal(r, 5, 2),
                r.integers(0, 5, 8).astype(np.int32), r.integers(-9, 9, (8, 2)).astype(np.int32),
                normal(r, 8, 2)], scatter_pair)


def select_scatter_from_init(operand, source):
    """The output starts at the init value (1.5) everywhere; integer-valued
    sources keep every sum exact."""
    value, _ = R.select_and_scatter_ge_add(f64(operand), f64(source), (3,), (2,), [(1, 1)])
    return (value + 1.5).astype(F32)


case("select_and_scatter_nonzero_init", ("""
p = f32[9] parameter(0)
g = f32[5] parameter(1)
z = f32[] constant(1.5)
ROOT s = f32[9] select-and-scatter(p, g, z), window={size=3 stride=2 pad=1_1}, select=ge_f32, scatter=add_f32""",
                                         GE_F32, ADD_F32),
     lambda r: [normal(r, 9), r.integers(-20, 20, 5).astype(F32)], select_scatter_from_init)
SUM_AND_MAX = """sum_and_max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  s = f32[] add(a, c)
  m = f32[] maximum(b, d)
  ROOT t = (f32[], f32[]) tuple(s, m)
}"""
case("reduce_variadic_sum_and_max", ("""
p = f32[3,5,4] parameter(0)
q = f32[3,5,4] parameter(1)
z = f32[] constant(0)
n = f32[] constant(-inf)
ROOT r = (f32[5], f32[5]) reduce(p, q, z, n), dimensions={0,2}, to_apply=sum_and_max""",
                                     SUM_AND_MAX),
     lambda r: [normal(r, 3, 5, 4), normal(r, 3, 5, 4)],
     lambda p, q: [Ref(f64(p).sum(axis=(0, 2)), np.abs(f64(p)).sum(axis=(0, 2))),
                   Ref(q.max(axis=(0, 2)), np.zeros(5))], Tol(sums=12))
case("reduce_window_sum_s32_padded", ("""
p = s32[5,6] parameter(0)
z = s32[] constant(0)
ROOT m = s32[3,3] reduce-window(p, z), window={size=3x3 stride=2x2 pad=1_1x0_1}, to_apply=add_s32""",
                                       ADD_S32),
     lambda r: [r.integers(-2**31, 2**31, (5, 6)).astype(np.int32)],
     lambda p: R.wrap(R.reduce_window(p.astype(np.int64), 0, np.sum, (3, 3), (2, 2),
                                      [(1, 1), (0, 1)]), np.int32))
case("dynamic_update_slice_negative_start", """
p = s32[6] parameter(0)
u = s32[2] parameter(1)
i = s32[] parameter(2)
ROOT s = s32[6] dynamic-update-slice(p, u, i)""",
     lambda r: [r.integers(-9, 9, 6).astype(np.int32), np.array([100, 200], np.int32),
                np.int32(-4)],
     lambda p, u, i: np.concatenate([u, p[2:]]))
