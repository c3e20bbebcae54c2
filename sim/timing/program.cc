#include "sim/timing/program.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/arith.h"
#include "sim/hlo/computation.h"
#include "sim/timing/hlo_helpers.h"

namespace tpusim::timing {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

/// The series `shares` records for `ragged_dot`, or nullptr.
const ExecutionSeries<std::vector<int64_t>>* SharesIn(const RaggedGroupShares& shares,
                                                      const HloInstruction* ragged_dot) {
  const auto found = shares.find(ragged_dot);
  return found == shares.end() ? nullptr : &found->second;
}

/// "SHAPE has an unbounded dimension D" for the first array of `shape` with
/// a `?` dimension, or empty: no size, bound or cost follows from one.
std::string UnboundedIn(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple_shapes()) {
      if (std::string found = UnboundedIn(element); !found.empty()) return found;
    }
    return "";
  }
  if (const std::optional<int64_t> d = shape.FirstUnboundedDimension()) {
    return "shape " + shape.ToString(false) + " has an unbounded dimension " + std::to_string(*d);
  }
  return "";
}

/// Each ragged-dot's groups at its first execution.
RaggedGroupSharesOfRun FirstRuns(const RaggedGroupShares& shares) {
  RaggedGroupSharesOfRun first;
  for (const auto& [dot, series] : shares) {
    if (!series.empty()) first.emplace(dot, series.At(0));
  }
  return first;
}

/// The iterations of a loop's first `executions` executions, summed
/// (saturating); a negative trip count runs none.
int64_t TotalIterations(const ExecutionSeries<int64_t>& trips, int64_t executions) {
  int64_t total = 0;
  int64_t start = 0;
  for (const auto& run : trips.runs()) {
    if (start >= executions) return total;
    total = SatAdd(total,
                   SatMul(std::min(run.end, executions) - start, std::max<int64_t>(run.value, 0)));
    start = run.end;
  }
  // Executions past the recorded ones iterate as the last did.
  if (executions > start && !trips.empty())
    total =
        SatAdd(total, SatMul(executions - start, std::max<int64_t>(trips.runs().back().value, 0)));
  return total;
}

/// True when no execution of a loop with these trip counts iterates.
bool NeverIterates(const ExecutionSeries<int64_t>& trips) {
  return std::all_of(trips.runs().begin(), trips.runs().end(),
                     [](const auto& run) { return run.value <= 0; });
}

/// `series` with each value put in [0, last]: an index past either end is
/// the last branch, as XLA takes it.
ExecutionSeries<int64_t> ClampedBranches(const ExecutionSeries<int64_t>& series, int64_t last) {
  ExecutionSeries<int64_t> clamped;
  int64_t start = 0;
  for (const auto& run : series.runs()) {
    clamped.Append(run.value < 0 || run.value > last ? last : run.value, run.end - start);
    start = run.end;
  }
  return clamped;
}

/// `instruction`'s series on device 0 (from `device0`, or `otherwise` when it
/// has none) and on each device of `devices` that has its own and differs,
/// each passed through `adjust`.
template <typename Adjust>
DeviceSeries SeriesOf(const HloInstruction& instruction, const PerExecution<int64_t>& device0,
                      const std::map<int64_t, PerExecution<int64_t>>& devices,
                      ExecutionSeries<int64_t> otherwise, Adjust adjust) {
  DeviceSeries series;
  const auto given = device0.find(&instruction);
  series.device0 =
      adjust(given != device0.end() && !given->second.empty() ? given->second : otherwise);
  for (const auto& [device, own] : devices) {
    const auto found = own.find(&instruction);
    if (found == own.end() || found->second.empty()) continue;
    ExecutionSeries<int64_t> adjusted = adjust(found->second);
    if (adjusted != series.device0) series.differing.emplace(device, std::move(adjusted));
  }
  return series;
}

class Lowerer {
 public:
  Lowerer(const hlo::HloModule& module, const arch::ChipConfig& chip, const TimingOptions& options,
          Program& program)
      : module_(module),
        host_memory_(module),
        first_shares_(FirstRuns(options.ragged_group_shares)),
        coster_(chip, host_memory_, &first_shares_),
        options_(options),
        program_(program) {
    int64_t ids = 0;
    for (const auto& c : module.computations()) {
      for (const auto& i : c->instructions()) ids = std::max(ids, i->unique_id() + 1);
    }
    program_.costs.resize(ids);
    last_async_.assign(ids, -1);
    program_.cores = coster_.cores();
  }

