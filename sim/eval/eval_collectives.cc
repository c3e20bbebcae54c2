// Collective kernels: all-reduce, all-gather, reduce-scatter, all-to-all,
// ragged-all-to-all, collective-broadcast, collective-permute, send/recv, and
// the -start/-done forms. Each device's kernel finds its group
// (collective_groups.h) and meets the group at the CollectiveHub, which runs
// one exchange over every participant's operands in group order; nothing here
// depends on which device arrived last.
//
// Reductions combine contributions one participant at a time in group order,
// acc = f(acc, x) starting from the first participant's value, through the
// same Combiner as reduce (so numerics equal the elementwise kernel).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/eval/collective_hub.h"
#include "sim/eval/kernels.h"
#include "sim/hlo/collective_groups.h"
#include "sim/value/element_type.h"

namespace tpusim::eval {
namespace {

using hlo::AttrId;
using hlo::GroupMode;
using hlo::GroupModeOf;
using hlo::GroupParticipants;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PeerDomain;
using hlo::PeerDomainOf;
using hlo::SendRecvPairs;
using hlo::Shape;
using value::Literal;
using Contributions = CollectiveHub::Contributions;
using Results = std::vector<Literal>;

int64_t ThisDevice(const EvalContext& ctx) {
  return ctx.hub().config().DeviceIndex(ctx.device());
}

/// The value of a result of shape `shape` made of one part per operand: the
/// part itself for an array, a tuple for several (the variadic forms) or for
/// a tuple of one (all-to-all's tuple form).
Literal Pack(std::vector<Literal> parts, const Shape& shape) {
  if (parts.size() == 1 && !shape.IsTuple()) return std::move(parts[0]);
  return Literal::CreateTuple(std::move(parts));
}

/// The result shape of each operand: `result_shape` itself for one operand
/// and an array result, the elements of a tuple result. Every operand must
/// be an array of the result's element type.
StatusOr<std::vector<Shape>> PerOperandShapes(EvalContext& ctx, const HloInstruction& inst,
                                              const Shape& result_shape, Operands ops) {
  std::vector<Shape> shapes;
  if (result_shape.IsTuple() && result_shape.tuple_size() == static_cast<int64_t>(ops.size())) {
    shapes = result_shape.tuple_shapes();
  } else if (ops.size() == 1) {
    shapes.push_back(result_shape);
  }
  if (ops.empty() || shapes.size() != ops.size()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "result must be one array per operand (a tuple for several)");
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k]->shape().IsArray() || !shapes[k].IsArray() ||
        ops[k]->element_type() != shapes[k].element_type()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "operands and results must be arrays of the same element type");
    }
  }
  return shapes;
}

/// Copies `count` slices along dimension `dim` from `src` (starting at slice
/// `src_start`) to `dst` (at `dst_start`); the other dimensions are equal.
void CopyAlongDim(const Literal& src, int64_t src_start, Literal& dst, int64_t dst_start,
                  int64_t dim, int64_t count) {
  const auto& src_dims = src.shape().dimensions();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= src_dims[i];
  for (size_t i = static_cast<size_t>(dim) + 1; i < src_dims.size(); ++i) inner *= src_dims[i];
  const int64_t src_extent = src_dims[dim], dst_extent = dst.shape().dimensions(dim);
  const int64_t size = value::ElementByteSize(src.element_type());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst.mutable_bytes().data() + ((o * dst_extent + dst_start) * inner) * size,
                src.bytes().data() + ((o * src_extent + src_start) * inner) * size,
                static_cast<size_t>(count * inner * size));
  }
}

/// True when `a` and `b` have the same rank and dimensions except `dim`.
bool SameExceptDim(const Shape& a, const Shape& b, int64_t dim) {
  if (a.rank() != b.rank() || dim < 0 || dim >= a.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (i != dim && a.dimensions(i) != b.dimensions(i)) return false;
  }
  return true;
}

/// The one dimension of `dimensions={d}`, checked against `rank`.
StatusOr<int64_t> CollectiveDimension(EvalContext& ctx, const HloInstruction& inst,
                                      int64_t rank) {
  const std::span<const int64_t> dims = inst.dimensions();
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= rank) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs dimensions={d} naming one dimension of the operand");
  }
  return dims[0];
}

/// Meets the group at the hub with this device's operands.
StatusOr<Literal> Meet(EvalContext& ctx, const HloInstruction& inst,
                       const std::vector<int64_t>& participants, Operands ops,
                       const CollectiveHub::ExchangeFn& exchange) {
  return ctx.hub().Rendezvous(inst, ThisDevice(ctx), participants,
                              std::vector<const Literal*>(ops.begin(), ops.end()), exchange);
}

