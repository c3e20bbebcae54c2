// A loop nest whose inner loop runs a different number of iterations at each
// execution (0, 1, 2, 3: j < i), for the checks that a values run records
// every execution and that timing runs each as recorded.
#ifndef TPUSIM_TESTS_HLO_TRIANGULAR_LOOP_H_
#define TPUSIM_TESTS_HLO_TRIANGULAR_LOOP_H_

namespace tpusim::test {

/// Outer loop `outer` of 4 iterations (i = 0..3); inner loop `inner` squares
/// an f32[1024] (`square`) while j < i: 6 squares in all.
inline constexpr char kTriangularLoop[] = R"(HloModule triangle
inner_cond {
  s = (s32[], s32[], f32[1024]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(j, i), direction=LT
}
inner_body {
  s = (s32[], s32[], f32[1024]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  x = f32[1024] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(j, one)
  square = f32[1024] multiply(x, x)
  ROOT t = (s32[], s32[], f32[1024]) tuple(next, i, square)
}
outer_cond {
  s = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
outer_body {
  s = (s32[], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[1024] get-tuple-element(s), index=1
  zero = s32[] constant(0)
  start = (s32[], s32[], f32[1024]) tuple(zero, i, x)
  inner = (s32[], s32[], f32[1024]) while(start), condition=inner_cond, body=inner_body
  y = f32[1024] get-tuple-element(inner), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[1024]) tuple(next, y)
}
ENTRY e {
  x = f32[1024] parameter(0)
  zero = s32[] constant(0)
  start = (s32[], f32[1024]) tuple(zero, x)
  outer = (s32[], f32[1024]) while(start), condition=outer_cond, body=outer_body
  ROOT r = f32[1024] get-tuple-element(outer), index=1
})";

}  // namespace tpusim::test

#endif  // TPUSIM_TESTS_HLO_TRIANGULAR_LOOP_H_
