#include "sim/timing/kernel_cost.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/arith.h"
#include "sim/hlo/annotations.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/dot_dimensions.h"
#include "sim/hlo/dot_precision.h"
#include "sim/hlo/module.h"
#include "sim/hlo/primitive_type.h"
#include "sim/timing/hlo_helpers.h"
#include "sim/timing/layout_bytes.h"

namespace tpusim::timing {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

namespace {

/// What one result element of `op` costs the VPU: opcode.def's class for an
/// elementwise op; random number generation draws each element with a short
/// sequence, as exp does.
hlo::ElementwiseCost VpuCost(HloOpcode op) {
  if (op == HloOpcode::kRng || op == HloOpcode::kRngBitGenerator) {
    return hlo::ElementwiseCost::kMedium;
  }
  return hlo::ElementwiseCostOf(op);
}

/// Ops the MXU runs.
bool IsMatmul(HloOpcode op) {
  return op == HloOpcode::kDot || op == HloOpcode::kRaggedDot || op == HloOpcode::kConvolution;
}

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p = SatMul(p, s.dimensions(d));
  return p;
}

const std::vector<int64_t>& IntList(const HloInstruction& inst, hlo::AttrId id) {
  static const std::vector<int64_t> kEmpty;
  const auto* v = inst.GetAttr<std::vector<int64_t>>(id);
  return v ? *v : kEmpty;
}

bool InRange(const Shape& s, const std::vector<int64_t>& dims) {
  return std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return d >= 0 && d < s.rank(); });
}

/// The format the MXU runs a product of these operand types at.
chip::MxuInput MxuInputOf(hlo::PrimitiveType a, hlo::PrimitiveType b) {
  const auto narrow_int = [](hlo::PrimitiveType t) {
    return hlo::IsInteger(t) && hlo::PrimitiveTypeBitWidth(t) <= 8;
  };
  const auto fp8 = [](hlo::PrimitiveType t) {
    return hlo::IsFloatingPoint(t) && hlo::PrimitiveTypeBitWidth(t) <= 8;
  };
  if (narrow_int(a) && narrow_int(b)) return chip::MxuInput::kInt8;
  if (fp8(a) && fp8(b)) return chip::MxuInput::kFp8;
  if (a == hlo::PrimitiveType::kF16 || b == hlo::PrimitiveType::kF16) return chip::MxuInput::kF16;
  return chip::MxuInput::kBf16;
}

/// bf16 passes one product of these operands costs: the passes of the
/// precision config that use pieces both operands have (an operand exactly
/// representable in bf16, or an integer, has one piece).
StatusOr<int64_t> EffectivePasses(const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(int count, hlo::MxuPassCount(inst));
  const auto pieces = [&](const HloInstruction* operand) {
    const hlo::PrimitiveType t = operand->shape().element_type();
    return hlo::IsExactlyBf16(t) || hlo::IsInteger(t) ? 1 : hlo::MxuPieces(count);
  };
  const int lp = pieces(inst.operand(0));
  const int rp = pieces(inst.operand(1));
  int64_t passes = 0;
  for (auto [p, q] : hlo::MxuPasses(count)) passes += (p < lp && q < rp) ? 1 : 0;
  return passes;
}

/// How many of a ragged-dot's groups can hold something: each row (free
/// mode) or depth index (contracting mode) is in one group, so no more
/// groups than there are rows, or depth, per batch index.
int64_t ActiveGroups(const hlo::RaggedDotDimensions& d, int64_t rows, int64_t depth) {
  return std::min(d.groups, d.mode == hlo::RaggedDotMode::kNonContracting ? rows : depth);
}

/// A dot, or a ragged-dot as the grouped matmul it is: one matmul per group
/// and batch index that holds rows (or depth), of what it holds, by its own
/// weights. `shares`, when given, are the rows (or depth) each group held per
/// batch index (KernelCoster::SharesOf); the matmuls of equal shares are one
/// entry. Without them the groups are taken as equal, and as many as can hold
/// something (ActiveGroups), splitting the rows of a ragged free dimension, or
/// the depth of a ragged contracting one, evenly: a dot's work in all. A
/// ragged batch dimension changes nothing.
StatusOr<std::vector<chip::MatmulWork>> DotWork(const HloInstruction& dot,
                                                const std::vector<int64_t>* shares) {
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  const std::vector<int64_t>& lb = IntList(dot, hlo::AttrId::kLhsBatchDims);
  const std::vector<int64_t>& lc = IntList(dot, hlo::AttrId::kLhsContractingDims);
  const std::vector<int64_t>& rb = IntList(dot, hlo::AttrId::kRhsBatchDims);
  const std::vector<int64_t>& rc = IntList(dot, hlo::AttrId::kRhsContractingDims);
  if (!lhs.IsArray() || !rhs.IsArray() || !InRange(lhs, lb) || !InRange(lhs, lc) ||
      !InRange(rhs, rb) || !InRange(rhs, rc)) {
    return InvalidArgument("dot dimension numbers out of range");
  }
  std::optional<hlo::RaggedDotDimensions> ragged;
  if (dot.opcode() == HloOpcode::kRaggedDot) {
    StatusOr<hlo::RaggedDotDimensions> d = hlo::ResolveRaggedDot(dot);
    if (!d.ok()) return d.status();
    ragged = std::move(*d);
  }
  chip::MatmulWork w;
  w.batch = Product(lhs, lb);
  w.k = Product(lhs, lc);
  w.m = Product(lhs, hlo::DotFreeDimensions(lhs.rank(), lb, lc));
  w.n = Product(rhs, ragged ? ragged->rhs_free : hlo::DotFreeDimensions(rhs.rank(), rb, rc));
  TPUSIM_ASSIGN_OR_RETURN(w.passes, EffectivePasses(dot));
  w.input = MxuInputOf(lhs.element_type(), rhs.element_type());
  if (!ragged || ragged->mode == hlo::RaggedDotMode::kBatch) return std::vector{w};
  const bool rows_ragged = ragged->mode == hlo::RaggedDotMode::kNonContracting;
  if (shares != nullptr) {
    std::map<int64_t, int64_t> groups_of_share;  // share -> how many groups held it
    for (int64_t share : *shares) {
      if (share > 0) ++groups_of_share[share];
    }
    std::vector<chip::MatmulWork> works;
    for (const auto& [share, count] : groups_of_share) {
      chip::MatmulWork group = w;
      group.batch = count;
      (rows_ragged ? group.m : group.k) = share;
      works.push_back(group);
    }
    return works;
  }
  const int64_t groups = ActiveGroups(*ragged, w.m, w.k);
  int64_t& split = rows_ragged ? w.m : w.k;
  split = groups == 0 ? 0 : CeilDiv(split, groups);
  w.batch = SatMul(w.batch, groups);
  return std::vector{w};
}

