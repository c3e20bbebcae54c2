// VerifyModule, in the order it checks: an entry exists; every computation
// has a root and gap-free parameters; then each instruction in text order
// (sizes, operand count, required attributes, called computations' signatures,
// its shape against shape inference or, where the shape is written rather than
// inferred, against its operands); then cycles in each computation, recursion
// among computations, and the entry against entry_computation_layout.
// Every walk is linear in the module size.
#include "sim/hlo/verifier.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/base/units.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/shape_inference.h"
#include "sim/hlo/verifier_rules.h"

namespace tpusim::hlo {
namespace {

using verifier_internal::Agree;
using verifier_internal::VariadicCountProblem;

std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

/// A scalar computation result: the scalar itself or a 1-tuple wrapping it
/// (XLA's importer accepts reducers that return `(f32[])`).
const Shape* UnwrapScalar(const Shape& root) {
  if (root.IsArray() && root.rank() == 0) return &root;
  if (root.IsTuple() && root.tuple_size() == 1) return UnwrapScalar(root.tuple_shapes(0));
  return nullptr;
}

/// The opcode whose operand and attribute rules apply: an `X-start` async
/// wrapper takes the operands and attributes of X.
HloOpcode RuleOpcode(const HloInstruction& in) {
  if (in.opcode() == HloOpcode::kAsyncStart && in.async_wrapped_opcode()) {
    return *in.async_wrapped_opcode();
  }
  return in.opcode();
}

class Verifier {
 public:
  explicit Verifier(const HloModule& module) : module_(module) {}

  Status Run() {
    TPUSIM_RETURN_IF_ERROR(VerifyEntry());
    for (const auto& computation : module_.computations()) {
      known_computations_.insert(computation.get());
    }
    // Every computation's root and parameters first: instructions look at
    // their callees' signatures.
    for (const auto& computation : module_.computations()) {
      TPUSIM_RETURN_IF_ERROR(VerifySignature(*computation));
    }
    for (const auto& computation : module_.computations()) {
      TPUSIM_RETURN_IF_ERROR(VerifyComputation(*computation));
    }
    TPUSIM_RETURN_IF_ERROR(VerifyNoRecursion());
    TPUSIM_RETURN_IF_ERROR(VerifyEntryLayout());
    // Device ids against the counts the header states (unstated ones grow
    // to cover them).
    return CheckCollectiveIds(module_, SpmdConfig::CoveringModule(module_));
  }

 private:
  // --- reporting --------------------------------------------------------------

  Status FailAt(SourceLocation loc, const std::string& message) const {
    return InvalidArgument(module_.ErrorAt(loc, message));
  }
  /// "NAME: MESSAGE" at the instruction.
  Status Fail(const HloInstruction& in, const std::string& message) const {
    return FailAt(in.location(), in.name() + ": " + message);
  }

  // --- module and computations ---------------------------------------------------

  Status VerifyEntry() const {
    const HloComputation* entry = module_.entry();
    if (entry == nullptr) {
      return FailAt({1, 1}, "module " + module_.name() + " has no entry computation");
    }
    for (const auto& c : module_.computations()) {
      if (c.get() == entry) return Status::Ok();
    }
    return FailAt({1, 1}, "the entry computation of module " + module_.name() +
                              " is not one of its computations");
  }

  /// Entry parameters and result against `entry_computation_layout`.
  Status VerifyEntryLayout() const {
    const auto& layout = module_.header().entry_computation_layout;
    if (!layout) return Status::Ok();
    const HloComputation& entry = *module_.entry();
    if (static_cast<int64_t>(layout->parameters.size()) != entry.parameter_count()) {
      return FailAt(entry.location(), "entry computation " + entry.name() + " has " +
                                          CountOf(entry.parameter_count(), "parameter") +
                                          " but entry_computation_layout lists " +
                                          std::to_string(layout->parameters.size()));
    }
    for (int64_t i = 0; i < entry.parameter_count(); ++i) {
      const HloInstruction& p = *entry.parameters()[i];
      if (!Agree(p.shape(), layout->parameters[i])) {
        return Fail(p, "entry parameter " + std::to_string(i) + " has shape " + Str(p.shape()) +
                           " but entry_computation_layout gives " + Str(layout->parameters[i]));
      }
    }
    const HloInstruction& root = *entry.root();
    if (!Agree(root.shape(), layout->result)) {
      return Fail(root, "the entry result has shape " + Str(root.shape()) +
                            " but entry_computation_layout gives " + Str(layout->result));
    }
    return Status::Ok();
  }

  Status VerifySignature(const HloComputation& c) const {
    if (c.root() == nullptr) {
      return FailAt(c.location(), "computation " + c.name() + " has no ROOT instruction");
    }
    if (c.root()->parent() != &c) {
      return FailAt(c.location(),
                    "the ROOT of computation " + c.name() + " belongs to another computation");
    }
    for (int64_t i = 0; i < c.parameter_count(); ++i) {
      if (c.parameters()[i] == nullptr) {
        return FailAt(c.location(), "computation " + c.name() + " has no parameter(" +
                                        std::to_string(i) +
                                        ") but has a higher-numbered parameter");
      }
    }
    return Status::Ok();
  }

