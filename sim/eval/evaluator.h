// Evaluator: runs an HLO module on Literal inputs and returns what it computes,
// with TPU numerics (MXU passes for dot) or an IEEE reference, bit-identically
// on every machine. docs/evaluator.md states the numerics and the order of
// every sum.
#ifndef TPUSIM_SIM_EVAL_EVALUATOR_H_
#define TPUSIM_SIM_EVAL_EVALUATOR_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/eval/numerics.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/module.h"
#include "sim/hlo/opcode.h"
#include "sim/hlo/per_execution.h"
#include "sim/value/literal.h"

namespace tpusim::eval {

class MxuTileEngine;  // sim/eval/mxu_tile.h

using hlo::PerExecution;

/// What device (0, 0)'s run did that timing cannot read off the program, by
/// instruction of the evaluated module (which outlives the record): the
/// iterations of each while loop, the branch of each conditional, the groups
/// of each ragged-dot and the send sizes of each ragged-all-to-all at every
/// execution, in order (a loop nested in another, or a scan over layers, sees
/// other values each time); and the same of every other device.
/// The maps keyed by instruction are for lookup, not for listing: their order
/// is the instructions' addresses.
struct RunRecord {
  /// Iterations of each while loop.
  PerExecution<int64_t> trip_counts;
  /// Branch each conditional took: 0 for true and 1 for false in the pred
  /// form, the (clamped) index in the indexed form.
  PerExecution<int64_t> branches;
  /// trip_counts and branches of every other device whose values
  /// EvaluateSpmd ran, by device number (SpmdConfig::DeviceIndex): a loop
  /// bound or a branch can depend on the device (a pipeline stage's first
  /// and last steps).
  std::map<int64_t, PerExecution<int64_t>> device_trip_counts;
  std::map<int64_t, PerExecution<int64_t>> device_branches;
  /// The rows (ragged free dimension) or depth indices (ragged contracting
  /// dimension) each group of a ragged-dot held, per lhs batch index and group,
  /// in that order: the grouped matmul's real shapes. A ragged batch dimension
  /// is a dot and is not recorded.
  PerExecution<std::vector<int64_t>> ragged_group_shares;
  /// ragged_group_shares of every other device whose values EvaluateSpmd ran
  /// and which ran a ragged-dot, by device number (SpmdConfig::DeviceIndex):
  /// in a mixture of experts each device's router fills its experts
  /// differently, and the device with the most rows is the straggler.
  std::map<int64_t, PerExecution<std::vector<int64_t>>> device_ragged_group_shares;
  /// The rows each ragged-all-to-all sent to each participant of its group,
  /// in group order: its send_sizes.
  PerExecution<std::vector<int64_t>> ragged_send_sizes;
  /// ragged_send_sizes of every other device whose values EvaluateSpmd ran
  /// and which ran a ragged-all-to-all, by device number: the traffic of a
  /// mixture of experts' dispatch, which differs from device to device.
  std::map<int64_t, PerExecution<std::vector<int64_t>>> device_ragged_send_sizes;
};

struct EvaluatorOptions {
  Numerics numerics = Numerics::kTpu;
  /// Largest value (one instruction's result, tuple elements included) the
  /// evaluator may allocate, in bytes; a larger one is kResourceExhausted.
  int64_t max_bytes = std::numeric_limits<int64_t>::max();
  /// A while loop that runs more iterations than this is an error rather than a
  /// hang (a program whose loop condition never becomes false).
  int64_t max_while_iterations = int64_t{1} << 24;
  /// A while loop whose iterations do more work than this is an error too, so
  /// that an endless loop is refused in seconds whatever its body: work is
  /// 64 per executed instruction plus the elements of its result, about 10^8
  /// a second on one core. The corpus's largest loop (jax_diffrax_ode_solver)
  /// does 3.4 x 10^8; an endless f32[1024] loop is refused after ~12 s, a
  /// trivial one after ~8 s (it took 17 s to meet max_while_iterations).
  int64_t max_loop_work = int64_t{1} << 31;
  /// How the user raises max_while_iterations and max_loop_work, which
  /// their errors add after stating the loop, the limit and what it reached:
  /// the caller names its own flag or setting; sim/ knows no command line.
  /// Empty: the error ends there.
  std::string raise_while_iterations;
  std::string raise_loop_work;
  /// A constant whose values the dump elided (`constant({...})`) is filled
  /// with seeded values from this seed (FillSeeded, one stream per constant);
  /// unset, such a constant is an error.
  std::optional<uint64_t> elided_constant_seed;
  /// When set, receives what device (0, 0)'s run did, for the timing model
  /// (a single device evaluated alone records its own). Owned by the caller,
  /// which must not read it while an evaluation runs.
  RunRecord* record = nullptr;
  /// When set, counts the instructions device (0, 0) has executed (loop
  /// bodies once per iteration), for a progress display on another thread.
  std::atomic<int64_t>* progress = nullptr;
  /// When set, dot and convolution products under TPU numerics run tile by
  /// tile through this engine (MxuMatMulByTiles; e.g. the RTL array of
  /// sim/rtl) instead of the fast kernel; the values are the same. Owned by the
  /// caller; it must be safe to call from every device's thread.
  MxuTileEngine* mxu_engine = nullptr;
};

/// The devices of an SPMD program and which one is meant: defined with the
/// group resolution in sim/hlo, shared with the timing runtime.
using hlo::DeviceId;
using hlo::SpmdConfig;

class Evaluator {
 public:
  explicit Evaluator(EvaluatorOptions options = {}) : options_(options) {}

