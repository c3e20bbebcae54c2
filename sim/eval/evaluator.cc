#include "sim/eval/evaluator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/base/arith.h"
#include "sim/eval/collective_hub.h"
#include "sim/eval/kernels.h"
#include "sim/hlo/annotations.h"
#include "sim/value/element_type.h"

namespace tpusim::eval {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using value::Literal;

/// The order in which a computation's instructions run and when each value
/// can be dropped. Instructions are addressed by local index: unique_id minus
/// the id of the computation's first instruction (AssignUniqueIds numbers
/// each computation's instructions contiguously, in text order).
struct ComputationPlan {
  /// unique_id of the computation's first instruction.
  int64_t base_id = 0;
  /// Local indices of the instructions the root or a side-effecting
  /// instruction depends on (through operands and control predecessors),
  /// operands first. Dead instructions are not run: an unsupported op nobody
  /// reads must not fail the program.
  std::vector<int64_t> order;
  /// For each local index, the position in `order` of its last reader; its
  /// value is dropped after that step to bound memory. -1: never read.
  std::vector<int64_t> last_use;
};

namespace {

/// The kernel of each opcode, or nullptr when it has none yet.
Kernel KernelFor(HloOpcode opcode) {
  switch (opcode) {
#define V TPUSIM_HLO_CASE_IF_ELEMENTWISE
#include "sim/hlo/opcode.def"
#undef V
      return EvalElementwise;
    case HloOpcode::kConstant:
      return EvalConstant;
    case HloOpcode::kIota:
      return EvalIota;
    case HloOpcode::kBroadcast:
      return EvalBroadcast;
    case HloOpcode::kTranspose:
      return EvalTranspose;
    case HloOpcode::kSlice:
      return EvalSlice;
    case HloOpcode::kReverse:
      return EvalReverse;
    case HloOpcode::kDynamicSlice:
      return EvalDynamicSlice;
    case HloOpcode::kDynamicUpdateSlice:
      return EvalDynamicUpdateSlice;
    case HloOpcode::kPad:
      return EvalPad;
    case HloOpcode::kConcatenate:
      return EvalConcatenate;
    case HloOpcode::kBitcast:
    case HloOpcode::kReshape:
      return EvalReshape;
    case HloOpcode::kCopy:
      return EvalCopy;
    case HloOpcode::kTuple:
      return EvalTuple;
    case HloOpcode::kGetTupleElement:
      return EvalGetTupleElement;
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
      return EvalCall;
    case HloOpcode::kWhile:
      return EvalWhile;
    case HloOpcode::kConditional:
      return EvalConditional;
    case HloOpcode::kMap:
      return EvalMap;
    case HloOpcode::kCopyStart:
      return EvalCopyStart;
    case HloOpcode::kCopyDone:
      return EvalCopyDone;
    case HloOpcode::kAsyncStart:
      return EvalAsyncStart;
    case HloOpcode::kAsyncDone:
      return EvalAsyncDone;
    case HloOpcode::kAddDependency:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kDomain:
    case HloOpcode::kOptimizationBarrier:
      return EvalPassThrough;
    case HloOpcode::kAfterAll:
      return EvalAfterAll;
    case HloOpcode::kReplicaId:
      return EvalReplicaId;
    case HloOpcode::kPartitionId:
      return EvalPartitionId;
    case HloOpcode::kReduce:
      return EvalReduce;
    case HloOpcode::kReduceWindow:
      return EvalReduceWindow;
    case HloOpcode::kSelectAndScatter:
      return EvalSelectAndScatter;
    case HloOpcode::kDot:
      return EvalDot;
    case HloOpcode::kRaggedDot:
      return EvalRaggedDot;
    case HloOpcode::kSort:
      return EvalSort;
    case HloOpcode::kTopK:
      return EvalTopK;
    case HloOpcode::kConvolution:
      return EvalConvolution;
    case HloOpcode::kCustomCall:
      return EvalCustomCall;
    case HloOpcode::kGather:
      return EvalGather;
    case HloOpcode::kScatter:
      return EvalScatter;
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
      return EvalCollective;
    case HloOpcode::kRng:
      return EvalRng;
    case HloOpcode::kRngBitGenerator:
      return EvalRngBitGenerator;
    case HloOpcode::kCholesky:
      return EvalCholesky;
    case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
      return EvalBatchNorm;
    case HloOpcode::kTriangularSolve:
      return EvalTriangularSolve;
    case HloOpcode::kFft:
      return EvalFft;
    case HloOpcode::kInfeed:
      return EvalInfeed;
    case HloOpcode::kOutfeed:
      return EvalOutfeed;
    case HloOpcode::kDynamicReshape:
      return EvalDynamicReshape;
    case HloOpcode::kGetDimensionSize:
      return EvalGetDimensionSize;
    case HloOpcode::kSetDimensionSize:
      return EvalSetDimensionSize;
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kScan:
      return nullptr;
    case HloOpcode::kParameter:
      return nullptr;  // bound to its argument before any kernel runs
  }
  return nullptr;  // unreachable: every HloOpcode returns above
}

/// True for the instructions whose kernels read their operands' dynamic sizes
/// themselves.
bool ReadsDynamicSizes(const HloInstruction& inst) {
  const HloOpcode opcode = inst.opcode();
  if (opcode == HloOpcode::kCustomCall) {
    return hlo::IsDynamicPadderEdge(inst.string_attr(hlo::AttrId::kCustomCallTarget));
  }
  return opcode == HloOpcode::kGetDimensionSize || opcode == HloOpcode::kSetDimensionSize ||
         opcode == HloOpcode::kDynamicReshape;
}

/// True when some operand has a dimension smaller than its bound.
bool AnyPadded(Operands operands) {
  return std::any_of(operands.begin(), operands.end(),
                     [](const Literal* operand) { return operand->HasPaddedDimension(); });
}

/// True for instructions that must run even when nothing reads their value:
/// a send whose data another device receives.
bool HasSideEffect(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kSend || inst.opcode() == HloOpcode::kSendDone;
}

/// Builds the plan of `computation`. The instructions to run are those the
/// root or a side-effecting instruction depends on (through operands and
/// control predecessors). They run in text order as far as dependencies
/// allow (each after everything it depends on), so that a scheduled module
/// runs in its schedule: devices then post their sends before they wait for
/// receives, as the program's author ordered them. Both walks are iterative
/// depth-first searches, so that a long chain cannot overflow the stack.
StatusOr<std::unique_ptr<ComputationPlan>> BuildPlan(const hlo::HloModule& module,
                                                     const HloComputation& computation) {
  auto plan = std::make_unique<ComputationPlan>();
  const auto& instructions = computation.instructions();
  const int64_t n = computation.instruction_count();
  if (n == 0 || computation.root() == nullptr) {
    return InvalidArgument(module.ErrorAt(computation.location(),
                                          "computation " + computation.name() + " has no root"));
  }
  plan->base_id = instructions.front()->unique_id();
  auto local = [&](const HloInstruction* inst) { return inst->unique_id() - plan->base_id; };

  enum class Mark : uint8_t { kNew, kOpen, kDone };
  std::vector<Mark> mark(n, Mark::kNew);
  // Appends `start` to `order` after everything it depends on that is not
  // already there. Each frame: an instruction and how many of its
  // dependencies were pushed.
  auto visit = [&](const HloInstruction* start, std::vector<int64_t>& order) -> Status {
    if (mark[local(start)] == Mark::kDone) return Status::Ok();
    std::vector<std::pair<const HloInstruction*, size_t>> stack;
    stack.emplace_back(start, 0);
    mark[local(start)] = Mark::kOpen;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t operand_count = inst->operands().size();
      const size_t dependency_count = operand_count + inst->control_predecessors().size();
      if (next == dependency_count) {
        mark[local(inst)] = Mark::kDone;
        order.push_back(local(inst));
        stack.pop_back();
        continue;
      }
      const HloInstruction* dep = next < operand_count
                                      ? inst->operand(static_cast<int64_t>(next))
                                      : inst->control_predecessors()[next - operand_count];
      ++next;
      const int64_t d = local(dep);
      if (d < 0 || d >= n || instructions[d].get() != dep) {
        return InvalidArgument(module.ErrorAt(
            inst->location(), inst->name() + " uses " + dep->name() + " from another computation"));
      }
      if (mark[d] == Mark::kOpen) {
        return InvalidArgument(module.ErrorAt(
            dep->location(), "instruction " + dep->name() + " depends on itself (a cycle)"));
      }
      if (mark[d] == Mark::kNew) {
        mark[d] = Mark::kOpen;
        stack.emplace_back(dep, 0);
      }
    }
    return Status::Ok();
  };