  Status VerifyComputation(const HloComputation& c) const {
    for (const auto& owned : c.instructions()) {
      const HloInstruction& in = *owned;
      if (in.opcode() == HloOpcode::kParameter) {
        const int64_t n = in.parameter_number();
        if (n < 0 || n >= c.parameter_count()) {
          return Fail(in, "parameter(" + std::to_string(n) +
                              ") is not registered with computation " + c.name());
        }
        if (c.parameters()[n] != &in) {
          return Fail(in, "parameter number " + std::to_string(n) +
                              " is used twice in computation " + c.name());
        }
      }
      for (const HloInstruction* operand : in.operands()) {
        if (operand->parent() != &c) {
          return Fail(in, "operand " + operand->name() + " belongs to another computation");
        }
      }
      for (const HloInstruction* pred : in.control_predecessors()) {
        if (pred->parent() != &c) {
          return Fail(in,
                      "control predecessor " + pred->name() + " belongs to another computation");
        }
      }
      TPUSIM_RETURN_IF_ERROR(VerifyInstruction(in));
    }
    return VerifyAcyclic(c);
  }

  /// Iterative DFS with colours over operand and control edges: computations
  /// can have thousands of instructions, too deep for recursion.
  Status VerifyAcyclic(const HloComputation& c) const {
    enum class Colour : uint8_t { kWhite, kGrey, kBlack };
    std::unordered_map<const HloInstruction*, Colour> colour;
    colour.reserve(c.instructions().size());
    struct Frame {
      const HloInstruction* in;
      size_t next;  // index into operands, then control predecessors
    };
    std::vector<Frame> stack;
    auto edge = [](const HloInstruction* in, size_t i) {
      const size_t n = in->operands().size();
      return i < n ? in->operands()[i] : in->control_predecessors()[i - n];
    };
    auto edge_count = [](const HloInstruction* in) {
      return in->operands().size() + in->control_predecessors().size();
    };
    for (const auto& start : c.instructions()) {
      if (colour[start.get()] != Colour::kWhite) continue;
      colour[start.get()] = Colour::kGrey;
      stack.push_back({start.get(), 0});
      while (!stack.empty()) {
        Frame& top = stack.back();
        if (top.next == edge_count(top.in)) {
          colour[top.in] = Colour::kBlack;
          stack.pop_back();
          continue;
        }
        const HloInstruction* next = edge(top.in, top.next++);
        Colour& seen = colour[next];
        if (seen == Colour::kWhite) {
          seen = Colour::kGrey;
          stack.push_back({next, 0});
        } else if (seen == Colour::kGrey) {
          // The grey frames from `next` to the top form the cycle.
          std::string path;
          bool on_cycle = false;
          for (const Frame& f : stack) {
            on_cycle = on_cycle || f.in == next;
            if (on_cycle) path += f.in->name() + " -> ";
          }
          return Fail(*next,
                      "instruction depends on itself through operands or control predecessors (" +
                          path + next->name() + ")");
        }
      }
    }
    return Status::Ok();
  }

  /// No computation calls itself, directly or through others.
  Status VerifyNoRecursion() const {
    enum class Colour : uint8_t { kWhite, kGrey, kBlack };
    struct Call {
      const HloComputation* callee;
      const HloInstruction* site;
    };
    std::unordered_map<const HloComputation*, std::vector<Call>> calls;
    for (const auto& c : module_.computations()) {
      auto& out = calls[c.get()];
      for (const auto& in : c->instructions()) {
        for (const HloComputation* callee : in->called_computations()) {
          out.push_back({callee, in.get()});
        }
      }
    }
    std::unordered_map<const HloComputation*, Colour> colour;
    struct Frame {
      const HloComputation* c;
      size_t next;
    };
    std::vector<Frame> stack;
    for (const auto& start : module_.computations()) {
      if (colour[start.get()] != Colour::kWhite) continue;
      colour[start.get()] = Colour::kGrey;
      stack.push_back({start.get(), 0});
      while (!stack.empty()) {
        Frame& top = stack.back();
        const std::vector<Call>& out = calls[top.c];
        if (top.next == out.size()) {
          colour[top.c] = Colour::kBlack;
          stack.pop_back();
          continue;
        }
        const Call call = out[top.next++];
        Colour& seen = colour[call.callee];
        if (seen == Colour::kWhite) {
          seen = Colour::kGrey;
          stack.push_back({call.callee, 0});
        } else if (seen == Colour::kGrey) {
          return Fail(*call.site, "computation " + call.callee->name() + " calls itself (through " +
                                      top.c->name() + ")");
        }
      }
    }
    return Status::Ok();
  }

  // --- instructions ----------------------------------------------------------------

  Status VerifyInstruction(const HloInstruction& in) const {
    TPUSIM_RETURN_IF_ERROR(VerifySizes(in, in.shape()));
    TPUSIM_RETURN_IF_ERROR(VerifyOperandCount(in));
    TPUSIM_RETURN_IF_ERROR(VerifyRequiredAttributes(in));
    for (const HloComputation* callee : in.called_computations()) {
      if (known_computations_.count(callee) == 0) {
        return Fail(in, "calls a computation that is not in module " + module_.name());
      }
    }
    TPUSIM_RETURN_IF_ERROR(VerifyCalledComputations(in));
    return VerifyShape(in);
  }

