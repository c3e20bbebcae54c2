#include "sim/hlo/dot_dimensions.h"

#include <algorithm>
#include <string>

namespace tpusim::hlo {
namespace {

bool Contains(std::span<const int64_t> dims, int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

}  // namespace

std::vector<int64_t> DotFreeDimensions(int64_t rank, std::span<const int64_t> batch,
                                       std::span<const int64_t> contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
  }
  return free;
}

StatusOr<RaggedDotDimensions> ResolveRaggedDot(
    const Shape& lhs, const Shape& rhs, const Shape& group_sizes, std::span<const int64_t> lb,
    std::span<const int64_t> lc, std::span<const int64_t> rb, std::span<const int64_t> rc,
    std::span<const int64_t> lhs_ragged, std::span<const int64_t> rhs_group) {
  if (lhs_ragged.size() != 1 || lhs_ragged[0] < 0 || lhs_ragged[0] >= lhs.rank()) {
    return InvalidArgument(
        "ragged-dot needs exactly one lhs_ragged_dims entry, a dimension of the lhs " +
        lhs.ToString(false));
  }
  if (!group_sizes.IsArray() || group_sizes.rank() < 1 || !IsInteger(group_sizes.element_type())) {
    return InvalidArgument(
        "ragged-dot's group_sizes (operand 2) must be an integer array [..., g], found " +
        group_sizes.ToString(false));
  }
  RaggedDotDimensions d;
  d.lhs_ragged = lhs_ragged[0];
  d.groups = group_sizes.dimensions(group_sizes.rank() - 1);
  d.mode = Contains(lc, d.lhs_ragged)   ? RaggedDotMode::kContracting
           : Contains(lb, d.lhs_ragged) ? RaggedDotMode::kBatch
                                        : RaggedDotMode::kNonContracting;
  if (d.mode == RaggedDotMode::kNonContracting) {
    if (rhs_group.size() != 1 || rhs_group[0] < 0 || rhs_group[0] >= rhs.rank() ||
        Contains(rb, rhs_group[0]) || Contains(rc, rhs_group[0])) {
      return InvalidArgument(
          "ragged-dot with a ragged free lhs dimension needs exactly one rhs_group_dims entry, "
          "a dimension of the rhs " +
          rhs.ToString(false) + " that is neither batch nor contracting");
    }
    d.rhs_group = rhs_group[0];
    if (rhs.dimensions(d.rhs_group) != d.groups) {
      return InvalidArgument("ragged-dot's rhs group dimension has " +
                             std::to_string(rhs.dimensions(d.rhs_group)) +
                             " groups but group_sizes " + group_sizes.ToString(false) + " has " +
                             std::to_string(d.groups));
    }
  } else if (!rhs_group.empty()) {
    return InvalidArgument(
        "ragged-dot takes rhs_group_dims only when the lhs ragged dimension is a free one");
  }
  std::vector<int64_t> rhs_not_free(rc.begin(), rc.end());
  if (d.rhs_group >= 0) rhs_not_free.push_back(d.rhs_group);
  d.rhs_free = DotFreeDimensions(rhs.rank(), rb, rhs_not_free);

  // The lhs dimensions that select a row of group_sizes.
  std::vector<int64_t> indexing;
  if (d.mode != RaggedDotMode::kBatch) indexing.assign(lb.begin(), lb.end());
  const std::span<const int64_t> outer_kind = d.mode == RaggedDotMode::kContracting ? lc
                                              : d.mode == RaggedDotMode::kBatch
                                                  ? lb
                                                  : std::span<const int64_t>();
  for (int64_t dim = 0; dim < d.lhs_ragged; ++dim) {
    const bool outer = d.mode == RaggedDotMode::kNonContracting
                           ? !Contains(lb, dim) && !Contains(lc, dim)
                           : Contains(outer_kind, dim);
    if (outer) indexing.push_back(dim);
  }
  if (group_sizes.rank() > 1) {
    bool agree = group_sizes.rank() == static_cast<int64_t>(indexing.size()) + 1;
    // (A batch dimension out of range is the dot checks' to report.)
    const auto in_lhs = [&](int64_t dim) { return dim >= 0 && dim < lhs.rank(); };
    for (size_t i = 0; agree && i < indexing.size(); ++i) {
      agree = in_lhs(indexing[i]) &&
              group_sizes.dimensions(static_cast<int64_t>(i)) == lhs.dimensions(indexing[i]);
    }
    if (!agree) {
      std::string expected = "[";
      for (int64_t dim : indexing) {
        expected += (in_lhs(dim) ? std::to_string(lhs.dimensions(dim)) : "?") + ",";
      }
      expected += "g]";
      return InvalidArgument("ragged-dot's group_sizes " + group_sizes.ToString(false) +
                             " must be [g] or " + expected +
                             " (the lhs batch dimensions, then those of the ragged one's kind "
                             "before it)");
    }
    d.group_sizes_lhs_dims = std::move(indexing);
  }
  return d;
}

StatusOr<RaggedDotDimensions> ResolveRaggedDot(const HloInstruction& ragged_dot) {
  const auto list = [&](AttrId id) -> std::span<const int64_t> {
    const auto* v = ragged_dot.GetAttr<std::vector<int64_t>>(id);
    return v ? std::span<const int64_t>(*v) : std::span<const int64_t>();
  };
  if (ragged_dot.operand_count() != 3) {
    return InvalidArgument("ragged-dot takes 3 operands (lhs, rhs, group_sizes)");
  }
  return ResolveRaggedDot(ragged_dot.operand(0)->shape(), ragged_dot.operand(1)->shape(),
                          ragged_dot.operand(2)->shape(), list(AttrId::kLhsBatchDims),
                          list(AttrId::kLhsContractingDims), list(AttrId::kRhsBatchDims),
                          list(AttrId::kRhsContractingDims), list(AttrId::kLhsRaggedDims),
                          list(AttrId::kRhsGroupDims));
}

}  // namespace tpusim::hlo
