// Internal interface between the evaluator core (evaluator.cc) and its kernel
// families (eval_*.cc). Not part of the public API.
#ifndef TPUSIM_SIM_EVAL_KERNELS_H_
#define TPUSIM_SIM_EVAL_KERNELS_H_

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/base/status.h"
#include "sim/eval/evaluator.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/instruction.h"
#include "sim/hlo/module.h"
#include "sim/value/literal.h"

namespace tpusim::eval {

/// The operand values of one instruction, in operand order.
using Operands = std::span<const value::Literal* const>;

/// How one computation is run; defined in evaluator.cc.
struct ComputationPlan;
class CollectiveHub;

/// What a kernel may use while evaluating one instruction on one device.
class EvalContext {
 public:
  /// `hub`: where this device meets the others for collectives.
  EvalContext(const hlo::HloModule& module, const EvaluatorOptions& options, DeviceId device,
              CollectiveHub& hub);
  ~EvalContext();
  EvalContext(const EvalContext&) = delete;
  EvalContext& operator=(const EvalContext&) = delete;

  const EvaluatorOptions& options() const { return options_; }
  DeviceId device() const { return device_; }
  CollectiveHub& hub() const { return hub_; }
  const hlo::HloModule& module() const { return module_; }
  /// Device (0, 0) alone reports progress to the caller, so that threads
  /// never share a writer.
  bool is_device_zero() const { return device_.replica_id == 0 && device_.partition_id == 0; }
  /// Where this device records what it did (EvaluatorOptions::record, which
  /// EvaluateSpmd points at a record of each device's own), or nullptr when
  /// nobody asked.
  RunRecord* record() const { return options_.record; }

  /// Evaluates `computation` with `args` as its parameters (call, fusion,
  /// while, conditional, map and reducers all come through here).
  /// A computation nested deeper than hlo::kMaxCallDepth is an error located at it,
  /// not a stack overflow.
  StatusOr<value::Literal> Call(const hlo::HloComputation& computation, Operands args);

  /// Work done so far on this device: for each executed instruction,
  /// kInstructionWork plus the elements of its result. While loops measure
  /// their iterations against EvaluatorOptions::max_loop_work with it.
  int64_t work() const { return work_; }
  /// What one instruction costs beyond its elements: the evaluator's fixed
  /// cost per instruction is about that of 64 elementwise results.
  static constexpr int64_t kInstructionWork = 64;

  /// A zero-filled value of `shape` for `inst`, or kResourceExhausted (naming
  /// the instruction) when it is over max_bytes.
  StatusOr<value::Literal> NewValue(const hlo::HloInstruction& inst, const hlo::Shape& shape) const;

  /// An error of `code` whose message is "FILE:LINE:COL: error: OPCODE NAME: WHAT".
  Status Error(const hlo::HloInstruction& inst, StatusCode code, std::string_view what) const;
  Status Unsupported(const hlo::HloInstruction& inst, std::string_view what) const {
    return Error(inst, StatusCode::kUnimplemented, what);
  }

  /// The stream number for the next execution of an `rng` instruction: 0, 1,
  /// 2, ... in execution order within this evaluation.
  uint64_t NextRngStream() { return rng_streams_++; }

 private:
  /// Call's body, once the depth is checked.
  StatusOr<value::Literal> CallNested(const hlo::HloComputation& computation, Operands args);

