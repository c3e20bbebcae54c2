// Shardings: `sharding={...}` in every form XLA writes (replicated, maximal,
// manual, unknown, tiled with explicit or iota devices, subgroups, shard_as
// and shard_like, tuples of them) and named (mesh) shardings, which also get
// the tile assignment they stand for.
#include <algorithm>
#include <cctype>
#include <string>

#include "sim/hlo/parser_impl.h"

namespace tpusim::hlo::internal {
namespace {

/// How many devices a named sharding's mesh may hold (as tile assignments).
constexpr int64_t kMaxMeshDevices = int64_t{1} << 24;

/// `[lo, hi)` of a mesh axis reference, as the products of the axis's sizes
/// more major than its first and past its last device step: the whole axis
/// is [1, N), the sub-axis `:(p)s` is [p, p*s).
struct AxisSpan {
  int64_t lo = 1;
  int64_t hi = 1;
};

AxisSpan SpanOf(const NamedSharding& n, const MeshAxisRef& r) {
  if (r.size == 0) return {1, n.axes[static_cast<size_t>(r.axis)].size};
  return {r.pre_size, r.pre_size * r.size};
}

std::string RefText(const NamedSharding& n, const MeshAxisRef& r) {
  std::string text = n.axes[static_cast<size_t>(r.axis)].name;
  if (r.size != 0) {
    text += ":(" + std::to_string(r.pre_size) + ")" + std::to_string(r.size);
  }
  return text;
}

/// Reads a named sharding (NamedSharding) after its opening brace, up to and
/// including the closing one: `mesh[...] ...}` or `maximal_mesh[...] ...}`.
class NamedShardingReader {
 public:
  NamedShardingReader(Lexer& lexer, Sharding& sharding)
      : lexer_(lexer), sharding_(sharding), n_(sharding.named.emplace()) {}

