// The tests' one lookup of a parsed module's instruction by name.
#ifndef TPUSIM_TESTS_HLO_FIND_INSTRUCTION_H_
#define TPUSIM_TESTS_HLO_FIND_INSTRUCTION_H_

#include <gtest/gtest.h>

#include <string_view>

#include "sim/hlo/module.h"

namespace tpusim::test {

/// The instruction named `name` in any computation of `module`; a test
/// failure, and an empty tuple in its place, when there is none.
inline const hlo::HloInstruction* FindInstruction(const hlo::HloModule& module,
                                                  std::string_view name) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->name() == name) return instruction.get();
    }
  }
  ADD_FAILURE() << "no instruction named " << name;
  static const hlo::HloInstruction kMissing("<missing>", hlo::HloOpcode::kTuple,
                                            hlo::Shape::Tuple({}));
  return &kMissing;
}

}  // namespace tpusim::test

#endif  // TPUSIM_TESTS_HLO_FIND_INSTRUCTION_H_
