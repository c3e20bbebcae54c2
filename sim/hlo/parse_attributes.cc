// Instruction attributes: `, name=value` after the operand list. Each known
// attribute (attribute.def) is parsed into its typed value; unknown ones are
// kept verbatim.
#include <algorithm>
#include <cctype>
#include <string>

#include "sim/hlo/parser_impl.h"

namespace tpusim::hlo::internal {
namespace {

bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }

/// Adds context to the first line of an error ("... got 'x' in attribute 'y'"),
/// keeping the source excerpt lines after it.
Status AddNote(const Status& status, const std::string& note) {
  std::string message = status.message();
  const size_t eol = message.find('\n');
  message.insert(eol == std::string::npos ? message.size() : eol, " " + note);
  return Status(status.code(), std::move(message));
}

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
                (word.empty() ? lexer_.DescribeNext() : "'" + std::string(word) + "'"));
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
            return lexer_.ErrorAt(loc, "mesh axis '" + axis.name + "' named twice");
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
        std::all_of(name.begin(), name.end(), IsDigitChar)) {
      const int64_t index = std::stoll(std::string(name));
      if (index < static_cast<int64_t>(n_.axes.size())) ref.axis = index;
    }
    if (ref.axis < 0) {
      return lexer_.ErrorAt(loc, "mesh axis '" + std::string(name) + "' is not in the mesh");
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

Status Parser::ParseAttributes(HloInstruction& instruction) {
  if (lexer_.Peek() != ',') return Status::Ok();
  // Collected in a reused buffer and moved into a vector of the exact size.
  std::vector<Attribute>& attributes = attribute_scratch_;
  attributes.clear();
  while (lexer_.TryConsume(',')) {
    const size_t loc = lexer_.Mark();
    const SourceLocation where = lexer_.Location();
    const std::string_view name = lexer_.ReadIdentifier();
    if (name.empty()) return lexer_.Expected("an attribute name");
    if (!lexer_.TryConsume('=')) {
      return lexer_.Expected("'=' after attribute name '" + std::string(name) + "'");
    }
    if (name == "control-predecessors") {
      if (!instruction.control_predecessors().empty()) {
        return lexer_.ErrorAt(loc, "duplicate attribute 'control-predecessors'");
      }
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open control-predecessors"));
      std::vector<PendingName> names;
      if (!lexer_.TryConsume('}')) {
        do {
          const size_t nloc = lexer_.Mark();
          TPUSIM_ASSIGN_OR_RETURN(std::string_view pred,
                                  lexer_.ExpectIdentifier("an instruction name"));
          names.push_back({pred, nloc});
        } while (lexer_.TryConsume(','));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close control-predecessors"));
      }
      pending_control_.emplace_back(&instruction, std::move(names));
      continue;
    }
    const AttrId id = AttrIdFromName(name);
    for (const Attribute& a : attributes) {
      if (a.spelling() == name) {
        return lexer_.ErrorAt(loc, "duplicate attribute '" + std::string(name) + "'");
      }
    }
    AttrKind kind = id == AttrId::kUnknown ? AttrKind::kRaw : AttrKindOf(id);
    // A known name can carry a form tpusim does not model, e.g. the nested
    // `slice_sizes={{4256,8,128}}` of a dynamic collective-permute: keep it
    // verbatim as an unknown attribute rather than misreading it.
    if (kind == AttrKind::kIntList && lexer_.Peek() == '{') {
      const std::string_view text = lexer_.text();
      size_t p = lexer_.position() + 1;
      while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
      if (p < text.size() && text[p] == '{') kind = AttrKind::kRaw;
    }
    const AttrId stored_id = kind == AttrKind::kRaw ? AttrId::kUnknown : id;
    const size_t index = attributes.size();
    StatusOr<AttrValue> value_or = ParseAttributeValue(kind, name, &instruction, index);
    if (!value_or.ok())
      return AddNote(value_or.status(), "in attribute '" + std::string(name) + "'");
    AttrValue value = std::move(value_or).value();
    Attribute attribute;
    attribute.id = stored_id;
    if (stored_id == AttrId::kUnknown) attribute.unknown_name = std::string(name);
    attribute.value = std::move(value);
    attribute.location = where;
    attributes.push_back(std::move(attribute));
  }
  if (!attributes.empty()) {
    instruction.mutable_attributes().assign(std::make_move_iterator(attributes.begin()),
                                            std::make_move_iterator(attributes.end()));
    attributes.clear();
  }
  return Status::Ok();
}

StatusOr<AttrValue> Parser::ParseAttributeValue(AttrKind kind, std::string_view name,
                                                HloInstruction* instruction,
                                                size_t attribute_index) {
  switch (kind) {
    case AttrKind::kInt: {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, lexer_.ReadInt("an integer value"));
      return AttrValue(v);
    }
    case AttrKind::kBool: {
      if (lexer_.TryConsumeWord("true")) return AttrValue(true);
      if (lexer_.TryConsumeWord("false")) return AttrValue(false);
      return lexer_.Expected("'true' or 'false'");
    }
    case AttrKind::kFloat: {
      TPUSIM_ASSIGN_OR_RETURN(double v, lexer_.ReadReal("a number"));
      return AttrValue(v);
    }
    case AttrKind::kString: {
      TPUSIM_ASSIGN_OR_RETURN(std::string s, lexer_.ReadString("a quoted string"));
      return AttrValue(std::move(s));
    }
    case AttrKind::kIdent: {
      std::string_view word = lexer_.ReadIdentifier();
      if (word.empty()) return lexer_.Expected("a name");
      return AttrValue(std::string(word));
    }
    case AttrKind::kIdentList: {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the list"));
      std::vector<std::string> words;
      if (!lexer_.TryConsume('}')) {
        do {
          std::string_view word = lexer_.ReadIdentifier();
          if (word.empty()) return lexer_.Expected("a name in the list");
          words.emplace_back(word);
        } while (lexer_.TryConsume(','));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the list"));
      }
      return AttrValue(std::move(words));
    }
    case AttrKind::kIntList: {
      TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseIntList('{', '}', "the list"));
      return AttrValue(std::move(v));
    }
    case AttrKind::kIntPairs: {
      TPUSIM_ASSIGN_OR_RETURN(auto pairs, ParseIntPairs());
      return AttrValue(std::move(pairs));
    }
    case AttrKind::kComputation:
    case AttrKind::kComputationList: {
      PendingComputationRef ref{instruction, attribute_index, {}};
      // A computation is a name, or written inline as `{ instructions }`.
      const auto parse_item = [&]() -> Status {
        PendingComputationRef::Item item;
        if (AtInlineComputation()) {
          TPUSIM_ASSIGN_OR_RETURN(item.inline_computation,
                                  ParseInlineComputation(*instruction, name));
        } else {
          item.name.location = lexer_.Mark();
          TPUSIM_ASSIGN_OR_RETURN(item.name.name, lexer_.ExpectIdentifier("a computation name"));
        }
        ref.items.push_back(item);
        return Status::Ok();
      };
      const bool braced = !AtInlineComputation() && lexer_.TryConsume('{');
      if (braced && kind == AttrKind::kComputation) {
        return lexer_.ErrorAt(lexer_.Location(),
                              "expected one computation (a name or { instructions }), got a list");
      }
      if (!(braced && lexer_.TryConsume('}'))) {
        do {
          TPUSIM_RETURN_IF_ERROR(parse_item());
        } while (braced && lexer_.TryConsume(','));
        if (braced) TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the list"));
      }
      const bool empty = ref.items.empty();
      if (!empty) pending_computations_.push_back(std::move(ref));
      if (kind == AttrKind::kComputation) return AttrValue(static_cast<HloComputation*>(nullptr));
      ComputationList list;
      list.braced = braced;
      return AttrValue(std::move(list));
    }
    case AttrKind::kWindow: {
      TPUSIM_ASSIGN_OR_RETURN(Window w, ParseWindow());
      return AttrValue(Box<Window>(std::move(w)));
    }
    case AttrKind::kDimLabels: {
      TPUSIM_ASSIGN_OR_RETURN(ConvolutionDimensionNumbers d, ParseDimLabels());
      return AttrValue(Box<ConvolutionDimensionNumbers>(std::move(d)));
    }
    case AttrKind::kSliceRanges: {
      TPUSIM_ASSIGN_OR_RETURN(auto ranges, ParseSliceRanges());
      return AttrValue(std::move(ranges));
    }
    case AttrKind::kPadding: {
      TPUSIM_ASSIGN_OR_RETURN(auto padding, ParsePadding());
      return AttrValue(std::move(padding));
    }
    case AttrKind::kReplicaGroups: {
      TPUSIM_ASSIGN_OR_RETURN(ReplicaGroups groups, ParseReplicaGroups());
      return AttrValue(Box<ReplicaGroups>(std::move(groups)));
    }
    case AttrKind::kSharding: {
      TPUSIM_ASSIGN_OR_RETURN(Sharding sharding, ParseSharding(0));
      return AttrValue(Box<Sharding>(std::move(sharding)));
    }
    case AttrKind::kKeyValues: {
      TPUSIM_ASSIGN_OR_RETURN(auto kvs, ParseKeyValues("the dictionary"));
      return AttrValue(std::move(kvs));
    }
    case AttrKind::kShape: {
      TPUSIM_ASSIGN_OR_RETURN(Shape s, ParseShape());
      return AttrValue(Box<Shape>(std::move(s)));
    }
    case AttrKind::kShapeList: {
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the list"));
      std::vector<Shape> shapes;
      if (!lexer_.TryConsume('}')) {
        do {
          TPUSIM_ASSIGN_OR_RETURN(Shape s, ParseShape());
          shapes.push_back(std::move(s));
        } while (lexer_.TryConsume(','));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the list"));
      }
      return AttrValue(std::move(shapes));
    }
    case AttrKind::kBackendConfig: {
      BackendConfig config;
      if (lexer_.Peek() == '"') {
        TPUSIM_ASSIGN_OR_RETURN(config.text, lexer_.ReadString("a backend config"));
      } else {
        TPUSIM_ASSIGN_OR_RETURN(std::string_view json, lexer_.ReadBracedRaw("backend config"));
        config.text = std::string(json);
        config.is_string = false;
      }
      return AttrValue(std::move(config));
    }
    case AttrKind::kRaw: {
      TPUSIM_ASSIGN_OR_RETURN(std::string_view raw, lexer_.ReadRawValue());
      return AttrValue(std::string(raw));
    }
  }
  return Internal("unhandled attribute kind");
}

