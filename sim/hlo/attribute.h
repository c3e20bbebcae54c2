// Typed instruction attributes (`dimensions={0,1}`, `window={size=3x3}`, ...).
//
// An instruction keeps its attributes as a small ordered list. Known names
// (attribute.def) get a typed value; unknown names are kept verbatim so that
// printing reproduces them. Accessors on HloInstruction give typed views.
#ifndef TPUSIM_SIM_HLO_ATTRIBUTE_H_
#define TPUSIM_SIM_HLO_ATTRIBUTE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sim/hlo/shape.h"

namespace tpusim::hlo {

class HloComputation;

/// Where something was written: 1-based line and column in the module text
/// (0:0 for what no text wrote).
struct SourceLocation {
  uint32_t line = 0;
  uint32_t column = 0;
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

/// The kind of value an attribute holds; decides how it is parsed and printed.
enum class AttrKind : uint8_t {
  kInt,              ///< `channel_id=3`
  kBool,             ///< `is_stable=true`
  kFloat,            ///< `epsilon=0.001`
  kString,           ///< `custom_call_target="foo"` (stored unescaped)
  kIdent,            ///< `direction=LT`, `kind=kLoop`
  kIdentList,        ///< `operand_precision={default,highest}`
  kIntList,          ///< `dimensions={0,2}`
  kIntPairs,         ///< `source_target_pairs={{0,1},{1,0}}`
  kComputation,      ///< `to_apply=%add`
  kComputationList,  ///< `branch_computations={%a, %b}` or `calls=%f`
  kWindow,           ///< `window={size=3x3 stride=2x2 pad=0_1x0_1}`
  kDimLabels,        ///< `dim_labels=b01f_01io->b01f`
  kSliceRanges,      ///< `slice={[0:8], [2:10:2]}`
  kPadding,          ///< `padding=0_0x1_2_1`
  kReplicaGroups,    ///< `replica_groups={{0,1},{2,3}}` or `[2,4]<=[4,2]T(1,0)`
  kSharding,         ///< `sharding={devices=[2,1]0,1}`
  kKeyValues,        ///< `metadata={op_name="a" source_line=3}`, `frontend_attributes={k="v"}`
  kShape,            ///< `outfeed_shape=f32[2]`
  kShapeList,        ///< `operand_layout_constraints={f32[2]{0}, s32[]}`
  kBackendConfig,    ///< `backend_config="..."` or a JSON object, verbatim
  kRaw,              ///< any attribute tpusim does not know, verbatim
};

enum class AttrId : uint8_t {
#define V(enumerator, spelling, kind) enumerator,
#include "sim/hlo/attribute.def"
#undef V
  kUnknown,  ///< not in attribute.def; the name is kept in Attribute::name
};

/// Spelling of a known attribute ("" for kUnknown).
std::string_view AttrName(AttrId id);
AttrKind AttrKindOf(AttrId id);
/// kUnknown for names not in attribute.def.
AttrId AttrIdFromName(std::string_view name);

/// A heap-held value with value semantics, to keep the AttrValue variant small.
template <typename T>
class Box {
 public:
  Box() : p_(std::make_unique<T>()) {}
  explicit Box(T v) : p_(std::make_unique<T>(std::move(v))) {}
  Box(const Box& o) : p_(std::make_unique<T>(*o.p_)) {}
  Box& operator=(const Box& o) {
    if (this != &o) p_ = std::make_unique<T>(*o.p_);
    return *this;
  }
  Box(Box&&) noexcept = default;
  Box& operator=(Box&&) noexcept = default;
  const T& operator*() const { return *p_; }
  T& operator*() { return *p_; }
  const T* operator->() const { return p_.get(); }
  T* operator->() { return p_.get(); }
  friend bool operator==(const Box& a, const Box& b) { return *a.p_ == *b.p_; }

 private:
  std::unique_ptr<T> p_;
};

/// One dimension of a `window=` attribute. Defaults are what XLA leaves unprinted.
struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;  ///< `rhs_dilate`
  int64_t base_dilation = 1;    ///< `lhs_dilate`
  bool window_reversal = false; ///< `rhs_reversal`
  friend bool operator==(const WindowDimension&, const WindowDimension&) = default;
};

struct Window {
  std::vector<WindowDimension> dimensions;
  friend bool operator==(const Window&, const Window&) = default;
};

/// `dim_labels=b01f_01io->b01f`: which dimension of each convolution operand
/// and of the result is batch, feature and each spatial dimension.
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  friend bool operator==(const ConvolutionDimensionNumbers&,
                         const ConvolutionDimensionNumbers&) = default;
};

/// `[start:limit:stride]` of one dimension of `slice=`.
struct SliceRange {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  friend bool operator==(const SliceRange&, const SliceRange&) = default;
};