/// Operand k of every participant combined with the reducer, in group order.
StatusOr<Literal> ReduceContributions(EvalContext& ctx, const HloInstruction& inst,
                                      const hlo::HloComputation& reducer, const Contributions& c,
                                      size_t k) {
  const Literal& first = *c[0][k];
  TPUSIM_ASSIGN_OR_RETURN(Literal acc, ctx.NewValue(inst, first.shape()));
  std::copy(first.bytes().begin(), first.bytes().end(), acc.mutable_bytes().begin());
  const Literal* first_list[] = {&first};
  Combiner combiner(ctx, inst, reducer, first_list);
  if (const std::optional<BinaryArith> op = combiner.simple_op()) {
    for (size_t j = 1; j < c.size(); ++j) {
      const Status status = ApplyBinaryInPlace(*op, acc, *c[j][k]);
      if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
    }
    return acc;
  }
  for (int64_t i = 0; i < acc.element_count(); ++i) {
    combiner.Reset(first_list, i);
    for (size_t j = 1; j < c.size(); ++j) {
      const Literal* x[] = {c[j][k]};
      TPUSIM_RETURN_IF_ERROR(combiner.Combine(x, i));
    }
    CopyElement(combiner.acc(0), 0, acc, i);
  }
  return acc;
}

const hlo::HloComputation* Reducer(const HloInstruction& inst) { return inst.to_apply(); }

/// For the collectives whose result per operand has that operand's shape
/// (all-reduce, collective-broadcast).
Status CheckResultsHaveOperandShapes(EvalContext& ctx, const HloInstruction& inst,
                                     const Shape& result_shape, Operands ops) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Shape> shapes, PerOperandShapes(ctx, inst, result_shape, ops));
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k]->shape().Compatible(shapes[k])) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "result must have the operand's shape");
    }
  }
  return Status::Ok();
}

StatusOr<Literal> AllReduce(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode,
                            const Shape& result_shape, Operands ops) {
  const hlo::HloComputation* reducer = Reducer(inst);
  if (reducer == nullptr) return ctx.Error(inst, StatusCode::kInvalidArgument, "needs to_apply=");
  TPUSIM_RETURN_IF_ERROR(CheckResultsHaveOperandShapes(ctx, inst, result_shape, ops));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> participants,
                          GroupParticipants(ctx.module(), inst, opcode, ctx.hub().config(),
                                            ThisDevice(ctx)));
  return Meet(ctx, inst, participants, ops, [&](const Contributions& c) -> StatusOr<Results> {
    std::vector<Literal> parts;
    for (size_t k = 0; k < ops.size(); ++k) {
      TPUSIM_ASSIGN_OR_RETURN(Literal sum, ReduceContributions(ctx, inst, *reducer, c, k));
      parts.push_back(std::move(sum));
    }
    Results results;
    results.push_back(Pack(std::move(parts), result_shape));
    return results;
  });
}

StatusOr<Literal> ReduceScatter(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode,
                                const Shape& result_shape, Operands ops) {
  const hlo::HloComputation* reducer = Reducer(inst);
  if (reducer == nullptr) return ctx.Error(inst, StatusCode::kInvalidArgument, "needs to_apply=");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Shape> shapes, PerOperandShapes(ctx, inst, result_shape, ops));
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim, CollectiveDimension(ctx, inst, ops[0]->shape().rank()));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> participants,
                          GroupParticipants(ctx.module(), inst, opcode, ctx.hub().config(),
                                            ThisDevice(ctx)));
  const int64_t n = static_cast<int64_t>(participants.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!SameExceptDim(ops[k]->shape(), shapes[k], dim) ||
        ops[k]->shape().dimensions(dim) != n * shapes[k].dimensions(dim)) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "the operand's dimension " + std::to_string(dim) + " must be the result's times the group size " +
                           std::to_string(n));
    }
  }
  return Meet(ctx, inst, participants, ops, [&](const Contributions& c) -> StatusOr<Results> {
    std::vector<std::vector<Literal>> parts(static_cast<size_t>(n));
    for (size_t k = 0; k < ops.size(); ++k) {
      TPUSIM_ASSIGN_OR_RETURN(Literal sum, ReduceContributions(ctx, inst, *reducer, c, k));
      const int64_t block = shapes[k].dimensions(dim);
      for (int64_t i = 0; i < n; ++i) {
        TPUSIM_ASSIGN_OR_RETURN(Literal piece, ctx.NewValue(inst, shapes[k]));
        CopyAlongDim(sum, i * block, piece, 0, dim, block);
        parts[i].push_back(std::move(piece));
      }
    }
    Results results;
    for (auto& p : parts) results.push_back(Pack(std::move(p), result_shape));
    return results;
  });
}

