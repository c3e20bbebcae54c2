// Programs whose conditionals take different branches, or whose loops run
// different trip counts, from one execution or one device to the next: for
// the checks that a values run records each and that timing runs each as
// recorded.
#ifndef TPUSIM_TESTS_HLO_VARYING_PROGRAMS_H_
#define TPUSIM_TESTS_HLO_VARYING_PROGRAMS_H_

namespace tpusim::test {

/// A loop `w` of 4 iterations (i = 0..3) whose conditional `c` squares an
/// f32[65536] (`square`) when i is even and takes its square root (`root`)
/// when i is odd: branches 0, 1, 0, 1.
inline constexpr char kAlternatingBranch[] = R"(HloModule alternate
on_even {
  x = f32[65536] parameter(0)
  ROOT square = f32[65536] multiply(x, x)
}
on_odd {
  x = f32[65536] parameter(0)
  ROOT root = f32[65536] sqrt(x)
}
cond {
  s = (s32[], f32[65536]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[65536]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[65536] get-tuple-element(s), index=1
  two = s32[] constant(2)
  parity = s32[] remainder(i, two)
  zero = s32[] constant(0)
  even = pred[] compare(parity, zero), direction=EQ
  c = f32[65536] conditional(even, x, x), true_computation=on_even, false_computation=on_odd
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[65536]) tuple(next, c)
}
ENTRY e {
  x = f32[65536] parameter(0)
  zero = s32[] constant(0)
  start = (s32[], f32[65536]) tuple(zero, x)
  w = (s32[], f32[65536]) while(start), condition=cond, body=body
  ROOT r = f32[65536] get-tuple-element(w), index=1
})";

/// Two pipeline stages: in conditional `stage`, partition 0 embeds its input
/// (`embed`, an exponential of f32[1048576]) and the other partition passes
/// it on as it is; then both meet at an all-reduce.
inline constexpr char kStageBranch[] = R"(HloModule stages, num_partitions=2
first_stage {
  x = f32[1048576] parameter(0)
  ROOT embed = f32[1048576] exponential(x)
}
later_stage {
  ROOT x = f32[1048576] parameter(0)
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1048576] parameter(0)
  pid = u32[] partition-id()
  zero = u32[] constant(0)
  first = pred[] compare(pid, zero), direction=EQ
  stage = f32[1048576] conditional(first, x, x), true_computation=first_stage, false_computation=later_stage
  ROOT r = f32[1048576] all-reduce(stage), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum
})";

/// Loop `w` squares an f32[65536] (`square`) partition id + 1 times on each
/// of 2 partitions; then both meet at an all-reduce.
inline constexpr char kDeviceTripCounts[] = R"(HloModule own_trips, num_partitions=2
cond {
  s = (s32[], s32[], f32[65536]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[65536]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[65536] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  square = f32[65536] multiply(x, x)
  ROOT t = (s32[], s32[], f32[65536]) tuple(next, n, square)
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[65536] parameter(0)
  id = u32[] partition-id()
  ids = s32[] convert(id)
  one = s32[] constant(1)
  n = s32[] add(ids, one)
  zero = s32[] constant(0)
  start = (s32[], s32[], f32[65536]) tuple(zero, n, x)
  w = (s32[], s32[], f32[65536]) while(start), condition=cond, body=body
  y = f32[65536] get-tuple-element(w), index=2
  ROOT r = f32[65536] all-reduce(y), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum
})";

}  // namespace tpusim::test

#endif  // TPUSIM_TESTS_HLO_VARYING_PROGRAMS_H_