StatusOr<std::vector<int64_t>> Parser::ParseDxD(std::string_view what) {
  std::vector<int64_t> values;
  lexer_.SkipTrivia();
  while (true) {
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, lexer_.ReadIntNoSkip(what));
    values.push_back(v);
    if (lexer_.PeekRaw() != 'x') break;
    lexer_.Advance(1);
  }
  return values;
}

StatusOr<Window> Parser::ParseWindow() {
  const size_t open = lexer_.Mark();
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the window"));
  Window window;
  bool has_size = false;
  auto resize = [&](size_t rank, std::string_view field) -> Status {
    if (window.dimensions.empty() && !has_size) window.dimensions.resize(rank);
    if (window.dimensions.size() != rank) {
      return lexer_.ErrorAt(lexer_.Location(), "window field '" + std::string(field) + "' has " +
                                                   std::to_string(rank) + " dimensions, expected " +
                                                   std::to_string(window.dimensions.size()));
    }
    return Status::Ok();
  };
  while (!lexer_.TryConsume('}')) {
    TPUSIM_ASSIGN_OR_RETURN(std::string_view field,
                            lexer_.ExpectIdentifier("a window field or '}'"));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after window field"));
    if (field == "pad") {
      std::vector<std::pair<int64_t, int64_t>> pads;
      lexer_.SkipTrivia();
      while (true) {
        TPUSIM_ASSIGN_OR_RETURN(int64_t lo, lexer_.ReadIntNoSkip("a low padding"));
        if (lexer_.PeekRaw() != '_') return lexer_.Expected("'_' between low and high padding");
        lexer_.Advance(1);
        TPUSIM_ASSIGN_OR_RETURN(int64_t hi, lexer_.ReadIntNoSkip("a high padding"));
        pads.emplace_back(lo, hi);
        if (lexer_.PeekRaw() != 'x') break;
        lexer_.Advance(1);
      }
      TPUSIM_RETURN_IF_ERROR(resize(pads.size(), field));
      for (size_t i = 0; i < pads.size(); ++i) {
        window.dimensions[i].padding_low = pads[i].first;
        window.dimensions[i].padding_high = pads[i].second;
      }
      continue;
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseDxD("window values like 3x3"));
    TPUSIM_RETURN_IF_ERROR(resize(values.size(), field));
    for (size_t i = 0; i < values.size(); ++i) {
      WindowDimension& d = window.dimensions[i];
      if (field == "size") {
        d.size = values[i];
      } else if (field == "stride") {
        d.stride = values[i];
      } else if (field == "lhs_dilate") {
        d.base_dilation = values[i];
      } else if (field == "rhs_dilate") {
        d.window_dilation = values[i];
      } else if (field == "rhs_reversal") {
        d.window_reversal = values[i] != 0;
      } else {
        return lexer_.ErrorAt(open, "unknown window field '" + std::string(field) +
                                        "', expected size, stride, pad, lhs_dilate, "
                                        "rhs_dilate or rhs_reversal");
      }
    }
    if (field == "size") has_size = true;
  }
  if (!window.dimensions.empty() && !has_size) {
    return lexer_.ErrorAt(open, "window has no 'size' field");
  }
  return window;
}

