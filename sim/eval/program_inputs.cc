#include "sim/eval/program_inputs.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/eval/evaluator.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/instruction.h"
#include "sim/hlo/primitive_type.h"
#include "sim/value/element_type.h"
#include "sim/value/random.h"

namespace tpusim::eval {
namespace {

using hlo::AttrId;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using value::Literal;

/// Where, inside the value an instruction produces, the tracked leaf sits:
/// the tuple indices from the outside in (empty: the value is the leaf).
using LeafPath = std::vector<int64_t>;

std::vector<int64_t> IntListAttr(const HloInstruction& inst, AttrId id) {
  const auto* v = inst.GetAttr<std::vector<int64_t>>(id);
  return v != nullptr ? *v : std::vector<int64_t>{};
}

/// The computation a control-flow or call-like instruction passes operand
/// `operand_index` to as parameter `parameter_number`, for each callee;
/// nullopt for an instruction that passes its operands to no callee.
std::optional<std::vector<std::pair<const HloComputation*, int64_t>>> Callees(
    const HloInstruction& inst, int64_t operand_index) {
  const HloOpcode op = inst.opcode();
  std::vector<std::pair<const HloComputation*, int64_t>> callees;
  if (op == HloOpcode::kFusion || op == HloOpcode::kCall || op == HloOpcode::kAsyncStart) {
    for (const HloComputation* c : inst.called_computations()) {
      callees.emplace_back(c, operand_index);
    }
  } else if (op == HloOpcode::kWhile) {
    // condition and body both take the loop state as parameter 0.
    for (const HloComputation* c : inst.called_computations()) callees.emplace_back(c, 0);
  } else if (op == HloOpcode::kConditional) {
    // Operand 0 picks the branch; operand i + 1 is branch i's argument.
    const std::vector<HloComputation*> branches = inst.called_computations();
    if (operand_index >= 1 && operand_index - 1 < static_cast<int64_t>(branches.size())) {
      callees.emplace_back(branches[operand_index - 1], 0);
    }
  } else {
    return std::nullopt;
  }
  return callees;
}

/// Ops whose result holds the indices of operand 0 unchanged (as far as a
/// bound on them goes).
bool KeepsIndexValues(HloOpcode op) {
  return op == HloOpcode::kBitcast || op == HloOpcode::kBroadcast || op == HloOpcode::kConvert ||
         op == HloOpcode::kCopy || op == HloOpcode::kReshape || op == HloOpcode::kSlice ||
         op == HloOpcode::kTranspose;
}

/// An offsets or sizes operand of a ragged-all-to-all (operands 2 to 5).
struct RaggedOperand {
  const HloInstruction* collective = nullptr;
  int64_t operand_index = 0;
};

/// Finds every index operand an integer leaf reaches and the largest start
/// index each allows (`bound` ends as the smallest of them), and the first
/// ragged-all-to-all offsets or sizes operand, and the first ragged-dot's
/// group sizes, it reaches.
class IndexUseFinder {
 public:
  std::optional<int64_t> bound() const { return bound_; }
  std::optional<RaggedOperand> ragged() const { return ragged_; }
  /// When the leaf is the group sizes of a ragged-dot (the first it
  /// reaches), the rows its values split: the size of the ragged dimension.
  std::optional<int64_t> grouped_rows() const { return grouped_rows_; }

  void Visit(const HloInstruction& value, const LeafPath& path) {
    if (!visited_.emplace(&value, path).second) return;  // while loops feed back
    for (const HloInstruction* user : value.users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == &value) VisitUse(*user, i, path);
      }
    }
  }