  // First walk: which instructions run.
  std::vector<int64_t> live_order;
  TPUSIM_RETURN_IF_ERROR(visit(computation.root(), live_order));
  for (const auto& inst : instructions) {
    if (HasSideEffect(*inst)) TPUSIM_RETURN_IF_ERROR(visit(inst.get(), live_order));
  }
  // Second walk: the same instructions, in text order where dependencies allow.
  std::vector<bool> live(n, false);
  for (int64_t i : live_order) live[i] = true;
  mark.assign(n, Mark::kNew);
  for (int64_t i = 0; i < n; ++i) {
    if (live[i]) TPUSIM_RETURN_IF_ERROR(visit(instructions[i].get(), plan->order));
  }

  plan->last_use.assign(n, -1);
  for (size_t pos = 0; pos < plan->order.size(); ++pos) {
    for (const HloInstruction* operand : instructions[plan->order[pos]]->operands()) {
      plan->last_use[local(operand)] = static_cast<int64_t>(pos);
    }
  }
  return plan;
}

/// The error for a computation called more than hlo::kMaxCallDepth levels
/// deep: the same words as the timing model's.
Status NestTooDeeply(const hlo::HloModule& module, const HloComputation& computation) {
  return InvalidArgument(module.ErrorAt(computation.location(),
                                        computation.name() + ": " + hlo::CallsNestTooDeeply()));
}

}  // namespace