StatusOr<Literal> AllGather(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode,
                            const Shape& result_shape, Operands ops) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Shape> shapes, PerOperandShapes(ctx, inst, result_shape, ops));
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim, CollectiveDimension(ctx, inst, ops[0]->shape().rank()));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> participants,
                          GroupParticipants(ctx.module(), inst, opcode, ctx.hub().config(),
                                            ThisDevice(ctx)));
  const int64_t n = static_cast<int64_t>(participants.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!SameExceptDim(ops[k]->shape(), shapes[k], dim) ||
        shapes[k].dimensions(dim) != n * ops[k]->shape().dimensions(dim)) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "the result's dimension " + std::to_string(dim) +
                           " must be the operand's times the group size " + std::to_string(n));
    }
  }
  return Meet(ctx, inst, participants, ops, [&](const Contributions& c) -> StatusOr<Results> {
    std::vector<Literal> parts;
    for (size_t k = 0; k < ops.size(); ++k) {
      TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, shapes[k]));
      const int64_t block = ops[k]->shape().dimensions(dim);
      for (int64_t j = 0; j < n; ++j) CopyAlongDim(*c[j][k], 0, out, j * block, dim, block);
      parts.push_back(std::move(out));
    }
    Results results;
    results.push_back(Pack(std::move(parts), result_shape));
    return results;
  });
}

/// Array form (`dimensions={d}`, one operand): each participant splits its
/// operand into group-size blocks along d and sends block i to participant
/// i, which concatenates what it receives along d in group order. Tuple form
/// (one operand per participant, no dimensions): participant i receives
/// operand i of each participant j as its result element j.
StatusOr<Literal> AllToAll(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode,
                           const Shape& result_shape, Operands ops) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Shape> shapes, PerOperandShapes(ctx, inst, result_shape, ops));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> participants,
                          GroupParticipants(ctx.module(), inst, opcode, ctx.hub().config(),
                                            ThisDevice(ctx)));
  const int64_t n = static_cast<int64_t>(participants.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k]->shape().Compatible(shapes[k])) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "result must have the operand's shape");
    }
  }
  if (inst.dimensions().empty()) {
    if (static_cast<int64_t>(ops.size()) != n) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "the tuple form needs one operand per participant (" + std::to_string(n) + ")");
    }
    return Meet(ctx, inst, participants, ops, [&](const Contributions& c) -> StatusOr<Results> {
      Results results;
      for (int64_t i = 0; i < n; ++i) {
        std::vector<Literal> parts;
        for (int64_t j = 0; j < n; ++j) parts.push_back(*c[j][i]);
        results.push_back(Pack(std::move(parts), result_shape));
      }
      return results;
    });
  }
  if (ops.size() != 1) {
    return ctx.Unsupported(inst, "the array form (dimensions=) with more than one operand");
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim, CollectiveDimension(ctx, inst, ops[0]->shape().rank()));
  const int64_t extent = ops[0]->shape().dimensions(dim);
  if (extent % n != 0) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "dimension " + std::to_string(dim) + " (" + std::to_string(extent) +
                         ") does not split into the group size " + std::to_string(n));
  }
  const int64_t block = extent / n;
  return Meet(ctx, inst, participants, ops, [&](const Contributions& c) -> StatusOr<Results> {
    Results results;
    for (int64_t i = 0; i < n; ++i) {
      TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, shapes[0]));
      for (int64_t j = 0; j < n; ++j) CopyAlongDim(*c[j][0], i * block, out, j * block, dim, block);
      results.push_back(std::move(out));
    }
    return results;
  });
}

/// The integer at `index` of an offsets or sizes operand.
int64_t IntAt(const Literal& array, int64_t index) {
  return static_cast<int64_t>(array.GetAsDouble(index));
}

/// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets,
/// recv_sizes): sender j sends rows [input_offsets[i], +send_sizes[i]) of its
/// input (rows: the outermost dimension) to participant i, which writes them
/// at row output_offsets[i] (the sender's operand) of its own output operand.
/// Rows nobody writes keep the output operand's values. recv_sizes is the
/// receivers' view of the same sizes and is not needed.
StatusOr<Literal> RaggedAllToAll(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode,
                                 const Shape& result_shape, Operands ops) {
  if (ops.size() != 6) return ctx.Error(inst, StatusCode::kInvalidArgument, "needs 6 operands");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> participants,
                          GroupParticipants(ctx.module(), inst, opcode, ctx.hub().config(),
                                            ThisDevice(ctx)));
  const int64_t n = static_cast<int64_t>(participants.size());
  const Literal& input = *ops[0];
  const Literal& output = *ops[1];
  if (!input.shape().IsArray() || input.shape().rank() == 0 ||
      !output.shape().Compatible(result_shape) ||
      !SameExceptDim(input.shape(), output.shape(), 0) ||
      input.element_type() != output.element_type()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "input and output must be arrays that differ only in dimension 0, and the "
                     "result must have the output's shape");
  }
  for (size_t k = 2; k < 6; ++k) {
    if (!ops[k]->shape().IsArray() || ops[k]->shape().rank() != 1 ||
        !hlo::IsInteger(ops[k]->element_type())) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "offsets and sizes must be integer vectors");
    }
    if (ops[k]->element_count() != n) {
      return ctx.Unsupported(inst, "offsets and sizes with other than one entry per participant");
    }
  }
  if (RunRecord* record = ctx.record()) {
    // The sizes are checked against the arrays when the participants meet;
    // a bad one fails the run, and its record with it.
    std::vector<int64_t> sizes(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) sizes[static_cast<size_t>(i)] = IntAt(*ops[3], i);
    record->ragged_send_sizes[&inst].Append(std::move(sizes));
  }
  return Meet(ctx, inst, participants, ops, [&](const Contributions& c) -> StatusOr<Results> {
    Results results;
    for (int64_t i = 0; i < n; ++i) {
      Literal out = *c[i][1];
      const int64_t out_rows = out.shape().dimensions(0);
      for (int64_t j = 0; j < n; ++j) {
        const Literal& in = *c[j][0];
        const int64_t in_start = IntAt(*c[j][2], i), rows = IntAt(*c[j][3], i);
        const int64_t out_start = IntAt(*c[j][4], i);
        if (rows < 0 || in_start < 0 || in_start > in.shape().dimensions(0) - rows ||
            out_start < 0 || out_start > out_rows - rows) {
          return ctx.Error(inst, StatusCode::kInvalidArgument,
                           "device " + std::to_string(participants[j]) + " sends rows [" +
                               std::to_string(in_start) + ", +" + std::to_string(rows) +
                               ") to row " + std::to_string(out_start) + " of device " +
                               std::to_string(participants[i]) + ", outside the arrays");
        }
        CopyAlongDim(in, in_start, out, out_start, 0, rows);
      }
      results.push_back(std::move(out));
    }
    return results;
  });
}

/// Every participant receives the operand of the first one in its group.
StatusOr<Literal> CollectiveBroadcast(EvalContext& ctx, const HloInstruction& inst,
                                      HloOpcode opcode, const Shape& result_shape, Operands ops) {
  TPUSIM_RETURN_IF_ERROR(CheckResultsHaveOperandShapes(ctx, inst, result_shape, ops));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> participants,
                          GroupParticipants(ctx.module(), inst, opcode, ctx.hub().config(),
                                            ThisDevice(ctx)));
  return Meet(ctx, inst, participants, ops, [&](const Contributions& c) -> StatusOr<Results> {
    std::vector<Literal> parts;
    for (const Literal* operand : c[0]) parts.push_back(*operand);
    Results results;
    results.push_back(Pack(std::move(parts), result_shape));
    return results;
  });
}

/// True for the in-place form (input, output, input offsets, output offsets),
/// which slice_sizes marks.
bool IsInPlacePermute(const HloInstruction& inst) {
  return inst.FindUnknownAttribute("slice_sizes") != nullptr ||
         inst.FindAttribute(AttrId::kSliceSizes) != nullptr;
}

/// Device ids of point-to-point pairs, checked against the peer domain.
Status CheckPairs(EvalContext& ctx, const HloInstruction& inst,
                  const std::vector<std::pair<int64_t, int64_t>>& pairs, const PeerDomain& domain) {
  const int64_t size = static_cast<int64_t>(domain.devices.size());
  std::vector<bool> is_source(size, false), is_target(size, false);
  for (const auto& [source, target] : pairs) {
    if (source < 0 || source >= size || target < 0 || target >= size) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "pair {" + std::to_string(source) + "," + std::to_string(target) +
                           "} names an id outside the program's " + std::to_string(size) +
                           " peers (SpmdConfig)");
    }
    if (is_source[source] || is_target[target]) {
      // XLA's in-place form may send several slices to several peers.
      if (IsInPlacePermute(inst))
        return ctx.Unsupported(
            inst,
            "the evaluator does not run an in-place permute whose pairs repeat an id "
            "(slices sent to several peers)");
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "an id is the source (or the target) of two pairs");
    }
    is_source[source] = is_target[target] = true;
  }
  return Status::Ok();
}

/// The source-target pairs of a point-to-point collective (indices into the
/// domain's devices) and the domain they are drawn from.
struct PeerPairs {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  PeerDomain domain;
};