 private:
  void VisitUse(const HloInstruction& user, int64_t operand_index, const LeafPath& path) {
    const HloOpcode op = user.opcode();
    if (op == HloOpcode::kTuple) {
      LeafPath inner{operand_index};
      inner.insert(inner.end(), path.begin(), path.end());
      Visit(user, inner);
      return;
    }
    if (op == HloOpcode::kGetTupleElement) {
      if (!path.empty() && user.int_attr(AttrId::kIndex) == path.front()) {
        Visit(user, LeafPath(path.begin() + 1, path.end()));
      }
      return;
    }
    if (const auto callees = Callees(user, operand_index)) {
      for (const auto& [callee, number] : *callees) {
        if (number < static_cast<int64_t>(callee->parameters().size())) {
          Visit(*callee->parameters()[number], path);
        }
      }
      return;
    }
    if (!path.empty()) return;
    if (KeepsIndexValues(op)) {
      Visit(user, path);
    } else if (op == HloOpcode::kDynamicSlice && operand_index >= 1) {
      const std::vector<int64_t> sizes = IntListAttr(user, AttrId::kDynamicSliceSizes);
      DimensionBound(user.operand(0)->shape(), operand_index - 1,
                     operand_index - 1 < static_cast<int64_t>(sizes.size())
                         ? sizes[operand_index - 1]
                         : 1);
    } else if (op == HloOpcode::kDynamicUpdateSlice && operand_index >= 2) {
      const hlo::Shape& update = user.operand(1)->shape();
      const int64_t dim = operand_index - 2;
      DimensionBound(user.operand(0)->shape(), dim,
                     update.IsArray() && dim < update.rank() ? update.dimensions()[dim] : 1);
    } else if (op == HloOpcode::kGather && operand_index == 1) {
      const std::vector<int64_t> sizes = IntListAttr(user, AttrId::kSliceSizes);
      for (int64_t dim : IntListAttr(user, AttrId::kStartIndexMap)) {
        DimensionBound(user.operand(0)->shape(), dim,
                       dim < static_cast<int64_t>(sizes.size()) ? sizes[dim] : 1);
      }
    } else if (op == HloOpcode::kSetDimensionSize && operand_index == 1) {
      // A size, 0 up to the dimension's bound.
      const std::span<const int64_t> dims = user.dimensions();
      if (dims.size() == 1) DimensionBound(user.operand(0)->shape(), dims[0], 0);
    } else if (op == HloOpcode::kRaggedDot && operand_index == 2 && !grouped_rows_.has_value()) {
      const std::vector<int64_t> ragged = IntListAttr(user, AttrId::kLhsRaggedDims);
      const hlo::Shape& lhs = user.operand(0)->shape();
      if (ragged.size() == 1 && lhs.IsArray() && ragged[0] >= 0 && ragged[0] < lhs.rank()) {
        grouped_rows_ = lhs.dimensions()[ragged[0]];
      }
    } else if (op == HloOpcode::kRaggedAllToAll && operand_index >= 2 && !ragged_.has_value()) {
      ragged_ = RaggedOperand{&user, operand_index};
    } else if (op == HloOpcode::kScatter && operand_index == (user.operand_count() - 1) / 2) {
      // Operands: N targets, the indices, N updates. A scattered window is
      // at least one element along each mapped dimension.
      for (int64_t dim : IntListAttr(user, AttrId::kScatterDimsToOperandDims)) {
        DimensionBound(user.operand(0)->shape(), dim, 1);
      }
    }
  }

  /// A start index into dimension `dim` of `shape` for a slice `size` long.
  void DimensionBound(const hlo::Shape& shape, int64_t dim, int64_t size) {
    if (!shape.IsArray() || dim < 0 || dim >= shape.rank()) return;
    Bound(std::max<int64_t>(0, shape.dimensions()[dim] - size));
  }

  /// The leaf's values must not exceed `largest`.
  void Bound(int64_t largest) {
    bound_ = bound_.has_value() ? std::min(*bound_, largest) : largest;
  }

  std::optional<int64_t> bound_;
  std::optional<RaggedOperand> ragged_;
  std::optional<int64_t> grouped_rows_;
  std::set<std::pair<const HloInstruction*, LeafPath>> visited_;
};

/// The inclusive range seeded integers of `type` are drawn from.
std::pair<int64_t, int64_t> IntegerRange(PrimitiveType type) {
  const bool is_signed = hlo::IsSignedInt(type);
  const int bits = hlo::PrimitiveTypeBitWidth(type);
  if (is_signed) {
    const int64_t lo = bits >= 5 ? -8 : -(int64_t{1} << (bits - 1));
    const int64_t hi = bits >= 5 ? 8 : (int64_t{1} << (bits - 1)) - 1;
    return {lo, hi};
  }
  return {0, bits >= 5 ? 16 : (int64_t{1} << bits) - 1};
}

