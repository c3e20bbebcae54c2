#include "sim/hlo/attribute.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "sim/hlo/name_lookup.h"

namespace tpusim::hlo {
namespace {

struct AttrInfo {
  std::string_view name;
  AttrKind kind;
};

constexpr std::array<AttrInfo, static_cast<size_t>(AttrId::kUnknown)> kAttrInfo = {{
#define V(enumerator, spelling, kind) {spelling, AttrKind::kind},
#include "sim/hlo/attribute.def"
#undef V
}};

constexpr std::array<std::string_view, kAttrInfo.size()> kAttrNames = [] {
  std::array<std::string_view, kAttrInfo.size()> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kAttrInfo[i].name;
  return names;
}();

/// Spelling -> id, built at compile time, so that AttrIdFromName (called for
/// every attribute the parser reads) is one hash and usually one comparison.
constexpr auto kAttrTable = internal::SpellingTable<512>::Build(kAttrNames);

}  // namespace

std::string_view AttrName(AttrId id) {
  return id == AttrId::kUnknown ? std::string_view() : kAttrInfo[static_cast<size_t>(id)].name;
}

AttrKind AttrKindOf(AttrId id) {
  return id == AttrId::kUnknown ? AttrKind::kRaw : kAttrInfo[static_cast<size_t>(id)].kind;
}

AttrId AttrIdFromName(std::string_view name) {
  const int i = kAttrTable.Find(kAttrNames, name);
  return i < 0 ? AttrId::kUnknown : static_cast<AttrId>(i);
}

std::span<const std::string_view> AttrWords(AttrId id) {
  static constexpr std::string_view kDirections[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  static constexpr std::string_view kComparisonTypes[] = {"FLOAT", "TOTALORDER", "SIGNED",
                                                          "UNSIGNED"};
  static constexpr std::string_view kFusionKinds[] = {"kLoop", "kInput", "kOutput", "kCustom"};
  static constexpr std::string_view kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  static constexpr std::string_view kDistributions[] = {"rng_uniform", "rng_normal"};
  static constexpr std::string_view kTransposes[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  static constexpr std::string_view kSchedules[] = {"SCHEDULE_NONE", "SCHEDULE_LATEST",
                                                    "SCHEDULE_EARLIEST"};
  static constexpr std::string_view kApiVersions[] = {
      "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
      "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  switch (id) {
    case AttrId::kDirection:
      return kDirections;
    case AttrId::kComparisonType:
      return kComparisonTypes;
    case AttrId::kFusionKind:
      return kFusionKinds;
    case AttrId::kFftType:
      return kFftTypes;
    case AttrId::kDistribution:
      return kDistributions;
    case AttrId::kTransposeA:
      return kTransposes;
    case AttrId::kCustomCallSchedule:
      return kSchedules;
    case AttrId::kApiVersion:
      return kApiVersions;
    default:
      return {};
  }
}

std::vector<int64_t> IotaTileAssignment::Expand() const {
  const size_t rank = reshape_dims.size();
  int64_t count = 1;
  for (int64_t d : reshape_dims) {
    if (d < 0 || (d > 0 && count > std::numeric_limits<int64_t>::max() / d)) return {};
    count *= d;
  }
  // The identity when no T(...) was written; otherwise it must permute 0..rank-1.
  std::vector<int64_t> perm = transpose_perm;
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  }
  if (perm.size() != rank) return {};
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[p]) return {};
    seen[p] = true;
  }

  // Without a real transpose the devices are simply 0, 1, 2, ...
  bool identity = true;
  for (size_t i = 0; i < rank; ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) {
    std::vector<int64_t> result(static_cast<size_t>(count));
    for (int64_t n = 0; n < count; ++n) result[static_cast<size_t>(n)] = n;
    return result;
  }

  // Row-major strides of the iota reshaped to reshape_dims.
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * reshape_dims[i];

  // Walk the transposed array (dims reshape_dims[perm[k]]) in row-major order;
  // index[k] along its dimension k is index perm[k] of the untransposed array.
  std::vector<int64_t> result;
  result.reserve(count);
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t value = 0;
    for (size_t k = 0; k < rank; ++k) value += index[k] * stride[perm[k]];
    result.push_back(value);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < reshape_dims[perm[k]]) break;
      index[k] = 0;
    }
  }
  return result;
}

std::vector<int64_t> NamedSharding::MeshDevices() const {
  if (!device_ids.empty()) return device_ids;
  if (device_iota) return device_iota->Expand();
  int64_t count = 1;
  for (const Axis& a : axes) count *= a.size;
  std::vector<int64_t> devices(static_cast<size_t>(count));
  for (int64_t n = 0; n < count; ++n) devices[static_cast<size_t>(n)] = n;
  return devices;
}

std::string DimLabelsText(const ConvolutionDimensionNumbers& d) {
  std::string out;
  // Each part as XLA prints it: its rank of '?', then each role's label at
  // its position (positions outside the rank are dropped).
  const auto labels = [&](int64_t rank, int64_t a, char a_label, int64_t b, char b_label,
                          const std::vector<int64_t>& spatial) {
    const size_t start = out.size();
    const size_t n = static_cast<size_t>(std::max<int64_t>(rank, 0));
    out.append(n, '?');
    const auto put = [&](int64_t pos, char c) {
      if (pos >= 0 && static_cast<size_t>(pos) < n) out[start + static_cast<size_t>(pos)] = c;
    };
    put(a, a_label);
    put(b, b_label);
    for (size_t i = 0; i < spatial.size(); ++i) put(spatial[i], static_cast<char>('0' + i % 10));
  };
  labels(d.InputRank(), d.input_batch_dimension, 'b', d.input_feature_dimension, 'f',
         d.input_spatial_dimensions);
  out += '_';
  labels(d.KernelRank(), d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension,
         'o', d.kernel_spatial_dimensions);
  out += "->";
  labels(d.OutputRank(), d.output_batch_dimension, 'b', d.output_feature_dimension, 'f',
         d.output_spatial_dimensions);
  return out;
}

}  // namespace tpusim::hlo