  Status Walk(const HloComputation& computation, int depth) {
    if (depth > hlo::kMaxCallDepth) {
      return Status(StatusCode::kInvalidArgument,
                    module_.ErrorAt(computation.location(),
                                    computation.name() + ": " + hlo::CallsNestTooDeeply()));
    }
    for (const auto& owned : computation.instructions()) {
      const HloInstruction& inst = *owned;
      // Control flow (while, conditional, call) issues its callees' steps
      // in place of its own; every other instruction is one step.
      if (hlo::OpRoleOf(inst.opcode()) != hlo::OpRole::kControlFlow) {
        TPUSIM_RETURN_IF_ERROR(Issue(inst));
      } else if (inst.opcode() == HloOpcode::kWhile) {
        TPUSIM_RETURN_IF_ERROR(WalkWhile(inst, depth));
      } else if (inst.opcode() == HloOpcode::kConditional) {
        TPUSIM_RETURN_IF_ERROR(WalkConditional(inst, depth));
      } else if (const HloComputation* callee = inst.to_apply()) {
        TPUSIM_RETURN_IF_ERROR(Walk(*callee, depth + 1));
      }
    }
    return Status::Ok();
  }

  /// Fills Program::varying_costs: the kernels whose ragged-dot groups
  /// change from one execution to the next on device 0, and on each other
  /// device the kernels whose groups differ from device 0's.
  Status CostVaryingKernels(const arch::ChipConfig& chip) {
    const RaggedGroupShares& first = options_.ragged_group_shares;
    for (const HloInstruction* kernel : ragged_kernels_) {
      const std::vector<const HloInstruction*>& dots =
          program_.costs[kernel->unique_id()]->ragged_dots;
      const bool changes = std::any_of(dots.begin(), dots.end(), [&](const HloInstruction* dot) {
        const ExecutionSeries<std::vector<int64_t>>* series = SharesIn(first, dot);
        return series != nullptr && !series->constant();
      });
      if (changes) TPUSIM_RETURN_IF_ERROR(CostRuns(chip, *kernel, first, 0));
      for (const auto& entry : options_.device_ragged_group_shares) {
        const RaggedGroupShares& own = entry.second;  // a lambda captures it below
        const bool differs = std::any_of(dots.begin(), dots.end(), [&](const HloInstruction* dot) {
          const ExecutionSeries<std::vector<int64_t>>* mine = SharesIn(own, dot);
          const ExecutionSeries<std::vector<int64_t>>* device0 = SharesIn(first, dot);
          return mine == nullptr || device0 == nullptr ? mine != device0 : *mine != *device0;
        });
        if (differs) TPUSIM_RETURN_IF_ERROR(CostRuns(chip, *kernel, own, entry.first));
      }
    }
    return Status::Ok();
  }

  /// Sets Step::varies on every loop around a step whose cost, or an inner
  /// loop whose trip count, changes from one execution to the next.
  void MarkVaryingLoops() {
    std::vector<Step>& steps = program_.steps;
    std::vector<size_t> open;  // the loop-begin steps around step i
    for (size_t i = 0; i < steps.size(); ++i) {
      bool varies = false;
      if (steps[i].role == StepRole::kLoopEnd) {
        open.pop_back();
        continue;
      }
      if (steps[i].role == StepRole::kLoopBegin) {
        varies = !program_.loop_trips[steps[i].control].constant();
      } else if (steps[i].role == StepRole::kBranch) {
        varies = !program_.conditionals[steps[i].control].taken.constant();
      } else if (steps[i].role == StepRole::kInstruction) {
        for (const auto& device : program_.varying_costs) {
          const auto found = device.second.find(steps[i].inst->unique_id());
          varies = varies || (found != device.second.end() && !found->second.constant());
        }
      }
      if (varies) {
        for (const size_t begin : open) steps[begin].varies = true;
      }
      if (steps[i].role == StepRole::kLoopBegin) open.push_back(i);
    }
  }

