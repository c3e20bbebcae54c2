// dot with batch and contracting dimensions, computed as the MXU computes it.
//
// TPU numerics (Numerics::kTpu, docs/evaluator.md):
// - Each float operand is split into bf16 pieces x = x0 + x1 + x2 (x0 =
//   bf16(x), x1 = bf16(x - x0), x2 = bf16(x - x0 - x1); each difference is
//   exact in f32). bf16 and f8 operands are a single piece.
// - The precision config picks the passes, products of pieces (lhs, rhs):
//   DEFAULT 1 pass (x0*y0); HIGH 3 passes (x0*y1, x1*y0, x0*y0); HIGHEST 6
//   passes (x0*y2, x2*y0, x1*y1, x0*y1, x1*y0, x0*y0): smallest terms first.
//   The higher of the two operands' precisions applies; `algorithm=` overrides.
// - A product of two bf16 values is exact in f32 (8+8 significant bits).
// - Accumulation is f32, one rounding per addition, in MXU tile order: the
//   contracting dimension (flattened in the order its dimensions are listed)
//   is cut into chunks of kMxuTile; within a chunk, pass by pass and within a
//   pass in increasing k, products are added to a chunk sum seeded with the
//   first product; chunk sums are then added in order to the result, seeded
//   with the first chunk's sum. A pass other than x0*y0 skips products with a
//   zero piece, so an operand that is exactly bf16 gives the 1-pass result.
//   A NaN result is the quiet NaN 0x7FC00000. The f32 product itself is
//   mxu_matmul.cc's blocked kernel.
// ragged-dot (modes in sim/hlo/dot_dimensions.h) is computed group by group
// as dots of the rows (or contracting indices) each group holds, so every
// result element has the numerics of a dot's.
// Integer dots accumulate modulo 2^64 and wrap to the result type (with a
// tile engine chosen, s8 x s8 dots take the MXU's int8 datapath instead). f64 dots
// and Numerics::kIeee multiply and add in f64 (products of f32 or narrower
// operands are exact there), in increasing k, and round once to the result
// type.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sim/eval/kernels.h"
#include "sim/eval/mxu_matmul.h"
#include "sim/eval/mxu_tile.h"
#include "sim/hlo/dot_dimensions.h"
#include "sim/hlo/dot_precision.h"
#include "sim/value/element_type.h"
#include "sim/value/float_formats.h"

namespace tpusim::eval {
namespace {

using hlo::AttrId;
using hlo::HloInstruction;
using hlo::PrimitiveType;
using value::Literal;

/// The index structure of a dot: element (b, m, k) of the lhs is at
/// lhs_b[b] + lhs_m[m] + lhs_k[k], element (b, k, n) of the rhs at
/// rhs_b[b] + rhs_k[k] + rhs_n[n], and the result is [b, m, n] row-major.
/// Offsets of every index over `dims` of `shape`, in row-major order of the
/// listed dimensions (the first listed varies slowest).
std::vector<int64_t> Offsets(const hlo::Shape& shape, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  std::vector<int64_t> sizes, dim_strides;
  for (int64_t d : dims) {
    sizes.push_back(shape.dimensions(d));
    dim_strides.push_back(strides[d]);
  }
  std::vector<int64_t> offsets;
  ForEachIndex(sizes, [&](std::span<const int64_t> index) {
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i) offset += index[i] * dim_strides[i];
    offsets.push_back(offset);
  });
  return offsets;
}

/// `rhs_group`, if not -1, is a ragged-dot's rhs group dimension: not one
/// of the rhs's free dimensions, and left to the caller to index.
StatusOr<DotIndex> BuildIndex(const HloInstruction& inst, const hlo::Shape& lhs,
                              const hlo::Shape& rhs, int64_t rhs_group = -1) {
  auto list = [&](AttrId id) {
    const auto* v = inst.GetAttr<std::vector<int64_t>>(id);
    return v ? *v : std::vector<int64_t>{};
  };
  const std::vector<int64_t> lb = list(AttrId::kLhsBatchDims), rb = list(AttrId::kRhsBatchDims);
  const std::vector<int64_t> lc = list(AttrId::kLhsContractingDims);
  const std::vector<int64_t> rc = list(AttrId::kRhsContractingDims);
  auto valid = [](const std::vector<int64_t>& dims, const hlo::Shape& s) {
    return std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return d >= 0 && d < s.rank(); });
  };
  if (lb.size() != rb.size() || lc.size() != rc.size() || !valid(lb, lhs) || !valid(lc, lhs) ||
      !valid(rb, rhs) || !valid(rc, rhs)) {
    return InvalidArgument("batch and contracting dimensions must pair up and be in range");
  }
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs.dimensions(lb[i]) != rhs.dimensions(rb[i])) {
      return InvalidArgument("batch dimension sizes differ");
    }
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs.dimensions(lc[i]) != rhs.dimensions(rc[i])) {
      return InvalidArgument("contracting dimension sizes differ");
    }
  }
  DotIndex index;
  index.lhs_b = Offsets(lhs, lb);
  index.lhs_m = Offsets(lhs, hlo::DotFreeDimensions(lhs.rank(), lb, lc));
  index.lhs_k = Offsets(lhs, lc);
  index.rhs_b = Offsets(rhs, rb);
  index.rhs_k = Offsets(rhs, rc);
  std::vector<int64_t> rhs_not_free = rc;
  if (rhs_group >= 0) rhs_not_free.push_back(rhs_group);
  index.rhs_n = Offsets(rhs, hlo::DotFreeDimensions(rhs.rank(), rb, rhs_not_free));
  return index;
}