/// Fills one array leaf from `random`.
void FillLeaf(Literal& leaf, value::Random& random, std::optional<int64_t> index_bound) {
  const PrimitiveType type = leaf.element_type();
  const int64_t n = leaf.element_count();
  if (type == PrimitiveType::kC64 || type == PrimitiveType::kC128) {
    value::VisitArrayType(type, [&](auto tag) {
      using T = value::NativeType<decltype(tag)::value>;
      if constexpr (std::is_same_v<T, std::complex<float>> ||
                    std::is_same_v<T, std::complex<double>>) {
        using Part = typename T::value_type;
        for (T& x : leaf.data<T>()) {
          const double re = random.Normal();
          x = T(static_cast<Part>(re), static_cast<Part>(random.Normal()));
        }
      }
    });
    return;
  }
  // Drawn a chunk at a time and stored with the element type looked up once;
  // FillNormal gives Normal()'s values faster.
  const bool is_float = type != PrimitiveType::kPred && !hlo::IsInteger(type);
  std::pair<int64_t, int64_t> range;  // of the integers drawn
  if (hlo::IsInteger(type)) {
    range =
        index_bound.has_value() ? std::pair<int64_t, int64_t>{0, *index_bound} : IntegerRange(type);
  }
  std::vector<double> chunk(static_cast<size_t>(std::min<int64_t>(n, 4096)));
  for (int64_t i = 0; i < n; i += static_cast<int64_t>(chunk.size())) {
    const int64_t count = std::min<int64_t>(n - i, static_cast<int64_t>(chunk.size()));
    const std::span<double> drawn = std::span(chunk).first(static_cast<size_t>(count));
    if (is_float) {
      random.FillNormal(drawn);
    } else if (type == PrimitiveType::kPred) {
      for (double& v : drawn) v = static_cast<double>(random.NextU32() & 1);
    } else {
      for (double& v : drawn) v = static_cast<double>(random.UniformInt(range.first, range.second));
    }
    leaf.SetFromDoubles(i, drawn);
  }
}

/// True when every device must see the same value in this leaf of a
/// parameter: a scalar (loop bounds and branch selectors must agree across
/// the devices of an SPMD program, or their collectives could not meet), or
/// a leaf whose sharding says it is replicated or lives on one device.
bool SameOnEveryDevice(const HloInstruction& parameter, const hlo::Shape& leaf,
                       int64_t leaf_in_parameter) {
  if (leaf.rank() == 0) return true;
  const hlo::Sharding* sharding = parameter.sharding();
  if (sharding != nullptr && sharding->type == hlo::Sharding::Type::kTuple) {
    sharding = leaf_in_parameter < static_cast<int64_t>(sharding->elements.size())
                   ? &sharding->elements[leaf_in_parameter]
                   : nullptr;
  }
  return sharding != nullptr && (sharding->type == hlo::Sharding::Type::kReplicated ||
                                 sharding->type == hlo::Sharding::Type::kMaximal);
}

/// What one device's seeded inputs are drawn for.
struct SeedTarget {
  const hlo::HloModule& module;
  const hlo::SpmdConfig& spmd;
  uint64_t seed;
  int64_t device;
};

/// Participant `sender` of a ragged-all-to-all sends `receiver` this many
/// rows: in [0, rows_per_pair], drawn from the seed and the pair alone, so
/// the sender's send_sizes and the receiver's recv_sizes agree.
int64_t RaggedRows(uint64_t seed, int64_t sender, int64_t receiver, int64_t rows_per_pair) {
  // Bit 63 keeps these streams apart from the per-leaf ones (device << 32 | leaf).
  const uint64_t stream = (uint64_t{1} << 63) | (static_cast<uint64_t>(sender) << 32) |
                          static_cast<uint64_t>(receiver);
  value::Random random(seed, stream);
  return random.UniformInt(0, rows_per_pair);
}

