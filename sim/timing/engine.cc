// The timing engine on SystemC, at transaction level (TLM-2.0 loosely timed
// with temporal decoupling). Each TensorCore is an SC_THREAD that issues its
// program in order; each unit (MXU, VPU, XLU, HBM, VMEM, DMA) is a TLM target
// whose b_transport answers with the unit's busy time as a delay. An
// instruction takes the longest of its units plus the kernel start-up; the
// core adds that to its local time offset and synchronises with the kernel
// only when the quantum is used up, so idle units schedule nothing and there
// is no clocked process.
//
// SPMD: with an interconnect, every simulated device has its own TensorCores
// running the one lowered program, all in the same SystemC run; their leaders
// meet at collectives in SpmdRendezvous (spmd_rendezvous.h).
//
// Time base: systemc_time.h.
#include <tlm.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

#include "sim/base/arith.h"
#include "sim/chip/core_cost.h"
#include "sim/timing/collective_plan.h"
#include "sim/timing/program.h"
#include "sim/timing/spmd_rendezvous.h"
#include "sim/timing/systemc_time.h"
#include "sim/timing/timing.h"

// libsystemc's own main() calls sc_main; tpusim has its own main and starts
// the kernel from SimulateBatch, so this definition only satisfies the linker.
int sc_main(int, char*[]) { return 0; }

namespace tpusim::timing {
namespace {

using chip::Unit;

/// A unit of one TensorCore as a TLM target: the payload's data pointer is the
/// instruction's chip::CoreWork; the answer is the unit's busy time, added to
/// the delay. (The TensorCore queues the DMA engine's copies itself: a
/// kernel's HBM stream slows the copies in flight.)
class UnitTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<UnitTarget> socket;

  UnitTarget(sc_core::sc_module_name name, const chip::CoreCost& cost, Unit unit)
      : sc_core::sc_module(name), socket("socket"), cost_(cost), unit_(unit) {
    socket.register_b_transport(this, &UnitTarget::BTransport);
  }

 private:
  void BTransport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    const auto* work = reinterpret_cast<const chip::CoreWork*>(payload.get_data_ptr());
    delay += CyclesToTime(cost_.UnitBusy(unit_, *work));
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  const chip::CoreCost& cost_;
  Unit unit_;
};

/// Per-instruction barrier of the TensorCores of a megacore chip: XLA splits
/// each kernel across them and the next kernel starts when both are done.
struct CoreBarrier {
  int64_t cores = 1;
  int64_t arrived = 0;
  sc_core::sc_event all_arrived;
};

/// What one TensorCore of an SPMD device needs beyond its program.
struct CoreRole {
  int64_t device = 0;
  /// Core 0 of each device meets the other devices at collectives and
  /// reports; the device's other cores follow it through the barrier.
  bool leader = true;
  double slowdown = 1;
  SpmdRendezvous* spmd = nullptr;       ///< nullptr: no interconnect
  std::vector<OpRecord>* records = nullptr;  ///< where to record, or nullptr
  DeviceTiming* timing = nullptr;       ///< the leader's end and waits
  bool fast_forward_loops = true;       ///< TimingOptions::fast_forward_loops
  /// TimingOptions::max_executed_instructions: instructions simulated one by
  /// one (fast-forwarded iterations do not count).
  int64_t max_executed_instructions = 0;
};

/// One TensorCore issuing the program in order.
class TensorCore : public sc_core::sc_module {
 public:
  std::array<std::unique_ptr<tlm_utils::simple_initiator_socket<TensorCore>>, chip::kUnitCount>
      sockets;

  SC_HAS_PROCESS(TensorCore);
  TensorCore(sc_core::sc_module_name name, const Program& program, const chip::CoreCost& cost,
             CoreBarrier& barrier, CoreRole role)
      : sc_core::sc_module(name),
        program_(program),
        cost_(cost),
        barrier_(barrier),
        role_(role),
        async_done_at_(program.async_count, 0),
        async_start_record_(program.async_count, kNoRecord),
        async_over_pcie_(program.async_count, false),
        async_rendezvous_(program.async_count),
        meets_collectives_(role.spmd != nullptr && role.leader),
        runs_of_(program.costs.size(), 0),
        loop_runs_(program.loop_trips.size(), 0),
        conditional_runs_(program.conditionals.size(), 0) {
    for (int u = 0; u < chip::kUnitCount; ++u) {
      sockets[u] = std::make_unique<tlm_utils::simple_initiator_socket<TensorCore>>(
          (std::string("unit_") + std::to_string(u)).c_str());
    }
    SC_THREAD(Run);
  }

  bool finished() const { return finished_; }
  /// Where the instructions simulated one by one reached their cap
  /// (TimingOptions::max_executed_instructions).
  struct OverLimit {
    const Step* step = nullptr;  ///< the instruction that went over; nullptr: never
    const Step* loop = nullptr;  ///< the innermost loop's end step around it, if any
    int64_t iteration = 0;       ///< that loop's iterations finished
    int64_t trips = 0;           ///< and the iterations it was to run
  };
  const OverLimit& over_limit() const { return over_limit_; }
  /// The instruction whose time would carry the clock past
  /// kMaxSimulatedCycles, and that time; nullptr when the run stayed within.
  const hlo::HloInstruction* beyond_horizon() const { return beyond_horizon_; }
  int64_t beyond_horizon_cycles() const { return beyond_horizon_cycles_; }