StatusOr<ConvolutionDimensionNumbers> Parser::ParseDimLabels() {
  lexer_.SkipTrivia();
  const size_t loc = lexer_.position();
  const std::string_view text = lexer_.text();
  size_t p = lexer_.position();
  const size_t start = p;
  while (p < text.size() && (std::isalnum(static_cast<unsigned char>(text[p])) || text[p] == '_' ||
                             text[p] == '-' || text[p] == '>' || text[p] == '?')) {
    ++p;
  }
  const std::string_view labels = text.substr(start, p - start);
  const size_t underscore = labels.find('_');
  const size_t arrow = labels.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < underscore) {
    return lexer_.Expected("dim_labels like b01f_01io->b01f");
  }
  const std::string_view lhs = labels.substr(0, underscore);
  const std::string_view rhs = labels.substr(underscore + 1, arrow - underscore - 1);
  const std::string_view out = labels.substr(arrow + 2);
  auto bad = [&](std::string_view why) {
    return lexer_.ErrorAt(loc,
                          "invalid dim_labels '" + std::string(labels) + "': " + std::string(why));
  };
  // A '?' labels a dimension with no role; the digits are the spatial ones.
  const auto spatial_of = [](std::string_view s) {
    size_t n = 0;
    for (char c : s) n += IsDigitChar(c) ? 1 : 0;
    return n;
  };
  const size_t spatial = spatial_of(lhs);
  if (spatial_of(rhs) != spatial || spatial_of(out) != spatial) {
    return bad("the input, kernel and output labels must name the same spatial dimensions");
  }
  if (spatial > 10) return bad("more than 10 spatial dimensions");
  ConvolutionDimensionNumbers d;
  d.input_spatial_dimensions.assign(spatial, -1);
  d.kernel_spatial_dimensions.assign(spatial, -1);
  d.output_spatial_dimensions.assign(spatial, -1);
  // Each label string must name every role exactly once; '?' may repeat.
  auto decode = [&](std::string_view s, char a, char b, int64_t& da, int64_t& db,
                    std::vector<int64_t>& sp, int64_t& rank) -> Status {
    int64_t seen_a = -1, seen_b = -1;
    bool unknown = false;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      const int64_t pos = static_cast<int64_t>(i);
      if (c == '?') {
        unknown = true;
      } else if (c == a && seen_a < 0) {
        seen_a = pos;
      } else if (c == b && seen_b < 0) {
        seen_b = pos;
      } else if (IsDigitChar(c) && static_cast<size_t>(c - '0') < spatial && sp[c - '0'] < 0) {
        sp[c - '0'] = pos;
      } else {
        return bad(std::string("unexpected or repeated label '") + c + "' in '" + std::string(s) +
                   "'");
      }
    }
    if (seen_a < 0 || seen_b < 0) {
      return bad(std::string("'") + std::string(s) + "' must label one dimension '" + a +
                 "' and one '" + b + "'");
    }
    da = seen_a;
    db = seen_b;
    if (unknown) rank = static_cast<int64_t>(s.size());
    return Status::Ok();
  };
  TPUSIM_RETURN_IF_ERROR(decode(lhs, 'b', 'f', d.input_batch_dimension, d.input_feature_dimension,
                                d.input_spatial_dimensions, d.input_rank));
  TPUSIM_RETURN_IF_ERROR(decode(rhs, 'i', 'o', d.kernel_input_feature_dimension,
                                d.kernel_output_feature_dimension, d.kernel_spatial_dimensions,
                                d.kernel_rank));
  TPUSIM_RETURN_IF_ERROR(decode(out, 'b', 'f', d.output_batch_dimension, d.output_feature_dimension,
                                d.output_spatial_dimensions, d.output_rank));
  lexer_.Advance(p - start);
  return d;
}