  /// Sizes are non-negative (or `?`) and element counts fit in int64.
  Status VerifySizes(const HloInstruction& in, const Shape& shape) const {
    if (shape.IsArray()) {
      for (int64_t d : shape.dimensions()) {
        if (d < 0 && d != Shape::kUnboundedSize) {
          return Fail(in, "shape " + Str(shape) + " has a negative dimension size");
        }
      }
      // `?` has no size yet, so only the known sizes must multiply without overflow.
      int64_t count = 1;
      for (int64_t d : shape.dimensions()) {
        if (d != Shape::kUnboundedSize && __builtin_mul_overflow(count, d, &count)) {
          return Fail(in, "shape " + Str(shape) + " has more elements than fit in int64");
        }
      }
    }
    for (const Shape& element : shape.tuple_shapes()) {
      TPUSIM_RETURN_IF_ERROR(VerifySizes(in, element));
    }
    return Status::Ok();
  }

  Status VerifyOperandCount(const HloInstruction& in) const {
    const HloOpcode op = RuleOpcode(in);
    const int64_t n = in.operand_count();
    const int arity = HloOpcodeArity(op);
    if (arity != kVariadicOperands) {
      if (n == arity) return Status::Ok();
      return Fail(in, in.OpcodeSpelling() + " takes " + CountOf(arity, "operand") + ", found " +
                          std::to_string(n));
    }
    if (std::optional<std::string> need = VariadicCountProblem(VariadicArityOf(op), n)) {
      return Fail(in, in.OpcodeSpelling() + " takes " + *need + ", found " + CountOf(n, "operand"));
    }
    return Status::Ok();
  }

  Status VerifyRequiredAttributes(const HloInstruction& in) const {
    const HloOpcode op = RuleOpcode(in);
    for (AttrId id : RequiredAttributesOf(op)) {
      if (in.FindAttribute(id) != nullptr) continue;
      // A scalar has no dimension to place: XLA's parser takes its broadcast
      // without dimensions= (BroadcastOfScalarDoesntNeedDimensionsAttr).
      if (op == HloOpcode::kBroadcast && id == AttrId::kDimensions && in.operand_count() == 1 &&
          in.operand(0)->shape().IsArray() && in.operand(0)->shape().rank() == 0) {
        continue;
      }
      return Fail(in, in.OpcodeSpelling() + " needs the attribute " + std::string(AttrName(id)));
    }
    if (op == HloOpcode::kConditional && in.FindAttribute(AttrId::kBranchComputations) == nullptr &&
        (in.FindAttribute(AttrId::kTrueComputation) == nullptr ||
         in.FindAttribute(AttrId::kFalseComputation) == nullptr)) {
      return Fail(
          in, "conditional needs branch_computations or true_computation and false_computation");
    }
    // A generic async-start names the computation it runs.
    if (in.opcode() == HloOpcode::kAsyncStart && !in.async_wrapped_opcode() &&
        in.FindAttribute(AttrId::kCalls) == nullptr) {
      return Fail(in, "async-start needs the attribute calls");
    }
    return Status::Ok();
  }

  // --- called computations ------------------------------------------------------------

  /// `c` (the `role` computation, e.g. "to_apply") takes parameters that agree
  /// with `expected`.
  Status CheckParameters(const HloInstruction& in, const HloComputation& c, std::string_view role,
                         std::span<const Shape> expected) const {
    const std::string who =
        std::string(role) + " computation " + c.name() + " of " + in.OpcodeSpelling();
    if (c.parameter_count() != static_cast<int64_t>(expected.size())) {
      return Fail(in, who + " takes " + CountOf(c.parameter_count(), "parameter") + " but " +
                          in.OpcodeSpelling() + " passes " + std::to_string(expected.size()));
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      const Shape& have = c.parameters()[i]->shape();
      if (!Agree(have, expected[i])) {
        return Fail(in, "parameter " + std::to_string(i) + " of " + who + " has shape " +
                            Str(have) + " but " + in.OpcodeSpelling() + " passes " +
                            Str(expected[i]));
      }
    }
    return Status::Ok();
  }

  /// `c` returns `expected` (a scalar may come wrapped in a 1-tuple).
  Status CheckResult(const HloInstruction& in, const HloComputation& c, std::string_view role,
                     const Shape& expected) const {
    const Shape& root = c.root()->shape();
    const Shape* scalar = expected.IsArray() && expected.rank() == 0 ? UnwrapScalar(root) : nullptr;
    if (Agree(scalar ? *scalar : root, expected)) return Status::Ok();
    return Fail(in, std::string(role) + " computation " + c.name() + " of " + in.OpcodeSpelling() +
                        " returns " + Str(root) + " but " + in.OpcodeSpelling() + " needs " +
                        Str(expected));
  }

  static std::vector<Shape> Scalars(std::span<const PrimitiveType> types) {
    std::vector<Shape> out;
    out.reserve(types.size());
    for (PrimitiveType t : types) out.emplace_back(t, std::vector<int64_t>{});
    return out;
  }