 private:
  /// Asks one unit for its busy time for `work`, issued at local offset `at`.
  int64_t Ask(Unit unit, const chip::CoreWork& work, const sc_core::sc_time& at) {
    payload_.set_command(tlm::TLM_IGNORE_COMMAND);
    payload_.set_data_ptr(reinterpret_cast<unsigned char*>(const_cast<chip::CoreWork*>(&work)));
    payload_.set_data_length(sizeof(chip::CoreWork));
    sc_core::sc_time delay = at;
    (*sockets[static_cast<int>(unit)])->b_transport(payload_, delay);
    return TimeToCycles(delay - at);
  }

  /// A kernel's cycles on a straggler: scaled by its slowdown, rounded up;
  /// past the horizon it stays just beyond it, where Run refuses it.
  int64_t Slowed(int64_t cycles) const {
    if (role_.slowdown == 1) return cycles;
    const double slowed = std::ceil(static_cast<double>(cycles) * role_.slowdown);
    return slowed > static_cast<double>(kMaxSimulatedCycles) ? kMaxSimulatedCycles + 1
                                                             : static_cast<int64_t>(slowed);
  }

  /// Stops this core when `step`, `cycles` long from cycle `from`, would end
  /// past the horizon.
  bool WithinHorizon(const Step& step, int64_t from, int64_t cycles) {
    if (cycles <= kMaxSimulatedCycles - from) return true;
    beyond_horizon_ = step.inst;
    beyond_horizon_cycles_ = cycles;
    return false;
  }

  /// Cycles of a wait at collectives: when the last group completed and
  /// when the last transfer ended.
  struct Waited {
    int64_t completed = 0;
    int64_t end = 0;
  };

  /// Blocks this thread until every rendezvous of `met` has completed and
  /// its transfer has ended (an end can move while it waits: collectives that
  /// join the network later share its links); adds the wait for the other
  /// participants to the device's collective wait. False when the run was
  /// stopped (an interconnect error).
  bool AwaitGroups(tlm_utils::tlm_quantumkeeper& keeper, const std::vector<Rendezvous*>& met,
                   Waited& waited) {
    keeper.sync();
    const int64_t now = TimeToCycles(sc_core::sc_time_stamp());
    waited = {now, now};
    for (Rendezvous* r : met) {
      if (!role_.spmd->AwaitEnd(*r)) return false;
      waited.completed = std::max(waited.completed, r->start);
      waited.end = std::max(waited.end, r->end);
    }
    role_.timing->collective_wait_cycles += waited.completed - now;
    return true;
  }

  /// A while loop whose iterations this core is running.
  struct ActiveLoop {
    size_t begin = 0;             ///< index of its loop-begin step
    int64_t trips = 0;            ///< iterations of this execution of the loop
    int64_t iteration = 0;        ///< iterations finished
    int64_t iteration_start = 0;  ///< cycle the current iteration started at
    std::vector<int64_t> copies_at_start;  ///< CopiesInFlight when it started
    bool met_collective = false;  ///< the current iteration took part in a collective
    size_t first_record = 0;      ///< the current iteration's first record
  };

  /// The DMA engine's state seen from cycle `now`, into `ends`: how many
  /// cycles after it each async id's copy and each queue end (0: ended). The
  /// only state a unit keeps from one instruction to the next. Filled in
  /// place: a loop's iterations reuse the one vector.
  void CopiesInFlight(int64_t now, std::vector<int64_t>& ends) const {
    ends.clear();
    for (const int64_t done : async_done_at_) ends.push_back(std::max<int64_t>(0, done - now));
    for (const int64_t idle_at :
         {dma_idle_at_, pcie_.to_host_idle_at(), pcie_.from_host_idle_at()}) {
      ends.push_back(std::max<int64_t>(0, idle_at - now));
    }
  }

  void StartIteration(ActiveLoop& loop, const tlm_utils::tlm_quantumkeeper& keeper) {
    loop.iteration_start = TimeToCycles(keeper.get_current_time());
    CopiesInFlight(loop.iteration_start, loop.copies_at_start);
    loop.met_collective = false;
    loop.first_record = role_.records != nullptr ? role_.records->size() : 0;
  }

  /// True when every later iteration of `loop` will repeat the one that just
  /// ended, cycle for cycle: it ended with the copies in flight as it started
  /// (none, or a prefetch for the next iteration as far ahead), met no other
  /// device, and its instructions and their costs are the same every
  /// iteration (the program is lowered once per loop, and no cost or inner
  /// trip count in it changes between executions).
  bool Steady(const ActiveLoop& loop, const tlm_utils::tlm_quantumkeeper& keeper) {
    if (!role_.fast_forward_loops || program_.steps[loop.begin].varies || loop.met_collective) {
      return false;
    }
    CopiesInFlight(TimeToCycles(keeper.get_current_time()), copies_now_);
    return loop.copies_at_start == copies_now_;
  }

  /// Runs the remaining iterations of `loop`, whose end step is `end`, as
  /// copies of the one that just ended: the clock and the copies in flight
  /// move on by their cycles and the iteration's records stand for them too
  /// (OpRecord::runs). False when that carries the run past the horizon.
  bool FastForward(const Step& end, ActiveLoop& loop, tlm_utils::tlm_quantumkeeper& keeper) {
    const int64_t now = TimeToCycles(keeper.get_current_time());
    const int64_t period = now - loop.iteration_start;
    const int64_t remaining = loop.trips - loop.iteration;
    const int64_t skipped = SatMul(period, remaining);
    if (!WithinHorizon(end, now, skipped)) return false;
    if (role_.records != nullptr) {
      std::vector<OpRecord>& records = *role_.records;
      const size_t last = records.size();
      for (size_t r = loop.first_record; r < last; ++r) {
        OpRecord copy = records[r];
        copy.start_cycle += period;
        copy.runs = SatMul(copy.runs, remaining);
        records.push_back(copy);
      }
      // A copy still in flight was started by the last iteration, which the
      // new records stand for.
      for (size_t& r : async_start_record_) {
        if (r != kNoRecord && r >= loop.first_record && r < last) r += last - loop.first_record;
      }
    }
    for (int64_t& done : async_done_at_) {
      if (done > now) done = SatAdd(done, skipped);
    }
    if (dma_idle_at_ > now) dma_idle_at_ = SatAdd(dma_idle_at_, skipped);
    pcie_.Delay(now, skipped);
    Advance(keeper, skipped);
    loop.iteration = loop.trips;
    return true;
  }