/// A convolution as the matmul it is: rows = output batch x output spatial
/// positions, depth = input features x kernel window, columns = output
/// features, once per feature or batch group.
StatusOr<chip::MatmulWork> ConvolutionWork(const HloInstruction& conv) {
  const hlo::ConvolutionDimensionNumbers* dn = conv.convolution_dimension_numbers();
  const Shape& kernel = conv.operand(1)->shape();
  const Shape& out = conv.shape();
  if (dn == nullptr || !kernel.IsArray() || !out.IsArray()) {
    return InvalidArgument("convolution needs dim_labels and array operands");
  }
  if (dn->HasUnknownDims()) {
    return InvalidArgument("convolution " + conv.name() + ": dim_labels " +
                           hlo::DimLabelsText(*dn) +
                           " label a dimension '?' (no role), which has no matmul to time");
  }
  const auto valid = [](const Shape& s, int64_t d) { return d >= 0 && d < s.rank(); };
  if (!valid(kernel, dn->kernel_input_feature_dimension) ||
      !valid(kernel, dn->kernel_output_feature_dimension) ||
      !valid(out, dn->output_batch_dimension) || !InRange(kernel, dn->kernel_spatial_dimensions) ||
      !InRange(out, dn->output_spatial_dimensions)) {
    return InvalidArgument("convolution dimension numbers out of range");
  }
  const int64_t groups =
      std::max<int64_t>(1, conv.int_attr(hlo::AttrId::kFeatureGroupCount).value_or(1)) *
      std::max<int64_t>(1, conv.int_attr(hlo::AttrId::kBatchGroupCount).value_or(1));
  chip::MatmulWork w;
  w.batch = groups;
  w.m = SatMul(out.dimensions(dn->output_batch_dimension),
               Product(out, dn->output_spatial_dimensions));
  w.k = SatMul(kernel.dimensions(dn->kernel_input_feature_dimension),
               Product(kernel, dn->kernel_spatial_dimensions));
  w.n = CeilDiv(kernel.dimensions(dn->kernel_output_feature_dimension), groups);
  TPUSIM_ASSIGN_OR_RETURN(w.passes, EffectivePasses(conv));
  w.input = MxuInputOf(conv.operand(0)->shape().element_type(), kernel.element_type());
  return w;
}

int64_t MatmulFlops(const chip::MatmulWork& w) {
  return SatMul(SatMul(SatMul(SatMul(2, w.batch), w.m), w.k), w.n);
}

int64_t ElementCount(const Shape& s) { return s.IsArray() ? s.element_count() : 0; }

/// ceil(log2(n)) for n >= 1.
int64_t CeilLog2(int64_t n) {
  int64_t bits = 0;
  while ((int64_t{1} << bits) < n && bits < 62) ++bits;
  return bits;
}

/// The instruction a dot operand comes from once conversions and pure
/// relayouts are looked through (int8 weights converted to bf16 inside a
/// fusion are still read as int8).
const HloInstruction* ThroughConversions(const HloInstruction* inst) {
  while (inst->operand_count() == 1 &&
         (inst->opcode() == HloOpcode::kConvert || inst->opcode() == HloOpcode::kBitcast ||
          inst->opcode() == HloOpcode::kCopy || inst->opcode() == HloOpcode::kReshape ||
          inst->opcode() == HloOpcode::kTranspose)) {
    inst = inst->operand(0);
  }
  return inst;
}

/// Ops that read only the elements they select from operand 0.
bool SelectsFromOperand0(HloOpcode opcode) {
  return opcode == HloOpcode::kSlice || opcode == HloOpcode::kDynamicSlice ||
         opcode == HloOpcode::kGather;
}

}  // namespace