  Status Read() {
    const size_t mesh_loc = lexer_.Mark();
    const std::string_view kind = lexer_.ReadIdentifier();
    if (kind == "maximal_mesh") {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('[', "after 'maximal_mesh'"));
      if (!lexer_.TryConsumeWord("device_id")) {
        return lexer_.Expected("'device_id=' in maximal_mesh");
      }
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after 'device_id'"));
      const size_t dloc = lexer_.Mark();
      TPUSIM_ASSIGN_OR_RETURN(int64_t device, lexer_.ReadInt("a device id"));
      if (device < 0) return lexer_.ErrorAt(dloc, "a device id must not be negative");
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(']', "to close maximal_mesh"));
      n_.maximal_device = device;
    } else {
      TPUSIM_RETURN_IF_ERROR(ReadMesh(mesh_loc));
    }
    bool any = n_.maximal_device.has_value();
    while (true) {
      lexer_.TryConsume(',');
      if (lexer_.TryConsume('}')) break;
      const size_t loc = lexer_.Mark();
      if (n_.maximal_device && lexer_.PeekIdentifier() != "metadata") {
        return lexer_.ErrorAt(
            loc, "a maximal_mesh sharding takes only metadata=, got " + lexer_.DescribeNext());
      }
      if (lexer_.Peek() == '[') {
        if (n_.dimensions_written) return lexer_.ErrorAt(loc, "dimension shardings written twice");
        TPUSIM_RETURN_IF_ERROR(ReadDimensions());
        any = true;
        continue;
      }
      const std::string_view word = lexer_.ReadIdentifier();
      if (word == "replicated" || word == "unreduced" || word == "manual") {
        if (lexer_.TryConsume('=')) {
          std::vector<MeshAxisRef>& list = word == "replicated"  ? n_.replicated_axes
                                           : word == "unreduced" ? n_.unreduced_axes
                                                                 : n_.manual_axes;
          if (!list.empty() || (word == "unreduced" && !n_.unreduced_kind.empty())) {
            return lexer_.ErrorAt(loc, "'" + std::string(word) + "=' written twice");
          }
          if (word == "unreduced" && lexer_.Peek() != '{') {
            // The reduction the unreduced axes still need, when not a sum.
            TPUSIM_ASSIGN_OR_RETURN(
                std::string_view reduction,
                lexer_.ExpectIdentifier("a reduction or '{' after 'unreduced='"));
            n_.unreduced_kind = std::string(reduction);
          }
          TPUSIM_RETURN_IF_ERROR(ReadAxisList(list, word));
        } else {
          if (n_.whole != NamedSharding::Whole::kNone) {
            return lexer_.ErrorAt(loc,
                                  "named sharding names more than one of replicated, "
                                  "unreduced and manual");
          }
          n_.whole = word == "replicated"  ? NamedSharding::Whole::kReplicated
                     : word == "unreduced" ? NamedSharding::Whole::kUnreduced
                                           : NamedSharding::Whole::kManual;
        }
        any = true;
      } else if (word == "device_ids") {
        if (n_.dimensions_written || any) {
          return lexer_.ErrorAt(loc, "device_ids= must follow the mesh");
        }
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after 'device_ids'"));
        TPUSIM_RETURN_IF_ERROR(ReadDeviceIds(loc));
      } else if (word == "metadata") {
        if (!sharding_.metadata.empty()) return lexer_.ErrorAt(loc, "'metadata=' written twice");
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after 'metadata'"));
        TPUSIM_ASSIGN_OR_RETURN(std::string_view raw, lexer_.ReadBracedRaw("sharding metadata"));
        sharding_.metadata = std::string(raw);
      } else {
        return lexer_.ErrorAt(
            loc,
            "expected a named sharding's [dimension shardings], replicated, unreduced, "
            "manual, device_ids= or metadata= but got " +
                (word.empty() ? lexer_.DescribeNext() : Quote(word)));
      }
    }
    if (!any) {
      return lexer_.ErrorAt(mesh_loc,
                            "named sharding needs dimension shardings [...] or "
                            "replicated, unreduced or manual");
    }
    if (n_.whole != NamedSharding::Whole::kNone &&
        (n_.dimensions_written || !n_.replicated_axes.empty() || !n_.unreduced_axes.empty() ||
         !n_.manual_axes.empty() || !n_.unreduced_kind.empty())) {
      return lexer_.ErrorAt(mesh_loc,
                            "a fully replicated, unreduced or manual named sharding takes no "
                            "dimension shardings or axis lists");
    }
    return CheckAxesDisjoint();
  }