/// The pairs of a collective-permute, checked against its peer domain.
StatusOr<PeerPairs> PermutePairs(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode) {
  StatusOr<GroupMode> mode = GroupModeOf(inst, opcode);
  if (!mode.ok()) return ctx.Error(inst, StatusCode::kInvalidArgument, mode.status().message());
  PeerDomain domain = PeerDomainOf(*mode, ctx.hub().config(), ThisDevice(ctx));
  const auto* pairs_attr =
      inst.GetAttr<std::vector<std::pair<int64_t, int64_t>>>(AttrId::kSourceTargetPairs);
  std::vector<std::pair<int64_t, int64_t>> pairs =
      pairs_attr ? *pairs_attr : std::vector<std::pair<int64_t, int64_t>>{};
  TPUSIM_RETURN_IF_ERROR(CheckPairs(ctx, inst, pairs, domain));
  return PeerPairs{std::move(pairs), std::move(domain)};
}

/// The in-place form's `slice_sizes={{a,b,c},...}`: one size list per slice.
/// The parser keeps the list of lists as raw text (a plain `{a,b,c}` parses as
/// one list: one slice).
StatusOr<std::vector<std::vector<int64_t>>> SliceSizes(EvalContext& ctx,
                                                       const HloInstruction& inst) {
  if (const auto* one = inst.GetAttr<std::vector<int64_t>>(AttrId::kSliceSizes)) {
    return std::vector<std::vector<int64_t>>{*one};
  }
  const hlo::Attribute* raw = inst.FindUnknownAttribute("slice_sizes");
  const std::string* text = raw ? std::get_if<std::string>(&raw->value) : nullptr;
  const auto bad = [&](const std::string& why) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "slice_sizes must be {{a,b,...},...} (" + why + ")");
  };
  if (text == nullptr) return bad("not list text");
  std::vector<std::vector<int64_t>> slices;
  size_t i = 0;
  const auto skip_space = [&] {
    while (i < text->size() && ((*text)[i] == ' ' || (*text)[i] == '\n')) ++i;
  };
  const auto expect = [&](char c) {
    skip_space();
    if (i >= text->size() || (*text)[i] != c) return false;
    ++i;
    return true;
  };
  if (!expect('{')) return bad("no opening brace");
  skip_space();
  while (i < text->size() && (*text)[i] == '{') {
    ++i;
    std::vector<int64_t> sizes;
    skip_space();
    while (i < text->size() && (*text)[i] != '}') {
      skip_space();
      const size_t begin = i;
      int64_t value = 0;
      while (i < text->size() && (*text)[i] >= '0' && (*text)[i] <= '9') {
        if (value > (INT64_MAX - 9) / 10) return bad("a size is too large");
        value = value * 10 + ((*text)[i++] - '0');
      }
      if (i == begin) return bad("a size is not a non-negative integer");
      sizes.push_back(value);
      skip_space();
      if (i < text->size() && (*text)[i] == ',') {
        ++i;
        skip_space();
        if (i < text->size() && (*text)[i] == '}') return bad("a trailing comma");
      }
    }
    if (!expect('}')) return bad("an unclosed inner list");
    slices.push_back(std::move(sizes));
    skip_space();
    if (i < text->size() && (*text)[i] == ',') ++i;
    skip_space();
  }
  if (!expect('}')) return bad("an unclosed list or text that is not a list");
  skip_space();
  if (i != text->size() || slices.empty()) return bad("no slices, or text after the list");
  return slices;
}

/// The start offsets of every slice from an offsets operand: a tuple of
/// integer scalars (one slice) or a tuple of such tuples (one per slice).
StatusOr<std::vector<std::vector<int64_t>>> SliceOffsets(EvalContext& ctx,
                                                         const HloInstruction& inst,
                                                         const Literal& offsets, size_t slices) {
  const auto scalars = [](const Literal& t, std::vector<int64_t>& out) {
    if (!t.shape().IsTuple()) return false;
    for (int64_t k = 0; k < t.tuple_size(); ++k) {
      const Literal& e = t.tuple_element(k);
      if (!e.shape().IsArray() || e.element_count() != 1 ||
          !hlo::IsInteger(e.element_type())) {
        return false;
      }
      out.push_back(ScalarAsInt64(e));
    }
    return true;
  };
  std::vector<std::vector<int64_t>> result;
  if (offsets.shape().IsTuple() && offsets.tuple_size() > 0 &&
      offsets.tuple_element(0).shape().IsTuple()) {
    for (int64_t s = 0; s < offsets.tuple_size(); ++s) {
      result.emplace_back();
      if (!scalars(offsets.tuple_element(s), result.back())) result.clear();
      if (result.empty()) break;
    }
  } else {
    result.emplace_back();
    if (!scalars(offsets, result.back())) result.clear();
  }
  if (result.size() != slices) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "offsets must be a tuple of integer scalars (a tuple of such tuples for "
                     "several slices), one per slice of slice_sizes");
  }
  return result;
}