  /// A scalar function: parameters of the given scalar types, returning one
  /// scalar of each result type (a tuple when several).
  Status CheckScalarFunction(const HloInstruction& in, const HloComputation* c,
                             std::string_view role, std::span<const PrimitiveType> params,
                             std::span<const PrimitiveType> results) const {
    if (c == nullptr) return Status::Ok();  // reported as a missing attribute
    TPUSIM_RETURN_IF_ERROR(CheckParameters(in, *c, role, Scalars(params)));
    std::vector<Shape> result = Scalars(results);
    return CheckResult(in, *c, role,
                       result.size() == 1 ? result[0] : Shape::Tuple(std::move(result)));
  }

  /// Element types of operands [begin, end); nullopt when one is not an array
  /// (shape inference reports that).
  static std::optional<std::vector<PrimitiveType>> Types(const HloInstruction& in, int64_t begin,
                                                         int64_t end) {
    std::vector<PrimitiveType> out;
    for (int64_t i = begin; i < end && i < in.operand_count(); ++i) {
      if (!in.operand(i)->shape().IsArray()) return std::nullopt;
      out.push_back(in.operand(i)->shape().element_type());
    }
    return out;
  }

  static const HloComputation* Computation(const HloInstruction& in, AttrId id) {
    if (const auto* c = in.GetAttr<HloComputation*>(id)) return *c;
    if (const auto* list = in.GetAttr<ComputationList>(id)) {
      return list->computations.size() == 1 ? list->computations[0] : nullptr;
    }
    return nullptr;
  }