 private:
  /// A mesh axis name, bare (`a`, or an axis index `0` in a reference) or
  /// quoted (`'a.b c'`).
  StatusOr<std::string_view> ReadAxisName(bool& quoted) {
    lexer_.SkipTrivia();
    const std::string_view text = lexer_.text();
    const size_t p = lexer_.position();
    if (p < text.size() && text[p] == '\'') {
      const size_t end = text.find_first_of("'\n", p + 1);
      if (end == std::string_view::npos || text[end] != '\'') {
        return lexer_.Expected("a mesh axis name closed by a quote");
      }
      if (end == p + 1) return lexer_.ErrorAt(p, "empty mesh axis name");
      lexer_.Advance(end + 1 - p);
      quoted = true;
      return text.substr(p + 1, end - p - 1);
    }
    size_t end = p;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                 text[end] == '_' || text[end] == '.' || text[end] == '-')) {
      ++end;
    }
    if (end == p) return lexer_.Expected("a mesh axis name");
    lexer_.Advance(end - p);
    quoted = false;
    return text.substr(p, end - p);
  }

  /// `mesh[a=2,b=4]`, the word `mesh` read.
  Status ReadMesh(size_t mesh_loc) {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('[', "after 'mesh'"));
    int64_t devices = 1;
    if (!lexer_.TryConsume(']')) {
      do {
        const size_t loc = lexer_.Mark();
        NamedSharding::Axis axis;
        TPUSIM_ASSIGN_OR_RETURN(std::string_view name, ReadAxisName(axis.quoted));
        axis.name = std::string(name);
        for (const NamedSharding::Axis& a : n_.axes) {
          if (a.name == axis.name) {
            return lexer_.ErrorAt(loc, "mesh axis " + Quote(axis.name) + " named twice");
          }
        }
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after the mesh axis name"));
        const size_t sloc = lexer_.Mark();
        TPUSIM_ASSIGN_OR_RETURN(axis.size, lexer_.ReadInt("a mesh axis size"));
        if (axis.size <= 0) return lexer_.ErrorAt(sloc, "a mesh axis size must be positive");
        if (__builtin_mul_overflow(devices, axis.size, &devices) || devices > kMaxMeshDevices) {
          return lexer_.ErrorAt(mesh_loc, "mesh is implausibly large");
        }
        n_.axes.push_back(std::move(axis));
      } while (lexer_.TryConsume(','));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(']', "to close the mesh"));
    }
    devices_ = devices;
    return Status::Ok();
  }

  /// `(0,2,1,3)` or `([4,16]T(1,0))` after `device_ids=` (at `loc`).
  Status ReadDeviceIds(size_t loc) {
    if (!n_.device_ids.empty() || n_.device_iota) {
      return lexer_.ErrorAt(loc, "'device_ids=' written twice");
    }
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "to open device_ids"));
    const size_t list_loc = lexer_.Mark();
    if (lexer_.Peek() == '[') {
      IotaTileAssignment iota;
      for (const NamedSharding::Axis& a : n_.axes) iota.dims.push_back(a.size);
      TPUSIM_ASSIGN_OR_RETURN(iota.reshape_dims, ReadInts('[', ']', "the device_ids reshape dims"));
      if (lexer_.Peek() == 'T' && lexer_.PeekRaw(1) == '(') {
        lexer_.Advance(1);
        TPUSIM_ASSIGN_OR_RETURN(iota.transpose_perm,
                                ReadInts('(', ')', "the device_ids transpose"));
      }
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close device_ids"));
      int64_t count = 1;
      for (int64_t d : iota.reshape_dims) {
        if (d <= 0 || __builtin_mul_overflow(count, d, &count)) {
          return lexer_.ErrorAt(list_loc, "invalid device_ids reshape dims");
        }
      }
      if (count != devices_) {
        return lexer_.ErrorAt(list_loc, "device_ids reshape dims hold " + std::to_string(count) +
                                            " devices but the mesh has " +
                                            std::to_string(devices_));
      }
      const std::vector<int64_t> ids = iota.Expand();
      if (static_cast<int64_t>(ids.size()) != devices_) {
        return lexer_.ErrorAt(list_loc,
                              "device_ids transpose is not a permutation of the reshape dims");
      }
      // As in XLA, an iota that is the plain 0, 1, 2, ... is the default
      // device order, printed without device_ids.
      bool plain = true;
      for (size_t i = 0; i < ids.size(); ++i) plain = plain && ids[i] == static_cast<int64_t>(i);
      if (!plain) n_.device_iota = std::move(iota);
      return Status::Ok();
    }
    std::vector<int64_t> ids;
    if (lexer_.Peek() != ')') {
      do {
        TPUSIM_ASSIGN_OR_RETURN(int64_t id, lexer_.ReadInt("a device id"));
        ids.push_back(id);
        if (static_cast<int64_t>(ids.size()) > devices_) break;
      } while (lexer_.TryConsume(','));
    }
    if (static_cast<int64_t>(ids.size()) != devices_) {
      return lexer_.ErrorAt(
          list_loc,
          "device_ids lists " +
              std::string(static_cast<int64_t>(ids.size()) > devices_ ? "more than " : "") +
              std::to_string(ids.size()) + " devices but the mesh has " + std::to_string(devices_));
    }
    std::vector<bool> seen(ids.size(), false);
    for (int64_t id : ids) {
      if (id < 0 || id >= devices_ || seen[static_cast<size_t>(id)]) {
        return lexer_.ErrorAt(
            list_loc, "device_ids must be a permutation of 0.." + std::to_string(devices_ - 1));
      }
      seen[static_cast<size_t>(id)] = true;
    }
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close device_ids"));
    n_.device_ids = std::move(ids);
    return Status::Ok();
  }

  StatusOr<std::vector<int64_t>> ReadInts(char open, char close, std::string_view what) {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(open, "to open " + std::string(what)));
    std::vector<int64_t> values;
    do {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, lexer_.ReadInt("an integer in " + std::string(what)));
      values.push_back(v);
      if (values.size() > 64) return lexer_.Expected("at most 64 integers in " + std::string(what));
    } while (lexer_.TryConsume(','));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(close, "to close " + std::string(what)));
    return values;
  }

  /// `a` or `a:(pre_size)size`.
  StatusOr<MeshAxisRef> ReadRef() {
    const size_t loc = lexer_.Mark();
    bool quoted = false;
    TPUSIM_ASSIGN_OR_RETURN(std::string_view name, ReadAxisName(quoted));
    MeshAxisRef ref;
    ref.axis = -1;
    for (size_t a = 0; a < n_.axes.size(); ++a) {
      if (n_.axes[a].name == name) ref.axis = static_cast<int64_t>(a);
    }
    // XLA's parser also takes an axis by its index.
    if (ref.axis < 0 && !quoted && name.size() <= 3 &&
        std::all_of(name.begin(), name.end(), IsDigit)) {
      const int64_t index = std::stoll(std::string(name));
      if (index < static_cast<int64_t>(n_.axes.size())) ref.axis = index;
    }
    if (ref.axis < 0) {
      return lexer_.ErrorAt(loc, "mesh axis " + Quote(name) + " is not in the mesh");
    }
    const int64_t axis_size = n_.axes[static_cast<size_t>(ref.axis)].size;
    if (lexer_.TryConsume(':')) {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "to open the sub-axis pre-size"));
      TPUSIM_ASSIGN_OR_RETURN(ref.pre_size, lexer_.ReadInt("a sub-axis pre-size"));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the sub-axis pre-size"));
      TPUSIM_ASSIGN_OR_RETURN(ref.size, lexer_.ReadInt("a sub-axis size"));
      int64_t next = 0;
      if (ref.pre_size < 1 || ref.size < 2 || ref.size >= axis_size ||
          __builtin_mul_overflow(ref.pre_size, ref.size, &next) || axis_size % next != 0) {
        return lexer_.ErrorAt(
            loc, "sub-axis " + RefText(n_, ref) + " does not fit mesh axis '" +
                     n_.axes[static_cast<size_t>(ref.axis)].name + "' of size " +
                     std::to_string(axis_size) +
                     " (it needs pre-size >= 1, 1 < size < the axis size, and pre-size x size "
                     "dividing the axis size)");
      }
    }
    written_.push_back({ref, loc});
    return ref;
  }

  /// `{a, b:(2)2}` after `replicated=`, `unreduced=` or `manual=`.
  Status ReadAxisList(std::vector<MeshAxisRef>& list, std::string_view what) {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the " + std::string(what) + " axes"));
    if (lexer_.TryConsume('}')) return Status::Ok();
    do {
      TPUSIM_ASSIGN_OR_RETURN(MeshAxisRef ref, ReadRef());
      list.push_back(ref);
    } while (lexer_.TryConsume(','));
    return lexer_.Expect('}', "to close the " + std::string(what) + " axes");
  }

  /// `[{a}, {b, c:(2)2, ?}, {}]`.
  Status ReadDimensions() {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('[', "to open the dimension shardings"));
    n_.dimensions_written = true;
    if (lexer_.TryConsume(']')) return Status::Ok();
    do {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open a dimension sharding"));
      NamedSharding::Dimension dim;
      if (!lexer_.TryConsume('}')) {
        do {
          const size_t loc = lexer_.Mark();
          if (dim.open) {
            return lexer_.ErrorAt(loc, "no axis may follow '?' in a dimension sharding");
          }
          if (lexer_.TryConsume('?')) {
            dim.open = true;
            continue;
          }
          TPUSIM_ASSIGN_OR_RETURN(MeshAxisRef ref, ReadRef());
          dim.axes.push_back(ref);
        } while (lexer_.TryConsume(','));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the dimension sharding"));
      }
      n_.dimensions.push_back(std::move(dim));
      if (n_.dimensions.size() > 64) {
        return lexer_.Expected("at most 64 dimension shardings");
      }
    } while (lexer_.TryConsume(','));
    return lexer_.Expect(']', "to close the dimension shardings");
  }

  /// Every device step of a mesh axis is used by at most one reference, and
  /// the references of one axis split it into factors (each boundary divides
  /// the next), as XLA's verifier requires.
  Status CheckAxesDisjoint() {
    for (size_t i = 0; i < written_.size(); ++i) {
      const AxisSpan a = SpanOf(n_, written_[i].ref);
      for (size_t j = 0; j < i; ++j) {
        if (written_[j].ref.axis != written_[i].ref.axis) continue;
        const AxisSpan b = SpanOf(n_, written_[j].ref);
        if (a.lo < b.hi && b.lo < a.hi) {
          return lexer_.ErrorAt(written_[i].loc, "mesh axis " + RefText(n_, written_[i].ref) +
                                                     " overlaps " + RefText(n_, written_[j].ref) +
                                                     ", written before in this sharding");
        }
        const int64_t min_hi = std::min(a.hi, b.hi);
        const int64_t max_lo = std::max(a.lo, b.lo);
        if (max_lo % min_hi != 0) {
          return lexer_.ErrorAt(written_[i].loc, "sub-axes " + RefText(n_, written_[j].ref) +
                                                     " and " + RefText(n_, written_[i].ref) +
                                                     " do not split their mesh axis into factors");
        }
      }
    }
    return Status::Ok();
  }

  struct Written {
    MeshAxisRef ref;
    size_t loc;
  };
  Lexer& lexer_;
  Sharding& sharding_;
  NamedSharding& n_;
  int64_t devices_ = 1;
  std::vector<Written> written_;
};