StatusOr<std::vector<SliceRange>> Parser::ParseSliceRanges() {
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the slice"));
  std::vector<SliceRange> ranges;
  if (lexer_.TryConsume('}')) return ranges;
  do {
    SliceRange r;
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('[', "to open a slice range"));
    TPUSIM_ASSIGN_OR_RETURN(r.start, lexer_.ReadInt("a slice start"));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(':', "after the slice start"));
    TPUSIM_ASSIGN_OR_RETURN(r.limit, lexer_.ReadInt("a slice limit"));
    if (lexer_.TryConsume(':')) {
      TPUSIM_ASSIGN_OR_RETURN(r.stride, lexer_.ReadInt("a slice stride"));
    }
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(']', "to close the slice range"));
    ranges.push_back(r);
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the slice"));
  return ranges;
}

StatusOr<std::vector<PaddingDimension>> Parser::ParsePadding() {
  std::vector<PaddingDimension> dims;
  const char c = lexer_.Peek();
  // A rank-0 pad prints an empty value.
  if (c == ',' || c == '\n' || c == '}' || c == '\0') return dims;
  lexer_.SkipTrivia();
  while (true) {
    PaddingDimension d;
    TPUSIM_ASSIGN_OR_RETURN(d.low, lexer_.ReadIntNoSkip("a low padding"));
    if (lexer_.PeekRaw() != '_') return lexer_.Expected("'_' between low and high padding");
    lexer_.Advance(1);
    TPUSIM_ASSIGN_OR_RETURN(d.high, lexer_.ReadIntNoSkip("a high padding"));
    if (lexer_.PeekRaw() == '_') {
      lexer_.Advance(1);
      TPUSIM_ASSIGN_OR_RETURN(d.interior, lexer_.ReadIntNoSkip("an interior padding"));
    }
    dims.push_back(d);
    if (lexer_.PeekRaw() != 'x') break;
    lexer_.Advance(1);
  }
  return dims;
}