/// This device's value of a ragged-all-to-all offsets or sizes operand, made
/// consistent across the group by construction. With n participants and
/// S = min(input rows, output rows) / n, participant r sends RaggedRows(r, q)
/// rows to participant q from rows [q*S, ...) of its input, landing at rows
/// [r*S, ...) of q's output: every transfer is in bounds and no two senders
/// write the same row. Nullopt when the device is in no group or the operand
/// is not one entry per participant (the evaluator then says why).
std::optional<std::vector<int64_t>> RaggedOperandValue(const SeedTarget& target,
                                                       const RaggedOperand& use,
                                                       int64_t element_count) {
  const HloInstruction& collective = *use.collective;
  const StatusOr<std::vector<int64_t>> participants = hlo::GroupParticipants(
      target.module, collective, collective.opcode(), target.spmd, target.device);
  if (!participants.ok()) return std::nullopt;
  const int64_t n = static_cast<int64_t>(participants->size());
  const auto self = std::find(participants->begin(), participants->end(), target.device);
  const hlo::Shape& input = collective.operand(0)->shape();
  const hlo::Shape& output = collective.operand(1)->shape();
  if (n != element_count || self == participants->end() || !input.IsArray() ||
      !output.IsArray() || input.rank() == 0 || output.rank() == 0) {
    return std::nullopt;
  }
  const int64_t rank = self - participants->begin();
  const int64_t rows_per_pair = std::min(input.dimensions()[0], output.dimensions()[0]) / n;
  std::vector<int64_t> values(static_cast<size_t>(n));
  for (int64_t peer = 0; peer < n; ++peer) {
    switch (use.operand_index) {
      case 2:  // input_offsets: where this sender's rows for `peer` start
        values[peer] = peer * rows_per_pair;
        break;
      case 3:  // send_sizes
        values[peer] = RaggedRows(target.seed, rank, peer, rows_per_pair);
        break;
      case 4:  // output_offsets: where they land in `peer`'s output
        values[peer] = rank * rows_per_pair;
        break;
      default:  // recv_sizes: what `peer` sends this device
        values[peer] = RaggedRows(target.seed, peer, rank, rows_per_pair);
        break;
    }
  }
  return values;
}

/// Fills `sizes` as a ragged-dot's group sizes over a ragged dimension of
/// `rows`: each set of g sizes (its last dimension) a split of all the rows
/// at g - 1 cut points drawn uniformly, as a mixture of experts routes every
/// token to some expert, and unevenly.
void FillGroupSizes(Literal& sizes, value::Random& random, int64_t rows) {
  const int64_t n = sizes.element_count();
  const int64_t g = sizes.shape().rank() == 0 ? 1 : sizes.shape().dimensions().back();
  if (g <= 0) return;
  std::vector<int64_t> cuts(static_cast<size_t>(g));
  for (int64_t set = 0; set < n; set += g) {
    for (int64_t j = 0; j + 1 < g; ++j) cuts[j] = random.UniformInt(0, rows);
    cuts[g - 1] = rows;
    std::sort(cuts.begin(), cuts.end());
    for (int64_t j = 0; j < g; ++j) {
      sizes.SetFromDouble(set + j, static_cast<double>(cuts[j] - (j == 0 ? 0 : cuts[j - 1])));
    }
  }
}