  Status VerifyCalledComputations(const HloInstruction& in) const {
    // fusion and async-start (generic, or an `X-start` that also names a
    // computation) run `calls` on their operands.
    if (in.opcode() == HloOpcode::kFusion || in.opcode() == HloOpcode::kAsyncStart) {
      if (const auto* calls = in.GetAttr<ComputationList>(AttrId::kCalls)) {
        if (calls->computations.size() != 1) {
          return Fail(in, in.OpcodeSpelling() + " calls exactly one computation, found " +
                              std::to_string(calls->computations.size()));
        }
        TPUSIM_RETURN_IF_ERROR(CheckCallee(in, *calls->computations[0], "called"));
      }
    }
    const int64_t n = in.operand_count();
    const HloComputation* to_apply = in.to_apply();
    switch (RuleOpcode(in)) {
      case HloOpcode::kReduce:
      case HloOpcode::kReduceWindow: {
        // (accumulators..., inputs...) -> accumulators; the accumulators have the init types.
        const auto inputs = Types(in, 0, n / 2);
        const auto inits = Types(in, n / 2, n);
        if (!inputs || !inits) return Status::Ok();
        // A reduce with array inits is an MHLO form tpusim leaves unchecked
        // (see HasArrayInits in shape_inference_ops.cc).
        for (int64_t i = n / 2; i < n; ++i) {
          if (in.opcode() == HloOpcode::kReduce && in.operand(i)->shape().rank() != 0) {
            return Status::Ok();
          }
        }
        std::vector<PrimitiveType> params = *inits;
        params.insert(params.end(), inputs->begin(), inputs->end());
        return CheckScalarFunction(in, to_apply, "to_apply", params, *inits);
      }
      case HloOpcode::kScatter: {
        const int64_t k = (n - 1) / 2;
        const auto operands = Types(in, 0, k);
        const auto updates = Types(in, k + 1, n);
        if (!operands || !updates) return Status::Ok();
        std::vector<PrimitiveType> params = *operands;
        params.insert(params.end(), updates->begin(), updates->end());
        return CheckScalarFunction(in, to_apply, "to_apply", params, *operands);
      }
      case HloOpcode::kSort: {
        const auto types = Types(in, 0, n);
        if (!types) return Status::Ok();
        std::vector<PrimitiveType> params;
        for (PrimitiveType t : *types) params.insert(params.end(), {t, t});
        const PrimitiveType pred = PrimitiveType::kPred;
        return CheckScalarFunction(in, to_apply, "comparator", params, std::span(&pred, 1));
      }
      case HloOpcode::kMap: {
        const auto types = Types(in, 0, n);
        if (!types || to_apply == nullptr) return Status::Ok();
        // The result type is free; shape inference takes it from the root.
        return CheckParameters(in, *to_apply, "to_apply", Scalars(*types));
      }
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kReduceScatter: {
        const auto types = Types(in, 0, 1);
        if (!types || types->empty()) return Status::Ok();
        const PrimitiveType t = (*types)[0];
        const PrimitiveType params[] = {t, t};
        return CheckScalarFunction(in, to_apply, "to_apply", params, std::span(&t, 1));
      }
      case HloOpcode::kSelectAndScatter: {
        const auto types = Types(in, 0, 2);
        if (!types || types->size() != 2) return Status::Ok();
        const PrimitiveType pred = PrimitiveType::kPred;
        const PrimitiveType op[] = {(*types)[0], (*types)[0]};
        const PrimitiveType src[] = {(*types)[1], (*types)[1]};
        TPUSIM_RETURN_IF_ERROR(CheckScalarFunction(in, Computation(in, AttrId::kSelect), "select",
                                                   op, std::span(&pred, 1)));
        return CheckScalarFunction(in, Computation(in, AttrId::kScatter), "scatter", src,
                                   std::span(&src[0], 1));
      }
      case HloOpcode::kWhile: {
        const HloComputation* condition = Computation(in, AttrId::kCondition);
        const HloComputation* body = Computation(in, AttrId::kBody);
        if (condition == nullptr || body == nullptr || n != 1) return Status::Ok();
        const Shape& state = in.operand(0)->shape();
        TPUSIM_RETURN_IF_ERROR(CheckParameters(in, *condition, "condition", std::span(&state, 1)));
        TPUSIM_RETURN_IF_ERROR(
            CheckResult(in, *condition, "condition", Shape(PrimitiveType::kPred, {})));
        TPUSIM_RETURN_IF_ERROR(CheckParameters(in, *body, "body", std::span(&state, 1)));
        return CheckResult(in, *body, "body", state);
      }
      case HloOpcode::kConditional:
        return VerifyConditional(in);
      case HloOpcode::kCall:
        if (to_apply == nullptr) return Status::Ok();
        return CheckCallee(in, *to_apply, "to_apply");
      // Call nothing, run `calls` (fusion and async-start, checked above), or
      // call computations whose signatures tpusim leaves unchecked
      // (custom-call, scan).
      case HloOpcode::kAddDependency:
      case HloOpcode::kAfterAll:
      case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherDone:
      case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllReduceDone:
      case HloOpcode::kAllToAll:
      case HloOpcode::kAsyncDone:
      case HloOpcode::kAsyncStart:
      case HloOpcode::kAsyncUpdate:
      case HloOpcode::kBatchNormGrad:
      case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormTraining:
      case HloOpcode::kBitcast:
      case HloOpcode::kBroadcast:
      case HloOpcode::kCholesky:
      case HloOpcode::kCollectiveBroadcast:
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteDone:
      case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kConcatenate:
      case HloOpcode::kConstant:
      case HloOpcode::kConvolution:
      case HloOpcode::kCopy:
      case HloOpcode::kCopyDone:
      case HloOpcode::kCopyStart:
      case HloOpcode::kCustomCall:
      case HloOpcode::kDomain:
      case HloOpcode::kDot:
      case HloOpcode::kDynamicReshape:
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kFft:
      case HloOpcode::kFusion:
      case HloOpcode::kGather:
      case HloOpcode::kGetDimensionSize:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kInfeed:
      case HloOpcode::kIota:
      case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kOutfeed:
      case HloOpcode::kPad:
      case HloOpcode::kParameter:
      case HloOpcode::kPartitionId:
      case HloOpcode::kRaggedAllToAll:
      case HloOpcode::kRaggedDot:
      case HloOpcode::kRecv:
      case HloOpcode::kRecvDone:
      case HloOpcode::kReplicaId:
      case HloOpcode::kReshape:
      case HloOpcode::kReverse:
      case HloOpcode::kRng:
      case HloOpcode::kRngBitGenerator:
      case HloOpcode::kRngGetAndUpdateState:
      case HloOpcode::kScan:
      case HloOpcode::kSend:
      case HloOpcode::kSendDone:
      case HloOpcode::kSetDimensionSize:
      case HloOpcode::kSlice:
      case HloOpcode::kTopK:
      case HloOpcode::kTranspose:
      case HloOpcode::kTriangularSolve:
      case HloOpcode::kTuple:
#define V TPUSIM_HLO_CASE_IF_ELEMENTWISE
#include "sim/hlo/opcode.def"
#undef V
        return Status::Ok();
    }
    return Status::Ok();  // unreachable: every HloOpcode returns above
  }

  /// A computation called with the instruction's operands as its parameters.
  Status CheckCallee(const HloInstruction& in, const HloComputation& c,
                     std::string_view role) const {
    std::vector<Shape> operands;
    operands.reserve(in.operands().size());
    for (const HloInstruction* operand : in.operands()) operands.push_back(operand->shape());
    return CheckParameters(in, c, role, operands);
  }

  Status VerifyConditional(const HloInstruction& in) const {
    std::vector<const HloComputation*> branches;
    if (const auto* list = in.GetAttr<ComputationList>(AttrId::kBranchComputations)) {
      branches.assign(list->computations.begin(), list->computations.end());
    } else {
      branches = {Computation(in, AttrId::kTrueComputation),
                  Computation(in, AttrId::kFalseComputation)};
      if (branches[0] == nullptr || branches[1] == nullptr) return Status::Ok();
    }
    if (in.operand_count() != static_cast<int64_t>(branches.size()) + 1) {
      return Fail(in, "conditional with " +
                          CountOf(static_cast<int64_t>(branches.size()), "branch") +
                          " takes a selector and " + std::to_string(branches.size()) +
                          " branch operands, found " + CountOf(in.operand_count(), "operand"));
    }
    // true/false branches are chosen by a pred, indexed branches by an s32.
    const bool indexed = in.FindAttribute(AttrId::kBranchComputations) != nullptr;
    const Shape selector(indexed ? PrimitiveType::kS32 : PrimitiveType::kPred, {});
    if (!Agree(in.operand(0)->shape(), selector)) {
      return Fail(in, "the selector (operand 0) of conditional must be " + Str(selector) +
                          ", found " + Str(in.operand(0)->shape()));
    }
    for (size_t i = 0; i < branches.size(); ++i) {
      const Shape& arg = in.operand(static_cast<int64_t>(i) + 1)->shape();
      const std::string role = "branch " + std::to_string(i);
      TPUSIM_RETURN_IF_ERROR(CheckParameters(in, *branches[i], role, std::span(&arg, 1)));
      TPUSIM_RETURN_IF_ERROR(CheckResult(in, *branches[i], role, in.shape()));
    }
    return Status::Ok();
  }