Status TpuFloatDot(const EvalContext& ctx, const HloInstruction& inst, const Literal& lhs, const Literal& rhs,
                   const DotIndex& ix, Literal& out) {
  TPUSIM_ASSIGN_OR_RETURN(int pass_count, hlo::MxuPassCount(inst));
  const int pieces = hlo::MxuPieces(pass_count);
  const int lhs_pieces = hlo::IsExactlyBf16(lhs.element_type()) ? 1 : pieces;
  const int rhs_pieces = hlo::IsExactlyBf16(rhs.element_type()) ? 1 : pieces;
  std::vector<MxuPass> passes;
  for (auto [p, q] : hlo::MxuPasses(pass_count)) {
    if (p < lhs_pieces && q < rhs_pieces) passes.push_back({p, q});
  }
  const MatrixView lhs_view{&lhs, ix.lhs_b, ix.lhs_m, ix.lhs_k};
  const MatrixView rhs_view{&rhs, ix.rhs_b, ix.rhs_n, ix.rhs_k};
  MxuTileEngine* const engine = ctx.options().mxu_engine;
  auto multiply = [&](std::span<float> result) {
    if (engine != nullptr) {
      MxuMatMulByTiles(lhs_view, rhs_view, passes, *engine, result);
    } else {
      MxuMatMul(lhs_view, rhs_view, passes, BestSimdLevel(), result);
    }
  };
  if (out.element_type() == PrimitiveType::kF32) {
    multiply(out.data<float>());
    return Status::Ok();
  }
  std::vector<float> sums(static_cast<size_t>(out.element_count()));
  multiply(sums);
  // f32 -> result type: one rounding.
  if (out.element_type() == PrimitiveType::kBF16) {
    auto o = out.data<uint16_t>();
    for (size_t i = 0; i < sums.size(); ++i) o[i] = value::Bf16FromFloat(sums[i]);
  } else {
    for (size_t i = 0; i < sums.size(); ++i) {
      out.SetFromDouble(static_cast<int64_t>(i), static_cast<double>(sums[i]));
    }
  }
  return Status::Ok();
}

/// f64 reference: exact products and sums in double, rounded once at the end.
void IeeeFloatDot(const Literal& lhs, const Literal& rhs, const DotIndex& ix, Literal& out) {
  int64_t linear = 0;
  for (size_t bi = 0; bi < ix.lhs_b.size(); ++bi) {
    for (int64_t m : ix.lhs_m) {
      for (int64_t n : ix.rhs_n) {
        double acc = 0.0;
        for (size_t k = 0; k < ix.lhs_k.size(); ++k) {
          acc += lhs.GetAsDouble(ix.lhs_b[bi] + m + ix.lhs_k[k]) *
                 rhs.GetAsDouble(ix.rhs_b[bi] + ix.rhs_k[k] + n);
        }
        out.SetFromDouble(linear++, acc);
      }
    }
  }
}

/// An integer element, sign- or zero-extended to 64 bits.
std::vector<uint64_t> IntValues(const Literal& operand) {
  std::vector<uint64_t> values(static_cast<size_t>(operand.element_count()));
  value::VisitArrayType(operand.element_type(), [&](auto tag) {
    using T = value::NativeType<decltype(tag)::value>;
    if constexpr (std::is_integral_v<T>) {
      const auto x = operand.data<T>();
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<uint64_t>(
            static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(x[i]));
      }
    }
  });
  return values;
}