  /// Evaluates the entry computation of `module` on device (replica 0,
  /// partition 0) with `args` as its parameters, in parameter-number order.
  /// Errors: kInvalidArgument for a wrong argument count or shape, or a
  /// runtime fault (a while loop over its cap); kUnimplemented for an opcode
  /// or element type the evaluator does not support yet (the message names it
  /// and its FILE:LINE:COL); kResourceExhausted for a value over max_bytes.
  StatusOr<value::Literal> Evaluate(const hlo::HloModule& module,
                                    std::span<const value::Literal> args) const;
  /// Same, as the given device of an SPMD program evaluated alone: a
  /// collective whose group is this device only runs; one that needs other
  /// devices is kFailedPrecondition (use EvaluateSpmd).
  StatusOr<value::Literal> Evaluate(const hlo::HloModule& module,
                                    std::span<const value::Literal> args, DeviceId device) const;

  /// Evaluates the entry computation on every device of `config`, each on
  /// its own thread, with collectives exchanging data between devices as XLA
  /// defines them (docs/evaluator.md, "SPMD"). `args[d]` are device d's
  /// parameters; the result has one value per device, in device order.
  /// Deterministic: results do not depend on thread timing. Errors: those of
  /// Evaluate (the first device to fail stops the others), a wrong number of
  /// argument lists (kInvalidArgument), and a collective that can never
  /// complete (kFailedPrecondition naming the instruction and the devices
  /// that did not arrive) instead of a hang.
  StatusOr<std::vector<value::Literal>> EvaluateSpmd(
      const hlo::HloModule& module, SpmdConfig config,
      std::span<const std::vector<value::Literal>> args) const;
  /// Same, with the device counts of the module header (SpmdConfig::FromModule).
  StatusOr<std::vector<value::Literal>> EvaluateSpmd(
      const hlo::HloModule& module, std::span<const std::vector<value::Literal>> args) const;
  /// Same, on `devices` of `config` only (ascending device numbers, closed
  /// under the module's collectives: hlo::CommunicatingDevices), `args[i]`
  /// and the result's i-th value being device devices[i]'s. A collective that
  /// needs a device outside them is kFailedPrecondition.
  StatusOr<std::vector<value::Literal>> EvaluateSpmd(
      const hlo::HloModule& module, SpmdConfig config, std::span<const int64_t> devices,
      std::span<const std::vector<value::Literal>> args) const;

  /// Evaluates device 0 of `config` alone, standing for every device, for a
  /// program whose devices all compute the same values: WhyDevicesDiffer
  /// finds nothing, and every device's parameters equal `args`. Each
  /// collective takes the other participants' contributions to be device
  /// 0's own, which is then exact. The result is device 0's value.
  StatusOr<value::Literal> EvaluateAlike(const hlo::HloModule& module, SpmdConfig config,
                                         std::span<const value::Literal> args) const;

  /// True when the evaluator has a kernel for `opcode`, so a harness can report
  /// an unsupported program before running it. A kernel may still reject some
  /// forms with kUnimplemented: complex element types, custom-call targets
  /// other than the public ones docs/evaluator.md lists.
  static bool IsOpcodeImplemented(hlo::HloOpcode opcode);

  /// Bytes one device holds at its peak while evaluating `module`: the
  /// arguments, every value alive at once under the evaluator's order and
  /// value lifetimes, and the peak of each called computation while it runs
  /// (a called computation reads its parameters in place). Lets a harness refuse a
  /// run before allocating anything. Errors: those of planning a computation
  /// (a cycle, a missing root) and of unmaterialisable shapes.
  static StatusOr<int64_t> EstimatePeakBytes(const hlo::HloModule& module);

  /// The bytes a value of `inst`'s shape takes (value::Literal::ByteSizeOf);
  /// an error (a `?` dimension, an overflow) names `inst` at its FILE:LINE:COL.
  static StatusOr<int64_t> ValueBytes(const hlo::HloModule& module,
                                      const hlo::HloInstruction& inst);

  const EvaluatorOptions& options() const { return options_; }

 private:
  /// Fixed at construction; every Evaluate call uses the same options.
  EvaluatorOptions options_;
};

/// Why the devices of `config` could compute different values from the same
/// parameters, naming the first instruction (computations in module order)
/// that can make them differ; nullopt when none can. An instruction can when
/// it reads its device's id (replica-id, partition-id), data of its own
/// (infeed) or its partition's tile (an SPMDFullToShardShape custom call),
/// or is a collective that gives devices different data:
/// all-to-all, ragged-all-to-all, reduce-scatter, send and recv; an
/// all-reduce or all-gather whose groups differ in size; a
/// collective-permute that some device receives nothing from (it gets
/// zeros). Errors are hlo::ResolveCollective's.
StatusOr<std::optional<std::string>> WhyDevicesDiffer(const hlo::HloModule& module,
                                                      const SpmdConfig& config);

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_EVALUATOR_H_
