// The timing engine on SystemC, at transaction level (TLM-2.0 loosely timed
// with temporal decoupling). Each TensorCore is an SC_THREAD that issues its
// program in order; each unit (MXU, VPU, XLU, HBM, VMEM, DMA) is a TLM target
// whose b_transport answers with the unit's busy time as a delay. An
// instruction takes the longest of its units plus the kernel start-up; the
// core adds that to its local time offset and synchronises with the kernel
// only when the quantum is used up, so idle units schedule nothing and there
// is no clocked process.
//
// Time base: one SystemC nanosecond is one TensorCore cycle of the job's
// chip; cycles are exact integers and time_us = cycles / clock.
#include <tlm.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "sim/chip/arith.h"
#include "sim/chip/core_cost.h"
#include "sim/timing/program.h"
#include "sim/timing/timing.h"

// libsystemc's own main() calls sc_main; tpusim has its own main and starts
// the kernel from SimulateBatch, so this definition only satisfies the linker.
int sc_main(int, char*[]) { return 0; }

namespace tpusim::timing {
namespace {

using chip::Unit;

sc_core::sc_time CyclesToTime(int64_t cycles) {
  return sc_core::sc_time(static_cast<double>(cycles), sc_core::SC_NS);
}
int64_t TimeToCycles(const sc_core::sc_time& t) { return static_cast<int64_t>(t.value() / 1000); }

/// A unit of one TensorCore as a TLM target: the payload's data pointer is the
/// instruction's chip::CoreWork; the answer is the unit's busy time, added to
/// the delay. The DMA engine also queues: a copy starts when the previous one
/// has finished, and the delay returned runs to its completion.
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
    const int64_t busy = cost_.UnitBusy(unit_, *work);
    if (unit_ == Unit::kDma) {
      const int64_t issue = TimeToCycles(sc_core::sc_time_stamp() + delay);
      const int64_t begin = std::max(issue, dma_free_at_);
      dma_free_at_ = chip::SatAdd(begin, busy);
      delay += CyclesToTime(dma_free_at_ - issue);
    } else {
      delay += CyclesToTime(busy);
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  const chip::CoreCost& cost_;
  Unit unit_;
  int64_t dma_free_at_ = 0;  ///< cycle at which the DMA queue drains
};

/// Per-instruction barrier of the TensorCores of a megacore chip: XLA splits
/// each kernel across them and the next kernel starts when both are done.
struct CoreBarrier {
  int64_t cores = 1;
  int64_t arrived = 0;
  sc_core::sc_event all_arrived;
};

/// One TensorCore issuing the program in order.
class TensorCore : public sc_core::sc_module {
 public:
  std::array<std::unique_ptr<tlm_utils::simple_initiator_socket<TensorCore>>, chip::kUnitCount>
      sockets;

  SC_HAS_PROCESS(TensorCore);
  TensorCore(sc_core::sc_module_name name, const Program& program, const chip::CoreCost& cost,
             CoreBarrier& barrier, std::vector<OpRecord>* records, int64_t* end_cycle)
      : sc_core::sc_module(name),
        program_(program),
        cost_(cost),
        barrier_(barrier),
        records_(records),
        end_cycle_(end_cycle),
        async_done_at_(program.async_count, 0) {
    for (int u = 0; u < chip::kUnitCount; ++u) {
      sockets[u] = std::make_unique<tlm_utils::simple_initiator_socket<TensorCore>>(
          (std::string("unit_") + std::to_string(u)).c_str());
    }
    SC_THREAD(Run);
  }

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

  void Run() {
    tlm_utils::tlm_quantumkeeper keeper;
    keeper.reset();
    for (const Step& step : program_.steps) {
      const int64_t start = TimeToCycles(keeper.get_current_time());
      OpRecord record;
      int64_t cycles = 0;
      const KernelCost& cost = *step.cost;
      switch (cost.kind) {
        case StepKind::kKernel: {
          int64_t longest = 0;
          record.bound_by = BoundBy::kLatency;
          for (int u = 0; u < chip::kUnitCount; ++u) {
            if (static_cast<Unit>(u) == Unit::kDma) continue;
            const int64_t busy = Ask(static_cast<Unit>(u), cost.per_core, keeper.get_local_time());
            record.unit_cycles[u] = busy;
            if (busy > longest) {
              longest = busy;
              record.bound_by = static_cast<BoundBy>(u);
            }
          }
          if (longest < cost_.kernel_start()) record.bound_by = BoundBy::kLatency;
          cycles = chip::SatAdd(longest, cost_.kernel_start());
          break;
        }
        case StepKind::kAsyncStart: {
          const int64_t until_done = Ask(Unit::kDma, cost.per_core, keeper.get_local_time());
          record.unit_cycles[static_cast<int>(Unit::kDma)] = until_done;
          async_done_at_[step.async_id] = chip::SatAdd(start, until_done);
          record.bound_by = BoundBy::kDma;
          break;
        }
        case StepKind::kAsyncDone: {
          const int64_t ready = step.async_id >= 0 ? async_done_at_[step.async_id] : 0;
          cycles = std::max<int64_t>(0, ready - start);
          record.bound_by = cycles > 0 ? BoundBy::kDma : BoundBy::kLatency;
          break;
        }
        case StepKind::kFree:
          break;
      }
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
      if (records_ != nullptr) {
        record.name = step.inst->name();
        record.opcode = step.inst->OpcodeSpelling();
        record.start_cycle = start;
        record.cycles = TimeToCycles(keeper.get_current_time()) - start;
        record.flops = cost.flops;
        record.hbm_bytes = cost.hbm_bytes;
        records_->push_back(std::move(record));
      }
    }
    int64_t end = TimeToCycles(keeper.get_current_time());
    for (int64_t done_at : async_done_at_) end = std::max(end, done_at);  // outstanding copies
    if (end_cycle_ != nullptr) *end_cycle_ = end;
    keeper.sync();
  }