  /// The cycles of a kernel issued at cycle `begin`, `cycles` long with
  /// `hbm_cycles` of HBM time when alone, while the DMA engine still has
  /// copies queued: the two share this core's HBM bandwidth
  /// (chip::HbmSharing), so the kernel may take longer and the copies in
  /// flight finish later (their done times and their starts' DMA spans move).
  int64_t ShareHbmWithCopies(int64_t begin, int64_t cycles, int64_t hbm_cycles) {
    if (dma_idle_at_ <= begin) return cycles;  // no copy in flight
    const chip::HbmSharing sharing(begin, cycles, hbm_cycles, dma_idle_at_);
    for (size_t id = 0; id < async_done_at_.size(); ++id) {
      if (async_over_pcie_[id]) continue;  // paced by PCIe, a small share of HBM
      const int64_t end = sharing.CopyEnd(async_done_at_[id]);
      if (end != async_done_at_[id] && async_start_record_[id] != kNoRecord) {
        (*role_.records)[async_start_record_[id]].unit_cycles[static_cast<int>(Unit::kDma)] +=
            end - async_done_at_[id];
      }
      async_done_at_[id] = end;
    }
    dma_idle_at_ = sharing.CopyEnd(dma_idle_at_);
    return sharing.KernelCycles();
  }

  /// Moves this core's clock on by `cycles`; on a megacore chip, waits for
  /// the other TensorCores to get there too.
  void Advance(tlm_utils::tlm_quantumkeeper& keeper, int64_t cycles) {
    keeper.inc(CyclesToTime(cycles));
    if (barrier_.cores > 1) {
      keeper.sync();
      if (++barrier_.arrived == barrier_.cores) {
        barrier_.arrived = 0;
        barrier_.all_arrived.notify();
      } else {
        sc_core::wait(barrier_.all_arrived);
      }
    } else if (keeper.need_sync()) {
      keeper.sync();
    }
  }