KernelCoster::KernelCoster(const arch::ChipConfig& chip, const HostMemory& host_memory,
                           const RaggedGroupSharesOfRun* ragged_group_shares)
    : cost_(chip),
      cores_(chip.megacore ? chip.tensorcores_per_chip : 1),
      mxu_rows_(chip.mxu.rows),
      mxu_columns_(chip.mxu.cols * chip.mxu.count_per_core),
      host_memory_(host_memory),
      ragged_group_shares_(ragged_group_shares) {}

const std::vector<int64_t>* KernelCoster::SharesOf(const HloInstruction& ragged_dot) const {
  if (ragged_group_shares_ == nullptr) return nullptr;
  const auto found = ragged_group_shares_->find(&ragged_dot);
  if (found == ragged_group_shares_->end()) return nullptr;
  // One entry per lhs batch index and group, as the evaluator records them.
  const StatusOr<hlo::RaggedDotDimensions> d = hlo::ResolveRaggedDot(ragged_dot);
  if (!d.ok()) return nullptr;
  const int64_t batches =
      Product(ragged_dot.operand(0)->shape(), IntList(ragged_dot, hlo::AttrId::kLhsBatchDims));
  const bool complete = static_cast<int64_t>(found->second.size()) == SatMul(batches, d->groups);
  return complete ? &found->second : nullptr;
}

int64_t KernelCoster::BufferBytes(const Shape& shape) const {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& e : shape.tuple_shapes()) total = SatAdd(total, BufferBytes(e));
    return total;
  }
  if (!shape.IsArray() || InVmem(shape)) return 0;
  return cost_.hbm().AccessBytes(PhysicalBytes(shape));
}

int64_t KernelCoster::OperandReadBytes(const HloInstruction& kernel, int64_t i) const {
  const HloInstruction& operand = *kernel.operand(i);
  if (i == 0 && SelectsFromOperand0(kernel.opcode())) return BufferBytes(kernel.shape());
  // In place: the buffer being updated is neither read nor rewritten.
  if (i == 0 && kernel.opcode() == HloOpcode::kDynamicUpdateSlice) return 0;
  if (kernel.opcode() != HloOpcode::kFusion) return BufferBytes(operand.shape());
  // A fused parameter reads what its users inside the fusion read.
  const hlo::HloComputation* fused = kernel.called_computation(hlo::AttrId::kCalls);
  if (fused == nullptr || i >= fused->parameter_count() || fused->parameters()[i] == nullptr) {
    return BufferBytes(operand.shape());
  }
  const HloInstruction& param = *fused->parameters()[i];
  const std::vector<HloInstruction*>& users = param.users();
  if (users.empty()) return 0;
  const bool updated_in_place = users.size() == 1 && users[0]->IsRoot() &&
                                users[0]->opcode() == HloOpcode::kDynamicUpdateSlice &&
                                users[0]->operand_count() >= 2 && users[0]->operand(0) == &param;
  if (updated_in_place) return 0;
  const bool only_sliced = std::all_of(users.begin(), users.end(), [&](const HloInstruction* u) {
    return SelectsFromOperand0(u->opcode()) && u->operand(0) == &param;
  });
  if (only_sliced) {
    int64_t total = 0;
    for (const HloInstruction* u : users) total = SatAdd(total, BufferBytes(u->shape()));
    return total;
  }
  return BufferBytes(operand.shape());
}