Status IntegerDot(const EvalContext& ctx, const Literal& lhs, const Literal& rhs, const DotIndex& ix,
                  Literal& out) {
  if (hlo::PrimitiveTypeBitWidth(out.element_type()) < 8) {
    return Unimplemented("dot with a sub-byte integer result");
  }
  std::vector<uint64_t> sums;
  MxuTileEngine* const engine = ctx.options().mxu_engine;
  if (engine != nullptr && lhs.element_type() == PrimitiveType::kS8 &&
      rhs.element_type() == PrimitiveType::kS8 && hlo::PrimitiveTypeBitWidth(out.element_type()) <= 32) {
    // The MXU's int8 datapath, through the chosen tile engine (`--mxu rtl`):
    // its int32 sums agree with the 64-bit sums below in the low 32 bits,
    // which are all a result of at most 32 bits keeps.
    std::vector<int32_t> sums32(static_cast<size_t>(out.element_count()));
    MxuInt8MatMulByTiles({&lhs, ix.lhs_b, ix.lhs_m, ix.lhs_k}, {&rhs, ix.rhs_b, ix.rhs_n, ix.rhs_k},
                         *engine, sums32);
    for (int32_t s : sums32) sums.push_back(static_cast<uint64_t>(static_cast<int64_t>(s)));
  } else {
    const std::vector<uint64_t> x = IntValues(lhs), y = IntValues(rhs);
    for (size_t bi = 0; bi < ix.lhs_b.size(); ++bi) {
      for (int64_t m : ix.lhs_m) {
        for (int64_t n : ix.rhs_n) {
          uint64_t acc = 0;  // modulo 2^64, so the order cannot matter
          for (size_t k = 0; k < ix.lhs_k.size(); ++k) {
            acc += x[ix.lhs_b[bi] + m + ix.lhs_k[k]] * y[ix.rhs_b[bi] + ix.rhs_k[k] + n];
          }
          sums.push_back(acc);
        }
      }
    }
  }
  value::VisitArrayType(out.element_type(), [&](auto tag) {
    using T = value::NativeType<decltype(tag)::value>;
    if constexpr (std::is_integral_v<T>) {
      auto o = out.data<T>();
      for (size_t i = 0; i < sums.size(); ++i) o[i] = static_cast<T>(sums[i]);  // wraps
    }
  });
  return Status::Ok();
}

/// The numerics dispatch shared by dot and MatMul.
Status DotWithIndex(const EvalContext& ctx, const HloInstruction& inst, const Literal& lhs,
                    const Literal& rhs, const DotIndex& ix, Literal& out) {
  const size_t expected = ix.lhs_b.size() * ix.lhs_m.size() * ix.rhs_n.size();
  if (static_cast<size_t>(out.element_count()) != expected) {
    return InvalidArgument("result shape does not match batch, lhs free and rhs free dimensions");
  }
  const PrimitiveType lt = lhs.element_type(), rt = rhs.element_type(), ot = out.element_type();
  if (hlo::IsComplex(lt) || hlo::IsComplex(rt) || hlo::IsComplex(ot)) {
    return ComplexDot(lhs, rhs, ix, out);  // eval_dot_complex.cc
  }
  const bool integer = hlo::IsInteger(lt) && hlo::IsInteger(rt) && hlo::IsInteger(ot);
  if (integer) return IntegerDot(ctx, lhs, rhs, ix, out);
  if (hlo::IsFloatingPoint(ot) && hlo::IsInteger(lt) != hlo::IsInteger(rt)) {
    // Integer weights with float activations (s8 x bf16 in TPU dumps): the
    // integer operand enters the MXU as floats. Up to 8 bits every value is
    // exactly a bf16 (one piece per pass); wider integers go through f32 and
    // are split into bf16 pieces like any f32 operand.
    const Literal& integer_operand = hlo::IsInteger(lt) ? lhs : rhs;
    const PrimitiveType as = hlo::PrimitiveTypeBitWidth(integer_operand.element_type()) <= 8
                                 ? PrimitiveType::kBF16
                                 : PrimitiveType::kF32;
    Literal converted(hlo::Shape(as, integer_operand.shape().dimensions()));
    for (int64_t i = 0; i < converted.element_count(); ++i) {
      converted.SetFromDouble(i, integer_operand.GetAsDouble(i));
    }
    return hlo::IsInteger(lt) ? DotWithIndex(ctx, inst, converted, rhs, ix, out)
                              : DotWithIndex(ctx, inst, lhs, converted, ix, out);
  }
  if (!hlo::IsFloatingPoint(lt) || !hlo::IsFloatingPoint(rt) || !hlo::IsFloatingPoint(ot)) {
    return Unimplemented("dot of " + std::string(hlo::PrimitiveTypeName(lt)) + " and " +
                         std::string(hlo::PrimitiveTypeName(rt)) + " operands into " +
                         std::string(hlo::PrimitiveTypeName(ot)));
  }
  const bool f64 = lt == PrimitiveType::kF64 || rt == PrimitiveType::kF64;
  if (ctx.options().numerics == Numerics::kIeee || f64) {
    IeeeFloatDot(lhs, rhs, ix, out);
    return Status::Ok();
  }
  return TpuFloatDot(ctx, inst, lhs, rhs, ix, out);
}