  const Program& program_;
  const chip::CoreCost& cost_;
  CoreBarrier& barrier_;
  std::vector<OpRecord>* records_;      ///< core 0 records; nullptr on the others
  int64_t* end_cycle_;                  ///< core 0 reports the program's end
  std::vector<int64_t> async_done_at_;  ///< completion cycle of each async id
  /// Reused for every request: constructing a payload allocates its extension array.
  tlm::tlm_generic_payload payload_;
};

/// Everything one job elaborates: its program, its cores and their units.
struct JobModel {
  Program program;
  std::unique_ptr<chip::CoreCost> cost;
  CoreBarrier barrier;
  std::vector<std::unique_ptr<TensorCore>> cores;
  std::vector<std::unique_ptr<UnitTarget>> units;
  TimingResult result;
};

bool g_simulated = false;  ///< the SystemC kernel has been started in this process

}  // namespace

std::string_view BoundByName(BoundBy bound) {
  switch (bound) {
    case BoundBy::kMxu:
      return "MXU";
    case BoundBy::kVpu:
      return "VPU";
    case BoundBy::kTranspose:
      return "transpose";
    case BoundBy::kHbm:
      return "HBM";
    case BoundBy::kVmem:
      return "VMEM";
    case BoundBy::kDma:
      return "DMA";
    case BoundBy::kLatency:
      return "latency";
  }
  return "?";
}

StatusOr<std::vector<TimingResult>> SimulateBatch(std::span<const SimulationJob> jobs) {
  if (g_simulated) {
    return FailedPrecondition(
        "the timing model runs one SystemC simulation per process; batch the modules into one "
        "SimulateBatch call or run each in its own process");
  }
  // Lower everything first: an input error must not use up the one run.
  std::vector<std::unique_ptr<JobModel>> models;
  for (const SimulationJob& job : jobs) {
    if (job.module == nullptr || job.chip == nullptr)
      return InvalidArgument("simulation job without module or chip");
    auto model = std::make_unique<JobModel>();
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
    models.push_back(std::move(model));
  }
  g_simulated = true;
  // SystemC prints a banner on stdout unless told not to; tpusim's stdout is
  // for reports.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  tlm::tlm_global_quantum::instance().set(CyclesToTime(1'000'000));
  for (size_t j = 0; j < models.size(); ++j) {
    JobModel& m = *models[j];
    m.barrier.cores = m.program.cores;
    for (int64_t c = 0; c < m.program.cores; ++c) {
      const std::string core_name = "job" + std::to_string(j) + "_core" + std::to_string(c);
      m.cores.push_back(std::make_unique<TensorCore>(core_name.c_str(), m.program, *m.cost,
                                                     m.barrier, c == 0 ? &m.result.ops : nullptr,
                                                     c == 0 ? &m.result.cycles : nullptr));
      for (int u = 0; u < chip::kUnitCount; ++u) {
        const std::string unit_name =
            core_name + "_" + std::string(chip::UnitName(static_cast<Unit>(u)));
        m.units.push_back(
            std::make_unique<UnitTarget>(unit_name.c_str(), *m.cost, static_cast<Unit>(u)));
        m.cores.back()->sockets[u]->bind(m.units.back()->socket);
      }
    }
  }
  sc_core::sc_start();
  std::vector<TimingResult> results;
  for (auto& m : models) {
    TimingResult& r = m->result;
    r.time_us = static_cast<double>(r.cycles) * 1e6 / static_cast<double>(r.clock_hz);
    for (const OpRecord& op : r.ops) {
      r.flops = chip::SatAdd(r.flops, op.flops);
      r.hbm_bytes = chip::SatAdd(r.hbm_bytes, op.hbm_bytes);
    }
    results.push_back(std::move(r));
  }
  return results;
}

StatusOr<TimingResult> SimulateModule(const hlo::HloModule& module, const arch::ChipConfig& chip,
                                      const TimingOptions& options) {
  const SimulationJob job{&module, &chip, options};
  TPUSIM_ASSIGN_OR_RETURN(std::vector<TimingResult> results, SimulateBatch(std::span(&job, 1)));
  return std::move(results.front());
}

}  // namespace tpusim::timing