  /// Issues one instruction: meets its collective, asks the units, records
  /// it. False when the run must stop (an interconnect error or the horizon).
  bool Execute(const Step& step, tlm_utils::tlm_quantumkeeper& keeper) {
    const int64_t start = TimeToCycles(keeper.get_current_time());
    OpRecord record;
    int64_t cycles = 0;
    const KernelCost& cost =
        program_.CostOn(step, role_.device, runs_of_[step.inst->unique_id()]++);
    // A collective this device takes part in: arrive at its group (or
    // its transfers).
    std::vector<Rendezvous*> met;
    std::optional<Waited> network;  ///< a sync collective's wait for its transfer
    const CollectivePlan* plan =
        role_.spmd != nullptr ? role_.spmd->PlanFor(*step.inst, role_.device) : nullptr;
    // Every core of the device marks the loops, so that all of them
    // fast-forward the same iterations.
    if (plan != nullptr) {
      for (ActiveLoop& loop : loops_) loop.met_collective = true;
    }
    if (meets_collectives_ && plan != nullptr) {
      keeper.sync();
      const bool recv = step.inst->opcode() == hlo::HloOpcode::kRecv;
      const int64_t execution = executions_[{plan->key, recv}]++;
      for (int32_t group : RendezvousOf(*plan, recv, role_.device)) {
        met.push_back(&role_.spmd->Arrive(*plan, execution, group, role_.device,
                                          TimeToCycles(sc_core::sc_time_stamp())));
      }
      if (cost.kind == StepKind::kKernel) {
        if (!AwaitGroups(keeper, met, network.emplace())) return false;
      }
    }
    switch (cost.kind) {
      case StepKind::kKernel: {
        // The per-block pipeline steps hold up the TensorCore's units,
        // not the HBM stream, which runs on under the DMA engines (as does
        // a kernel's own transfer to or from host memory, its DMA work).
        const int64_t steps = cost_.PipelineStepCycles(cost.per_core);
        int64_t longest = 0;
        int64_t longest_busy = 0;
        record.bound_by = BoundBy::kLatency;
        for (int u = 0; u < chip::kUnitCount; ++u) {
          const Unit unit = static_cast<Unit>(u);
          int64_t busy = Ask(unit, cost.per_core, keeper.get_local_time());
          if (unit == Unit::kDma && cost_.dma().OverPcie(cost.per_core.host_bytes)) {
            // Its transfer queues on PCIe (chip::PcieQueues).
            const int64_t end = pcie_.EndOf(start, busy, cost.pcie_to_host);
            pcie_.Take(end, cost.pcie_to_host);
            busy = end - start;
          }
          record.unit_cycles[u] = busy;
          longest_busy = std::max(longest_busy, busy);
          const bool streamed = unit == Unit::kHbm || unit == Unit::kDma;
          const int64_t paced = streamed ? busy : SatAdd(busy, steps);
          if (paced > longest) {
            longest = paced;
            record.bound_by = busy > 0 ? BoundByUnit(unit) : BoundBy::kLatency;
          }
        }
        // Overhead on top of the busiest unit: the fixed start-up, the
        // pipeline's exposed prologue and epilogue, and the steps that the
        // HBM stream did not hide (longest - longest_busy).
        const int64_t edges = cost_.PipelineEdgeCycles(cost.per_core);
        const int64_t fixed =
            SatAdd(SatAdd(cost_.kernel_start(), edges), longest - longest_busy);
        longest = longest_busy;
        record.overhead_cycles = fixed;
        if (longest < fixed) record.bound_by = BoundBy::kLatency;
        cycles = Slowed(SatAdd(longest, fixed));
        const int64_t shared = ShareHbmWithCopies(
            network.has_value() ? network->completed : TimeToCycles(keeper.get_current_time()),
            cycles, Slowed(record.unit_cycles[static_cast<int>(Unit::kHbm)]));
        if (shared > cycles) record.bound_by = BoundBy::kHbm;
        cycles = shared;
        if (network.has_value()) {
          // The local part (the adds of a reduction) overlaps the transfer,
          // which started when the group completed; the thread has waited
          // until the transfer ended.
          const int64_t local_end = SatAdd(network->completed, cycles);
          if (network->end > local_end) record.bound_by = BoundBy::kIci;
          cycles = std::max(local_end, network->end) - TimeToCycles(keeper.get_current_time());
        }
        break;
      }
      case StepKind::kAsyncStart: {
        // Copies queue on the DMA engine, those to or from host memory on
        // PCIe (chip::PcieQueues): this one starts when the last one queued
        // there has finished.
        const int64_t busy = Ask(Unit::kDma, cost.per_core, keeper.get_local_time());
        const bool over_pcie = cost_.dma().OverPcie(cost.per_core.host_bytes);
        const int64_t until_done = (over_pcie ? pcie_.EndOf(start, busy, cost.pcie_to_host)
                                              : SatAdd(std::max(start, dma_idle_at_), busy)) -
                                   start;
        record.unit_cycles[static_cast<int>(Unit::kDma)] = until_done;
        if (!WithinHorizon(step, start, until_done)) return false;
        async_done_at_[step.async_id] = start + until_done;
        async_over_pcie_[step.async_id] = over_pcie;
        async_start_record_[step.async_id] =
            role_.records != nullptr ? role_.records->size() : kNoRecord;
        if (over_pcie) {
          pcie_.Take(start + until_done, cost.pcie_to_host);
        } else {
          dma_idle_at_ = start + until_done;
        }
        // A start of an earlier iteration that no done awaited: its
        // transfers still end the run.
        std::vector<Rendezvous*>& joined = async_rendezvous_[step.async_id];
        unawaited_.insert(unawaited_.end(), joined.begin(), joined.end());
        joined = std::move(met);
        record.bound_by = BoundBy::kDma;
        break;
      }
      case StepKind::kAsyncDone: {
        const int64_t issued = TimeToCycles(keeper.get_current_time());
        int64_t ready = step.async_id >= 0 ? async_done_at_[step.async_id] : 0;
        record.bound_by = BoundBy::kDma;
        if (step.async_id >= 0 && !async_rendezvous_[step.async_id].empty()) {
          Waited waited;
          if (!AwaitGroups(keeper, async_rendezvous_[step.async_id], waited)) return false;
          if (waited.end > ready) ready = waited.end, record.bound_by = BoundBy::kIci;
          async_rendezvous_[step.async_id].clear();  // its transfers have ended
        }
        cycles = std::max<int64_t>(0, ready - TimeToCycles(keeper.get_current_time()));
        if (ready <= issued) record.bound_by = BoundBy::kLatency;
        break;
      }
      case StepKind::kFree:
        break;
    }
    // From now, not from the step's start: a collective's wait has moved the clock.
    if (!WithinHorizon(step, TimeToCycles(keeper.get_current_time()), cycles)) return false;
    Advance(keeper, cycles);
    if (role_.records != nullptr) {
      record.instruction = step.inst;
      record.start_cycle = start;
      record.cycles = TimeToCycles(keeper.get_current_time()) - start;
      record.flops = cost.flops;
      record.hbm_bytes = cost.hbm_bytes;
      record.pcie_bytes = cost.pcie_bytes;
      role_.records->push_back(std::move(record));
    }
    return true;
  }

  void Run() {
    tlm_utils::tlm_quantumkeeper keeper;
    keeper.reset();
    // The host hands the device its program and arguments before the first
    // kernel runs.
    keeper.inc(CyclesToTime(cost_.program_launch()));
    const std::vector<Step>& steps = program_.steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      switch (step.role) {
        case StepRole::kLoopBegin: {
          const int64_t trips =
              program_.loop_trips[step.control].On(role_.device).At(loop_runs_[step.control]++);
          if (trips <= 0) {  // this execution of the loop does not iterate
            i = step.partner;
            break;
          }
          ActiveLoop& loop = loops_.emplace_back();
          loop.begin = i;
          loop.trips = trips;
          StartIteration(loop, keeper);
          break;
        }
        case StepRole::kLoopEnd: {
          ActiveLoop& loop = loops_.back();
          ++loop.iteration;
          if (loop.iteration < loop.trips && Steady(loop, keeper) &&
              !FastForward(step, loop, keeper)) {
            return;
          }
          if (loop.iteration < loop.trips) {
            StartIteration(loop, keeper);
            i = loop.begin;
          } else {
            loops_.pop_back();
          }
          break;
        }
        case StepRole::kBranch: {
          const Conditional& conditional = program_.conditionals[step.control];
          const int64_t taken =
              conditional.taken.On(role_.device).At(conditional_runs_[step.control]++);
          i = conditional.branch_begins[taken] - 1;  // the loop's ++i enters the branch
          break;
        }
        case StepRole::kBranchEnd:
          i = step.partner;  // past the other branches
          break;
        case StepRole::kInstruction:
          if (++executed_ > role_.max_executed_instructions) {
            over_limit_.step = &step;
            if (!loops_.empty()) {
              over_limit_.loop = &steps[steps[loops_.back().begin].partner];
              over_limit_.iteration = loops_.back().iteration;
              over_limit_.trips = loops_.back().trips;
            }
            return;
          }
          if (!Execute(step, keeper)) return;
          break;
      }
    }
    int64_t end = TimeToCycles(keeper.get_current_time());
    end = std::max({end, dma_idle_at_, pcie_.to_host_idle_at(),
                    pcie_.from_host_idle_at()});  // outstanding copies
    keeper.sync();
    // A *-start whose done never ran: its transfer's end is final once passed.
    for (const auto& started : async_rendezvous_) {
      unawaited_.insert(unawaited_.end(), started.begin(), started.end());
    }
    for (const Rendezvous* r : unawaited_) {
      if (r->complete && !role_.spmd->AwaitEnd(*r)) return;
      end = std::max(end, r->end);
    }
    if (role_.timing != nullptr) role_.timing->end_cycle = end;
    finished_ = true;
    keeper.sync();
  }