StatusOr<IotaTileAssignment> Parser::ParseIotaAfterDims(std::vector<int64_t> dims) {
  const size_t loc = lexer_.Mark();
  if (!lexer_.TryConsume("<=")) return lexer_.Expected("'<=' in an iota device list");
  IotaTileAssignment iota;
  iota.dims = std::move(dims);
  TPUSIM_ASSIGN_OR_RETURN(iota.reshape_dims, ParseIntList('[', ']', "the iota reshape dims"));
  if (lexer_.Peek() == 'T' && lexer_.PeekRaw(1) == '(') {
    lexer_.Advance(1);
    TPUSIM_ASSIGN_OR_RETURN(iota.transpose_perm, ParseIntList('(', ')', "the iota transpose"));
  }
  int64_t a = 1, b = 1;
  for (int64_t d : iota.dims) {
    if (d <= 0 || __builtin_mul_overflow(a, d, &a)) return lexer_.ErrorAt(loc, "invalid iota dims");
  }
  for (int64_t d : iota.reshape_dims) {
    if (d <= 0 || __builtin_mul_overflow(b, d, &b))
      return lexer_.ErrorAt(loc, "invalid iota reshape dims");
  }
  if (a != b) {
    return lexer_.ErrorAt(loc, "iota device list has " + std::to_string(a) +
                                   " entries but reshape dims hold " + std::to_string(b));
  }
  if (a > (int64_t{1} << 24)) return lexer_.ErrorAt(loc, "iota device list is implausibly large");
  if (!iota.transpose_perm.empty()) {
    std::vector<int64_t> sorted = iota.transpose_perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != iota.reshape_dims.size()) {
        return lexer_.ErrorAt(loc, "iota transpose is not a permutation of the reshape dims");
      }
    }
  }
  return iota;
}