/// The tile assignment a named sharding stands for (see Sharding::named),
/// into the other fields of `s`.
void SetEquivalentSharding(Sharding& s) {
  using Type = Sharding::Type;
  const NamedSharding& n = *s.named;
  if (n.maximal_device) {
    s.type = Type::kMaximal;
    s.device = *n.maximal_device;
    return;
  }
  switch (n.whole) {
    case NamedSharding::Whole::kReplicated:
      s.type = Type::kReplicated;
      return;
    case NamedSharding::Whole::kUnreduced:
      s.type = Type::kUnreduced;
      return;
    case NamedSharding::Whole::kManual:
      s.type = Type::kManual;
      return;
    case NamedSharding::Whole::kNone:
      break;
  }
  if (!n.unreduced_axes.empty() || !n.unreduced_kind.empty()) {
    s.type = Type::kNamed;
    return;
  }
  // Split every mesh axis into the factors its references bound, major to
  // minor; a reference is then a run of consecutive factors.
  struct Factor {
    size_t axis;
    int64_t lo;  ///< the axis's sizes more major than this factor
    int64_t size;
    int64_t stride;  ///< in the mesh's row-major device order
  };
  const size_t rank = n.axes.size();
  std::vector<int64_t> axis_stride(rank, 1);
  for (size_t a = rank; a-- > 1;) axis_stride[a - 1] = axis_stride[a] * n.axes[a].size;
  std::vector<std::vector<int64_t>> bounds(rank);
  for (size_t a = 0; a < rank; ++a) bounds[a] = {1, n.axes[a].size};
  const auto add_bounds = [&](const std::vector<MeshAxisRef>& refs) {
    for (const MeshAxisRef& r : refs) {
      const AxisSpan span = SpanOf(n, r);
      bounds[static_cast<size_t>(r.axis)].push_back(span.lo);
      bounds[static_cast<size_t>(r.axis)].push_back(span.hi);
    }
  };
  for (const NamedSharding::Dimension& d : n.dimensions) add_bounds(d.axes);
  add_bounds(n.manual_axes);
  add_bounds(n.replicated_axes);
  std::vector<Factor> factors;
  for (size_t a = 0; a < rank; ++a) {
    std::vector<int64_t>& b = bounds[a];
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    for (size_t i = 0; i + 1 < b.size(); ++i) {
      const int64_t size = b[i + 1] / b[i];
      factors.push_back({a, b[i], size, axis_stride[a] * (n.axes[a].size / b[i + 1])});
    }
  }
  std::vector<bool> used(factors.size(), false);
  std::vector<size_t> order;
  const auto take = [&](const std::vector<MeshAxisRef>& refs) {
    int64_t product = 1;
    for (const MeshAxisRef& r : refs) {
      const AxisSpan span = SpanOf(n, r);
      for (size_t f = 0; f < factors.size(); ++f) {
        if (factors[f].axis == static_cast<size_t>(r.axis) && factors[f].lo >= span.lo &&
            factors[f].lo * factors[f].size <= span.hi && !used[f]) {
          used[f] = true;
          order.push_back(f);
          product *= factors[f].size;
        }
      }
    }
    return product;
  };
  std::vector<int64_t> tiles;
  for (const NamedSharding::Dimension& d : n.dimensions) tiles.push_back(take(d.axes));
  const int64_t manual = take(n.manual_axes);
  int64_t rest = 1;
  for (size_t f = 0; f < factors.size(); ++f) {
    if (!used[f]) {
      order.push_back(f);
      rest *= factors[f].size;
    }
  }
  const bool data_tiled = std::any_of(tiles.begin(), tiles.end(), [](int64_t t) { return t > 1; });
  if (!data_tiled && manual == 1) {
    s.type = Type::kReplicated;
    return;
  }
  if (!data_tiled && rest == 1) {
    s.type = Type::kManual;
    return;
  }
  s.type = Type::kTiled;
  s.tile_dims = tiles;
  if (manual > 1) {
    s.tile_dims.push_back(manual);
    s.last_tile_dims.push_back("manual");
  }
  if (rest > 1) {
    s.tile_dims.push_back(rest);
    if (manual > 1) {
      s.last_tile_dims.push_back("replicated");
    } else {
      s.last_tile_dim_replicate = true;
    }
  }
  // The mesh's devices walked in the order of the factors: dimensions first.
  const std::vector<int64_t> mesh = n.MeshDevices();
  std::vector<int64_t> index(order.size(), 0);
  s.devices.reserve(mesh.size());
  for (size_t count = 0; count < mesh.size(); ++count) {
    int64_t at = 0;
    for (size_t k = 0; k < order.size(); ++k) at += index[k] * factors[order[k]].stride;
    s.devices.push_back(mesh[static_cast<size_t>(at)]);
    for (size_t k = order.size(); k-- > 0;) {
      if (++index[k] < factors[order[k]].size) break;
      index[k] = 0;
    }
  }
}

}  // namespace