/// The in-place form: each target's result is its own `output` operand with,
/// for each slice, the source's `input` slice at the source's input offsets
/// written at the target's output offsets; a device that is no target keeps
/// its `output`. Offsets are clamped into the arrays, as dynamic-slice's.
StatusOr<Literal> InPlacePermute(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode,
                                 const Shape& result_shape, Operands ops) {
  if (ops.size() == 4 && (ops[0]->shape().IsTuple() || ops[1]->shape().IsTuple()))
    return ctx.Unsupported(inst,
                           "the evaluator does not run the in-place form over tuples of buffers");
  if (ops.size() != 4 || !ops[0]->shape().IsArray() || !ops[1]->shape().IsArray() ||
      ops[0]->element_type() != ops[1]->element_type() ||
      ops[0]->shape().rank() != ops[1]->shape().rank() ||
      !ops[1]->shape().Compatible(result_shape)) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "the in-place form needs (input, output, input offsets, output offsets) "
                     "with arrays of one element type and rank, and result = output's shape");
  }
  TPUSIM_ASSIGN_OR_RETURN(auto sizes, SliceSizes(ctx, inst));
  // This device's offsets are checked here, so the exchange (which reads
  // every participant's) only meets well-formed ones.
  TPUSIM_ASSIGN_OR_RETURN(auto in_starts, SliceOffsets(ctx, inst, *ops[2], sizes.size()));
  TPUSIM_ASSIGN_OR_RETURN(auto out_starts, SliceOffsets(ctx, inst, *ops[3], sizes.size()));
  const Shape& in_shape = ops[0]->shape();
  const Shape& out_shape = ops[1]->shape();
  for (size_t s = 0; s < sizes.size(); ++s) {
    if (static_cast<int64_t>(sizes[s].size()) != in_shape.rank() ||
        static_cast<int64_t>(in_starts[s].size()) != in_shape.rank() ||
        static_cast<int64_t>(out_starts[s].size()) != in_shape.rank()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "slice " + std::to_string(s) +
                           ": slice_sizes and offsets need one entry per dimension");
    }
    for (int64_t d = 0; d < in_shape.rank(); ++d) {
      if (sizes[s][d] > in_shape.dimensions(d) || sizes[s][d] > out_shape.dimensions(d)) {
        return ctx.Error(inst, StatusCode::kInvalidArgument,
                         "slice " + std::to_string(s) + " is larger than input or output");
      }
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(auto p2p, PermutePairs(ctx, inst, opcode));
  // Every participant contributes its input, output and input offsets (each
  // device's offsets are its own values); the target's output offsets are
  // read from its own contribution too.
  return Meet(ctx, inst, p2p.domain.devices, ops, [&](const Contributions& c) -> StatusOr<Results> {
    Results results;
    for (size_t target = 0; target < c.size(); ++target) {
      Literal out = *c[target][1];
      const auto pair = std::find_if(p2p.pairs.begin(), p2p.pairs.end(), [&](const auto& p) {
        return p.second == static_cast<int64_t>(target);
      });
      if (pair != p2p.pairs.end()) {
        const std::vector<const Literal*>& source = c[pair->first];
        const std::vector<const Literal*>& self = c[target];
        TPUSIM_ASSIGN_OR_RETURN(auto src_starts, SliceOffsets(ctx, inst, *source[2], sizes.size()));
        TPUSIM_ASSIGN_OR_RETURN(auto dst_starts, SliceOffsets(ctx, inst, *self[3], sizes.size()));
        for (size_t s = 0; s < sizes.size(); ++s) {
          for (size_t d = 0; d < sizes[s].size(); ++d) {
            src_starts[s][d] = std::clamp<int64_t>(src_starts[s][d], 0,
                                                   in_shape.dimensions(d) - sizes[s][d]);
            dst_starts[s][d] = std::clamp<int64_t>(dst_starts[s][d], 0,
                                                   out_shape.dimensions(d) - sizes[s][d]);
          }
          CopyBox(*source[0], src_starts[s], out, dst_starts[s], sizes[s]);
        }
      }
      results.push_back(std::move(out));
    }
    return results;
  });
}

