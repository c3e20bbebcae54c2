// The timing model's public API: how long a compiled HLO module takes on one
// chip, instruction by instruction, which unit bounds each, and how many
// FLOPs and HBM bytes it moves. See docs/models.md for every formula.
//
// One simulation per process: SystemC cannot elaborate or start its kernel a
// second time, so SimulateModule/SimulateBatch may be called once per
// process; a second call returns kFailedPrecondition. To time several
// modules, pass them all to one SimulateBatch, or run each in a child process.
#ifndef TPUSIM_SIM_TIMING_TIMING_H_
#define TPUSIM_SIM_TIMING_TIMING_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/base/status.h"
#include "sim/chip/work.h"
#include "sim/hlo/module.h"

namespace tpusim::timing {

struct TimingOptions {
  /// Trip counts known from elsewhere (e.g. a functional run), by while
  /// instruction name; they take precedence over what the program shows.
  std::map<std::string, int64_t> trip_counts;
  /// Iterations of a while loop whose trip count cannot be read off the program.
  int64_t default_trip_count = 1;
  /// Branch every conditional takes (0 = the true branch of a pred
  /// conditional; an index past the last branch takes the last, as XLA does).
  int64_t conditional_branch = 0;
  /// Branches known from elsewhere (e.g. a functional run), by conditional
  /// instruction name, in conditional_branch's numbering; they take
  /// precedence over it.
  std::map<std::string, int64_t> branches;
  /// Upper bound on executed instructions (loops unrolled), to fail cleanly
  /// instead of exhausting memory.
  int64_t max_executed_instructions = 20'000'000;
};

/// What limited an instruction: the unit with the most busy cycles, or the
/// fixed start-up when every unit finished within it.
enum class BoundBy : uint8_t { kMxu, kVpu, kTranspose, kHbm, kVmem, kDma, kLatency };

/// "MXU", "VPU", "transpose", "HBM", "VMEM", "DMA", "latency".
std::string_view BoundByName(BoundBy bound);

/// One executed instruction (an instruction inside a loop body appears once
/// per iteration; instructions that do no work are not listed).
struct OpRecord {
  std::string name;         ///< instruction name without '%'
  std::string opcode;       ///< as spelled in the text, e.g. "fusion", "copy-start"
  int64_t start_cycle = 0;  ///< when TensorCore 0 issued it
  int64_t cycles = 0;       ///< until the next instruction may issue
  int64_t flops = 0;        ///< whole chip
  int64_t hbm_bytes = 0;    ///< whole chip
  BoundBy bound_by = BoundBy::kLatency;
  chip::UnitCycles unit_cycles{};  ///< busy cycles of each unit of one TensorCore
};

struct TimingResult {
  std::string chip;          ///< preset name
  std::string module;        ///< module name
  int64_t clock_hz = 0;      ///< converts cycles to time
  int64_t tensorcores = 1;   ///< TensorCores running the program (2 on megacore chips)
  double peak_flops = 0;     ///< bf16 FLOP/s of those TensorCores (geometry x clock)
  double hbm_bandwidth = 0;  ///< B/s available to those TensorCores
  int64_t cycles = 0;        ///< end of the last instruction (and of outstanding async work)
  double time_us = 0;        ///< cycles / clock
  int64_t flops = 0;
  int64_t hbm_bytes = 0;
  std::vector<OpRecord> ops;  ///< in issue order
};

/// Times `module` on `chip`. Input errors (an unsupported dot algorithm, bad
/// dimension numbers, too many executed instructions) are kInvalidArgument,
/// kUnimplemented or kResourceExhausted with FILE:LINE:COL of the instruction.
StatusOr<TimingResult> SimulateModule(const hlo::HloModule& module, const arch::ChipConfig& chip,
                                      const TimingOptions& options);

/// One module on one chip, for SimulateBatch.
struct SimulationJob {
  const hlo::HloModule* module = nullptr;
  const arch::ChipConfig* chip = nullptr;
  TimingOptions options;
};

/// Times independent jobs in one SystemC run (each from cycle 0, sharing
/// nothing): the way to time several modules or chips in one process.
StatusOr<std::vector<TimingResult>> SimulateBatch(std::span<const SimulationJob> jobs);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_TIMING_H_