 private:
  /// Costs `kernel` at each execution where the groups `shares` gives its
  /// ragged-dots change, into Program::varying_costs[device].
  Status CostRuns(const arch::ChipConfig& chip, const HloInstruction& kernel,
                  const RaggedGroupShares& shares, int64_t device) {
    const std::vector<const HloInstruction*>& dots =
        program_.costs[kernel.unique_id()]->ragged_dots;
    std::vector<const ExecutionSeries<std::vector<int64_t>>*> series;
    for (const HloInstruction* dot : dots) {
      if (const auto* found = SharesIn(shares, dot)) series.push_back(found);
    }
    const std::vector<int64_t> starts = ChangePoints(series);
    ExecutionSeries<size_t>& runs = program_.varying_costs[device][kernel.unique_id()];
    for (size_t k = 0; k < starts.size(); ++k) {
      RaggedGroupSharesOfRun at;
      for (const HloInstruction* dot : dots) {
        if (const auto* found = SharesIn(shares, dot)) at.emplace(dot, found->At(starts[k]));
      }
      StatusOr<KernelCost> cost = KernelCoster(chip, host_memory_, &at).Cost(kernel);
      if (!cost.ok())
        return Error(kernel, cost.status().code(), std::string(cost.status().message()));
      runs.Append(program_.costs_of_runs.size(), StretchLength(starts, k));
      program_.costs_of_runs.push_back(std::move(*cost));
    }
    return Status::Ok();
  }

  /// Async ids a loop's state carries from one iteration to the next: the
  /// start that ends `body` as element k of its result (a prefetch for the
  /// next iteration) takes the id of the start the loop's operand holds as
  /// element k, or a new one, and a `*-done` of the body's parameter's
  /// element k waits for it: before the loop's first iteration, the copy
  /// started before the loop; later, the previous iteration's.
  void CarryStarts(const HloInstruction& loop, const HloComputation& body) {
    const HloInstruction* root = body.root();
    if (root == nullptr || root->opcode() != HloOpcode::kTuple || body.parameter_count() == 0 ||
        body.parameters()[0] == nullptr || loop.operand_count() == 0) {
      return;
    }
    for (int64_t k = 0; k < root->operand_count(); ++k) {
      const HloInstruction* start = root->operand(k);
      if (StepKindOf(*start) != StepKind::kAsyncStart) continue;
      int64_t id = StartIdOf(loop.operand(0), {k});
      if (id < 0) id = program_.async_count++;
      carried_start_id_[start->unique_id()] = id;
      carried_id_[{body.parameters()[0]->unique_id(), k}] = id;
    }
  }

  /// Async ids through a conditional: the starts that end its branches as
  /// element k of their results (or as their results, k = -1) share one id,
  /// which a `*-done` of the conditional's element k waits for, whichever
  /// branch ran; a branch's parameter (element k) carries the id of the start
  /// that the conditional's operand for that branch holds (there).
  void CarryStartsThrough(const HloInstruction& conditional,
                          const std::vector<const HloComputation*>& branches) {
    std::map<int64_t, int64_t> shared;  // element -> id
    const auto share = [&](const HloInstruction* start, int64_t k) {
      if (StepKindOf(*start) != StepKind::kAsyncStart) return;
      const auto [it, fresh] = shared.emplace(k, 0);
      if (fresh) it->second = program_.async_count++;
      carried_start_id_[start->unique_id()] = it->second;
    };
    for (size_t b = 0; b < branches.size(); ++b) {
      const HloInstruction* root = branches[b]->root();
      if (root != nullptr && root->opcode() == HloOpcode::kTuple) {
        for (int64_t k = 0; k < root->operand_count(); ++k) share(root->operand(k), k);
      } else if (root != nullptr) {
        share(root, -1);
      }
      const int64_t operand = static_cast<int64_t>(b) + 1;  // after the predicate or index
      if (operand >= conditional.operand_count() || branches[b]->parameter_count() == 0 ||
          branches[b]->parameters()[0] == nullptr) {
        continue;
      }
      const HloInstruction* given = conditional.operand(operand);
      const int64_t param = branches[b]->parameters()[0]->unique_id();
      if (const int64_t whole = StartIdOf(given, {}); whole >= 0) carried_id_[{param, -1}] = whole;
      for (int64_t k = 0; given->shape().IsTuple() && k < given->shape().tuple_size(); ++k) {
        if (const int64_t id = StartIdOf(given, {k}); id >= 0) carried_id_[{param, k}] = id;
      }
    }
    for (const auto& [k, id] : shared) carried_id_[{conditional.unique_id(), k}] = id;
  }