  /// The program being run: its filename for messages.
  const hlo::HloModule& module_;
  /// Numerics mode and limits, shared by every kernel.
  const EvaluatorOptions& options_;
  /// Read by replica-id and partition-id.
  DeviceId device_;
  /// Shared with the other devices' contexts; the only shared mutable state.
  CollectiveHub& hub_;
  /// Evaluation order and value lifetimes of each computation, computed on
  /// its first call and reused (a while body runs many times). Looked up by
  /// address, never iterated, so its order cannot leak into results.
  std::unordered_map<const hlo::HloComputation*, std::unique_ptr<ComputationPlan>> plans_;
  /// rng executions so far (NextRngStream).
  uint64_t rng_streams_ = 0;
  /// Calls open on this device (Call's recursion), against hlo::kMaxCallDepth.
  int64_t call_depth_ = 0;
  /// See work().
  int64_t work_ = 0;
};

/// Evaluates the entry computation of `module` as `device`, meeting the other
/// devices at `hub`: the body of Evaluate and of each device of EvaluateSpmd.
StatusOr<value::Literal> EvaluateOnDevice(const hlo::HloModule& module,
                                          const EvaluatorOptions& options, DeviceId device,
                                          CollectiveHub& hub, std::span<const value::Literal> args);

/// True for a custom call whose value depends on the partition evaluating
/// it: SPMDFullToShardShape taking that partition's tile (WhyDevicesDiffer).
bool TakesItsPartitionsTile(const hlo::HloInstruction& inst);

/// One kernel: evaluates `inst` (of an opcode KernelFor sends to it) given
/// its operand values.
using Kernel = StatusOr<value::Literal> (*)(EvalContext&, const hlo::HloInstruction&, Operands);

StatusOr<value::Literal> EvalElementwise(EvalContext&, const hlo::HloInstruction&, Operands);

// Data movement (eval_data_movement.cc). EvalReshape serves bitcast too.
StatusOr<value::Literal> EvalConstant(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalIota(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalBroadcast(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalTranspose(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalSlice(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalReverse(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalDynamicSlice(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalDynamicUpdateSlice(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalPad(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalConcatenate(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalReshape(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalCopy(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalTuple(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalGetTupleElement(EvalContext&, const hlo::HloInstruction&, Operands);

// Control flow, async wrappers, annotations and device ids (eval_control.cc).
// EvalCall serves fusion too; EvalPassThrough the ops whose value is their
// operand's (opt-barrier, async-update, add-dependency, domain).
StatusOr<value::Literal> EvalCall(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalWhile(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalConditional(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalMap(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalCopyStart(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalCopyDone(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalAsyncStart(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalAsyncDone(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalPassThrough(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalAfterAll(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalReplicaId(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalPartitionId(EvalContext&, const hlo::HloInstruction&, Operands);

// Bounded dynamic dimensions (eval_dynamic.cc).
StatusOr<value::Literal> EvalGetDimensionSize(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalSetDimensionSize(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalDynamicReshape(EvalContext&, const hlo::HloInstruction&, Operands);
/// XLA's dynamic padder's boundary calls: PadToStatic gives (the array at its
/// bounds, one s32[] size per dimension); SliceToDynamic takes the array and
/// one size per dimension and gives the array with those sizes.
StatusOr<value::Literal> EvalPadToStatic(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalSliceToDynamic(EvalContext&, const hlo::HloInstruction&, Operands);
/// Runs `kernel`, the kernel of `inst`, on operands of which some dimension is
/// smaller than its bound: elementwise ops and copy keep the sizes, reduce
/// reduces only the valid elements, dynamic-update-slice writes within the
/// operand's valid elements, tuples and called computations carry them; any
/// other op is kUnimplemented ("not supported with dynamic
/// dimension") rather than a result computed from padding.
StatusOr<value::Literal> EvalOnPaddedOperands(EvalContext& ctx, const hlo::HloInstruction& inst,
                                              Operands ops, Kernel kernel);

StatusOr<value::Literal> EvalReduce(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalReduceWindow(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalSelectAndScatter(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalDot(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalRaggedDot(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalSort(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalTopK(EvalContext&, const hlo::HloInstruction&, Operands);
/// XLA's TopK custom call (TopkRewriter's form of a sort and a slice): the k
/// largest of each row by total order, k from the result's last dimension;
/// with to_apply=, the first k in the comparator's order.
StatusOr<value::Literal> EvalTopKCustomCall(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalConvolution(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalCustomCall(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalGather(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalScatter(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalCollective(EvalContext&, const hlo::HloInstruction&, Operands);

/// Runs collective `opcode` with `inst`'s attributes, producing a value of
/// `result_shape`: the collective kernels' entry for the async wrappers spelled
/// `X-start` (async-start wrapping X with no computation of its own).
StatusOr<value::Literal> EvalCollectiveAs(EvalContext& ctx, const hlo::HloInstruction& inst,
                                          hlo::HloOpcode opcode, const hlo::Shape& result_shape,
                                          Operands ops);

/// The tuple element `index` of an async-style tuple operand (copy-done reads
/// the destination at 0, the -done ops the result at 1), or an error naming
/// `inst` when the operand is not such a tuple.
StatusOr<value::Literal> AsyncElement(EvalContext& ctx, const hlo::HloInstruction& inst,
                                      const value::Literal& tuple, int64_t index);
/// Fills element `index` of an async-style tuple result, whose other elements
/// (the u32/s32 contexts) stay zero unless set: an error naming `inst` when
/// `value` does not fit there.
Status SetAsyncElement(EvalContext& ctx, const hlo::HloInstruction& inst, value::Literal& tuple,
                       int64_t index, value::Literal value);
StatusOr<value::Literal> EvalRng(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalRngBitGenerator(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalBatchNorm(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalCholesky(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalTriangularSolve(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalFft(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalInfeed(EvalContext&, const hlo::HloInstruction&, Operands);
StatusOr<value::Literal> EvalOutfeed(EvalContext&, const hlo::HloInstruction&, Operands);

/// out[m, n] = lhs[m, k] x rhs[k, n] for 2-D arrays, with exactly dot's
/// numerics under `inst`'s precision config and the context's mode: the
/// contracting dimension k is what the MXU tiles. Convolution lowers to it.
Status MatMul(const EvalContext& ctx, const hlo::HloInstruction& inst, const value::Literal& lhs,
              const value::Literal& rhs, value::Literal& out);

/// The arithmetic of the elementwise kernels, each named as its opcode. The
/// float, integer and complex kernels each switch over a whole list without
/// default:, so an op added here must be computed or refused for every
/// element type. The other elementwise ops have kernels of their own.
// The lists stay as rows of opcodes:
// clang-format off
#define TPUSIM_EVAL_UNARY_ARITHMETIC(X)                                                    \
  X(kAbs) X(kNegate) X(kSign) X(kNot) X(kPopulationCount) X(kClz) X(kFloor) X(kCeil)       \
  X(kRoundNearestAfz) X(kRoundNearestEven) X(kSqrt) X(kRsqrt) X(kCbrt) X(kExp) X(kExpm1)  \
  X(kLog) X(kLog1p) X(kLogistic) X(kTanh) X(kSin) X(kCos) X(kTan) X(kAtan) X(kAsin)       \
  X(kAcos) X(kSinh) X(kCosh) X(kAsinh) X(kAcosh) X(kAtanh) X(kErf)
#define TPUSIM_EVAL_BINARY_ARITHMETIC(X)                                                   \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kRemainder) X(kMaximum) X(kMinimum)      \
  X(kPower) X(kAtan2) X(kAnd) X(kOr) X(kXor) X(kShiftLeft) X(kShiftRightLogical)          \
  X(kShiftRightArithmetic) X(kMulhi)
#define TPUSIM_EVAL_OTHER_ELEMENTWISE(X)                                                   \
  X(kCompare) X(kSelect) X(kClamp) X(kConvert) X(kBitcastConvert) X(kReducePrecision)     \
  X(kStochasticConvert) X(kIsFinite) X(kComplex) X(kReal) X(kImag)
// clang-format on

#define TPUSIM_EVAL_ENUMERATOR(name) name,
enum class UnaryArith : uint8_t { TPUSIM_EVAL_UNARY_ARITHMETIC(TPUSIM_EVAL_ENUMERATOR) };
enum class BinaryArith : uint8_t { TPUSIM_EVAL_BINARY_ARITHMETIC(TPUSIM_EVAL_ENUMERATOR) };
#undef TPUSIM_EVAL_ENUMERATOR

/// The opcode that computes `op`, for messages.
hlo::HloOpcode OpcodeOf(UnaryArith op);
hlo::HloOpcode OpcodeOf(BinaryArith op);

/// True when the elementwise `inst` involves complex elements (an operand or
/// the result is c64/c128, or it is real, imag or complex); select is not
/// included, since moving elements needs no complex arithmetic.
bool IsComplexElementwise(const hlo::HloInstruction& inst, Operands ops);
/// Evaluates such an instruction into `out` (eval_complex.cc).
Status ComplexElementwise(const hlo::HloInstruction& inst, Operands ops, value::Literal& out);
/// `out = op(a, b)` for complex arrays of one type (the reduce fast path's
/// entry, ApplyBinaryInPlace); `out` may be `a`.
Status ComplexBinary(BinaryArith op, const value::Literal& a, const value::Literal& b,
                     value::Literal& out);

/// Where a dot reads its operands: row-major element offsets of every batch,
/// free (m, n) and contracting (k) index of each operand, the first listed
/// dimension slowest. Element (b, m, k) of lhs is at lhs_b[b] + lhs_m[m] +
/// lhs_k[k]; the result is row-major over (b, m, n).
struct DotIndex {
  std::vector<int64_t> lhs_b, lhs_m, lhs_k, rhs_b, rhs_k, rhs_n;
};

/// dot of complex operands into `out` (same complex type), a reference loop
/// with component-type products and sums in fixed order, k increasing
/// (eval_dot_complex.cc). Dot and MatMul (so convolution) dispatch to it.
Status ComplexDot(const value::Literal& lhs, const value::Literal& rhs, const DotIndex& ix,
                  value::Literal& out);

/// The complex product and quotient of the elementwise kernel, for kernels
/// that need complex arithmetic (linear algebra): component-type products
/// and sums without FMA; Smith's algorithm for the quotient.
std::complex<float> ComplexMultiply(std::complex<float> x, std::complex<float> y);
std::complex<double> ComplexMultiply(std::complex<double> x, std::complex<double> y);
std::complex<float> ComplexDivide(std::complex<float> x, std::complex<float> y);
std::complex<double> ComplexDivide(std::complex<double> x, std::complex<double> y);

/// The op of `opcode` if ApplyBinaryInPlace accepts it: the arithmetic and
/// logical ones a reducer computation commonly consists of.
std::optional<BinaryArith> InPlaceBinaryArith(hlo::HloOpcode opcode);
/// `acc[i] = op(acc[i], x[i])` for every element, with exactly the numerics
/// of the elementwise kernel (so a reduce fast path built on it is
/// bit-identical to evaluating the reducer computation). Both arrays have the
/// same element type and element count; op is an InPlaceBinaryArith.
Status ApplyBinaryInPlace(BinaryArith op, value::Literal& acc, const value::Literal& x);

/// Combines (acc..., x...) -> acc with a reducer computation (reduce,
/// reduce-window, scatter): through the elementwise kernel when the reducer is
/// a plain binary op (same numerics, no computation call), else by calling it.
/// Errors name `inst`.
class Combiner {
 public:
  /// `inputs`: one array per accumulator, giving the element types.
  Combiner(EvalContext& ctx, const hlo::HloInstruction& inst, const hlo::HloComputation& reducer,
           Operands inputs);

  /// Sets every accumulator to the element at `offset` of its source (the
  /// init scalars, or the current value of a scatter target).
  void Reset(Operands sources, int64_t offset = 0);
  /// acc = f(acc, inputs at `offset`).
  Status Combine(Operands inputs, int64_t offset);
  const value::Literal& acc(size_t k) const { return acc_[k]; }
  /// Set when the reducer is a plain binary op: then whole arrays can be
  /// combined with ApplyBinaryInPlace, with the same numerics as Combine.
  std::optional<BinaryArith> simple_op() const { return simple_; }

 private:
  /// For Call and error messages.
  EvalContext& ctx_;
  const hlo::HloInstruction& inst_;
  const hlo::HloComputation& reducer_;
  /// Number of accumulators.
  size_t n_;
  /// Set when the reducer is a plain binary op of the elementwise kernel.
  std::optional<BinaryArith> simple_;
  /// Running values and the current elements, as scalars.
  std::vector<value::Literal> acc_, x_;
};

// --- index helpers shared by the kernels -------------------------------------

/// Row-major strides of `dims` (the last dimension has stride 1).
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims);

/// Calls `fn(index)` for every multi-index of `dims` in row-major order
/// (nothing when any dimension is 0; once, with an empty index, for a scalar).
void ForEachIndex(std::span<const int64_t> dims,
                  const std::function<void(std::span<const int64_t>)>& fn);

/// Copies one element (ElementByteSize bytes) from `src` at `src_index` to
/// `dst` at `dst_index`; both arrays have the same element type.
void CopyElement(const value::Literal& src, int64_t src_index, value::Literal& dst,
                 int64_t dst_index);

/// Copies the box of `sizes` at `src_start` in `src` to `dst_start` in `dst`
/// (same element type and rank; the boxes lie inside both arrays).
void CopyBox(const value::Literal& src, const std::vector<int64_t>& src_start,
             value::Literal& dst, const std::vector<int64_t>& dst_start,
             const std::vector<int64_t>& sizes);

/// The value of an integer scalar (index operands of dynamic-slice and
/// friends, conditional's branch index).
int64_t ScalarAsInt64(const value::Literal& scalar);

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_KERNELS_H_
