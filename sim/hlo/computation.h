// HloComputation: a named graph of instructions with one ROOT.
#ifndef TPUSIM_SIM_HLO_COMPUTATION_H_
#define TPUSIM_SIM_HLO_COMPUTATION_H_

#include <memory>
#include <string>
#include <vector>

#include "sim/hlo/instruction.h"

namespace tpusim::hlo {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  friend class HloModule;  // renames, keeping its name index
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  /// Name without the `%` sigil.
  const std::string& name() const { return name_; }

  /// Instructions in text order; in a scheduled module this is the schedule.
  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  /// Takes ownership; sets the instruction's parent.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);
  /// Moves the parameters ahead of the other instructions, keeping the order
  /// within each group.
  void HoistParameters();

  HloInstruction* root() const { return root_; }
  void set_root(HloInstruction* root) { root_ = root; }

  /// Parameters ordered by parameter number (nullptr where a number is missing,
  /// which the verifier rejects).
  const std::vector<HloInstruction*>& parameters() const { return parameters_; }
  int64_t parameter_count() const { return static_cast<int64_t>(parameters_.size()); }
  void SetParameter(int64_t number, HloInstruction* parameter);

  /// `execution_thread="..."` after the body; empty for the main thread.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* m) { parent_ = m; }
  bool IsEntry() const;

  SourceLocation location() const { return location_; }
  void set_location(SourceLocation loc) { location_ = loc; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  HloInstruction* root_ = nullptr;
  std::vector<HloInstruction*> parameters_;
  std::string execution_thread_;
  HloModule* parent_ = nullptr;
  SourceLocation location_;
};

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_COMPUTATION_H_