Status KernelCoster::AddCompute(const HloInstruction& inst, chip::CoreWork& work,
                                int64_t& flops) const {
  const int64_t sub = cost_.vpu().sublanes();
  const int64_t lanes = cost_.vpu().lanes();
  const auto vregs = [&](const Shape& s) { return VregCount(s, sub, lanes); };
  const HloOpcode op = inst.opcode();
  chip::VectorWork& v = work.vector;
  switch (VpuCost(op)) {
    case hlo::ElementwiseCost::kCheap:
      v.cheap_ops = SatAdd(v.cheap_ops, vregs(inst.shape()));
      flops = SatAdd(flops, ElementCount(inst.shape()));
      return Status::Ok();
    case hlo::ElementwiseCost::kMedium:
      v.medium_ops = SatAdd(v.medium_ops, vregs(inst.shape()));
      flops = SatAdd(flops, ElementCount(inst.shape()));
      return Status::Ok();
    case hlo::ElementwiseCost::kTranscendental:
      v.transcendental_ops = SatAdd(v.transcendental_ops, vregs(inst.shape()));
      flops = SatAdd(flops, ElementCount(inst.shape()));
      return Status::Ok();
    case hlo::ElementwiseCost::kNone:
      break;
  }
  switch (op) {
#define V TPUSIM_HLO_CASE_IF_ELEMENTWISE
#include "sim/hlo/opcode.def"
#undef V
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
      return Status::Ok();  // costed above by VpuCost
    // Ops that only move or produce data in vregs: one cheap op per result vreg.
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kReshape:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReverse:
    case HloOpcode::kGather:
      v.cheap_ops = SatAdd(v.cheap_ops, vregs(inst.shape()));
      return Status::Ok();
    case HloOpcode::kDot:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kConvolution: {
      std::vector<chip::MatmulWork> works;
      if (op == HloOpcode::kConvolution) {
        TPUSIM_ASSIGN_OR_RETURN(chip::MatmulWork m, ConvolutionWork(inst));
        works.push_back(m);
      } else {
        TPUSIM_ASSIGN_OR_RETURN(works, DotWork(inst, SharesOf(inst)));
      }
      for (const chip::MatmulWork& m : works) {
        flops = SatAdd(flops, MatmulFlops(m));
        work.matmuls.push_back(m);
      }
      // Results leave the MXU result buffers one vreg at a time.
      v.cheap_ops = SatAdd(v.cheap_ops, vregs(inst.shape()));
      return Status::Ok();
    }
    case HloOpcode::kCopy:
    case HloOpcode::kTranspose: {
      const Shape& in = inst.operand(0)->shape();
      const Shape& out = inst.shape();
      if (!in.IsArray() || !out.IsArray() || out.rank() == 0) return Status::Ok();
      // The logical input dimension that lands on the output's lanes.
      int64_t source_of_out_lanes = LaneDimension(out);
      if (op == HloOpcode::kTranspose) {
        const std::span<const int64_t> perm = inst.dimensions();
        if (source_of_out_lanes < static_cast<int64_t>(perm.size())) {
          source_of_out_lanes = perm[source_of_out_lanes];
        }
      }
      if (source_of_out_lanes != LaneDimension(in)) {
        v.xlu_vregs = SatAdd(v.xlu_vregs, vregs(out));  // crosses lanes: the transpose unit
      } else {
        v.cheap_ops = SatAdd(v.cheap_ops, vregs(out));  // sublane or major reorder: moves
      }
      return Status::Ok();
    }
    case HloOpcode::kReduce: {
      const int64_t inputs = inst.operand_count() / 2;
      const std::span<const int64_t> dims = inst.dimensions();
      for (int64_t i = 0; i < inputs; ++i) {
        const Shape& in = inst.operand(i)->shape();
        if (inst.shape().IsTuple() && i >= inst.shape().tuple_size()) break;
        const Shape& out = inst.shape().IsTuple() ? inst.shape().tuple_shapes(i) : inst.shape();
        v.cheap_ops = SatAdd(v.cheap_ops, vregs(in));
        flops = SatAdd(flops, ElementCount(in));
        const auto reduced = [&](int64_t d) {
          return std::find(dims.begin(), dims.end(), d) != dims.end();
        };
        // A lane reduction goes through the XLU once per vreg of partial sums
        // (one row group of sublanes); sublane reductions are 3 permutes + 3
        // adds per result vreg [Q SB].
        if (reduced(LaneDimension(in))) {
          v.xlu_vregs = SatAdd(v.xlu_vregs, std::max<int64_t>(1, CeilDiv(ElementCount(out), sub)));
        }
        if (reduced(SublaneDimension(in))) v.cheap_ops = SatAdd(v.cheap_ops, 6 * vregs(out));
      }
      return Status::Ok();
    }
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter: {
      int64_t window = 1;
      if (const hlo::Window* w = inst.window()) {
        for (const hlo::WindowDimension& d : w->dimensions) window = SatMul(window, d.size);
      }
      const Shape& out = inst.shape().IsTuple() ? inst.shape().tuple_shapes(0) : inst.shape();
      // reduce-window: one op per window element per output vreg; select-and-
      // scatter: a compare and a select per window element of each operand vreg.
      const bool scatter = op == HloOpcode::kSelectAndScatter;
      const int64_t ops_per_window_element = scatter ? 2 : 1;
      const int64_t swept_vregs = vregs(scatter ? inst.operand(0)->shape() : out);
      v.cheap_ops =
          SatAdd(v.cheap_ops, SatMul(SatMul(swept_vregs, window), ops_per_window_element));
      flops = SatAdd(flops, SatMul(ElementCount(out), window));
      // XLA's emitter visits the window one element at a time, each visit
      // loading every operand vreg and selecting its elements in registers;
      // f16, which the VPU cannot compute in, is widened on each visit (the
      // kernel's boundary counts the first). Without this the suite's windows
      // with no lane crossing come out at a third of their measured time.
      const Shape& operand = inst.operand(0)->shape();
      if (operand.IsArray() && operand.element_type() == hlo::PrimitiveType::kF16 && window > 1) {
        const int64_t widen =
            SatMul(SatMul(window - 1, vregs(operand)), cost_.vpu().f16_load_ops());
        v.cheap_ops = SatAdd(v.cheap_ops, widen);
        v.convert_ops = SatAdd(v.convert_ops, widen);
      }
      // A window that spans or strides along the lanes gathers its elements
      // across lanes: every operand vreg passes through the transpose unit
      // once per window element on that dimension, and the window's adds wait
      // for each gathered vreg.
      const int64_t lane = LaneDimension(operand);
      if (const hlo::Window* w = inst.window();
          w != nullptr && lane >= 0 && lane < static_cast<int64_t>(w->dimensions.size())) {
        const hlo::WindowDimension& d = w->dimensions[lane];
        if (d.size > 1 || d.stride > 1) {
          const int64_t gathered = SatMul(vregs(operand), std::max<int64_t>(1, d.size));
          v.xlu_vregs = SatAdd(v.xlu_vregs, gathered);
          v.xlu_waited_vregs = SatAdd(v.xlu_waited_vregs, gathered);
        }
      }
      return Status::Ok();
    }
    case HloOpcode::kSort:
    case HloOpcode::kTopK: {
      // A bitonic network: log2(n)(log2(n)+1)/2 compare-exchange stages over
      // every vreg of every operand; along the lanes each stage also permutes
      // through the XLU.
      if (inst.operand_count() == 0) return Status::Ok();
      const Shape& in = inst.operand(0)->shape();
      if (!in.IsArray() || in.rank() == 0) return Status::Ok();
      const std::span<const int64_t> dims = inst.dimensions();
      const int64_t dim = op == HloOpcode::kSort && !dims.empty() ? dims[0] : in.rank() - 1;
      if (dim < 0 || dim >= in.rank()) return InvalidArgument("sort dimension out of range");
      const int64_t lg = CeilLog2(std::max<int64_t>(1, in.dimensions(dim)));
      const int64_t stages = lg * (lg + 1) / 2;
      const int64_t per_stage = SatMul(vregs(in), std::max<int64_t>(1, inst.operand_count()));
      v.cheap_ops = SatAdd(v.cheap_ops, SatMul(SatMul(per_stage, stages), 2));
      if (dim == LaneDimension(in)) v.xlu_vregs = SatAdd(v.xlu_vregs, SatMul(vregs(in), stages));
      return Status::Ok();
    }
    case HloOpcode::kMap: {
      const hlo::HloComputation* f = inst.to_apply();
      const int64_t ops =
          f ? std::max<int64_t>(1, f->instruction_count() - f->parameter_count()) : 1;
      v.cheap_ops = SatAdd(v.cheap_ops, SatMul(vregs(inst.shape()), ops));
      flops = SatAdd(flops, SatMul(ElementCount(inst.shape()), ops));
      return Status::Ok();
    }
    case HloOpcode::kDynamicUpdateSlice:
      if (inst.operand_count() >= 2)
        v.cheap_ops = SatAdd(v.cheap_ops, vregs(inst.operand(1)->shape()));
      return Status::Ok();
    case HloOpcode::kScatter: {
      if (inst.operand_count() == 0) return Status::Ok();
      const Shape& updates = inst.operand(inst.operand_count() - 1)->shape();
      v.cheap_ops = SatAdd(v.cheap_ops, SatMul(vregs(updates), 2));
      flops = SatAdd(flops, ElementCount(updates));
      return Status::Ok();
    }
    case HloOpcode::kFft: {
      const Shape& out = inst.shape();
      int64_t n = 1;
      for (int64_t l : IntList(inst, hlo::AttrId::kFftLength)) n = SatMul(n, l);
      const int64_t stages = std::max<int64_t>(1, CeilLog2(std::max<int64_t>(1, n)));
      // Radix-2 butterflies: a complex multiply-add (about 5 real ops) per element per stage.
      v.cheap_ops = SatAdd(v.cheap_ops, SatMul(SatMul(vregs(out), stages), 5));
      flops = SatAdd(flops, SatMul(SatMul(ElementCount(out), stages), 5));
      return Status::Ok();
    }
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kCholesky: {
      // Blocked on the MXU as a matmul of the same shape; the triangle halves
      // the useful work but not the tiles XLA issues.
      const Shape& a = inst.operand(0)->shape();
      const Shape& out = inst.shape();
      if (!a.IsArray() || a.rank() < 2 || !out.IsArray() || out.rank() < 2) return Status::Ok();
      chip::MatmulWork w;
      w.n = a.dimensions(a.rank() - 1);
      if (w.n <= 0) return Status::Ok();
      w.k = w.n;
      // triangular-solve: the right-hand sides' other dimension (b is [m, n] or [n, m]).
      w.m = op == HloOpcode::kCholesky
                ? w.n
                : SatMul(out.dimensions(out.rank() - 2), out.dimensions(out.rank() - 1)) / w.n;
      w.batch = std::max<int64_t>(1, ElementCount(a) / std::max<int64_t>(1, SatMul(w.n, w.n)));
      flops = SatAdd(flops, MatmulFlops(w) / 2);
      work.matmuls.push_back(w);
      return Status::Ok();
    }
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad: {
      // Mean, variance, normalise, scale and shift: about 8 ops per element.
      const Shape& in = inst.operand(0)->shape();
      v.cheap_ops = SatAdd(v.cheap_ops, SatMul(vregs(in), 8));
      flops = SatAdd(flops, SatMul(ElementCount(in), 8));
      return Status::Ok();
    }
    case HloOpcode::kAllReduce:
    case HloOpcode::kReduceScatter: {
      // The local reduction of arriving data; the transfer itself is ICI (not modelled here).
      for (const HloInstruction* o : inst.operands()) {
        v.cheap_ops = SatAdd(v.cheap_ops, vregs(o->shape()));
        flops = SatAdd(flops, ElementCount(o->shape()));
      }
      return Status::Ok();
    }
    // No vector work: ops that emit no code, control flow (its computations'
    // steps are costed), fusions (their fused instructions are), custom calls
    // (opaque: their bytes only), collectives without arithmetic and host
    // transfers.
    case HloOpcode::kAddDependency:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kBitcast:
    case HloOpcode::kCall:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kConditional:
    case HloOpcode::kConstant:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall:
    case HloOpcode::kDomain:
    case HloOpcode::kFusion:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kInfeed:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kOutfeed:
    case HloOpcode::kParameter:
    case HloOpcode::kPartitionId:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kReplicaId:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kScan:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kTuple:
    case HloOpcode::kWhile:
      return Status::Ok();
  }
  return Status::Ok();  // unreachable: every HloOpcode returns above
}

