// Which values of a module live in host memory. A compiled module says so in
// its layouts (`S(5)`, put there by XLA's host offloader). A module from
// before that pass says it with annotations: a `MoveToHost` custom call puts
// its operand in host memory, a `MoveToDevice` brings one back, and what lies
// between (a dynamic-update-slice into an offloaded buffer, the slice read
// back, the views, tuples and loop states that carry them) stays on the host
// (XLA's host_offloader.h). Timing charges the bytes that cross between the
// two over PCIe, where they cross (docs/models.md, "Host memory").
#ifndef TPUSIM_SIM_TIMING_HOST_MEMORY_H_
#define TPUSIM_SIM_TIMING_HOST_MEMORY_H_

#include <cstdint>
#include <set>
#include <utility>

#include "sim/hlo/instruction.h"
#include "sim/hlo/module.h"

namespace tpusim::timing {

/// The host-offload annotation a custom call is, if any: `MoveToHost`,
/// `MoveToDevice`, or JAX's `annotate_device_placement` with
/// `_xla_buffer_placement` "pinned_host" or "device".
enum class HostMove : uint8_t { kNone, kToHost, kToDevice };
HostMove HostMoveOf(const hlo::HloInstruction& inst);

/// True for an asynchronous start whose computation the host runs
/// (`async_execution_thread="host"`): its operands and results live in host
/// memory, and tpusim does not time the host's compute.
bool RunsOnHost(const hlo::HloInstruction& start);

class HostMemory {
 public:
  /// The element index that stands for a whole array-shaped value.
  static constexpr int64_t kWhole = -1;

  explicit HostMemory(const hlo::HloModule& module);

  /// True when the array `value` produces lives in host memory; for a
  /// tuple-shaped value, its element `element`.
  bool Holds(const hlo::HloInstruction& value, int64_t element = kWhole) const {
    return host_.count({value.unique_id(), element}) > 0;
  }

 private:
  /// Marks a value (or one element) as host-resident; true if it was not yet.
  bool Mark(const hlo::HloInstruction& value, int64_t element);
  /// One pass over the module's instructions; true if anything was marked.
  bool Propagate(const hlo::HloModule& module, bool annotated);

  std::set<std::pair<int64_t, int64_t>> host_;  ///< (unique id, element)
};

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_HOST_MEMORY_H_