Status Dot(const EvalContext& ctx, const HloInstruction& inst, const Literal& lhs,
           const Literal& rhs, Literal& out) {
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || !out.shape().IsArray()) {
    return InvalidArgument("operands and result must be arrays");
  }
  TPUSIM_ASSIGN_OR_RETURN(DotIndex ix, BuildIndex(inst, lhs.shape(), rhs.shape()));
  return DotWithIndex(ctx, inst, lhs, rhs, ix, out);
}

}  // namespace

Status MatMul(const EvalContext& ctx, const HloInstruction& inst, const Literal& lhs,
              const Literal& rhs, Literal& out) {
  const int64_t m = lhs.shape().dimensions(0), k = lhs.shape().dimensions(1);
  const int64_t n = rhs.shape().dimensions(1);
  DotIndex ix;
  ix.lhs_b = ix.rhs_b = {0};
  for (int64_t i = 0; i < m; ++i) ix.lhs_m.push_back(i * k);
  for (int64_t i = 0; i < k; ++i) {
    ix.lhs_k.push_back(i);
    ix.rhs_k.push_back(i * n);
  }
  for (int64_t i = 0; i < n; ++i) ix.rhs_n.push_back(i);
  return DotWithIndex(ctx, inst, lhs, rhs, ix, out);
}

namespace {

/// The last dimension's entries of `sizes` as running ends, row by row:
/// group g of a row holds the ragged indices from the end of g - 1 (0 for
/// the first group) up to its own end. Ends are clamped to `ragged_size`,
/// which no index reaches, so huge sizes cannot overflow.
StatusOr<std::vector<int64_t>> GroupEnds(const Literal& sizes, int64_t groups,
                                         int64_t ragged_size) {
  std::vector<int64_t> ends(static_cast<size_t>(sizes.element_count()));
  for (int64_t row = 0; row * groups < sizes.element_count(); ++row) {
    int64_t end = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const double size = sizes.GetAsDouble(row * groups + g);
      if (size < 0) {
        return InvalidArgument("group_sizes holds a negative size, " +
                               std::to_string(static_cast<int64_t>(size)));
      }
      end += static_cast<int64_t>(std::min(size, static_cast<double>(ragged_size - end)));
      ends[static_cast<size_t>(row * groups + g)] = end;
    }
  }
  return ends;
}