  const Program& program_;
  const chip::CoreCost& cost_;
  CoreBarrier& barrier_;
  CoreRole role_;
  std::vector<int64_t> async_done_at_;  ///< completion cycle of each async id's local copy
  static constexpr size_t kNoRecord = SIZE_MAX;
  /// Index in role_.records of each async id's last start, whose DMA span a
  /// kernel sharing HBM with the copy stretches; kNoRecord when not recorded.
  std::vector<size_t> async_start_record_;
  /// Steady's view of the copies in flight, kept to reuse its memory.
  std::vector<int64_t> copies_now_;
  /// Whether each async id's last copy went over PCIe (Dma::OverPcie).
  std::vector<bool> async_over_pcie_;
  /// The rendezvous each async id joined (none for a local copy).
  std::vector<std::vector<Rendezvous*>> async_rendezvous_;
  /// Leaders of SPMD runs meet the other devices at collectives.
  bool meets_collectives_;
  /// Executions so far by (rendezvous key, is a recv): a send/recv channel
  /// counts its sends and its recvs apart.
  std::map<std::pair<int64_t, bool>, int64_t> executions_;
  /// Completion cycle of the last copy queued on the DMA engine over HBM,
  /// and the transfers queued each way on PCIe.
  int64_t dma_idle_at_ = 0;
  chip::PcieQueues pcie_;
  /// Rendezvous of starts whose id a later start reused before a done
  /// awaited them (a start without a done, in a loop).
  std::vector<Rendezvous*> unawaited_;
  std::vector<ActiveLoop> loops_;  ///< the loops being run, innermost last
  /// Executions so far of each instruction by unique id, and of each loop
  /// and conditional by Step::control: what varies between executions is
  /// looked up by them.
  std::vector<int64_t> runs_of_;
  std::vector<int64_t> loop_runs_;
  std::vector<int64_t> conditional_runs_;
  int64_t executed_ = 0;          ///< instructions simulated one by one
  OverLimit over_limit_;
  bool finished_ = false;
  const hlo::HloInstruction* beyond_horizon_ = nullptr;
  int64_t beyond_horizon_cycles_ = 0;
  /// Reused for every request: constructing a payload allocates its extension array.
  tlm::tlm_generic_payload payload_;
};

/// Everything one job elaborates: its program, its devices' cores and their
/// units, and the collectives' shared state.
struct JobModel {
  Program program;
  std::unique_ptr<chip::CoreCost> cost;
  hlo::SpmdConfig config;
  std::vector<int64_t> simulated;  ///< device numbers with cores of their own
  std::vector<std::unique_ptr<CoreBarrier>> barriers;  ///< one per simulated device
  std::vector<std::unique_ptr<TensorCore>> cores;
  std::vector<std::unique_ptr<UnitTarget>> units;
  /// The network of a job that has it to itself (else its group's, in SimulateBatch).
  std::unique_ptr<SharedNetwork> own_network;
  std::unique_ptr<SpmdRendezvous> spmd;
  const hlo::HloModule* module = nullptr;
  const SimulationJob* job = nullptr;
  TimingResult result;
};

/// Whether every device's timeline equals device 0's, so that one simulated
/// device stands for all: "used", or "not used: " and why (docs/models.md).
std::string SymmetryOf(const SimulationJob& job, const Program& program,
                       const CollectivePlans& plans, const hlo::SpmdConfig& config) {
  if (!job.options.exploit_symmetry) return "not used: disabled";
  for (const auto& [device, factor] : job.options.device_slowdown) {
    if (factor != 1) return "not used: device " + std::to_string(device) + " is slowed down";
  }
  for (const auto& [device, costs] : program.varying_costs) {
    if (device == 0 || device >= config.device_count() || costs.empty()) continue;
    for (const Step& step : program.steps) {
      if (step.role == StepRole::kInstruction && costs.count(step.inst->unique_id()) > 0) {
        return "not used: the ragged-dot groups of " + step.inst->name() + " differ on device " +
               std::to_string(device);
      }
    }
  }
  for (const Step& step : program.steps) {
    const bool loop = step.role == StepRole::kLoopBegin;
    if (!loop && step.role != StepRole::kBranch) continue;
    const DeviceSeries& series =
        loop ? program.loop_trips[step.control] : program.conditionals[step.control].taken;
    for (const auto& entry : series.differing) {
      if (entry.first <= 0 || entry.first >= config.device_count()) continue;
      return "not used: " + step.inst->name() +
             (loop ? " iterates otherwise" : " takes other branches") + " on device " +
             std::to_string(entry.first);
    }
  }
  for (const auto& plan : plans) {
    if (plan == nullptr) continue;
    if (plan->point_to_point) {
      return "not used: " + plan->named->name() + " makes devices wait on their own transfers";
    }
    for (int64_t d = 0; d < config.device_count(); ++d) {
      if (plan->group_of_device[d] < 0) {
        return "not used: " + plan->named->name() + " leaves device " + std::to_string(d) + " out";
      }
    }
  }
  return "used";
}

