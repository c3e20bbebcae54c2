// The timing model's public API: how long a compiled HLO module takes on one
// chip, instruction by instruction, which unit bounds each, and how many
// FLOPs and HBM bytes it moves; with an interconnect, on every device of the
// SPMD program, collectives synchronising them (the SPMD runtime). See
// docs/models.md for every formula.
//
// One simulation per process: SystemC cannot elaborate or start its kernel a
// second time, so SimulateModule/SimulateBatch may be called once per
// process; a second call returns kFailedPrecondition. To time several
// modules, pass them all to one SimulateBatch, or run each in a child process.
#ifndef TPUSIM_SIM_TIMING_TIMING_H_
#define TPUSIM_SIM_TIMING_TIMING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/base/arith.h"
#include "sim/base/status.h"
#include "sim/chip/work.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/module.h"
#include "sim/hlo/per_execution.h"
#include "sim/ici/interconnect.h"

namespace tpusim::timing {

/// A value for each execution of an instruction, by instruction: known from
/// a functional run (RunRecord), or one value for every execution.
using hlo::PerExecution;
/// The rows (ragged free dimension) or depth (ragged contracting dimension)
/// each group of a ragged-dot held, by ragged-dot instruction and execution:
/// one entry per lhs batch index and group, in that order.
using RaggedGroupShares = PerExecution<std::vector<int64_t>>;
/// The rows a device's ragged-all-to-all sent to each participant of its
/// group, in group order (its send_sizes operand), by instruction and
/// execution.
using RaggedSendSizes = PerExecution<std::vector<int64_t>>;

struct TimingOptions {
  /// Trip counts known from elsewhere (a functional run, each execution of
  /// the loop its own; or the user, one for all), by while instruction of the
  /// timed module; they take precedence over what the program shows.
  PerExecution<int64_t> trip_counts;
  /// The same for other devices, by device number (a loop whose bound
  /// depends on the device); a device or loop not listed runs trip_counts.
  std::map<int64_t, PerExecution<int64_t>> device_trip_counts;
  /// Iterations of a while loop whose trip count cannot be read off the program.
  int64_t default_trip_count = 1;
  /// Branch every conditional takes (0 = the true branch of a pred
  /// conditional; an index past the last branch takes the last, as XLA does).
  int64_t conditional_branch = 0;
  /// Branches known from elsewhere (e.g. a functional run), by conditional
  /// instruction of the timed module and execution, in conditional_branch's
  /// numbering; they take precedence over it.
  PerExecution<int64_t> branches;
  /// The same for other devices, by device number (a pipeline stage that
  /// branches on its partition id); a device or conditional not listed runs
  /// branches.
  std::map<int64_t, PerExecution<int64_t>> device_branches;
  /// What each ragged-dot's groups held, known from elsewhere (a functional
  /// run). A ragged-dot not listed is timed with its rows shared equally by
  /// as many groups as can hold them.
  RaggedGroupShares ragged_group_shares;
  /// The same for other devices, by device number, known from a values run
  /// of every device: a device listed here is timed with its own groups
  /// (and so is no longer provably like device 0), one not listed with
  /// ragged_group_shares.
  std::map<int64_t, RaggedGroupShares> device_ragged_group_shares;
  /// The rows device 0's ragged-all-to-alls sent to each participant, known
  /// from elsewhere (a functional run). One not listed sends its whole input,
  /// spread evenly over the participants.
  RaggedSendSizes ragged_send_sizes;
  /// The same for other devices, by device number; a device not listed sends
  /// what device 0 sent.
  std::map<int64_t, RaggedSendSizes> device_ragged_send_sizes;
  /// Upper bound on the instructions of the lowered program (each loop body
  /// once) and on those the engine simulates one by one (iterations it
  /// fast-forwards do not count), to fail cleanly instead of exhausting
  /// memory and time.
  int64_t max_executed_instructions = 20'000'000;
  /// Fast-forward a loop once an iteration repeats exactly (docs/models.md,
  /// "Loops"); false simulates every iteration, the reference the fast path
  /// is tested against.
  bool fast_forward_loops = true;
  /// How the user raises max_executed_instructions, which its error adds:
  /// the caller names its own flag or setting; sim/ knows no command line.
  /// Empty: the error offers only a lower trip count.
  std::string raise_executed_instructions;
  /// The devices of the SPMD program; unset: the module header's counts,
  /// raised to cover the ids its collectives name (hlo::SpmdConfig::CoveringModule).
  std::optional<hlo::SpmdConfig> spmd;
  /// Times collectives on the network. nullptr: device 0 runs alone and a
  /// collective costs only its local work (its HBM bytes, the adds of a
  /// reduction), the single-chip model. Not owned; must outlive the call.
  const ici::CollectiveTimer* interconnect = nullptr;
  /// Algorithm asked of the interconnect for every collective that can run
  /// it; a collective it cannot run (kInvalidArgument) takes kAuto.
  ici::Algorithm algorithm = ici::Algorithm::kAuto;
  /// Where the program runs on the network: its device d is the network's
  /// device placement[d], one distinct device each. Empty: device d is the
  /// network's device d, and the devices fill whole chips from chip 0. Jobs
  /// sharing a network (SimulationJob::shared_network) run on disjoint
  /// devices.
  std::vector<int64_t> placement;
  /// Stragglers: device number -> factor (>= 1) on the cycles of each of its
  /// kernels. Devices not listed run at 1.
  std::map<int64_t, double> device_slowdown;
  /// Simulate one device for all when every device's timeline is provably the
  /// same (docs/models.md, "SPMD runtime"); false simulates every device.
  bool exploit_symmetry = true;
};

/// What limited an instruction: the unit with the most busy cycles, the
/// fixed start-up when every unit finished within it, or the interconnect
/// (a collective waiting for its group and its transfer).
/// The units are chip::Unit's, from the same list (sim/chip/unit.def).
enum class BoundBy : uint8_t {
#define V(enumerator, name) enumerator,
#include "sim/chip/unit.def"
#undef V
  kLatency,
  kIci,
};

/// The member of BoundBy that names `unit`.
BoundBy BoundByUnit(chip::Unit unit);

/// A unit's display name (chip::UnitName: "MXU", "VPU", "transpose", ...),
/// "latency" or "ICI".
std::string_view BoundByName(BoundBy bound);

/// One executed instruction (an instruction inside a loop body appears once
/// per iteration simulated; instructions that do no work are not listed), or
/// the runs of it in fast-forwarded iterations.
struct OpRecord {
  /// What ran: an instruction of the timed module, which outlives the result
  /// (its name and opcode are read from it, not copied per execution).
  const hlo::HloInstruction* instruction = nullptr;
  int64_t start_cycle = 0;  ///< when TensorCore 0 issued it
  int64_t cycles = 0;       ///< until the next instruction may issue
  int64_t flops = 0;        ///< whole chip
  int64_t hbm_bytes = 0;    ///< whole chip
  int64_t pcie_bytes = 0;   ///< whole chip: to or from host memory
  BoundBy bound_by = BoundBy::kLatency;
  chip::UnitCycles unit_cycles{};  ///< busy cycles of each unit of one TensorCore
  /// Of `cycles`, the fixed kernel start-up and the HBM pipeline's exposed
  /// prologue, epilogue and per-block steps (no unit hides them).
  int64_t overhead_cycles = 0;
  /// The runs this record stands for: 1, or the runs of the instruction in
  /// the iterations of a loop fast-forwarded after it, each a copy of this
  /// one (the first starting at start_cycle). cycles, flops, hbm_bytes,
  /// pcie_bytes, unit_cycles and overhead_cycles are those of one run; the Total*
  /// functions sum over the runs.
  int64_t runs = 1;