/// Each target receives its source's operands; a device that is no target
/// receives zeros.
StatusOr<Literal> CollectivePermute(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode,
                                    const Shape& result_shape, Operands ops) {
  if (IsInPlacePermute(inst)) return InPlacePermute(ctx, inst, opcode, result_shape, ops);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Shape> shapes, PerOperandShapes(ctx, inst, result_shape, ops));
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k]->shape().Compatible(shapes[k])) {
      return ctx.Unsupported(inst, "forms other than result = operand shape (in-place slices)");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(auto p2p, PermutePairs(ctx, inst, opcode));
  return Meet(ctx, inst, p2p.domain.devices, ops, [&](const Contributions& c) -> StatusOr<Results> {
    Results results;
    for (size_t target = 0; target < c.size(); ++target) {
      std::vector<Literal> parts;
      const auto pair = std::find_if(p2p.pairs.begin(), p2p.pairs.end(), [&](const auto& p) {
        return p.second == static_cast<int64_t>(target);
      });
      for (size_t k = 0; k < ops.size(); ++k) {
        if (pair != p2p.pairs.end()) {
          parts.push_back(*c[pair->first][k]);
        } else {
          TPUSIM_ASSIGN_OR_RETURN(Literal zeros, ctx.NewValue(inst, shapes[k]));
          parts.push_back(std::move(zeros));
        }
      }
      results.push_back(Pack(std::move(parts), result_shape));
    }
    return results;
  });
}

/// The channel send and recv meet on: channel_id, or -1 when absent.
int64_t Channel(const HloInstruction& inst) {
  return inst.int_attr(AttrId::kChannelId).value_or(-1);
}

/// The pairs and the peer domain of a send or recv.
StatusOr<PeerPairs> PointToPoint(EvalContext& ctx, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(auto pairs, SendRecvPairs(ctx.module(), inst));
  if (!pairs) {
    return ctx.Unsupported(inst,
                           "send/recv without the frontend attribute "
                           "_xla_send_recv_source_target_pairs (the peer is unknown)");
  }
  StatusOr<GroupMode> mode = GroupModeOf(inst, inst.opcode());
  if (!mode.ok()) return ctx.Error(inst, StatusCode::kInvalidArgument, mode.status().message());
  PeerDomain domain = PeerDomainOf(*mode, ctx.hub().config(), ThisDevice(ctx));
  TPUSIM_RETURN_IF_ERROR(CheckPairs(ctx, inst, *pairs, domain));
  return PeerPairs{std::move(*pairs), std::move(domain)};
}

/// send: (data, context, token). Posts the data to every target of this
/// device. A host transfer posts nothing (the host is not simulated) and
/// leaves the buffer element zero-filled in its declared shape: real dumps
/// declare a host buffer type that may differ from the data's (s32 for bf16
/// data), and nothing reads a send's buffer element.
StatusOr<Literal> Send(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (inst.bool_attr(AttrId::kIsHostTransfer)) return out;
  TPUSIM_RETURN_IF_ERROR(SetAsyncElement(ctx, inst, out, 0, *ops[0]));
  TPUSIM_ASSIGN_OR_RETURN(auto p2p, PointToPoint(ctx, inst));
  for (const auto& [source, target] : p2p.pairs) {
    if (source == p2p.domain.self) {
      ctx.hub().Send(Channel(inst), ThisDevice(ctx), p2p.domain.devices[target], *ops[0]);
    }
  }
  return out;
}

/// recv: (data, context, token). Reserves the message from this device's
/// source; the context holds the reservation's ticket, for recv-done.
StatusOr<Literal> Recv(EvalContext& ctx, const HloInstruction& inst) {
  if (inst.bool_attr(AttrId::kIsHostTransfer)) {
    return ctx.Unsupported(inst, "a receive from the host (no host is simulated)");
  }
  TPUSIM_ASSIGN_OR_RETURN(auto p2p, PointToPoint(ctx, inst));
  int64_t source = -1;
  for (const auto& [s, t] : p2p.pairs) {
    if (t == p2p.domain.self) source = p2p.domain.devices[s];
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t ticket,
                          ctx.hub().PostReceive(inst, Channel(inst), source, ThisDevice(ctx)));
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  TPUSIM_RETURN_IF_ERROR(
      SetAsyncElement(ctx, inst, out, 1, Literal::CreateR0<uint32_t>(static_cast<uint32_t>(ticket))));
  return out;
}