/// Sets up the SPMD part of a job with an interconnect: devices, plans,
/// symmetry, its collectives on `shared` (its group's network) or a network
/// of its own (nullptr). Errors: bad device counts, placements or slowdowns,
/// unresolvable groups.
Status PrepareSpmd(const SimulationJob& job, SharedNetwork* shared, JobModel& m) {
  m.config = job.options.spmd.value_or(hlo::SpmdConfig::CoveringModule(*job.module));
  const int64_t devices = m.config.device_count();
  if (m.config.replica_count < 1 || m.config.partition_count < 1 ||
      (job.options.interconnect != nullptr && devices > hlo::kMaxSpmdDevices)) {
    return InvalidArgument(job.module->filename() + ": error: the SPMD program needs 1 to " +
                           std::to_string(hlo::kMaxSpmdDevices) + " devices, got " +
                           std::to_string(m.config.replica_count) + " replicas x " +
                           std::to_string(m.config.partition_count) + " partitions");
  }
  for (const auto& [device, factor] : job.options.device_slowdown) {
    if (device < 0 || device >= devices || !(factor >= 1)) {
      return InvalidArgument(job.module->filename() + ": error: slowdown of device " +
                             std::to_string(device) + ": needs a device below " +
                             std::to_string(devices) + " and a factor of at least 1");
    }
  }
  m.result.device_count = devices;
  if (job.options.interconnect == nullptr) {
    m.simulated = {0};
    return Status::Ok();
  }
  if (Status fits =
          CheckDevicesFitNetwork(devices, *job.options.interconnect, job.options.placement);
      !fits.ok()) {
    return InvalidArgument(job.module->filename() + ": error: " + fits.message());
  }
  TPUSIM_ASSIGN_OR_RETURN(CollectivePlans plans,
                          PlanCollectives(*job.module, m.program, m.config, job.options));
  m.result.interconnect = job.options.interconnect->Describe();
  m.result.symmetry = devices == 1 ? "single device" : SymmetryOf(job, m.program, plans, m.config);
  std::vector<bool> simulated(static_cast<size_t>(devices), false);
  const int64_t count = m.result.symmetry == "used" ? 1 : devices;
  for (int64_t d = 0; d < count; ++d) {
    m.simulated.push_back(d);
    simulated[d] = true;
  }
  if (shared == nullptr) {
    m.own_network = std::make_unique<SharedNetwork>(*job.options.interconnect, m.result.clock_hz);
    shared = m.own_network.get();
  }
  m.spmd = std::make_unique<SpmdRendezvous>(*shared, job.options.algorithm, std::move(plans),
                                            std::move(simulated), job.options.placement, m.result);
  return Status::Ok();
}

/// Link totals and utilisation over the run, from the collective timeline.
void SumLinks(const ici::CollectiveTimer& timer, TimingResult& r) {
  std::map<int32_t, int64_t> bytes;
  for (const CollectiveRecord& c : r.collectives) {
    for (const ici::LinkBytes& l : c.links) bytes[l.link] = SatAdd(bytes[l.link], l.bytes);
  }
  const double seconds = static_cast<double>(r.cycles) / static_cast<double>(r.clock_hz);
  for (const auto& [link, total] : bytes) {
    const auto [from, to] = timer.LinkEnds(link);
    LinkUse use{link, timer.LinkName(link), from, to, total, 0};
    const double bandwidth = static_cast<double>(timer.LinkBandwidth(link).value());
    if (bandwidth > 0 && seconds > 0) use.utilisation = static_cast<double>(total) / (bandwidth * seconds);
    r.links.push_back(std::move(use));
  }
  r.nodes = timer.NodeNames();
}

/// The error of a run whose instructions simulated one by one reached
/// `options.max_executed_instructions`: at the loop that was iterating (its
/// trip count is what the user can change), or at the instruction.
Status OverExecutedLimit(const hlo::HloModule& module, const TimingOptions& options,
                         const TensorCore::OverLimit& over) {
  const std::string limit = std::to_string(options.max_executed_instructions);
  const std::string& raise = options.raise_executed_instructions;
  if (over.loop == nullptr) {
    return ResourceExhausted(module.ErrorAt(
        over.step->inst->location(),
        over.step->inst->name() + ": the run reaches the limit of " + limit +
            " executed instructions here" + (raise.empty() ? "" : "; " + raise)));
  }
  const hlo::HloInstruction& loop = *over.loop->inst;
  return ResourceExhausted(module.ErrorAt(
      loop.location(),
      loop.name() + ": simulating this loop iteration by iteration reached the limit of " + limit +
          " executed instructions after " + std::to_string(over.iteration) + " of its " +
          std::to_string(over.trips) +
          " iterations (iterations that meet other devices, leave copies in flight or cost "
          "otherwise than the one before are not fast-forwarded); " +
          (raise.empty() ? "lower" : raise + " or lower") + " its trip count"));
}

bool g_simulated = false;  ///< the SystemC kernel has been started in this process