  // --- shapes ---------------------------------------------------------------------------

  Status VerifyShape(const HloInstruction& in) const {
    StatusOr<Shape> inferred = InferShape(in);
    if (inferred.ok()) return CompareWithInferred(in, *inferred, in.opcode());
    if (inferred.status().code() != StatusCode::kUnimplemented) {
      return Fail(in, inferred.status().message());
    }
    return VerifyUninferableShape(in);
  }

  /// dot, ragged-dot and convolution may produce another element type than
  /// their operands' (preferred_element_type), so only their dimensions are
  /// compared. So are send's: a host transfer's buffer has the wire type,
  /// which real modules let differ from the operand's
  /// (tpu_collective_pipeliner_ag_ar_send sends bf16 data as s32).
  static bool ElementTypesFree(HloOpcode op) {
    return op == HloOpcode::kDot || op == HloOpcode::kRaggedDot || op == HloOpcode::kConvolution ||
           op == HloOpcode::kSend;
  }

  Status CompareWithInferred(const HloInstruction& in, const Shape& inferred, HloOpcode as) const {
    const bool types_free = ElementTypesFree(as);
    if (Agree(in.shape(), inferred, !types_free)) return Status::Ok();
    return Fail(in, std::string(HloOpcodeName(as)) +
                        " of these operands and attributes has shape " + Str(inferred) +
                        ", but the instruction's shape is " + Str(in.shape()));
  }