StatusOr<ReplicaGroups> Parser::ParseReplicaGroups() {
  ReplicaGroups groups;
  if (lexer_.PeekIdentifier() == "mesh") return ParseMeshReplicaGroups();
  if (lexer_.Peek() == '[') {
    const size_t loc = lexer_.Mark();
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                            ParseIntList('[', ']', "the replica group dims"));
    if (dims.size() != 2) {
      return lexer_.ErrorAt(loc, "iota replica groups need [groups,group_size] dims");
    }
    TPUSIM_ASSIGN_OR_RETURN(IotaTileAssignment iota, ParseIotaAfterDims(std::move(dims)));
    const std::vector<int64_t> ids = iota.Expand();
    const size_t size = static_cast<size_t>(iota.dims[1]);
    groups.groups.reserve(static_cast<size_t>(iota.dims[0]));
    for (size_t g = 0; g < static_cast<size_t>(iota.dims[0]); ++g) {
      groups.groups.emplace_back(ids.begin() + g * size, ids.begin() + (g + 1) * size);
    }
    groups.iota = std::move(iota);
    return groups;
  }
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open replica_groups"));
  if (lexer_.TryConsume('}')) return groups;
  do {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> g, ParseIntList('{', '}', "a replica group"));
    groups.groups.push_back(std::move(g));
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close replica_groups"));
  return groups;
}

StatusOr<ReplicaGroups> Parser::ParseMeshReplicaGroups() {
  const size_t loc = lexer_.Mark();
  const size_t start = lexer_.position();
  ReplicaGroups result;
  lexer_.ReadIdentifier();  // "mesh"
  auto read_axis_name = [&]() -> StatusOr<std::string_view> {
    lexer_.SkipTrivia();
    const std::string_view text = lexer_.text();
    const size_t p = lexer_.position();
    if (p >= text.size() || text[p] != '\'') return lexer_.Expected("a quoted mesh axis name");
    const size_t end = text.find('\'', p + 1);
    if (end == std::string_view::npos) return lexer_.Expected("a closing quote of the axis name");
    lexer_.Advance(end + 1 - p);
    return text.substr(p + 1, end - p - 1);
  };
  std::vector<std::string_view> axis_names;
  std::vector<int64_t> axis_sizes;
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('[', "after 'mesh'"));
  do {
    TPUSIM_ASSIGN_OR_RETURN(std::string_view axis, read_axis_name());
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after the mesh axis name"));
    const size_t sloc = lexer_.Mark();
    TPUSIM_ASSIGN_OR_RETURN(int64_t size, lexer_.ReadInt("a mesh axis size"));
    if (size <= 0 || size > (1 << 20)) return lexer_.ErrorAt(sloc, "invalid mesh axis size");
    axis_names.push_back(axis);
    axis_sizes.push_back(size);
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect(']', "to close the mesh"));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the mesh axes of the groups"));
  std::vector<size_t> group_axes;
  if (!lexer_.TryConsume('}')) {
    do {
      const size_t aloc = lexer_.Mark();
      TPUSIM_ASSIGN_OR_RETURN(std::string_view axis, read_axis_name());
      size_t a = 0;
      while (a < axis_names.size() && axis_names[a] != axis) ++a;
      if (a == axis_names.size()) {
        return lexer_.ErrorAt(aloc, "mesh axis '" + std::string(axis) + "' is not in the mesh");
      }
      group_axes.push_back(a);
    } while (lexer_.TryConsume(','));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the mesh axes of the groups"));
  }
  int64_t devices = 1;
  for (int64_t s : axis_sizes) {
    if (__builtin_mul_overflow(devices, s, &devices) || devices > (int64_t{1} << 24)) {
      return lexer_.ErrorAt(loc, "mesh is implausibly large");
    }
  }
  // Devices are numbered row-major over the mesh. A group holds the devices
  // that agree on every axis outside group_axes, ordered by group_axes.
  const size_t rank = axis_sizes.size();
  std::vector<bool> in_group(rank, false);
  for (size_t a : group_axes) in_group[a] = true;
  std::vector<int64_t> strides(rank, 1);
  for (size_t a = rank; a-- > 1;) strides[a - 1] = strides[a] * axis_sizes[a];
  std::vector<size_t> outer_axes;
  for (size_t a = 0; a < rank; ++a) {
    if (!in_group[a]) outer_axes.push_back(a);
  }
  auto enumerate = [&](const std::vector<size_t>& axes, auto&& visit) {
    std::vector<int64_t> index(axes.size(), 0);
    while (true) {
      int64_t offset = 0;
      for (size_t i = 0; i < axes.size(); ++i) offset += index[i] * strides[axes[i]];
      visit(offset);
      size_t i = axes.size();
      while (i > 0 && ++index[i - 1] == axis_sizes[axes[i - 1]]) index[--i] = 0;
      if (i == 0) return;
    }
  };
  enumerate(outer_axes, [&](int64_t base) {
    std::vector<int64_t> group;
    enumerate(group_axes, [&](int64_t offset) { group.push_back(base + offset); });
    result.groups.push_back(std::move(group));
  });
  result.mesh_text = std::string(lexer_.text().substr(start, lexer_.position() - start));
  return result;
}

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
              (word.empty() ? lexer_.DescribeNext() : "'" + std::string(word) + "'"));
    }
    lexer_.TryConsume(',');
  }
  if (!has_type) return lexer_.ErrorAt(open, "sharding names no kind");
  return s;
}