/// `job` lowered, with its SPMD run planned on `shared` (see PrepareSpmd):
/// everything before SystemC starts.
StatusOr<std::unique_ptr<JobModel>> PrepareJob(const SimulationJob& job, SharedNetwork* shared) {
  if (job.module == nullptr || job.chip == nullptr)
    return InvalidArgument("simulation job without module or chip");
  auto model = std::make_unique<JobModel>();
  model->module = job.module;
  model->job = &job;
  TPUSIM_ASSIGN_OR_RETURN(model->program, LowerModule(*job.module, *job.chip, job.options));
  model->cost = std::make_unique<chip::CoreCost>(*job.chip);
  TimingResult& r = model->result;
  r.chip = job.chip->name;
  r.module = job.module->name();
  r.clock_hz = job.chip->clock.value();
  r.tensorcores = model->program.cores;
  r.peak_flops = static_cast<double>(arch::MxuPeakBf16(*job.chip).value()) * r.tensorcores /
                 job.chip->tensorcores_per_chip;
  r.hbm_bandwidth = static_cast<double>(job.chip->hbm.bandwidth.value()) * r.tensorcores /
                    job.chip->tensorcores_per_chip;
  r.ops.reserve(model->program.steps.size());
  TPUSIM_RETURN_IF_ERROR(PrepareSpmd(job, shared, *model));
  return model;
}

/// The result of `m`'s part of the run, or the error that stopped it.
StatusOr<TimingResult> Finish(JobModel& m) {
  for (const auto& core : m.cores) {
    if (const hlo::HloInstruction* inst = core->beyond_horizon()) {
      return ResourceExhausted(m.module->ErrorAt(
          inst->location(),
          inst->name() + " takes " + std::to_string(core->beyond_horizon_cycles()) +
              " cycles, which carries the run past the simulator's horizon of 2^53 cycles"));
    }
  }
  for (const auto& core : m.cores) {
    if (core->over_limit().step != nullptr) {
      return OverExecutedLimit(*m.module, m.job->options, core->over_limit());
    }
  }
  if (m.spmd != nullptr) {
    TPUSIM_RETURN_IF_ERROR(m.spmd->error());
    const bool all_finished = std::all_of(m.cores.begin(), m.cores.end(),
                                          [](const auto& core) { return core->finished(); });
    if (!all_finished) return m.spmd->Deadlock(*m.module);
  }
  TimingResult& r = m.result;
  for (const DeviceTiming& d : r.devices) r.cycles = std::max(r.cycles, d.end_cycle);
  r.time_us = static_cast<double>(r.cycles) * 1e6 / static_cast<double>(r.clock_hz);
  for (const OpRecord& op : r.ops) {
    r.flops = SatAdd(r.flops, op.TotalFlops());
    r.hbm_bytes = SatAdd(r.hbm_bytes, op.TotalHbmBytes());
    r.pcie_bytes = SatAdd(r.pcie_bytes, op.TotalPcieBytes());
  }
  std::stable_sort(r.collectives.begin(), r.collectives.end(),
                   [](const CollectiveRecord& a, const CollectiveRecord& b) {
                     return std::tie(a.start_cycle, a.instruction->name(), a.execution) <
                            std::tie(b.start_cycle, b.instruction->name(), b.execution);
                   });
  if (m.job->options.interconnect != nullptr) SumLinks(*m.job->options.interconnect, r);
  return std::move(r);
}

/// The network of one SimulationJob::shared_network group, and which job
/// runs on each of its devices.
struct SharedNetworkGroup {
  std::unique_ptr<SharedNetwork> network;
  std::map<int64_t, size_t> job_of_device;  ///< network device -> job index
};

/// The network `job` (index `j` in its batch) shares, made by the group's
/// first job; nullptr when it has one of its own. Errors: a group whose jobs
/// name other interconnects or chip clocks.
StatusOr<SharedNetwork*> JoinGroup(const SimulationJob& job, size_t j,
                                   std::map<int32_t, SharedNetworkGroup>& groups) {
  if (job.shared_network < 0 || job.options.interconnect == nullptr || job.chip == nullptr) {
    return nullptr;
  }
  SharedNetworkGroup& group = groups[job.shared_network];
  if (group.network == nullptr) {
    group.network =
        std::make_unique<SharedNetwork>(*job.options.interconnect, job.chip->clock.value());
  } else if (&group.network->timer() != job.options.interconnect ||
             group.network->clock_hz() != job.chip->clock.value()) {
    return InvalidArgument("job " + std::to_string(j) + " shares network " +
                           std::to_string(job.shared_network) +
                           " with jobs on another interconnect or chip clock");
  }
  return group.network.get();
}