void KernelCoster::AddF16Conversions(const HloInstruction& kernel, std::span<const int64_t> read,
                                     const Shape& written, chip::VectorWork& v) const {
  const chip::Vpu& vpu = cost_.vpu();
  const auto f16_vregs = [&](const Shape& s) -> int64_t {
    if (!s.IsArray() || s.element_type() != hlo::PrimitiveType::kF16 || InVmem(s)) return 0;
    return VregCount(s, vpu.sublanes(), vpu.lanes());
  };
  const auto add = [&](int64_t ops) {
    v.cheap_ops = SatAdd(v.cheap_ops, ops);
    v.convert_ops = SatAdd(v.convert_ops, ops);
  };
  for (int64_t i = 0; i < kernel.operand_count(); ++i) {
    if (read[i] > 0) add(SatMul(vpu.f16_load_ops(), f16_vregs(kernel.operand(i)->shape())));
  }
  const auto store = [&](const Shape& s) { add(SatMul(vpu.f16_store_ops(), f16_vregs(s))); };
  if (written.IsTuple()) {
    for (const Shape& e : written.tuple_shapes()) store(e);
  } else {
    store(written);
  }
}

void KernelCoster::AddEstimatedWork(const KernelCostEstimate& estimate,
                                    chip::CoreWork& whole) const {
  if (estimate.flops > 0) {
    // The FLOPs at the MXUs' full bf16 rate: every MXU of every core streams
    // m rows through one full weight tile, m chosen so the tiles' MACs cover
    // the estimate (Split then gives each core its share).
    chip::MatmulWork product;
    product.k = mxu_rows_;
    product.n = mxu_columns_ * cores_;
    product.m = CeilDiv(CeilDiv(estimate.flops, 2), product.k * product.n);
    whole.matmuls.push_back(product);
  }
  // Pallas counts exp, log, tanh and the like, which the VPU issues as its
  // medium class (docs/models.md), one per element.
  const int64_t per_vreg = cost_.vpu().sublanes() * cost_.vpu().lanes();
  whole.vector.medium_ops = SatAdd(whole.vector.medium_ops, CeilDiv(estimate.transcendentals, per_vreg));
}