EvalContext::EvalContext(const hlo::HloModule& module, const EvaluatorOptions& options,
                         DeviceId device, CollectiveHub& hub)
    : module_(module), options_(options), device_(device), hub_(hub) {}

EvalContext::~EvalContext() = default;

StatusOr<Literal> EvalContext::NewValue(const HloInstruction& inst, const hlo::Shape& shape) const {
  StatusOr<Literal> value = Literal::Create(shape, options_.max_bytes);
  if (!value.ok()) return Error(inst, value.status().code(), value.status().message());
  return value;
}

Status EvalContext::Error(const HloInstruction& inst, StatusCode code,
                          std::string_view what) const {
  std::string message = inst.OpcodeSpelling() + " " + inst.name() + ": ";
  message += what;
  return Status(code, module_.ErrorAt(inst.location(), message));
}

StatusOr<Literal> EvalContext::Call(const HloComputation& computation, Operands args) {
  if (call_depth_ == hlo::kMaxCallDepth) return NestTooDeeply(module_, computation);
  ++call_depth_;
  StatusOr<Literal> result = CallNested(computation, args);
  --call_depth_;
  return result;
}

StatusOr<Literal> EvalContext::CallNested(const HloComputation& computation, Operands args) {
  if (static_cast<int64_t>(args.size()) != computation.parameter_count()) {
    return InvalidArgument(module_.ErrorAt(
        computation.location(), "computation " + computation.name() + " takes " +
                                    std::to_string(computation.parameter_count()) +
                                    " parameters, called with " + std::to_string(args.size())));
  }
  auto found = plans_.find(&computation);
  if (found == plans_.end()) {
    TPUSIM_ASSIGN_OR_RETURN(auto built, BuildPlan(module_, computation));
    found = plans_.emplace(&computation, std::move(built)).first;
  }
  const ComputationPlan& plan = *found->second;
  const auto& instructions = computation.instructions();
  const int64_t root = computation.root()->unique_id() - plan.base_id;

  // A parameter's value is the caller's, read in place: `owned` holds only
  // what this call computes, and `value` points at every live value.
  std::vector<std::optional<Literal>> owned(instructions.size());
  std::vector<const Literal*> value(instructions.size(), nullptr);
  std::vector<const Literal*> operands;
  for (size_t pos = 0; pos < plan.order.size(); ++pos) {
    const HloInstruction& inst = *instructions[plan.order[pos]];
    operands.clear();
    for (const HloInstruction* operand : inst.operands()) {
      operands.push_back(value[operand->unique_id() - plan.base_id]);
    }
    if (inst.opcode() == HloOpcode::kParameter) {
      const int64_t number = inst.parameter_number();
      if (number < 0 || number >= static_cast<int64_t>(args.size())) {
        return Error(inst, StatusCode::kInvalidArgument, "parameter number out of range");
      }
      value[plan.order[pos]] = args[number];
    } else {
      const Kernel kernel = KernelFor(inst.opcode());
      if (kernel == nullptr) return Unsupported(inst, "opcode not implemented by the evaluator");
      TPUSIM_ASSIGN_OR_RETURN(Literal result,
                              ReadsDynamicSizes(inst) || !AnyPadded(operands)
                                  ? kernel(*this, inst, operands)
                                  : EvalOnPaddedOperands(*this, inst, operands, kernel));
      work_ += kInstructionWork + (result.shape().IsArray() ? result.element_count() : 0);
      value[plan.order[pos]] = &owned[plan.order[pos]].emplace(std::move(result));
      if (options_.progress != nullptr && is_device_zero()) {
        options_.progress->fetch_add(1, std::memory_order_relaxed);
      }
    }
    for (const HloInstruction* operand : inst.operands()) {
      const int64_t o = operand->unique_id() - plan.base_id;
      if (o != root && plan.last_use[o] == static_cast<int64_t>(pos)) {
        owned[o].reset();
        value[o] = nullptr;
      }
    }
  }
  if (owned[root].has_value()) return std::move(*owned[root]);
  return *value[root];  // the root is a parameter: the caller keeps its own
}