/// Records the network devices of `job` (index `j`, `devices` devices) in
/// its group. Errors: a device another job of the group runs on.
Status TakeDevices(const SimulationJob& job, size_t j, int64_t devices, SharedNetworkGroup& group) {
  for (int64_t d = 0; d < devices; ++d) {
    const int64_t on_network = job.options.placement.empty() ? d : job.options.placement[d];
    const auto [it, added] = group.job_of_device.try_emplace(on_network, j);
    if (!added) {
      return InvalidArgument(job.module->filename() + ": error: device " + std::to_string(d) +
                             " runs on the network's device " + std::to_string(on_network) +
                             ", which job " + std::to_string(it->second) +
                             " sharing the network runs on already");
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<StatusOr<TimingResult>> SimulateBatch(std::span<const SimulationJob> jobs) {
  if (g_simulated) {
    return std::vector<StatusOr<TimingResult>>(
        jobs.size(),
        FailedPrecondition(
            "the timing model runs one SystemC simulation per process; batch the modules into "
            "one SimulateBatch call or run each in its own process"));
  }
  // Lower everything first: a job whose input is bad gets its error and is
  // left out of the one run, which starts only if some job is left.
  std::vector<StatusOr<TimingResult>> results;
  std::vector<std::unique_ptr<JobModel>> models;  // null where results holds the error
  std::map<int32_t, SharedNetworkGroup> groups;   // by SimulationJob::shared_network
  for (size_t j = 0; j < jobs.size(); ++j) {
    const SimulationJob& job = jobs[j];
    StatusOr<SharedNetwork*> shared = JoinGroup(job, j, groups);
    StatusOr<std::unique_ptr<JobModel>> model =
        shared.ok() ? PrepareJob(job, *shared) : shared.status();
    if (model.ok() && *shared != nullptr) {
      if (Status taken =
              TakeDevices(job, j, (*model)->config.device_count(), groups.at(job.shared_network));
          !taken.ok()) {
        model = taken;
      }
    }
    results.push_back(model.ok() ? StatusOr<TimingResult>(TimingResult{}) : model.status());
    models.push_back(model.ok() ? std::move(*model) : nullptr);
  }
  if (std::all_of(models.begin(), models.end(), [](const auto& m) { return m == nullptr; })) {
    return results;
  }
  g_simulated = true;
  // SystemC prints a banner on stdout unless told not to; tpusim's stdout is
  // for reports.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  tlm::tlm_global_quantum::instance().set(CyclesToTime(1'000'000));
  for (size_t j = 0; j < models.size(); ++j) {
    if (models[j] == nullptr) continue;
    JobModel& m = *models[j];
    m.result.devices.resize(m.simulated.size());
    for (size_t i = 0; i < m.simulated.size(); ++i) {
      const int64_t device = m.simulated[i];
      DeviceTiming& timing = m.result.devices[i];
      timing.device = device;
      const auto slow = m.job->options.device_slowdown.find(device);
      timing.slowdown = slow != m.job->options.device_slowdown.end() ? slow->second : 1;
      m.barriers.push_back(std::make_unique<CoreBarrier>());
      m.barriers.back()->cores = m.program.cores;
      for (int64_t c = 0; c < m.program.cores; ++c) {
        const std::string core_name = "job" + std::to_string(j) + "_dev" + std::to_string(device) +
                                      "_core" + std::to_string(c);
        CoreRole role;
        role.device = device;
        role.leader = c == 0;
        role.slowdown = timing.slowdown;
        role.spmd = m.spmd.get();
        role.fast_forward_loops = m.job->options.fast_forward_loops;
        role.max_executed_instructions = m.job->options.max_executed_instructions;
        if (c == 0) {
          role.timing = &timing;
          if (device == 0) {
            role.records = &m.result.ops;
          } else if (device < kTracedDevices) {
            role.records = &timing.ops;
          }
        }
        m.cores.push_back(std::make_unique<TensorCore>(core_name.c_str(), m.program, *m.cost,
                                                       *m.barriers.back(), role));
        for (int u = 0; u < chip::kUnitCount; ++u) {
          const std::string unit_name =
              core_name + "_" + std::string(chip::UnitName(static_cast<Unit>(u)));
          m.units.push_back(
              std::make_unique<UnitTarget>(unit_name.c_str(), *m.cost, static_cast<Unit>(u)));
          m.cores.back()->sockets[u]->bind(m.units.back()->socket);
        }
      }
    }
  }
  sc_core::sc_start();
  for (size_t j = 0; j < models.size(); ++j) {
    if (models[j] != nullptr) results[j] = Finish(*models[j]);
  }
  return results;
}

Status CheckDevicesFitNetwork(int64_t devices, const ici::CollectiveTimer& network,
                              std::span<const int64_t> placement) {
  if (!placement.empty()) {
    if (static_cast<int64_t>(placement.size()) != devices) {
      return InvalidArgument("the placement names " + std::to_string(placement.size()) +
                             " network devices for the module's " + std::to_string(devices));
    }
    std::set<int64_t> taken;
    for (size_t d = 0; d < placement.size(); ++d) {
      const int64_t on_network = placement[d];
      if (on_network < 0 || (network.device_count() > 0 && on_network >= network.device_count())) {
        return InvalidArgument(
            "the placement puts device " + std::to_string(d) + " on network device " +
            std::to_string(on_network) + "; the network's devices are numbered from 0" +
            (network.device_count() > 0 ? " to " + std::to_string(network.device_count() - 1)
                                        : std::string()));
      }
      if (!taken.insert(on_network).second) {
        return InvalidArgument("the placement puts two devices on network device " +
                               std::to_string(on_network));
      }
    }
    return Status::Ok();
  }
  const int64_t per_chip = network.devices_per_chip();
  if (devices % per_chip != 0) {
    return InvalidArgument(std::to_string(devices) + " devices do not fill whole chips of " +
                           std::to_string(per_chip) + " devices (the topology's devices_per_chip)");
  }
  if (network.device_count() > 0 && devices > network.device_count()) {
    return InvalidArgument("the module's " + std::to_string(devices) + " devices need " +
                           std::to_string(devices / per_chip) + " chips; the topology has " +
                           std::to_string(network.device_count() / per_chip));
  }
  return Status::Ok();
}

StatusOr<TimingResult> SimulateModule(const hlo::HloModule& module, const arch::ChipConfig& chip,
                                      const TimingOptions& options) {
  const SimulationJob job{&module, &chip, options};
  return std::move(SimulateBatch(std::span(&job, 1)).front());
}

}  // namespace tpusim::timing