StatusOr<Sharding> Parser::ParseSharding(int64_t depth) {
  const size_t open = lexer_.Mark();
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the sharding"));
  Sharding s;
  if (lexer_.Peek() == '{' || lexer_.Peek() == '}') {
    // Tuple sharding: one sharding per leaf (possibly none).
    if (depth == kMaxShapeDepth) {
      return lexer_.ErrorAt(open, "shardings nested more than " + std::to_string(kMaxShapeDepth) +
                                      " deep (tuple shardings follow tuple shapes)");
    }
    s.type = Sharding::Type::kTuple;
    if (lexer_.TryConsume('}')) return s;
    do {
      TPUSIM_ASSIGN_OR_RETURN(Sharding element, ParseSharding(depth + 1));
      s.elements.push_back(std::move(element));
    } while (lexer_.TryConsume(','));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the tuple sharding"));
    return s;
  }
  const std::string_view first = lexer_.PeekIdentifier();
  if (first == "mesh" || first == "maximal_mesh") {
    TPUSIM_RETURN_IF_ERROR(NamedShardingReader(lexer_, s).Read());
    SetEquivalentSharding(s);
    return s;
  }
  bool has_type = false;
  auto set_type = [&](Sharding::Type t) -> Status {
    if (has_type) return lexer_.ErrorAt(open, "sharding names more than one kind");
    s.type = t;
    has_type = true;
    return Status::Ok();
  };
  while (!lexer_.TryConsume('}')) {
    const size_t loc = lexer_.Mark();
    std::string_view word = lexer_.ReadIdentifier();
    if (word == "replicated") {
      TPUSIM_RETURN_IF_ERROR(set_type(Sharding::Type::kReplicated));
    } else if (word == "manual") {
      TPUSIM_RETURN_IF_ERROR(set_type(Sharding::Type::kManual));
    } else if (word == "unknown") {
      TPUSIM_RETURN_IF_ERROR(set_type(Sharding::Type::kUnknown));
    } else if (word == "unreduced") {
      TPUSIM_RETURN_IF_ERROR(set_type(Sharding::Type::kUnreduced));
    } else if (word == "maximal") {
      TPUSIM_RETURN_IF_ERROR(set_type(Sharding::Type::kMaximal));
      if (!lexer_.TryConsumeWord("device")) return lexer_.Expected("'device=' after 'maximal'");
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after 'device'"));
      TPUSIM_ASSIGN_OR_RETURN(s.device, lexer_.ReadInt("a device id"));
    } else if (word == "devices") {
      TPUSIM_RETURN_IF_ERROR(set_type(Sharding::Type::kTiled));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after 'devices'"));
      TPUSIM_ASSIGN_OR_RETURN(s.tile_dims, ParseIntList('[', ']', "the tile assignment dims"));
      int64_t count = 1;
      for (int64_t d : s.tile_dims) {
        if (d <= 0 || __builtin_mul_overflow(count, d, &count) || count > (int64_t{1} << 24)) {
          return lexer_.ErrorAt(loc, "invalid tile assignment dims");
        }
      }
      if (lexer_.Peek() == '<') {
        TPUSIM_ASSIGN_OR_RETURN(s.iota, ParseIotaAfterDims(s.tile_dims));
      } else {
        do {
          TPUSIM_ASSIGN_OR_RETURN(int64_t dev, lexer_.ReadInt("a device id"));
          s.devices.push_back(dev);
        } while (lexer_.TryConsume(','));
        if (static_cast<int64_t>(s.devices.size()) != count) {
          return lexer_.ErrorAt(loc, "tile assignment lists " + std::to_string(s.devices.size()) +
                                         " devices but its dims hold " + std::to_string(count));
        }
      }
    } else if (word == "last_tile_dim_replicate") {
      s.last_tile_dim_replicate = true;
    } else if (word == "last_tile_dims") {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after 'last_tile_dims'"));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open last_tile_dims"));
      do {
        TPUSIM_ASSIGN_OR_RETURN(std::string_view t, lexer_.ExpectIdentifier("a subgroup type"));
        s.last_tile_dims.emplace_back(t);
      } while (lexer_.TryConsume(','));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close last_tile_dims"));
    } else if (word == "shard_as" || word == "shard_like") {
      TPUSIM_ASSIGN_OR_RETURN(int64_t group, lexer_.ReadInt("a shard group id"));
      (word == "shard_as" ? s.shard_as : s.shard_like) = group;
    } else if (word == "metadata") {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after 'metadata'"));
      TPUSIM_ASSIGN_OR_RETURN(std::string_view raw, lexer_.ReadBracedRaw("sharding metadata"));
      s.metadata = std::string(raw);
    } else {
      return lexer_.ErrorAt(
          loc,
          "expected a sharding (replicated, maximal, manual, unknown, "
          "devices=..., last_tile_dim_replicate, shard_as, mesh[...], maximal_mesh[...]) but "
          "got " +
              (word.empty() ? lexer_.DescribeNext() : Quote(word)));
    }
    lexer_.TryConsume(',');
  }
  if (!has_type) return lexer_.ErrorAt(open, "sharding names no kind");
  return s;
}

}  // namespace tpusim::hlo::internal