StatusOr<Literal> Evaluator::Evaluate(const hlo::HloModule& module,
                                      std::span<const Literal> args) const {
  return Evaluate(module, args, DeviceId{});
}

StatusOr<Literal> Evaluator::Evaluate(const hlo::HloModule& module, std::span<const Literal> args,
                                      DeviceId device) const {
  if (device.replica_id < 0 || device.partition_id < 0) {
    return InvalidArgument(module.filename() + ": negative device id");
  }
  SpmdConfig config = SpmdConfig::FromModule(module);
  config.replica_count = std::max(config.replica_count, device.replica_id + 1);
  config.partition_count = std::max(config.partition_count, device.partition_id + 1);
  CollectiveHub hub(module, config, {config.DeviceIndex(device)});
  return EvaluateOnDevice(module, options_, device, hub, args);
}

StatusOr<Literal> EvaluateOnDevice(const hlo::HloModule& module, const EvaluatorOptions& options,
                                   DeviceId device, CollectiveHub& hub,
                                   std::span<const Literal> args) {
  const HloComputation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument(module.filename() + ": module has no entry");
  if (static_cast<int64_t>(args.size()) != entry->parameter_count()) {
    return InvalidArgument(module.filename() + ": entry computation " + entry->name() + " takes " +
                           std::to_string(entry->parameter_count()) + " arguments, got " +
                           std::to_string(args.size()));
  }
  std::vector<const Literal*> arg_ptrs;
  for (size_t i = 0; i < args.size(); ++i) {
    const HloInstruction* parameter = entry->parameters()[i];
    if (!args[i].shape().Compatible(parameter->shape())) {
      return InvalidArgument(module.ErrorAt(parameter->location(),
                                            "argument " + std::to_string(i) + " has shape " +
                                                args[i].shape().ToString(false) + ", parameter " +
                                                parameter->name() + " expects " +
                                                parameter->shape().ToString(false)));
    }
    arg_ptrs.push_back(&args[i]);
  }
  EvalContext context(module, options, device, hub);
  return context.Call(*entry, arg_ptrs);
}

namespace {

/// Peak bytes while `computation` runs; its parameters are the caller's
/// values, read in place (CallNested), so they count nothing here. Memoised
/// per computation in `peaks`.
StatusOr<int64_t> ComputationPeakBytes(const hlo::HloModule& module,
                                       const HloComputation& computation,
                                       std::map<const HloComputation*, int64_t>& peaks,
                                       int64_t depth) {
  if (auto found = peaks.find(&computation); found != peaks.end()) return found->second;
  if (depth == hlo::kMaxCallDepth) return NestTooDeeply(module, computation);
  TPUSIM_ASSIGN_OR_RETURN(const auto plan, BuildPlan(module, computation));
  const auto& instructions = computation.instructions();
  const int64_t root = computation.root()->unique_id() - plan->base_id;
  std::vector<int64_t> bytes(instructions.size(), 0);
  int64_t live = 0;
  int64_t peak = 0;
  for (size_t pos = 0; pos < plan->order.size(); ++pos) {
    const HloInstruction& inst = *instructions[plan->order[pos]];
    int64_t callee_peak = 0;
    for (const HloComputation* callee : inst.called_computations()) {
      TPUSIM_ASSIGN_OR_RETURN(const int64_t p, ComputationPeakBytes(module, *callee, peaks, depth + 1));
      callee_peak = std::max(callee_peak, p);
    }
    TPUSIM_ASSIGN_OR_RETURN(const int64_t size, Evaluator::ValueBytes(module, inst));
    if (inst.opcode() != HloOpcode::kParameter) bytes[plan->order[pos]] = size;
    live = SatAdd(live, bytes[plan->order[pos]]);
    peak = std::max(peak, SatAdd(live, callee_peak));
    for (const HloInstruction* operand : inst.operands()) {
      const int64_t o = operand->unique_id() - plan->base_id;
      if (o != root && plan->last_use[o] == static_cast<int64_t>(pos)) {
        live -= bytes[o];
        bytes[o] = 0;  // an operand used twice by this instruction is freed once
      }
    }
  }
  peaks.emplace(&computation, peak);
  return peak;
}

}  // namespace