  int64_t TotalCycles() const { return SatMul(cycles, runs); }
  int64_t TotalFlops() const { return SatMul(flops, runs); }
  int64_t TotalHbmBytes() const { return SatMul(hbm_bytes, runs); }
  int64_t TotalPcieBytes() const { return SatMul(pcie_bytes, runs); }
  int64_t TotalOverheadCycles() const { return SatMul(overhead_cycles, runs); }
};

/// A collective's kind as reports and errors spell it: the HLO spelling
/// ("all-reduce", ...; ici::CollectiveKindName's), except "send/recv" for a
/// channel's send and recv, two HLO ops (ici spells it "send-recv", as
/// `tpusim collective --op` takes it).
std::string_view CollectiveKindSpelling(ici::CollectiveKind kind);

/// One instance of a collective (one execution of its instruction on every
/// participant): every group of the instruction, timed together.
struct CollectiveRecord {
  /// What ran: an instruction of the timed module, which outlives the result.
  /// For send/recv, the send that ran in the instance (when only the recv
  /// ran, the channel's first send; the recv in a module without one).
  const hlo::HloInstruction* instruction = nullptr;
  ici::CollectiveKind kind = ici::CollectiveKind::kAllReduce;
  int64_t execution = 0;   ///< 0 for the instruction's first execution, then 1, ...
  int64_t start_cycle = 0; ///< when the first group's last participant arrived
  int64_t cycles = 0;      ///< until the last group's transfer ended
  int64_t bytes = 0;       ///< V (ici::Collective::bytes)
  int64_t ici_bytes = 0;   ///< summed over links
  ici::Algorithm algorithm = ici::Algorithm::kAuto;  ///< the one that ran (never kAuto)
  std::string explanation; ///< what bounded it, from the interconnect
  /// Network cycles it lost to collectives in flight with it (shared links):
  /// its network time minus its time alone; 0 when it ran alone.
  int64_t contention_cycles = 0;
  /// Participating devices, group by group (pairs' endpoints for permute and
  /// send/recv).
  std::vector<std::vector<int64_t>> groups;
  std::vector<ici::LinkBytes> links;  ///< bytes it put on each link
};

/// One device of an SPMD run.
struct DeviceTiming {
  int64_t device = 0;
  int64_t end_cycle = 0;  ///< end of its last instruction (and outstanding async work)
  /// Cycles it spent blocked at collectives waiting for other participants.
  int64_t collective_wait_cycles = 0;
  double slowdown = 1;
  /// Its executed instructions; kept for devices 1 .. kTracedDevices-1 only
  /// (device 0's are TimingResult::ops).
  std::vector<OpRecord> ops;
};

/// Devices whose per-instruction records a run keeps (for the trace).
inline constexpr int64_t kTracedDevices = 8;

/// ICI traffic on one directed link over the whole run.
struct LinkUse {
  int32_t link = 0;
  std::string name;
  int64_t from = -1;  ///< the node it leaves (TimingResult::nodes), -1 when unknown
  int64_t to = -1;    ///< the node it enters
  int64_t bytes = 0;
  /// bytes / (bandwidth x run time); 0 when the interconnect gives no bandwidth.
  double utilisation = 0;
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
  int64_t pcie_bytes = 0;     ///< to and from host memory
  std::vector<OpRecord> ops;  ///< device 0's, in issue order
  int64_t device_count = 1;   ///< devices of the SPMD program
  /// "single device" (no interconnect, or one device), "used" (one device
  /// simulated for all), or "not used: " and why.
  std::string symmetry = "single device";
  std::string interconnect;                   ///< the network's description, when there is one
  std::vector<DeviceTiming> devices;          ///< the simulated devices, by number
  std::vector<CollectiveRecord> collectives;  ///< in order of start, then name
  std::vector<LinkUse> links;                 ///< links that carried bytes, by link id
  std::vector<std::string> nodes;             ///< the network's node names, by node id
};

/// Times `module` on `chip` (on every device when options.interconnect is
/// set). Input errors (an unsupported dot algorithm, bad
/// dimension numbers, too many executed instructions, collective ids out of
/// range, a collective some participant never reaches) are kInvalidArgument,
/// kUnimplemented or kResourceExhausted with FILE:LINE:COL of the instruction.
StatusOr<TimingResult> SimulateModule(const hlo::HloModule& module, const arch::ChipConfig& chip,
                                      const TimingOptions& options);

/// Whether `devices` devices fit `network`: without a `placement`, whole
/// chips of its devices_per_chip, no more than it has; with one (see
/// TimingOptions::placement), one distinct network device per program device.
/// The message (without a location) says what is missing; SimulateModule
/// checks it, and a caller can check it before other work and place the
/// error where the topology was written.
Status CheckDevicesFitNetwork(int64_t devices, const ici::CollectiveTimer& network,
                              std::span<const int64_t> placement = {});

/// One module on one chip, for SimulateBatch.
struct SimulationJob {
  const hlo::HloModule* module = nullptr;
  const arch::ChipConfig* chip = nullptr;
  TimingOptions options;
  /// -1: the job has the network to itself. Jobs of one batch with the same
  /// group number >= 0 run at the same time on one network (the same
  /// options.interconnect, the same chip clock, disjoint placements): their
  /// collectives in flight together share links (docs/models.md, "Jobs
  /// sharing a network").
  int32_t shared_network = -1;
};

/// Times jobs in one SystemC run, each from cycle 0 and sharing nothing but
/// the network of its shared_network group: the way to time several modules
/// or chips in one process. One result per job, in order: a job with an error
/// (SimulateModule's) has it, and the other jobs are timed all the same
/// (though not with its traffic). Jobs that all fail before the run leave it
/// unused; after a run, a second call gives every job kFailedPrecondition.
std::vector<StatusOr<TimingResult>> SimulateBatch(std::span<const SimulationJob> jobs);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_TIMING_H_