  /// Opcodes whose result is written rather than inferred still have rules
  /// connecting it to their operands.
  Status VerifyUninferableShape(const HloInstruction& in) const {
    const Shape& out = in.shape();
    const std::string op = in.OpcodeSpelling();
    auto operand = [&](int64_t i) -> const Shape& { return in.operand(i)->shape(); };
    auto need_arrays = [&]() -> Status {
      if (!out.IsArray()) return Fail(in, op + " must produce an array, found " + Str(out));
      for (int64_t i = 0; i < in.operand_count(); ++i) {
        if (!operand(i).IsArray()) {
          return Fail(in, "operand " + std::to_string(i) + " of " + op +
                              " must be an array, found " + Str(operand(i)));
        }
      }
      return Status::Ok();
    };
    switch (in.opcode()) {
      case HloOpcode::kBroadcast: {
        TPUSIM_RETURN_IF_ERROR(need_arrays());
        const std::span<const int64_t> dims = in.dimensions();
        if (static_cast<int64_t>(dims.size()) != operand(0).rank()) {
          return Fail(in, "broadcast needs one entry in dimensions= per operand dimension (" +
                              std::to_string(operand(0).rank()) + "), found " +
                              std::to_string(dims.size()));
        }
        for (size_t i = 0; i < dims.size(); ++i) {
          const int64_t d = dims[i];
          if (d < 0 || d >= out.rank()) {
            return Fail(in, "broadcast dimension " + std::to_string(d) +
                                " is out of range for result " + Str(out));
          }
          const int64_t have = operand(0).dimensions(static_cast<int64_t>(i));
          if (have != out.dimensions(d) && have != Shape::kUnboundedSize &&
              out.dimensions(d) != Shape::kUnboundedSize) {
            return Fail(in, "broadcast maps operand dimension " + std::to_string(i) + " of " +
                                Str(operand(0)) + " to result dimension " + std::to_string(d) +
                                " of " + Str(out) + ", but their sizes differ");
          }
        }
        return ExpectSameElementType(in, operand(0));
      }
      case HloOpcode::kReshape: {
        TPUSIM_RETURN_IF_ERROR(need_arrays());
        TPUSIM_RETURN_IF_ERROR(ExpectSameElementType(in, operand(0)));
        const bool sized = operand(0).is_static() && out.is_static();
        if (sized && operand(0).element_count() != out.element_count()) {
          return Fail(in, "reshape of " + Str(operand(0)) + " (" +
                              std::to_string(operand(0).element_count()) +
                              " elements) cannot produce " + Str(out) + " (" +
                              std::to_string(out.element_count()) + " elements)");
        }
        return Status::Ok();
      }
      case HloOpcode::kConvert:
        TPUSIM_RETURN_IF_ERROR(need_arrays());
        return ExpectSameDimensions(in, operand(0));
      case HloOpcode::kStochasticConvert:
        TPUSIM_RETURN_IF_ERROR(need_arrays());
        TPUSIM_RETURN_IF_ERROR(ExpectSameDimensions(in, operand(0)));
        return ExpectSameDimensions(in, operand(1));
      case HloOpcode::kBitcastConvert:
        TPUSIM_RETURN_IF_ERROR(need_arrays());
        return VerifyBitcastConvert(in);
      case HloOpcode::kIota: {
        TPUSIM_RETURN_IF_ERROR(need_arrays());
        const int64_t d = in.int_attr(AttrId::kIotaDimension).value_or(0);
        if (d < 0 || d >= out.rank()) {
          return Fail(in,
                      "iota_dimension=" + std::to_string(d) + " is out of range for " + Str(out));
        }
        return Status::Ok();
      }
      case HloOpcode::kRng:
        TPUSIM_RETURN_IF_ERROR(need_arrays());
        for (int64_t i = 0; i < in.operand_count(); ++i) {
          if (operand(i).rank() != 0 || operand(i).element_type() != out.element_type()) {
            return Fail(in, "operand " + std::to_string(i) + " of rng must be a " +
                                std::string(PrimitiveTypeName(out.element_type())) +
                                "[] parameter, found " + Str(operand(i)));
          }
        }
        return Status::Ok();
      case HloOpcode::kAsyncStart:
        return VerifyAsyncStart(in);
      // parameter, constant, custom-call, infeed, recv, bitcast, scan, ...,
      // collectives whose replica groups are implicit, and ops whose shape is
      // inferred (they come here only when their rule leaves it to the text).
      case HloOpcode::kAbs:
      case HloOpcode::kAcos:
      case HloOpcode::kAcosh:
      case HloOpcode::kAdd:
      case HloOpcode::kAddDependency:
      case HloOpcode::kAfterAll:
      case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherDone:
      case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceDone:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllToAll:
      case HloOpcode::kAnd:
      case HloOpcode::kAsin:
      case HloOpcode::kAsinh:
      case HloOpcode::kAsyncDone:
      case HloOpcode::kAsyncUpdate:
      case HloOpcode::kAtan:
      case HloOpcode::kAtan2:
      case HloOpcode::kAtanh:
      case HloOpcode::kBatchNormGrad:
      case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormTraining:
      case HloOpcode::kBitcast:
      case HloOpcode::kCall:
      case HloOpcode::kCbrt:
      case HloOpcode::kCeil:
      case HloOpcode::kCholesky:
      case HloOpcode::kClamp:
      case HloOpcode::kClz:
      case HloOpcode::kCollectiveBroadcast:
      case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteDone:
      case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kCompare:
      case HloOpcode::kComplex:
      case HloOpcode::kConcatenate:
      case HloOpcode::kConditional:
      case HloOpcode::kConstant:
      case HloOpcode::kConvolution:
      case HloOpcode::kCopy:
      case HloOpcode::kCopyDone:
      case HloOpcode::kCopyStart:
      case HloOpcode::kCos:
      case HloOpcode::kCosh:
      case HloOpcode::kCustomCall:
      case HloOpcode::kDivide:
      case HloOpcode::kDomain:
      case HloOpcode::kDot:
      case HloOpcode::kDynamicReshape:
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kErf:
      case HloOpcode::kExp:
      case HloOpcode::kExpm1:
      case HloOpcode::kFft:
      case HloOpcode::kFloor:
      case HloOpcode::kFusion:
      case HloOpcode::kGather:
      case HloOpcode::kGetDimensionSize:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kImag:
      case HloOpcode::kInfeed:
      case HloOpcode::kIsFinite:
      case HloOpcode::kLog:
      case HloOpcode::kLog1p:
      case HloOpcode::kLogistic:
      case HloOpcode::kMap:
      case HloOpcode::kMaximum:
      case HloOpcode::kMinimum:
      case HloOpcode::kMulhi:
      case HloOpcode::kMultiply:
      case HloOpcode::kNegate:
      case HloOpcode::kNot:
      case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kOr:
      case HloOpcode::kOutfeed:
      case HloOpcode::kPad:
      case HloOpcode::kParameter:
      case HloOpcode::kPartitionId:
      case HloOpcode::kPopulationCount:
      case HloOpcode::kPower:
      case HloOpcode::kRaggedAllToAll:
      case HloOpcode::kRaggedDot:
      case HloOpcode::kReal:
      case HloOpcode::kRecv:
      case HloOpcode::kRecvDone:
      case HloOpcode::kReduce:
      case HloOpcode::kReducePrecision:
      case HloOpcode::kReduceScatter:
      case HloOpcode::kReduceWindow:
      case HloOpcode::kRemainder:
      case HloOpcode::kReplicaId:
      case HloOpcode::kReverse:
      case HloOpcode::kRngBitGenerator:
      case HloOpcode::kRngGetAndUpdateState:
      case HloOpcode::kRoundNearestAfz:
      case HloOpcode::kRoundNearestEven:
      case HloOpcode::kRsqrt:
      case HloOpcode::kScan:
      case HloOpcode::kScatter:
      case HloOpcode::kSelect:
      case HloOpcode::kSelectAndScatter:
      case HloOpcode::kSend:
      case HloOpcode::kSendDone:
      case HloOpcode::kSetDimensionSize:
      case HloOpcode::kShiftLeft:
      case HloOpcode::kShiftRightArithmetic:
      case HloOpcode::kShiftRightLogical:
      case HloOpcode::kSign:
      case HloOpcode::kSin:
      case HloOpcode::kSinh:
      case HloOpcode::kSlice:
      case HloOpcode::kSort:
      case HloOpcode::kSqrt:
      case HloOpcode::kSubtract:
      case HloOpcode::kTan:
      case HloOpcode::kTanh:
      case HloOpcode::kTopK:
      case HloOpcode::kTranspose:
      case HloOpcode::kTriangularSolve:
      case HloOpcode::kTuple:
      case HloOpcode::kWhile:
      case HloOpcode::kXor:
        return Status::Ok();
    }
    return Status::Ok();  // unreachable: every HloOpcode returns above
  }