StatusOr<int64_t> Evaluator::EstimatePeakBytes(const hlo::HloModule& module) {
  const HloComputation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument(module.filename() + ": module has no entry");
  int64_t arguments = 0;
  for (const HloInstruction* parameter : entry->parameters()) {
    TPUSIM_ASSIGN_OR_RETURN(const int64_t bytes, ValueBytes(module, *parameter));
    arguments = SatAdd(arguments, bytes);
  }
  std::map<const HloComputation*, int64_t> peaks;
  TPUSIM_ASSIGN_OR_RETURN(const int64_t peak, ComputationPeakBytes(module, *entry, peaks, 0));
  return SatAdd(arguments, peak);
}

StatusOr<int64_t> Evaluator::ValueBytes(const hlo::HloModule& module, const HloInstruction& inst) {
  StatusOr<int64_t> bytes = Literal::ByteSizeOf(inst.shape());
  if (!bytes.ok()) {
    return Status(bytes.status().code(),
                  module.ErrorAt(inst.location(),
                                 inst.name() + ": " + std::string(bytes.status().message())));
  }
  return bytes;
}

bool Evaluator::IsOpcodeImplemented(HloOpcode opcode) {
  return opcode == HloOpcode::kParameter || KernelFor(opcode) != nullptr;
}

// --- index helpers -----------------------------------------------------------

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

void ForEachIndex(std::span<const int64_t> dims,
                  const std::function<void(std::span<const int64_t>)>& fn) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    fn(index);
    int64_t i = static_cast<int64_t>(dims.size()) - 1;
    for (; i >= 0; --i) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

void CopyElement(const Literal& src, int64_t src_index, Literal& dst, int64_t dst_index) {
  const int64_t size = value::ElementByteSize(src.element_type());
  std::memcpy(dst.mutable_bytes().data() + dst_index * size, src.bytes().data() + src_index * size,
              static_cast<size_t>(size));
}

void CopyBox(const Literal& src, const std::vector<int64_t>& src_start, Literal& dst,
             const std::vector<int64_t>& dst_start, const std::vector<int64_t>& sizes) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  for (int64_t size : sizes) {
    if (size == 0) return;
  }
  const int64_t bytes = value::ElementByteSize(src.element_type());
  const auto strides = [rank](const Literal& l) {
    std::vector<int64_t> st(static_cast<size_t>(rank), 1);
    for (int64_t d = rank - 2; d >= 0; --d) st[d] = st[d + 1] * l.shape().dimensions(d + 1);
    return st;
  };
  const std::vector<int64_t> src_strides = strides(src), dst_strides = strides(dst);
  // Row by row along the last dimension (the whole box for rank 0).
  const int64_t row = rank == 0 ? 1 : sizes[rank - 1];
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  while (true) {
    int64_t s = 0, d = 0;
    for (int64_t k = 0; k < rank; ++k) {
      s += (src_start[k] + index[k]) * src_strides[k];
      d += (dst_start[k] + index[k]) * dst_strides[k];
    }
    std::memcpy(dst.mutable_bytes().data() + d * bytes, src.bytes().data() + s * bytes,
                static_cast<size_t>(row * bytes));
    int64_t k = rank - 2;
    while (k >= 0 && ++index[k] == sizes[k]) index[k--] = 0;
    if (k < 0) return;
  }
}

int64_t ScalarAsInt64(const Literal& scalar) {
  return value::VisitArrayType(scalar.element_type(), [&](auto tag) -> int64_t {
    using T = value::NativeType<decltype(tag)::value>;
    if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T> && sizeof(T) == 8) {
      // A u64 index beyond int64 is past every dimension; clamping treats
      // INT64_MAX the same way.
      const T v = scalar.data<T>()[0];
      return v > static_cast<T>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(scalar.data<T>()[0]);
    } else {
      // Index operands are integers (the verifier checks); a float here has
      // no index meaning, and 0 is what clamping would make of most of them.
      return 0;
    }
  });
}

}  // namespace tpusim::eval
