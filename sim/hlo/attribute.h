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
/// The words an identifier attribute may hold, as XLA's enums spell them
/// (direction: EQ, NE, LT, LE, GT, GE); empty when any name goes (algorithm,
/// whose names are open-ended).
std::span<const std::string_view> AttrWords(AttrId id);

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
/// and of the result is batch, feature and each spatial dimension. A `?`
/// (`b0?f_?0?io->?b?0?f`, as XLA writes for custom calls) labels a dimension
/// with none of those roles: that part then has more dimensions than the
/// spatial ones plus two, and its `*_rank` says how many.
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
  /// Labels written for each part when it has a `?`; 0 when it has none (its
  /// rank is then the spatial dimensions plus two).
  int64_t input_rank = 0;
  int64_t kernel_rank = 0;
  int64_t output_rank = 0;

  int64_t InputRank() const { return input_rank > 0 ? input_rank : SpatialRank(); }
  int64_t KernelRank() const { return kernel_rank > 0 ? kernel_rank : SpatialRank(); }
  int64_t OutputRank() const { return output_rank > 0 ? output_rank : SpatialRank(); }
  /// True when some part labels a dimension `?`: a convolution cannot be
  /// computed from such labels (every operand dimension needs a role).
  bool HasUnknownDims() const { return input_rank > 0 || kernel_rank > 0 || output_rank > 0; }
  friend bool operator==(const ConvolutionDimensionNumbers&,
                         const ConvolutionDimensionNumbers&) = default;

 private:
  int64_t SpatialRank() const { return static_cast<int64_t>(input_spatial_dimensions.size()) + 2; }
};

/// The `dim_labels` text of `dnums` (`b01f_01io->b01f`), as XLA prints it.
std::string DimLabelsText(const ConvolutionDimensionNumbers& dnums);

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

/// One axis of a named sharding's mesh in a dimension sharding or an axis
/// list: the whole axis `a`, or its sub-axis `a:(pre_size)size`, the factor
/// of `size` devices after (more major than it) factors totalling `pre_size`.
struct MeshAxisRef {
  int64_t axis = 0;      ///< index into NamedSharding::axes
  int64_t pre_size = 1;  ///< sub-axis only
  int64_t size = 0;      ///< the sub-axis's size; 0 for the whole axis
  friend bool operator==(const MeshAxisRef&, const MeshAxisRef&) = default;
};

/// The named (mesh) form of a sharding, as XLA's parser reads it:
/// `{mesh[a=2,b=4], [{a}, {b:(2)2, ?}], replicated={c}, unreduced={d}, manual={e}}`,
/// `{mesh[a=2,b=4], device_ids=(0,2,1,3,...), replicated}`, `{maximal_mesh[device_id=5]}`.
/// Axis names are written bare (`a`) or quoted (`'a'`). Kept as written so
/// that it prints back; Sharding holds the equivalent tile assignment.
struct NamedSharding {
  struct Axis {
    std::string name;
    int64_t size = 1;
    bool quoted = false;  ///< written `'name'`
    friend bool operator==(const Axis&, const Axis&) = default;
  };
  /// One array dimension: the axes splitting it, major to minor; `open` when
  /// it ends in `?` (further axes may be added by propagation).
  struct Dimension {
    std::vector<MeshAxisRef> axes;
    bool open = false;
    friend bool operator==(const Dimension&, const Dimension&) = default;
  };
  /// The whole array under one keyword: `{mesh[...], replicated}`.
  enum class Whole : uint8_t { kNone, kReplicated, kUnreduced, kManual };

  /// `maximal_mesh[device_id=N]`: the array on device N; nothing else is set.
  std::optional<int64_t> maximal_device;
  /// The mesh axes, major to minor (none for `mesh[]`).
  std::vector<Axis> axes;
  /// `device_ids=(0,2,1,3)`: the mesh's devices in row-major order of the
  /// axes; empty for the default 0, 1, 2, ...
  std::vector<int64_t> device_ids;
  /// `device_ids=([4,16]T(1,0))`: the same as an iota (dims are the axis sizes).
  std::optional<IotaTileAssignment> device_iota;
  Whole whole = Whole::kNone;
  bool dimensions_written = false;  ///< `[...]` was written (possibly `[]`)
  std::vector<Dimension> dimensions;
  std::vector<MeshAxisRef> replicated_axes;
  std::vector<MeshAxisRef> unreduced_axes;
  std::vector<MeshAxisRef> manual_axes;
  /// The reduction of the unreduced axes when not the default sum: `max` in
  /// `unreduced=max{d}`.
  std::string unreduced_kind;

  /// The mesh's devices in row-major order of its axes.
  std::vector<int64_t> MeshDevices() const;
  friend bool operator==(const NamedSharding&, const NamedSharding&) = default;
};

/// `sharding={...}` in any of its forms.
struct Sharding {
  /// kNamed: a named sharding that no tile assignment tpusim models stands for
  /// (one with unreduced axes); `named` says what it is.
  enum class Type : uint8_t {
    kReplicated,
    kMaximal,
    kManual,
    kUnknown,
    kUnreduced,
    kTiled,
    kTuple,
    kNamed
  };
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
  /// Set when the text used the named form (NamedSharding), which printing
  /// keeps. The fields above then hold its equivalent: type kReplicated,
  /// kMaximal, kManual or kUnreduced, or kTiled with the tile assignment XLA
  /// derives (each dimension split by the product of its axes, the devices
  /// in mesh order transposed so that a dimension's axes come first, then
  /// manual axes in a `last_tile_dims={manual...}` dim, then the other axes
  /// replicated), or kNamed when there is none.
  std::optional<NamedSharding> named;
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
