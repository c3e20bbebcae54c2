#include "sim/timing/host_memory.h"

#include "sim/hlo/computation.h"
#include "sim/timing/layout_bytes.h"

namespace tpusim::timing {

using hlo::HloInstruction;
using hlo::HloOpcode;

HostMove HostMoveOf(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall) return HostMove::kNone;
  const std::string_view target = inst.string_attr(hlo::AttrId::kCustomCallTarget);
  if (target == "MoveToHost") return HostMove::kToHost;
  if (target == "MoveToDevice") return HostMove::kToDevice;
  if (target != "annotate_device_placement") return HostMove::kNone;
  // JAX's memory kinds, which XLA turns into the two annotations above
  // (convert_memory_placement_to_internal_annotations.cc).
  const auto* attributes =
      inst.GetAttr<std::vector<hlo::KeyValue>>(hlo::AttrId::kFrontendAttributes);
  if (attributes == nullptr) return HostMove::kNone;
  for (const hlo::KeyValue& kv : *attributes) {
    if (kv.key != "_xla_buffer_placement") continue;
    if (kv.value == "pinned_host") return HostMove::kToHost;
    if (kv.value == "device") return HostMove::kToDevice;
  }
  return HostMove::kNone;
}

bool RunsOnHost(const HloInstruction& start) {
  return start.opcode() == HloOpcode::kAsyncStart &&
         start.string_attr(hlo::AttrId::kAsyncExecutionThread) == "host";
}

namespace {

/// Calls `visit` with each leaf of `shape` whose layout places it in host
/// memory: kWhole for an array, the element's index for a tuple's elements.
template <typename Visit>
void ForEachHostLeaf(const hlo::Shape& shape, Visit visit) {
  if (shape.IsArray()) {
    if (InHostMemory(shape)) visit(HostMemory::kWhole);
    return;
  }
  if (!shape.IsTuple()) return;
  for (int64_t k = 0; k < shape.tuple_size(); ++k) {
    if (InHostMemory(shape.tuple_shapes(k))) visit(k);
  }
}

}  // namespace

HostMemory::HostMemory(const hlo::HloModule& module) {
  bool annotated = false;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      ForEachHostLeaf(inst->shape(), [&](int64_t k) { Mark(*inst, k); });
      annotated = annotated || HostMoveOf(*inst) != HostMove::kNone;
    }
  }
  // The entry's parameters may be placed by the module's header alone.
  const auto& layout = module.header().entry_computation_layout;
  if (layout.has_value() && module.entry() != nullptr) {
    for (const HloInstruction* p : module.entry()->parameters()) {
      const int64_t n = p->parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(layout->parameters.size())) continue;
      ForEachHostLeaf(layout->parameters[n], [&](int64_t k) { Mark(*p, k); });
    }
  }
  // A loop's state reaches its body's parameter from the body's root, so a
  // pass can mark what an earlier pass needed; each pass marks at least one
  // more value or ends it.
  while (Propagate(module, annotated)) {
  }
}

bool HostMemory::Mark(const HloInstruction& value, int64_t element) {
  return host_.emplace(value.unique_id(), element).second;
}

bool HostMemory::Propagate(const hlo::HloModule& module, bool annotated) {
  bool changed = false;
  const auto follow = [&](const HloInstruction& to, int64_t to_element, const HloInstruction& from,
                          int64_t from_element) {
    if (Holds(from, from_element)) changed = Mark(to, to_element) || changed;
  };
  for (const auto& c : module.computations()) {
    for (const auto& owned : c->instructions()) {
      const HloInstruction& inst = *owned;
      const int64_t operands = inst.operand_count();
      const HloOpcode op = inst.opcode();
      if (op == HloOpcode::kGetTupleElement && operands == 1) {
        follow(inst, kWhole, *inst.operand(0),
               inst.int_attr(hlo::AttrId::kIndex).value_or(kWhole - 1));
      } else if (op == HloOpcode::kTuple) {
        for (int64_t k = 0; k < operands; ++k) follow(inst, k, *inst.operand(k), kWhole);
      } else if ((op == HloOpcode::kOptimizationBarrier || op == HloOpcode::kBitcast) &&
                 operands == 1) {
        follow(inst, kWhole, *inst.operand(0), kWhole);
        if (inst.shape().IsTuple()) {
          for (int64_t k = 0; k < inst.shape().tuple_size(); ++k)
            follow(inst, k, *inst.operand(0), k);
        }
      } else if (op == HloOpcode::kWhile && operands == 1 && inst.shape().IsTuple()) {
        // The state's element k is on the host in the loop's operand, its
        // body's result, its body's and condition's parameters and its own
        // result alike.
        const hlo::HloComputation* body = inst.called_computation(hlo::AttrId::kBody);
        const hlo::HloComputation* cond = inst.called_computation(hlo::AttrId::kCondition);
        if (body == nullptr || body->root() == nullptr) continue;
        for (int64_t k = 0; k < inst.shape().tuple_size(); ++k) {
          if (!Holds(*inst.operand(0), k) && !Holds(*body->root(), k)) continue;
          changed = Mark(inst, k) || changed;
          for (const hlo::HloComputation* callee : {body, cond}) {
            if (callee != nullptr && !callee->parameters().empty() &&
                callee->parameters()[0] != nullptr) {
              changed = Mark(*callee->parameters()[0], k) || changed;
            }
          }
        }
      } else if (HostMoveOf(inst) == HostMove::kToHost) {
        changed = Mark(inst, kWhole) || changed;
      } else if (op == HloOpcode::kAsyncDone && operands == 1 && RunsOnHost(*inst.operand(0)) &&
                 inst.shape().IsArray()) {
        changed = Mark(inst, kWhole) || changed;
      } else if (annotated && operands >= 1 &&
                 (op == HloOpcode::kReshape || op == HloOpcode::kSlice ||
                  op == HloOpcode::kDynamicSlice)) {
        // Before the host offloader, the offloaded value is reshaped, written
        // into its buffer and read back from it by ops whose layouts do not
        // say yet where they run.
        follow(inst, kWhole, *inst.operand(0), kWhole);
      } else if (annotated && operands >= 2 && op == HloOpcode::kDynamicUpdateSlice) {
        follow(inst, kWhole, *inst.operand(0), kWhole);
        follow(inst, kWhole, *inst.operand(1), kWhole);
      }
    }
  }
  return changed;
}

}  // namespace tpusim::timing