chip::CoreWork KernelCoster::Split(const chip::CoreWork& whole) const {
  if (cores_ == 1) return whole;
  chip::CoreWork part;
  const auto share = [&](int64_t x) { return CeilDiv(x, cores_); };
  for (chip::MatmulWork m : whole.matmuls) {
    // XLA splits a parallel output dimension across the TensorCores.
    if (m.batch >= cores_) {
      m.batch = share(m.batch);
    } else if (m.m >= m.n) {
      m.m = share(m.m);
    } else {
      m.n = share(m.n);
    }
    part.matmuls.push_back(m);
  }
  part.vector = {share(whole.vector.cheap_ops), share(whole.vector.medium_ops),
                 share(whole.vector.transcendental_ops), share(whole.vector.xlu_vregs),
                 share(whole.vector.convert_ops), share(whole.vector.xlu_waited_vregs)};
  part.hbm_bytes = share(whole.hbm_bytes);
  part.hbm_write_bytes = share(whole.hbm_write_bytes);
  part.vmem_bytes = share(whole.vmem_bytes);
  part.dma_bytes = share(whole.dma_bytes);
  part.host_bytes = share(whole.host_bytes);
  return part;
}

StatusOr<KernelCost> KernelCoster::Cost(const HloInstruction& inst) const {
  KernelCost result;
  const HloOpcode op = inst.opcode();
  switch (StepKindOf(inst)) {
    case StepKind::kFree:
    case StepKind::kAsyncDone:
      result.kind = StepKindOf(inst);
      return result;
    case StepKind::kAsyncStart: {
      result.kind = StepKind::kAsyncStart;
      chip::CoreWork whole;
      int64_t bytes = 0;
      for (const HloInstruction* o : inst.operands())
        bytes = SatAdd(bytes, BufferBytes(o->shape()));
      const Shape& s = inst.shape();
      if (RunsOnHost(inst)) {
        // The host computes: what crosses PCIe is the operands it takes
        // from HBM, read there on the way (its results stay on the host).
        bytes = 0;
        for (const HloInstruction* o : inst.operands()) {
          if (!host_memory_.Holds(*o)) bytes = SatAdd(bytes, BufferBytes(o->shape()));
        }
        whole.host_bytes = bytes;
        result.pcie_to_host = true;
      } else if (op == HloOpcode::kCopyStart && inst.operand_count() > 0) {
        // A side in host memory crosses PCIe, not HBM.
        int64_t host = 0;
        bytes = 0;
        const auto add_side = [&](const Shape& side, bool on_host) {
          int64_t& total = on_host ? host : bytes;
          total = SatAdd(total, BufferBytes(side));
        };
        add_side(inst.operand(0)->shape(), host_memory_.Holds(*inst.operand(0)));
        if (s.IsTuple() && s.tuple_size() > 0) {
          add_side(s.tuple_shapes(0), host_memory_.Holds(inst, 0));
          result.pcie_to_host = host_memory_.Holds(inst, 0);
        }
        whole.host_bytes = host;
      } else if (s.IsTuple()) {
        if (s.tuple_size() >= 2) bytes = SatAdd(bytes, BufferBytes(s.tuple_shapes(1)));
      } else {
        bytes = SatAdd(bytes, BufferBytes(s));
      }
      whole.dma_bytes = bytes;
      result.hbm_bytes = bytes;
      result.pcie_bytes = whole.host_bytes;
      result.per_core = Split(whole);
      if (bytes == kInt64Max || whole.host_bytes == kInt64Max) {
        return InvalidArgument("its copied bytes reach 2^63: more than tpusim counts in 64 bits");
      }
      return result;
    }
    case StepKind::kKernel:
      // A note to XLA's passes, which compiled code no longer holds, and
      // XLA's allocation of a buffer that is written before it is read (a
      // loop state's slot, an offloaded activations' buffer): nothing runs.
      if (op == HloOpcode::kCustomCall) {
        const std::string_view target = inst.string_attr(hlo::AttrId::kCustomCallTarget);
        if (hlo::IsCompilerAnnotation(target) || target == "AllocateBuffer") {
          result.kind = StepKind::kFree;
          return result;
        }
      }
      break;
  }
  result.kind = StepKind::kKernel;
  chip::CoreWork whole;
  int64_t flops = 0;
  const hlo::HloComputation* fused =
      op == HloOpcode::kFusion ? inst.called_computation(hlo::AttrId::kCalls) : nullptr;
  std::vector<const HloInstruction*> matmuls;
  int64_t vmem = 0;
  // A fusion fused into another is part of the same kernel: its fused
  // instructions are costed in its place. A stack of the computations still
  // to walk, with their nesting depth, rather than recursion.
  std::vector<std::pair<const hlo::HloComputation*, int64_t>> to_walk;
  std::map<const hlo::HloComputation*, const HloInstruction*> nested_fusion_of;
  if (fused != nullptr) to_walk.emplace_back(fused, 1);
  while (!to_walk.empty()) {
    const auto [computation, depth] = to_walk.back();
    to_walk.pop_back();
    for (const auto& f : computation->instructions()) {
      if (f->opcode() == HloOpcode::kFusion) {
        const hlo::HloComputation* nested = f->called_computation(hlo::AttrId::kCalls);
        if (nested == nullptr) continue;
        if (depth == hlo::kMaxCallDepth) return InvalidArgument(hlo::CallsNestTooDeeply());
        to_walk.emplace_back(nested, depth + 1);
        nested_fusion_of.emplace(nested, f.get());
        continue;
      }
      TPUSIM_RETURN_IF_ERROR(AddCompute(*f, whole, flops));
      if (IsMatmul(f->opcode())) matmuls.push_back(f.get());
      if (StepKindOf(*f) == StepKind::kKernel) vmem = SatAdd(vmem, PhysicalBytes(f->shape()));
    }
  }
  if (fused == nullptr) {
    TPUSIM_RETURN_IF_ERROR(AddCompute(inst, whole, flops));
    if (IsMatmul(op)) matmuls.push_back(&inst);
  }
  // The kernel operand that `operand` of one of its instructions reads from
  // HBM (through conversions, and through nested fusions' parameters), or -1.
  const auto boundary_operand = [&](const HloInstruction* operand) -> int64_t {
    const HloInstruction* source = ThroughConversions(operand);
    if (fused != nullptr) {
      // A matmul in a nested fusion reads what that fusion is given.
      while (source->opcode() == HloOpcode::kParameter && source->parent() != fused) {
        const auto caller = nested_fusion_of.find(source->parent());
        const int64_t n = source->parameter_number();
        if (caller == nested_fusion_of.end() || n < 0 || n >= caller->second->operand_count())
          return -1;
        source = ThroughConversions(caller->second->operand(n));
      }
      if (source->opcode() != HloOpcode::kParameter) return -1;
      const int64_t n = source->parameter_number();
      return n >= 0 && n < inst.operand_count() ? n : -1;
    }
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (inst.operand(i) == operand) return i;
    }
    return -1;
  };
  // Boundary traffic: operands read, result written.
  std::vector<int64_t> read(inst.operand_count());
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    read[i] = OperandReadBytes(inst, i);
    vmem = SatAdd(vmem, PhysicalBytes(inst.operand(i)->shape()));
  }
  // A ragged-dot reads the weights of the groups that hold rows only (a
  // kernel that knows the group sizes skips the others): those its shares
  // say, else as many as can hold rows.
  std::set<int64_t> weights_scaled;  // each operand once, however many ragged-dots read it
  for (const HloInstruction* ragged : matmuls) {
    if (ragged->opcode() != HloOpcode::kRaggedDot) continue;
    result.ragged_dots.push_back(ragged);
    const StatusOr<hlo::RaggedDotDimensions> d = hlo::ResolveRaggedDot(*ragged);
    const int64_t weights = boundary_operand(ragged->operand(1));
    if (!d.ok() || d->mode != hlo::RaggedDotMode::kNonContracting || d->groups == 0 ||
        weights < 0 || !weights_scaled.insert(weights).second) {
      continue;
    }
    const std::vector<int64_t>* shares = SharesOf(*ragged);
    if (shares != nullptr && !shares->empty()) {
      const int64_t held =
          std::count_if(shares->begin(), shares->end(), [](int64_t s) { return s > 0; });
      read[weights] = CeilDiv(SatMul(read[weights], held), static_cast<int64_t>(shares->size()));
      continue;
    }
    const Shape& lhs = ragged->operand(0)->shape();
    const std::vector<int64_t>& lb = IntList(*ragged, hlo::AttrId::kLhsBatchDims);
    const std::vector<int64_t>& lc = IntList(*ragged, hlo::AttrId::kLhsContractingDims);
    const int64_t rows = Product(lhs, hlo::DotFreeDimensions(lhs.rank(), lb, lc));
    read[weights] = CeilDiv(SatMul(read[weights], ActiveGroups(*d, rows, 0)), d->groups);
  }
  // Host memory (host_memory.h): what the kernel moves between it and HBM
  // crosses PCIe, read from HBM on the way out and written there on the way
  // in; what stays on the host costs HBM nothing. Scalars (indices) travel
  // with the DMA's descriptor.
  const bool on_host = host_memory_.Holds(inst);
  int64_t crossing = 0;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const HloInstruction& operand = *inst.operand(i);
    if (operand.shape().IsArray() && operand.shape().rank() == 0) continue;
    const bool operand_on_host = host_memory_.Holds(operand);
    if (operand_on_host != on_host) crossing = SatAdd(crossing, read[i]);
    if (operand_on_host) read[i] = 0;
  }
  if (crossing == kInt64Max) {
    return InvalidArgument(
        "its bytes to or from host memory reach 2^63: more than tpusim counts in 64 bits");
  }
  // A move within host memory is part of the transfer that brought the data
  // there, and an annotation that moves nothing is dropped, as XLA's host
  // offloader drops it.
  if (crossing == 0 && (on_host || HostMoveOf(inst) != HostMove::kNone)) {
    result.kind = StepKind::kFree;
    return result;
  }
  whole.host_bytes = crossing;
  result.pcie_bytes = crossing;
  result.pcie_to_host = on_host;
  if (on_host) {
    // Nothing on the device waits for what it sends to the host: the copy
    // runs on under the kernels that follow, as XLA schedules its offloads,
    // ahead of any reload on the same PCIe queue, and the program's end
    // waits for it.
    result.kind = StepKind::kAsyncStart;
    whole.dma_bytes = crossing;
    result.hbm_bytes = crossing;
    result.per_core = Split(whole);
    return result;
  }
  int64_t hbm = 0;
  for (int64_t bytes : read) hbm = SatAdd(hbm, bytes);
  const HloInstruction* root = fused != nullptr ? fused->root() : &inst;
  const bool in_place = root != nullptr && root->opcode() == HloOpcode::kDynamicUpdateSlice &&
                        root->operand_count() >= 2;
  const Shape& written_shape = in_place ? root->operand(1)->shape() : inst.shape();
  const int64_t written = BufferBytes(written_shape);
  hbm = SatAdd(hbm, written);
  vmem = SatAdd(vmem, PhysicalBytes(inst.shape()));
  const std::optional<KernelCostEstimate> estimate = CustomCallCostEstimate(inst);
  if (estimate.has_value()) {
    AddEstimatedWork(*estimate, whole);
    flops = estimate->flops;
    hbm = estimate->bytes_accessed;
  } else {
    AddF16Conversions(inst, read, written_shape, whole.vector);
  }
  // A single matmul whose operands do not fit in VMEM re-reads them.
  if (matmuls.size() == 1 && !whole.matmuls.empty()) {
    const auto boundary_bytes = [&](const HloInstruction* operand) -> int64_t {
      const int64_t i = boundary_operand(operand);
      return i >= 0 ? read[i] : 0;
    };
    chip::MatmulFootprint f;
    f.lhs_bytes = boundary_bytes(matmuls[0]->operand(0));
    f.rhs_bytes = boundary_bytes(matmuls[0]->operand(1));
    f.out_bytes = written;
    f.m = 0;  // the result's rows: a grouped matmul's over all its groups
    for (const chip::MatmulWork& m : whole.matmuls) f.m = SatAdd(f.m, SatMul(m.batch, m.m));
    f.n = whole.matmuls[0].n;
    const int64_t once = SatAdd(SatAdd(f.lhs_bytes, f.rhs_bytes), f.out_bytes);
    hbm = SatAdd(hbm, std::max<int64_t>(0, cost_.vmem().StreamedMatmulBytes(f) - once));
  }
  whole.hbm_bytes = hbm;
  whole.hbm_write_bytes = std::min(written, hbm);
  whole.vmem_bytes = vmem;
  result.flops = flops;
  result.hbm_bytes = hbm;
  result.per_core = Split(whole);
  // Sums and products saturate (sim/base/arith.h): a count that reached
  // INT64_MAX is past 64 bits, and reporting it would be a wrong number.
  if (flops == kInt64Max || hbm == kInt64Max || vmem == kInt64Max) {
    const char* what = flops == kInt64Max ? "FLOPs" : hbm == kInt64Max ? "HBM bytes" : "VMEM bytes";
    return InvalidArgument(std::string("its ") + what +
                           " reach 2^63: more than tpusim counts in 64 bits");
  }
  return result;
}

}  // namespace tpusim::timing