  Status ExpectSameElementType(const HloInstruction& in, const Shape& operand) const {
    if (operand.element_type() == in.shape().element_type()) return Status::Ok();
    return Fail(in, in.OpcodeSpelling() + " keeps the element type of its operand " + Str(operand) +
                        ", found " + Str(in.shape()));
  }

  Status ExpectSameDimensions(const HloInstruction& in, const Shape& operand) const {
    if (Agree(in.shape(), operand, /*compare_types=*/false)) return Status::Ok();
    return Fail(in, in.OpcodeSpelling() + " keeps the dimensions of its operand " + Str(operand) +
                        ", found " + Str(in.shape()));
  }

  /// Same width: same dimensions. Narrower result: one more, minor dimension
  /// of size in/out bits. Wider result: the operand's minor dimension of size
  /// out/in bits disappears.
  Status VerifyBitcastConvert(const HloInstruction& in) const {
    const Shape& from = in.operand(0)->shape();
    const Shape& to = in.shape();
    const int in_bits = PrimitiveTypeBitWidth(from.element_type());
    const int out_bits = PrimitiveTypeBitWidth(to.element_type());
    Shape expected = from;
    expected.set_element_type(to.element_type());
    if (out_bits < in_bits) {
      expected.mutable_dimensions().push_back(in_bits / out_bits);
    } else if (out_bits > in_bits) {
      if (from.rank() == 0 || from.dimensions().back() != out_bits / in_bits) {
        return Fail(in, "bitcast-convert to a wider type needs a minor dimension of size " +
                            std::to_string(out_bits / in_bits) + " in its operand, found " +
                            Str(from));
      }
      expected.mutable_dimensions().pop_back();
    }
    if (Agree(to, expected)) return Status::Ok();
    return Fail(in, "bitcast-convert of " + Str(from) + " to " +
                        std::string(PrimitiveTypeName(to.element_type())) + " has shape " +
                        Str(expected) + ", found " + Str(to));
  }

  /// async-start returns ((operands...), result, context...).
  Status VerifyAsyncStart(const HloInstruction& in) const {
    const Shape& out = in.shape();
    const std::string op = in.OpcodeSpelling();
    if (!out.IsTuple() || out.tuple_size() < 2) {
      return Fail(in,
                  op + " must produce a tuple (operands, result, context...), found " + Str(out));
    }
    std::vector<Shape> operands;
    for (const HloInstruction* operand : in.operands()) operands.push_back(operand->shape());
    const Shape operand_tuple = Shape::Tuple(std::move(operands));
    if (!Agree(out.tuple_shapes(0), operand_tuple)) {
      return Fail(in, "element 0 of " + op + " must be its operands " + Str(operand_tuple) +
                          ", found " + Str(out.tuple_shapes(0)));
    }
    const Shape& result = out.tuple_shapes(1);
    if (const auto* calls = in.GetAttr<ComputationList>(AttrId::kCalls)) {
      const HloComputation& c = *calls->computations[0];
      if (Agree(result, c.root()->shape())) return Status::Ok();
      return Fail(in, "element 1 of " + op + " must be the result " + Str(c.root()->shape()) +
                          " of " + c.name() + ", found " + Str(result));
    }
    const HloOpcode wrapped = *in.async_wrapped_opcode();
    StatusOr<Shape> inferred = InferShapeAs(in, wrapped);
    if (!inferred.ok()) {
      if (inferred.status().code() == StatusCode::kUnimplemented) return Status::Ok();
      return Fail(in, inferred.status().message());
    }
    if (Agree(result, *inferred, !ElementTypesFree(wrapped))) return Status::Ok();
    return Fail(in, "element 1 of " + op + " must be the " + std::string(HloOpcodeName(wrapped)) +
                        " result " + Str(*inferred) + ", found " + Str(result));
  }

  /// The module under verification; its file name prefixes every message.
  const HloModule& module_;
  /// Every computation of the module, to reject calls to foreign ones.
  std::unordered_set<const HloComputation*> known_computations_;
};

}  // namespace

Status VerifyModule(const HloModule& module) { return Verifier(module).Run(); }

}  // namespace tpusim::hlo