/// recv-done: (data, token); blocks until the data arrives (zeros when this
/// device is no target).
StatusOr<Literal> RecvDone(EvalContext& ctx, const HloInstruction& inst, const Literal& started) {
  if (!started.shape().IsTuple() || started.tuple_size() < 2 ||
      !started.tuple_element(1).shape().IsArray() ||
      started.tuple_element(1).element_type() != hlo::PrimitiveType::kU32 ||
      started.tuple_element(1).element_count() != 1) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "operand must be the tuple a recv produced");
  }
  const int64_t ticket = started.tuple_element(1).data<uint32_t>()[0];
  TPUSIM_ASSIGN_OR_RETURN(std::optional<Literal> data,
                          ctx.hub().CompleteReceive(inst, ThisDevice(ctx), ticket));
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (data) TPUSIM_RETURN_IF_ERROR(SetAsyncElement(ctx, inst, out, 0, std::move(*data)));
  return out;
}

/// all-gather-start and collective-permute-start: (operand(s), result,
/// contexts...), the result at element 1.
StatusOr<Literal> StartTuple(EvalContext& ctx, const HloInstruction& inst, HloOpcode wrapped,
                             Operands ops) {
  if (!inst.shape().IsTuple() || inst.shape().tuple_size() < 2) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "result must be a tuple (operand, result, ...)");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result,
                          EvalCollectiveAs(ctx, inst, wrapped, inst.shape().tuple_shapes(1), ops));
  // The in-place permute's element 0 is its input alone (not the offsets).
  std::vector<Literal> operands;
  for (const Literal* operand : ops) operands.push_back(*operand);
  if (IsInPlacePermute(inst)) operands.resize(1);
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  TPUSIM_RETURN_IF_ERROR(
      SetAsyncElement(ctx, inst, out, 0, Pack(std::move(operands), inst.shape().tuple_shapes(0))));
  TPUSIM_RETURN_IF_ERROR(SetAsyncElement(ctx, inst, out, 1, std::move(result)));
  return out;
}

}  // namespace

StatusOr<Literal> EvalCollectiveAs(EvalContext& ctx, const HloInstruction& inst, HloOpcode opcode,
                                   const Shape& result_shape, Operands ops) {
  switch (hlo::CollectiveKindOf(opcode)) {
    case hlo::CollectiveKind::kAllReduce:
      return AllReduce(ctx, inst, opcode, result_shape, ops);
    case hlo::CollectiveKind::kAllGather:
      return AllGather(ctx, inst, opcode, result_shape, ops);
    case hlo::CollectiveKind::kReduceScatter:
      return ReduceScatter(ctx, inst, opcode, result_shape, ops);
    case hlo::CollectiveKind::kAllToAll:
      return AllToAll(ctx, inst, opcode, result_shape, ops);
    case hlo::CollectiveKind::kRaggedAllToAll:
      return RaggedAllToAll(ctx, inst, opcode, result_shape, ops);
    case hlo::CollectiveKind::kCollectiveBroadcast:
      return CollectiveBroadcast(ctx, inst, opcode, result_shape, ops);
    case hlo::CollectiveKind::kCollectivePermute:
      return CollectivePermute(ctx, inst, opcode, result_shape, ops);
    // Send and recv pair through their channels, not as the op an async-start wraps.
    case hlo::CollectiveKind::kSendRecv:
    case hlo::CollectiveKind::kNone:
      break;
  }
  return ctx.Unsupported(inst, "an asynchronous " + std::string(hlo::HloOpcodeName(opcode)) +
                                   " (not a collective the evaluator implements)");
}

StatusOr<Literal> EvalCollective(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const HloOpcode op = inst.opcode();
  switch (hlo::OpRoleOf(op)) {
    case hlo::OpRole::kCompute:  // a collective run to completion
      return EvalCollectiveAs(ctx, inst, op, inst.shape(), ops);
    case hlo::OpRole::kAsyncStart:
      if (op == HloOpcode::kSend) return Send(ctx, inst, ops);
      if (op == HloOpcode::kRecv) return Recv(ctx, inst);
      // all-reduce-start's value is the reduced value; the other starts give
      // (operands, result).
      if (op == HloOpcode::kAllReduceStart) {
        return EvalCollectiveAs(ctx, inst, op, inst.shape(), ops);
      }
      return StartTuple(ctx, inst, op, ops);
    case hlo::OpRole::kAsyncDone:
      if (op == HloOpcode::kSendDone) return Literal::CreateToken();
      if (op == HloOpcode::kRecvDone) return RecvDone(ctx, inst, *ops[0]);
      if (op == HloOpcode::kAllReduceDone) return *ops[0];
      return AsyncElement(ctx, inst, *ops[0], 1);
    case hlo::OpRole::kBookkeeping:
    case hlo::OpRole::kControlFlow:
    case hlo::OpRole::kHostTransfer:
    case hlo::OpRole::kAsyncUpdate:
      break;
  }
  return ctx.Error(inst, StatusCode::kInternal, "not a collective opcode");
}

}  // namespace tpusim::eval