/// `lo_hi[_interior]` of one dimension of the pad op's `padding=`.
struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  friend bool operator==(const PaddingDimension&, const PaddingDimension&) = default;
};

/// `[d0,d1,...]<=[r0,r1,...]T(p...)`: iota(prod r) reshaped to r, transposed by
/// p, reshaped to d. Used by replica groups and tiled shardings.
struct IotaTileAssignment {
  std::vector<int64_t> dims;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose_perm;  ///< empty when not printed (identity)
  /// The device ids in row-major order of `dims`; empty when reshape_dims has a
  /// negative size or overflows, or transpose_perm is not a permutation of it.
  std::vector<int64_t> Expand() const;
  friend bool operator==(const IotaTileAssignment&, const IotaTileAssignment&) = default;
};

struct ReplicaGroups {
  /// Explicit groups; for the iota form, the expanded groups.
  std::vector<std::vector<int64_t>> groups;
  /// Set when the text used the iota form; printing keeps that form.
  std::optional<IotaTileAssignment> iota;
  /// Set when the text used the mesh-axes form `mesh['x'=2,'y'=2] {'y'}`
  /// (devices numbered row-major over the mesh; a group varies the listed
  /// axes, outer to inner): the form verbatim, printed back as is.
  std::string mesh_text;
  friend bool operator==(const ReplicaGroups&, const ReplicaGroups&) = default;
};

/// `sharding={...}` in any of its forms.
struct Sharding {
  enum class Type : uint8_t { kReplicated, kMaximal, kManual, kUnknown, kUnreduced, kTiled, kTuple };
  Type type = Type::kReplicated;
  /// kMaximal: `device=N`.
  int64_t device = -1;
  /// kTiled: `devices=[dims]` then either an explicit device list or an iota.
  std::vector<int64_t> tile_dims;
  std::vector<int64_t> devices;
  std::optional<IotaTileAssignment> iota;
  bool last_tile_dim_replicate = false;
  /// `last_tile_dims={manual, replicated}`.
  std::vector<std::string> last_tile_dims;
  /// `shard_as N` / `shard_like N`.
  std::optional<int64_t> shard_as;
  std::optional<int64_t> shard_like;
  /// `metadata={...}` inside a sharding, verbatim.
  std::string metadata;
  /// kTuple: one sharding per leaf.
  std::vector<Sharding> elements;
  friend bool operator==(const Sharding&, const Sharding&) = default;
};

/// One `key=value` of metadata, frontend attributes and similar dictionaries.
struct KeyValue {
  std::string key;
  std::string value;  ///< unescaped when quoted, else verbatim text
  bool quoted = true;
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

struct ComputationList {
  std::vector<HloComputation*> computations;
  /// Printed inside braces (`calls={%a}`) rather than bare (`calls=%a`).
  bool braced = true;
};

struct BackendConfig {
  std::string text;       ///< unescaped string, or the JSON object text verbatim
  bool is_string = true;  ///< `"..."` in the text rather than a bare `{...}`
  friend bool operator==(const BackendConfig&, const BackendConfig&) = default;
};

using AttrValue = std::variant<int64_t,                                    // kInt
                               bool,                                       // kBool
                               double,                                     // kFloat
                               std::string,                                // kString, kIdent, kRaw
                               std::vector<int64_t>,                       // kIntList
                               std::vector<std::string>,                   // kIdentList
                               std::vector<std::pair<int64_t, int64_t>>,   // kIntPairs
                               HloComputation*,                            // kComputation
                               ComputationList,                            // kComputationList
                               Box<Window>,                                // kWindow
                               Box<ConvolutionDimensionNumbers>,           // kDimLabels
                               std::vector<SliceRange>,                    // kSliceRanges
                               std::vector<PaddingDimension>,              // kPadding
                               Box<ReplicaGroups>,                         // kReplicaGroups
                               Box<Sharding>,                              // kSharding
                               std::vector<KeyValue>,                      // kKeyValues
                               Box<Shape>,                                 // kShape
                               std::vector<Shape>,                         // kShapeList
                               BackendConfig>;                             // kBackendConfig

struct Attribute {
  AttrId id = AttrId::kUnknown;
  /// The spelling of an unknown attribute; empty for known ones (see spelling()).
  std::string unknown_name;
  AttrValue value;
  /// Where its name was written: errors about the value point there rather
  /// than at the instruction.
  SourceLocation location;

  AttrKind kind() const { return id == AttrId::kUnknown ? AttrKind::kRaw : AttrKindOf(id); }
  std::string_view spelling() const {
    return id == AttrId::kUnknown ? std::string_view(unknown_name) : AttrName(id);
  }
};

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_ATTRIBUTE_H_