  /// The async id of the start whose result `value` is, looking through
  /// tuples, get-tuple-elements, loop states and conditionals; `indices` are
  /// the elements still to select, the first to select last. -1 when it is
  /// not a start's result.
  int64_t StartIdOf(const HloInstruction* value, std::vector<int64_t> indices) const {
    for (int64_t depth = 0; value != nullptr && depth <= hlo::kMaxCallDepth; ++depth) {
      if (value->opcode() == HloOpcode::kGetTupleElement && value->operand_count() == 1) {
        indices.push_back(value->int_attr(hlo::AttrId::kIndex).value_or(-1));
        value = value->operand(0);
        continue;
      }
      // What CarryStarts and CarryStartsThrough recorded for a parameter or
      // a conditional's result.
      if (value->opcode() == HloOpcode::kParameter || value->opcode() == HloOpcode::kConditional) {
        if (indices.size() > 1) return -1;
        const auto carried =
            carried_id_.find({value->unique_id(), indices.empty() ? -1 : indices.back()});
        if (carried != carried_id_.end()) return carried->second;
        if (!indices.empty()) return -1;
      }
      if (indices.empty()) return last_async_[value->unique_id()];
      const int64_t k = indices.back();
      if (value->opcode() == HloOpcode::kTuple) {
        if (k < 0 || k >= value->operand_count()) return -1;
        indices.pop_back();
        value = value->operand(k);
      } else if (value->opcode() == HloOpcode::kWhile) {
        const HloComputation* body = value->called_computation(hlo::AttrId::kBody);
        value = body != nullptr ? body->root() : nullptr;
      } else {
        return -1;
      }
    }
    return -1;
  }

  Status Error(const HloInstruction& inst, StatusCode code, const std::string& message) const {
    return Status(code, module_.ErrorAt(inst.location(), inst.name() + ": " + message));
  }

  /// The cap on the lowered program's length (each loop lowered once),
  /// reported at the instruction that reached it.
  Status TooManyInstructions(const HloInstruction& inst) const {
    const std::string& raise = options_.raise_executed_instructions;
    return Error(inst, StatusCode::kResourceExhausted,
                 "the module's program reaches the limit of " +
                     std::to_string(options_.max_executed_instructions) +
                     " instructions here (each loop body counted once)" +
                     (raise.empty() ? "" : "; " + raise));
  }

  Status Issue(const HloInstruction& inst) {
    if (const std::string unbounded = UnboundedIn(inst.shape()); !unbounded.empty()) {
      return Error(inst, StatusCode::kInvalidArgument,
                   unbounded + ": timing needs a size or a bound (<=N)");
    }
    std::optional<KernelCost>& cached = program_.costs[inst.unique_id()];
    if (!cached) {
      StatusOr<KernelCost> cost = coster_.Cost(inst);
      if (!cost.ok())
        return Error(inst, cost.status().code(), std::string(cost.status().message()));
      cached = std::move(*cost);
      if (!cached->ragged_dots.empty()) ragged_kernels_.push_back(&inst);
    }
    if (cached->kind == StepKind::kFree) return Status::Ok();
    if (instructions_ >= options_.max_executed_instructions) return TooManyInstructions(inst);
    ++instructions_;
    Step step{StepRole::kInstruction, &inst, &*cached};
    if (cached->kind == StepKind::kAsyncStart) {
      const auto carried = carried_start_id_.find(inst.unique_id());
      if (carried != carried_start_id_.end()) {
        step.async_id = carried->second;
        carried_start_id_.erase(carried);
      } else {
        step.async_id = program_.async_count++;
      }
      last_async_[inst.unique_id()] = step.async_id;
    } else if (cached->kind == StepKind::kAsyncDone && inst.operand_count() > 0) {
      step.async_id = StartIdOf(inst.operand(0), {});
    }
    program_.steps.push_back(step);
    // The report sums every run (each iteration of the enclosing loops):
    // the totals must fit too.
    flops_ = SatAdd(flops_, SatMul(cached->flops, runs_));
    hbm_bytes_ = SatAdd(hbm_bytes_, SatMul(cached->hbm_bytes, runs_));
    if (flops_ == kInt64Max || hbm_bytes_ == kInt64Max) {
      return Error(inst, StatusCode::kInvalidArgument,
                   std::string("the module's ") + (flops_ == kInt64Max ? "FLOPs" : "HBM bytes") +
                       ", summed over every run (each loop iteration), reach 2^63 here: more than "
                       "tpusim counts in 64 bits");
    }
    return Status::Ok();
  }

