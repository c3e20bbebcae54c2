#include "sim/hlo/computation.h"

#include <algorithm>

#include "sim/hlo/module.h"

namespace tpusim::hlo {

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  instruction->set_parent(this);
  instructions_.push_back(std::move(instruction));
  return instructions_.back().get();
}

void HloComputation::HoistParameters() {
  std::stable_partition(instructions_.begin(), instructions_.end(), [](const auto& instruction) {
    return instruction->opcode() == HloOpcode::kParameter;
  });
}

void HloComputation::SetParameter(int64_t number, HloInstruction* parameter) {
  if (number < 0) return;  // not a parameter number; the parser reports it
  if (static_cast<size_t>(number) >= parameters_.size()) parameters_.resize(number + 1, nullptr);
  parameters_[number] = parameter;
}

bool HloComputation::IsEntry() const { return parent_ != nullptr && parent_->entry() == this; }

}  // namespace tpusim::hlo