/// Fills every array leaf of `value` (produced by `parameter` at `path`),
/// numbering leaves depth-first from `*next_leaf`; the parameter's leaves
/// start at `first_leaf`.
void FillValue(Literal& value, const HloInstruction& parameter, LeafPath& path,
               const SeedTarget& target, int64_t first_leaf, int64_t* next_leaf) {
  if (value.shape().IsTuple()) {
    for (int64_t i = 0; i < value.tuple_size(); ++i) {
      path.push_back(i);
      FillValue(value.mutable_tuple_element(i), parameter, path, target, first_leaf, next_leaf);
      path.pop_back();
    }
    return;
  }
  if (!value.shape().IsArray()) return;  // a token holds nothing
  std::optional<int64_t> index_bound, grouped_rows;
  if (hlo::IsInteger(value.element_type())) {
    IndexUseFinder finder;
    finder.Visit(parameter, path);
    index_bound = finder.bound();
    grouped_rows = finder.grouped_rows();
    if (const std::optional<RaggedOperand> ragged = finder.ragged()) {
      if (const auto values = RaggedOperandValue(target, *ragged, value.element_count())) {
        ++*next_leaf;
        for (int64_t i = 0; i < value.element_count(); ++i) {
          value.SetFromDouble(i, static_cast<double>((*values)[i]));
        }
        return;
      }
    }
  }
  // Stream: device in the upper 32 bits (device 0's for values every device
  // shares), leaf number in the lower.
  const int64_t drawn_for =
      SameOnEveryDevice(parameter, value.shape(), *next_leaf - first_leaf) ? 0 : target.device;
  const uint64_t stream =
      (static_cast<uint64_t>(drawn_for) << 32) | static_cast<uint64_t>(*next_leaf);
  ++*next_leaf;
  value::Random random(target.seed, stream);
  if (grouped_rows.has_value()) {
    FillGroupSizes(value, random, *grouped_rows);
  } else {
    FillLeaf(value, random, index_bound);
  }
}

/// FillSeeded with one stream for all leaves.
void FillLeaves(Literal& value, value::Random& random) {
  if (value.shape().IsTuple()) {
    for (int64_t i = 0; i < value.tuple_size(); ++i) {
      FillLeaves(value.mutable_tuple_element(i), random);
    }
  } else if (value.shape().IsArray()) {
    FillLeaf(value, random, std::nullopt);
  }
}

/// The first array leaf of `shape` (numbered from `*next_leaf` within
/// `parameter`, as FillValue numbers them) that each device draws for
/// itself, or nullopt.
std::optional<int64_t> FirstLeafDrawnPerDevice(const HloInstruction& parameter,
                                               const hlo::Shape& shape, int64_t* next_leaf) {
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple_shapes()) {
      if (auto leaf = FirstLeafDrawnPerDevice(parameter, element, next_leaf)) return leaf;
    }
    return std::nullopt;
  }
  if (!shape.IsArray()) return std::nullopt;
  const int64_t leaf = (*next_leaf)++;
  if (SameOnEveryDevice(parameter, shape, leaf)) return std::nullopt;
  return leaf;
}

}  // namespace

std::optional<std::string> WhySeededInputsDiffer(const hlo::HloModule& module) {
  if (module.entry() == nullptr) return std::nullopt;
  for (const HloInstruction* parameter : module.entry()->parameters()) {
    int64_t next_leaf = 0;
    if (const auto leaf = FirstLeafDrawnPerDevice(*parameter, parameter->shape(), &next_leaf)) {
      return "parameter " + parameter->name() +
             (parameter->shape().IsTuple() ? " (leaf " + std::to_string(*leaf) + ")" : "") +
             " is not replicated: each device draws its own values";
    }
  }
  return std::nullopt;
}

void FillSeeded(Literal& value, uint64_t seed, uint64_t stream) {
  value::Random random(seed, stream);
  FillLeaves(value, random);
}

StatusOr<std::vector<Literal>> SeededInputs(const hlo::HloModule& module,
                                            const hlo::SpmdConfig& spmd, uint64_t seed,
                                            int64_t device, int64_t max_bytes) {
  const HloComputation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument(module.filename() + ": module has no entry");
  std::vector<Literal> inputs;
  int64_t total_bytes = 0;
  int64_t next_leaf = 0;
  for (const HloInstruction* parameter : entry->parameters()) {
    TPUSIM_ASSIGN_OR_RETURN(const int64_t bytes, Evaluator::ValueBytes(module, *parameter));
    total_bytes += bytes;
    if (total_bytes > max_bytes) {
      return ResourceExhausted(module.ErrorAt(
          parameter->location(), "the inputs need more than the memory limit of " +
                                     std::to_string(max_bytes) + " bytes (at parameter " +
                                     parameter->name() + ")"));
    }
    TPUSIM_ASSIGN_OR_RETURN(Literal input, Literal::Create(parameter->shape(), max_bytes));
    LeafPath path;
    FillValue(input, *parameter, path, SeedTarget{module, spmd, seed, device}, next_leaf,
              &next_leaf);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

}  // namespace tpusim::eval