/// A ragged-dot with a ragged free or contracting dimension into `out`
/// (zero-filled): for each batch index, the lhs rows (free mode) or
/// contracting indices (contracting mode) are sorted into their groups, and
/// each group is a dot of those alone, against rhs group g (free mode) or
/// into result g (contracting mode). What no group holds stays zero.
Status RaggedDot(EvalContext& ctx, const HloInstruction& inst, const Literal& lhs,
                 const Literal& rhs, const Literal& sizes, const hlo::RaggedDotDimensions& d,
                 Literal& out) {
  TPUSIM_ASSIGN_OR_RETURN(DotIndex ix, BuildIndex(inst, lhs.shape(), rhs.shape(), d.rhs_group));
  // No groups or no lhs elements (a zero-sized dimension, whose stride
  // below would be 0): nothing is multiplied, and the result stays zero.
  if (d.groups == 0 || lhs.element_count() == 0) return Status::Ok();
  const hlo::Shape& lhs_shape = lhs.shape();
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> ends,
                          GroupEnds(sizes, d.groups, lhs_shape.dimensions(d.lhs_ragged)));
  const std::vector<int64_t> strides = RowMajorStrides(lhs_shape.dimensions());
  const auto coordinate = [&](int64_t offset, int64_t dim) {
    return offset / strides[dim] % lhs_shape.dimensions(dim);
  };
  // The group of the lhs element at `offset`, or -1 past the last group.
  const auto group_of = [&](int64_t offset) -> int64_t {
    int64_t row = 0;
    for (size_t i = 0; i < d.group_sizes_lhs_dims.size(); ++i) {
      row = row * sizes.shape().dimensions(static_cast<int64_t>(i)) +
            coordinate(offset, d.group_sizes_lhs_dims[i]);
    }
    const int64_t index = coordinate(offset, d.lhs_ragged);
    for (int64_t g = 0; g < d.groups; ++g) {
      if (index < ends[static_cast<size_t>(row * d.groups + g)]) return g;
    }
    return -1;
  };
  const bool rows_ragged = d.mode == hlo::RaggedDotMode::kNonContracting;
  const std::vector<int64_t>& ragged_side = rows_ragged ? ix.lhs_m : ix.lhs_k;
  const int64_t batches = static_cast<int64_t>(ix.lhs_b.size());
  const int64_t m = static_cast<int64_t>(ix.lhs_m.size()),
                n = static_cast<int64_t>(ix.rhs_n.size());
  const int64_t group_stride =
      rows_ragged ? RowMajorStrides(rhs.shape().dimensions())[d.rhs_group] : 0;
  std::vector<int64_t> shares;  // RunRecord::ragged_group_shares
  shares.reserve(static_cast<size_t>(batches * d.groups));
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<std::vector<int64_t>> members(static_cast<size_t>(d.groups));
    for (size_t i = 0; i < ragged_side.size(); ++i) {
      const int64_t g = group_of(ix.lhs_b[b] + ragged_side[i]);
      if (g >= 0) members[static_cast<size_t>(g)].push_back(static_cast<int64_t>(i));
    }
    for (int64_t g = 0; g < d.groups; ++g) {
      const std::vector<int64_t>& held = members[static_cast<size_t>(g)];
      shares.push_back(static_cast<int64_t>(held.size()));
      if (held.empty()) continue;
      DotIndex part_ix{{ix.lhs_b[b]}, ix.lhs_m, ix.lhs_k, {ix.rhs_b[b]}, ix.rhs_k, ix.rhs_n};
      if (rows_ragged) {
        part_ix.lhs_m.clear();
        for (int64_t i : held) part_ix.lhs_m.push_back(ix.lhs_m[i]);
        part_ix.rhs_b[0] += g * group_stride;
      } else {
        part_ix.lhs_k.clear();
        part_ix.rhs_k.clear();
        for (int64_t i : held) {
          part_ix.lhs_k.push_back(ix.lhs_k[i]);
          part_ix.rhs_k.push_back(ix.rhs_k[i]);
        }
      }
      const int64_t part_rows = static_cast<int64_t>(part_ix.lhs_m.size());
      TPUSIM_ASSIGN_OR_RETURN(Literal part,
                              ctx.NewValue(inst, hlo::Shape(out.element_type(), {part_rows, n})));
      TPUSIM_RETURN_IF_ERROR(DotWithIndex(ctx, inst, lhs, rhs, part_ix, part));
      for (int64_t r = 0; r < part_rows; ++r) {
        // Free mode: row r is lhs row held[r] of result [b, m, n]; contracting
        // mode: every row, of result [g, b, m, n].
        const int64_t out_row = rows_ragged ? b * m + held[r] : (g * batches + b) * m + r;
        for (int64_t j = 0; j < n; ++j) CopyElement(part, r * n + j, out, out_row * n + j);
      }
    }
  }
  if (RunRecord* record = ctx.record()) {
    record->ragged_group_shares[&inst].Append(std::move(shares));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Literal> EvalRaggedDot(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  const Literal& sizes = *ops[2];
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || !inst.shape().IsArray()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "operands and result must be arrays");
  }
  StatusOr<hlo::RaggedDotDimensions> d = hlo::ResolveRaggedDot(inst);
  if (!d.ok()) return ctx.Error(inst, d.status().code(), d.status().message());
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  const Status status = d->mode == hlo::RaggedDotMode::kBatch
                            ? Dot(ctx, inst, lhs, rhs, out)
                            : RaggedDot(ctx, inst, lhs, rhs, sizes, *d, out);
  if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
  return out;
}

StatusOr<Literal> EvalDot(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  if (ops.size() != 2) {
    return ctx.Unsupported(inst, "dot with sparsity metadata operands is not supported yet");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  const Status status = Dot(ctx, inst, *ops[0], *ops[1], out);
  if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
  return out;
}

}  // namespace tpusim::eval