StatusOr<std::vector<KeyValue>> Parser::ParseKeyValues(std::string_view what) {
  if (!lexer_.TryConsume('{')) return lexer_.Expected("'{' to open " + std::string(what));
  // Collected in a reused buffer and copied out at the exact size.
  std::vector<KeyValue>& kvs = key_value_scratch_;
  kvs.clear();
  while (!lexer_.TryConsume('}')) {
    KeyValue kv;
    if (lexer_.Peek() == '"') {
      TPUSIM_ASSIGN_OR_RETURN(kv.key, lexer_.ReadString("a key"));
    } else {
      std::string_view key = lexer_.ReadIdentifier();
      if (key.empty()) return lexer_.Expected("a key or '}' in " + std::string(what));
      kv.key = std::string(key);
    }
    if (!lexer_.TryConsume('=')) return lexer_.Expected("'=' after key '" + kv.key + "'");
    const char c = lexer_.Peek();
    if (c == '"') {
      TPUSIM_ASSIGN_OR_RETURN(kv.value, lexer_.ReadString("a value"));
    } else if (c == '{') {
      TPUSIM_ASSIGN_OR_RETURN(std::string_view raw, lexer_.ReadBracedRaw("value"));
      kv.value = std::string(raw);
      kv.quoted = false;
    } else {
      const std::string_view text = lexer_.text();
      const size_t start = lexer_.position();
      size_t p = start;
      while (p < text.size() && text[p] != ',' && text[p] != '}' && text[p] != ' ' &&
             text[p] != '\n' && text[p] != '\t' && text[p] != '\r' && text[p] != '"' &&
             text[p] != '{') {
        ++p;
      }
      if (p == start) return lexer_.Expected("a value for key '" + kv.key + "'");
      kv.value = std::string(text.substr(start, p - start));
      kv.quoted = false;
      lexer_.Advance(p - start);
    }
    kvs.push_back(std::move(kv));
    lexer_.TryConsume(',');
  }
  std::vector<KeyValue> result(std::make_move_iterator(kvs.begin()),
                               std::make_move_iterator(kvs.end()));
  kvs.clear();
  return result;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> Parser::ParseIntPairs() {
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the pair list"));
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (lexer_.TryConsume('}')) return pairs;
  do {
    const size_t loc = lexer_.Mark();
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> p, ParseIntList('{', '}', "a pair"));
    if (p.size() != 2) return lexer_.ErrorAt(loc, "expected a pair {a,b}");
    pairs.emplace_back(p[0], p[1]);
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the pair list"));
  return pairs;
}

StatusOr<ShapeIndex> Parser::ParseShapeIndex() { return ParseIntList('{', '}', "a shape index"); }

StatusOr<std::vector<bool>> Parser::ParseBoolList() {
  std::vector<bool> values;
  // A lone `true` or `false` is a list of one, as XLA writes it for one value.
  if (lexer_.TryConsumeWord("true")) return std::vector<bool>{true};
  if (lexer_.TryConsumeWord("false")) return std::vector<bool>{false};
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the list of booleans"));
  if (lexer_.TryConsume('}')) return values;
  do {
    if (lexer_.TryConsumeWord("true")) {
      values.push_back(true);
    } else if (lexer_.TryConsumeWord("false")) {
      values.push_back(false);
    } else {
      return lexer_.Expected("'true' or 'false'");
    }
  } while (lexer_.TryConsume(','));
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close the list of booleans"));
  return values;
}

}  // namespace tpusim::hlo::internal