  Status WalkWhile(const HloInstruction& inst, int depth) {
    const HloComputation* cond = inst.called_computation(hlo::AttrId::kCondition);
    const HloComputation* body = inst.called_computation(hlo::AttrId::kBody);
    if (cond == nullptr || body == nullptr) {
      return Error(inst, StatusCode::kInvalidArgument, "while needs condition= and body=");
    }
    ExecutionSeries<int64_t> otherwise(options_.default_trip_count);
    if (const auto given = options_.trip_counts.find(&inst);
        given == options_.trip_counts.end() || given->second.empty()) {
      StatusOr<std::optional<int64_t>> known = KnownTripCount(inst);
      if (!known.ok()) return Error(inst, StatusCode::kInvalidArgument, known.status().message());
      if (known->has_value()) otherwise = ExecutionSeries<int64_t>(**known);
    }
    DeviceSeries trips =
        SeriesOf(inst, options_.trip_counts, options_.device_trip_counts, std::move(otherwise),
                 [](const ExecutionSeries<int64_t>& series) { return series; });
    // The body's runs: the iterations of the loop's executions, summed, on
    // the device that iterates the most.
    const int64_t outer_runs = runs_;
    runs_ = TotalIterations(trips.device0, outer_runs);
    bool never = NeverIterates(trips.device0);
    for (const auto& entry : trips.differing) {
      runs_ = std::max(runs_, TotalIterations(entry.second, outer_runs));
      never = never && NeverIterates(entry.second);
    }
    // One iteration, the condition and then the body, between the loop's
    // begin and end steps; an iteration that issues nothing is left out.
    const size_t begin = program_.steps.size();
    const size_t loop = program_.loop_trips.size();
    const size_t conditionals = program_.conditionals.size();
    CarryStarts(inst, *body);
    program_.loop_trips.push_back(std::move(trips));
    program_.steps.push_back(Step{StepRole::kLoopBegin, &inst, nullptr, -1, loop});
    TPUSIM_RETURN_IF_ERROR(Walk(*cond, depth + 1));
    TPUSIM_RETURN_IF_ERROR(Walk(*body, depth + 1));
    runs_ = outer_runs;
    if (never || program_.steps.size() == begin + 1) {
      program_.steps.resize(begin);
      program_.loop_trips.resize(loop);  // with the loops and conditionals inside it
      program_.conditionals.resize(conditionals);
    } else {
      program_.steps[begin].partner = program_.steps.size();
      program_.steps.push_back(Step{StepRole::kLoopEnd, &inst, nullptr, -1, loop, begin});
    }
    TPUSIM_RETURN_IF_ERROR(Walk(*cond, depth + 1));  // the test that ends the loop
    return Status::Ok();
  }

  Status WalkConditional(const HloInstruction& inst, int depth) {
    std::vector<const HloComputation*> branches;
    if (const auto* list = inst.GetAttr<hlo::ComputationList>(hlo::AttrId::kBranchComputations)) {
      branches.assign(list->computations.begin(), list->computations.end());
    } else {
      branches.push_back(inst.called_computation(hlo::AttrId::kTrueComputation));
      branches.push_back(inst.called_computation(hlo::AttrId::kFalseComputation));
    }
    if (branches.empty() ||
        std::find(branches.begin(), branches.end(), nullptr) != branches.end()) {
      return Error(inst, StatusCode::kInvalidArgument,
                   "conditional without its branch computations");
    }
    const int64_t last = static_cast<int64_t>(branches.size()) - 1;
    Conditional conditional;
    conditional.taken = SeriesOf(
        inst, options_.branches, options_.device_branches,
        ExecutionSeries<int64_t>(options_.conditional_branch),
        [last](const ExecutionSeries<int64_t>& series) { return ClampedBranches(series, last); });
    // The branches some execution on some device takes, each followed by a
    // branch-end step; the engine jumps to the one each execution takes.
    std::vector<bool> taken(branches.size(), false);
    for (const auto& run : conditional.taken.device0.runs()) taken[run.value] = true;
    for (const auto& entry : conditional.taken.differing) {
      for (const auto& run : entry.second.runs()) taken[run.value] = true;
    }
    const size_t begin = program_.steps.size();
    const size_t index = program_.conditionals.size();
    const size_t loops = program_.loop_trips.size();
    conditional.branch_begins.assign(branches.size(), SIZE_MAX);
    CarryStartsThrough(inst, branches);
    program_.conditionals.push_back(std::move(conditional));  // before the ones inside it
    program_.steps.push_back(Step{StepRole::kBranch, &inst, nullptr, -1, index});
    std::vector<size_t> ends;
    for (size_t b = 0; b < branches.size(); ++b) {
      if (!taken[b]) continue;
      program_.conditionals[index].branch_begins[b] = program_.steps.size();
      TPUSIM_RETURN_IF_ERROR(Walk(*branches[b], depth + 1));
      ends.push_back(program_.steps.size());
      program_.steps.push_back(Step{StepRole::kBranchEnd, &inst, nullptr, -1, index});
    }
    if (std::none_of(program_.steps.begin() + static_cast<std::ptrdiff_t>(begin),
                     program_.steps.end(),
                     [](const Step& step) { return step.role == StepRole::kInstruction; })) {
      // No branch issues anything: the conditional costs nothing.
      program_.steps.resize(begin);
      program_.conditionals.resize(index);  // with the ones inside it
      program_.loop_trips.resize(loops);
      return Status::Ok();
    }
    program_.steps[begin].partner = ends.back();
    for (const size_t end : ends) program_.steps[end].partner = ends.back();
    return Status::Ok();
  }

  const hlo::HloModule& module_;
  HostMemory host_memory_;
  /// Device 0's ragged-dot groups at their first execution, which `costs`
  /// holds; coster_ reads them.
  RaggedGroupSharesOfRun first_shares_;
  KernelCoster coster_;
  const TimingOptions& options_;
  Program& program_;
  /// Latest async id handed to each start instruction, by unique id.
  std::vector<int64_t> last_async_;
  /// CarryStarts' and CarryStartsThrough's ids: by start instruction until
  /// it is lowered, and by (loop body or branch parameter, or conditional;
  /// element, -1 for the whole value).
  std::map<int64_t, int64_t> carried_start_id_;
  std::map<std::pair<int64_t, int64_t>, int64_t> carried_id_;
  /// Runs of the instructions being lowered: the product of the trip
  /// counts of the loops around them.
  int64_t runs_ = 1;
  int64_t instructions_ = 0;  ///< instruction steps lowered so far
  /// Totals of the steps so far, as the report sums them.
  int64_t flops_ = 0;
  int64_t hbm_bytes_ = 0;
  /// The kernels lowered that hold ragged-dots, in the order they were first
  /// issued.
  std::vector<const HloInstruction*> ragged_kernels_;
};

}  // namespace

StatusOr<Program> LowerModule(const hlo::HloModule& module, const arch::ChipConfig& chip,
                              const TimingOptions& options) {
  Program program;
  if (module.entry() == nullptr)
    return InvalidArgument(module.filename() + ": error: module has no entry computation");
  Lowerer lowerer(module, chip, options, program);
  TPUSIM_RETURN_IF_ERROR(lowerer.Walk(*module.entry(), 0));
  TPUSIM_RETURN_IF_ERROR(lowerer.CostVaryingKernels(chip));
  lowerer.MarkVaryingLoops();
  return program;
}

const ExecutionSeries<int64_t>& DeviceSeries::On(int64_t device) const {
  const auto own = differing.find(device);
  return own == differing.end() ? device0 : own->second;
}

bool DeviceSeries::constant() const {
  return device0.constant() && std::all_of(differing.begin(), differing.end(),
                                           [](const auto& d) { return d.second.constant(); });
}

const KernelCost& Program::CostOn(const Step& step, int64_t device, int64_t execution) const {
  for (const int64_t d : {device, int64_t{0}}) {
    const auto on_device = varying_costs.find(d);
    if (on_device == varying_costs.end()) continue;
    const auto found = on_device->second.find(step.inst->unique_id());
    if (found != on_device->second.end()) return costs_of_runs[found->second.At(execution)];
  }
  return *step.cost;
}

}  // namespace tpusim::timing
