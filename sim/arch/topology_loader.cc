// Parsing `topology:` values (short forms and YAML mappings) into
// TopologyConfig. docs/interconnect.md documents every key; both forms set
// scalar keys through one table so that they accept the same spellings.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "sim/arch/topology_config.h"
#include "sim/arch/yaml_position.h"
#include "sim/base/arith.h"
#include "sim/base/printable.h"

namespace tpusim::arch {
namespace {

struct KindName {
  TopologyKind kind;
  std::string_view name;
  /// Keys a mapping of this kind accepts besides `kind` and the common ones.
  std::vector<std::string_view> keys;
};

const std::vector<KindName>& Kinds() {
  static const std::vector<KindName> kKinds = {
      {TopologyKind::kTorus, "torus", {"dims", "wraparound"}},
      {TopologyKind::kMesh, "mesh", {"dims"}},
      {TopologyKind::kTwistedTorus, "twisted", {"dims"}},
      {TopologyKind::kFatTree,
       "fattree",
       {"radix", "levels", "oversubscription", "switch_latency"}},
      {TopologyKind::kSwitch, "switch", {"chips", "switch_latency"}},
      {TopologyKind::kMultiSlice,
       "multislice",
       {"slices", "slice", "dcn_bandwidth", "dcn_latency"}},
      {TopologyKind::kGraph, "graph", {"chips", "edges"}},
  };
  return kKinds;
}

/// Keys every kind accepts.
const std::vector<std::string_view> kCommonKeys = {
    "link_bandwidth", "hop_latency", "devices_per_chip", "device_assignment", "faults",
    "slow_devices"};

std::string KindList() {
  std::string s;
  for (const KindName& k : Kinds()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

const KindName* FindKind(std::string_view name) {
  for (const KindName& k : Kinds()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const KindName& KindOf(TopologyKind kind) {
  for (const KindName& k : Kinds()) {
    if (k.kind == kind) return k;
  }
  return Kinds().front();
}

bool Accepts(const KindName& kind, std::string_view key) {
  return key == "kind" || std::find(kind.keys.begin(), kind.keys.end(), key) != kind.keys.end() ||
         std::find(kCommonKeys.begin(), kCommonKeys.end(), key) != kCommonKeys.end();
}

// ---------------------------------------------------------------------------
// Scalars.

StatusOr<int64_t> ParseCount(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) {
    return InvalidArgument("expected a whole number, got " + Quote(text));
  }
  return v;
}

StatusOr<double> ParseReal(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v >= 0) || v > 1e18) {
    return InvalidArgument("expected a non-negative number, got " + Quote(text));
  }
  return v;
}

StatusOr<bool> ParseFlag(std::string_view text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return InvalidArgument("expected true or false, got " + Quote(text));
}

/// A time; a bare "0" is allowed for "from the start".
StatusOr<Picoseconds> ParseTime(std::string_view text) {
  if (text == "0") return Picoseconds(0);
  return ParsePicoseconds(text);
}

/// "4x4x8" -> {4, 4, 8}.
StatusOr<std::vector<int64_t>> ParseDims(std::string_view text) {
  std::vector<int64_t> dims;
  size_t begin = 0;
  while (true) {
    const size_t x = text.find('x', begin);
    StatusOr<int64_t> d = ParseCount(text.substr(begin, x - begin));
    if (!d.ok()) {
      return InvalidArgument("expected dimensions like 4x4x8, got " + Quote(text));
    }
    dims.push_back(*d);
    if (x == std::string_view::npos) break;
    begin = x + 1;
  }
  return dims;
}

/// Sets one scalar key of `config`; shared by the short form and the mapping.
/// Messages start with the key.
Status ApplyScalar(TopologyConfig& config, std::string_view key, std::string_view text) {
  auto at_key = [&](const Status& s) { return s.WithContext(std::string(key)); };
  if (key == "dims") {
    StatusOr<std::vector<int64_t>> dims = ParseDims(text);
    if (!dims.ok()) return at_key(dims.status());
    config.dims = *dims;
  } else if (key == "wraparound") {
    // "true", "false", "tpu", or per axis "1x0x1".
    config.wraparound.clear();
    config.tpu_wraparound = text == "tpu";
    if (config.tpu_wraparound) return Status::Ok();
    if (text.find('x') == std::string_view::npos) {
      StatusOr<bool> all = ParseFlag(text);
      if (!all.ok()) return at_key(all.status());
      config.wraparound.assign(std::max<size_t>(config.dims.size(), 1), *all);
    } else {
      StatusOr<std::vector<int64_t>> flags = ParseDims(text);
      if (!flags.ok() ||
          std::any_of(flags->begin(), flags->end(), [](int64_t f) { return f > 1; })) {
        return InvalidArgument(std::string(key) + ": expected true, false or per-axis 1x0x1, got " +
                               Quote(text));
      }
      for (int64_t f : *flags) config.wraparound.push_back(f == 1);
    }
  } else if (key == "radix" || key == "levels" || key == "slices" || key == "chips") {
    StatusOr<int64_t> n = ParseCount(text);
    if (!n.ok()) return at_key(n.status());
    if (key == "radix") config.fat_tree_radix = *n;
    if (key == "levels") config.fat_tree_levels = *n;
    if (key == "slices") config.slices = *n;
    if (key == "chips") {
      if (config.kind == TopologyKind::kGraph) {
        config.graph_chips = *n;
      } else {
        config.dims = {*n};
      }
    }
  } else if (key == "devices_per_chip") {
    StatusOr<int64_t> n = ParseCount(text);
    if (!n.ok()) return at_key(n.status());
    if (*n < 1) return InvalidArgument("devices_per_chip: must be at least 1, got " + Quote(text));
    if (*n > kMaxDevicesPerChip) {
      return InvalidArgument("devices_per_chip: must be at most " +
                             std::to_string(kMaxDevicesPerChip) + " (a chip's TensorCores), got " +
                             Quote(text));
    }
    config.devices_per_chip = *n;
  } else if (key == "oversubscription") {
    StatusOr<double> r = ParseReal(text);
    if (!r.ok()) return at_key(r.status());
    if (*r < 1.0)
      return InvalidArgument("oversubscription: must be at least 1, got " + Quote(text));
    config.oversubscription = *r;
  } else if (key == "switch_latency" || key == "hop_latency" || key == "dcn_latency") {
    StatusOr<Picoseconds> t = ParseTime(text);
    if (!t.ok()) return at_key(t.status());
    (key == "switch_latency" ? config.switch_latency
     : key == "hop_latency"  ? config.hop_latency
                             : config.dcn_latency) = *t;
  } else if (key == "link_bandwidth" || key == "dcn_bandwidth") {
    StatusOr<BytesPerSecond> b = ParseBytesPerSecond(text);
    if (!b.ok()) return at_key(b.status());
    if (b->value() <= 0) return InvalidArgument(std::string(key) + ": must be positive");
    (key == "link_bandwidth" ? config.link_bandwidth : config.dcn_bandwidth) = *b;
  } else if (key == "slice") {
    StatusOr<TopologyConfig> slice = ParseTopologyShortForm(text);
    if (!slice.ok()) return at_key(slice.status());
    if (slice->kind != TopologyKind::kTorus && slice->kind != TopologyKind::kMesh &&
        slice->kind != TopologyKind::kTwistedTorus) {
      return InvalidArgument("slice: must be a torus, mesh or twisted torus, got " + Quote(text));
    }
    if (slice->devices_per_chip.has_value()) {
      return InvalidArgument(
          "slice: devices_per_chip belongs to the multi-slice topology, not to its slice");
    }
    config.slice_topology_text = CanonicalTopologyText(*slice);
  } else {
    return InvalidArgument(Quote(key) + " is not a single value");
  }
  return Status::Ok();
}

/// At most kMaxChips chips, or an error prefixed by the key that sets the size.
Status CheckChipCount(std::string_view key, const std::string& what, int64_t chips) {
  if (chips <= kMaxChips) return Status::Ok();
  return InvalidArgument(std::string(key) + ": " + what + " has " +
                         (chips == INT64_MAX ? std::string("over 2^63") : std::to_string(chips)) +
                         " chips, more than the " + std::to_string(kMaxChips) +
                         " tpusim simulates (a TPU v5p pod is 8960)");
}

Status CheckDimensions(const TopologyConfig& c);

/// The size checks of CheckShape, once the shape itself is sound.
Status CheckSize(const TopologyConfig& c) {
  const int64_t chips = ChipCount(c);
  const std::string kind(KindOf(c.kind).name);
  switch (c.kind) {
    case TopologyKind::kTorus:
    case TopologyKind::kMesh:
    case TopologyKind::kTwistedTorus: {
      std::string dims;
      for (const int64_t d : c.dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
      return CheckChipCount("dims", kind + " " + dims, chips);
    }
    case TopologyKind::kFatTree:
      return CheckChipCount("levels", "a fat tree of radix " + std::to_string(c.fat_tree_radix) +
                                          " and " + std::to_string(c.fat_tree_levels) + " levels",
                            chips);
    case TopologyKind::kSwitch:
      return CheckChipCount("chips", "the switch", chips);
    case TopologyKind::kMultiSlice:
      return CheckChipCount("slices",
                            std::to_string(c.slices) + " slices of " + c.slice_topology_text,
                            chips);
    case TopologyKind::kGraph:
      return CheckChipCount("chips", "the graph", chips);
  }
  return Status::Ok();
}

/// Checks what the loader can check on its own: required keys present,
/// dims positive, twisted shapes, wraparound length, chip count for the
/// device assignment, at most kMaxChips chips.
Status CheckShape(const TopologyConfig& c) {
  TPUSIM_RETURN_IF_ERROR(CheckDimensions(c));
  return CheckSize(c);
}

/// CheckShape without the size check.
Status CheckDimensions(const TopologyConfig& c) {
  const std::string kind(KindOf(c.kind).name);
  auto dims_text = [&] {
    std::string s;
    for (size_t i = 0; i < c.dims.size(); ++i) s += (i ? "x" : "") + std::to_string(c.dims[i]);
    return s;
  };
  switch (c.kind) {
    case TopologyKind::kTorus:
    case TopologyKind::kMesh:
    case TopologyKind::kTwistedTorus:
      if (c.dims.empty()) return InvalidArgument("dims: " + kind + " needs dimensions");
      if (std::ssize(c.dims) > kMaxGridDims) {
        return InvalidArgument(
            "dims: a " + (c.kind == TopologyKind::kTwistedTorus ? "twisted torus" : kind) +
            " has at most " + std::to_string(kMaxGridDims) + " dimensions, got " +
            std::to_string(c.dims.size()));
      }
      for (int64_t d : c.dims) {
        if (d <= 0)
          return InvalidArgument("dims: every dimension must be positive, got " + dims_text());
      }
      if (!c.wraparound.empty() && c.wraparound.size() != c.dims.size()) {
        return InvalidArgument("wraparound: " + std::to_string(c.wraparound.size()) +
                               " entries for " + std::to_string(c.dims.size()) + " dimensions");
      }
      if (c.kind == TopologyKind::kTwistedTorus) {
        const int64_t lo = *std::min_element(c.dims.begin(), c.dims.end());
        const int64_t hi = *std::max_element(c.dims.begin(), c.dims.end());
        const bool ok = c.dims.size() == 3 && hi == 2 * lo &&
                        std::all_of(c.dims.begin(), c.dims.end(),
                                    [&](int64_t d) { return d == lo || d == hi; });
        if (!ok) {
          return InvalidArgument(
              "dims: twisted torus needs 2A=B=C or 2A=2B=C (e.g. 4x4x8, 4x8x8), got " +
              dims_text());
        }
      }
      return Status::Ok();
    case TopologyKind::kFatTree:
      if (c.fat_tree_radix < 2 || c.fat_tree_radix % 2 != 0) {
        return InvalidArgument("radix: fat tree needs an even switch radix >= 2, got " +
                               std::to_string(c.fat_tree_radix));
      }
      if (c.fat_tree_levels < 1) return InvalidArgument("levels: fat tree needs at least 1 level");
      if (c.fat_tree_levels > kMaxFatTreeLevels) {
        return InvalidArgument("levels: a fat tree has at most " +
                               std::to_string(kMaxFatTreeLevels) + " levels, got " +
                               std::to_string(c.fat_tree_levels));
      }
      return Status::Ok();
    case TopologyKind::kSwitch:
      if (c.dims.size() != 1 || c.dims[0] < 1)
        return InvalidArgument("chips: switch needs a chip count >= 1");
      return Status::Ok();
    case TopologyKind::kMultiSlice:
      if (c.slices < 1) return InvalidArgument("slices: multi-slice needs at least 1 slice");
      if (c.slice_topology_text.empty()) {
        return InvalidArgument("slice: multi-slice needs a slice topology, e.g. slice=torus:4x4");
      }
      return Status::Ok();
    case TopologyKind::kGraph:
      if (c.graph_chips < 1) return InvalidArgument("chips: graph needs a chip count >= 1");
      return Status::Ok();
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// YAML.

/// "FILE:LINE:COL: error: topology", the start of every message about `node`.
std::string ErrorAtTopology(std::string_view file, const YAML::Node& node) {
  return Where(file, node.Mark()) + ": error: topology";
}

/// "FILE:LINE:COL: error: topology.KEY.PATH: what". `message` starts with the
/// key path below `topology`, or with ": " for the mapping itself.
Status ErrorAt(std::string_view file, const YAML::Node& node, const std::string& message) {
  return InvalidArgument(Printable(ErrorAtTopology(file, node) +
                                   (message.starts_with(": ") ? "" : ".") + message));
}

/// A sequence of whole numbers, e.g. dims or a device assignment.
StatusOr<std::vector<int64_t>> ReadCounts(std::string_view file, const YAML::Node& node,
                                          const std::string& path) {
  if (!node.IsSequence()) {
    return ErrorAt(
        file, node,
        path + ": expected a sequence of whole numbers, got " + std::string(NodeKind(node)));
  }
  std::vector<int64_t> values;
  for (const YAML::Node& item : node) {
    StatusOr<int64_t> v = item.IsScalar()
                              ? ParseCount(item.Scalar())
                              : StatusOr<int64_t>(InvalidArgument("expected a whole number"));
    if (!v.ok()) return ErrorAt(file, item, path + ": " + v.status().message());
    values.push_back(*v);
  }
  return values;
}

/// A mapping's entries with duplicate-key and unknown-key checks.
using Entries = std::vector<std::pair<std::string, YAML::Node>>;
StatusOr<Entries> ReadEntries(std::string_view file, const YAML::Node& map, const std::string& path,
                              const std::vector<std::string_view>& known) {
  Entries entries;
  std::map<std::string, std::string> seen;
  for (const auto& entry : map) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) return ErrorAt(file, key, path + ": keys must be plain names");
    const std::string name = key.Scalar();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return ErrorAt(file, key, path + ": unknown key " + Quote(name) + " (known: " + list + ")");
    }
    if (auto [it, inserted] = seen.emplace(name, Where(file, key.Mark())); !inserted) {
      return ErrorAt(file, key,
                     (path.empty() ? name : path + "." + name) + ": duplicate key (first at " +
                         it->second + ")");
    }
    entries.emplace_back(name, entry.second);
  }
  return entries;
}

/// Records in config.where that `part` was written at `node`, key path `path`.
void Place(TopologyConfig& config, const std::string& part, std::string_view file,
           const YAML::Node& node, const std::string& path) {
  config.where[part] = ErrorAtTopology(file, node) + (path.empty() ? "" : "." + path);
}

/// Places `part` and each key of its mapping `entries`, written at key path `path`.
void PlaceEntries(TopologyConfig& config, const std::string& part, std::string_view file,
                  const YAML::Node& item, const std::string& path, const Entries& entries) {
  Place(config, part, file, item, path);
  for (const auto& [key, value] : entries) {
    Place(config, part + "." + key, file, value, path + "." + key);
  }
}

/// A link in a fault: [a, b] chip ids, or [[x, y, ...], [x, y, ...]]
/// coordinates on a grid.
StatusOr<LinkRef> ReadLinkRef(std::string_view file, const YAML::Node& node,
                              const std::string& path, const TopologyConfig& config) {
  if (!node.IsSequence() || node.size() != 2) {
    return ErrorAt(file, node, path + ": expected [a, b] (chip ids or coordinates)");
  }
  int64_t ends[2] = {0, 0};
  for (size_t i = 0; i < 2; ++i) {
    const YAML::Node& end = node[i];
    if (end.IsScalar()) {
      StatusOr<int64_t> id = ParseCount(end.Scalar());
      if (!id.ok()) return ErrorAt(file, end, path + ": " + id.status().message());
      ends[i] = *id;
      continue;
    }
    const bool grid = config.kind == TopologyKind::kTorus || config.kind == TopologyKind::kMesh ||
                      config.kind == TopologyKind::kTwistedTorus;
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> coords, ReadCounts(file, end, path));
    if (!grid || coords.size() != config.dims.size()) {
      return ErrorAt(file, end,
                     path + ": coordinates need a grid topology with " +
                         std::to_string(config.dims.size()) + " dimensions");
    }
    int64_t id = 0;
    for (size_t a = coords.size(); a-- > 0;) {
      if (coords[a] >= config.dims[a]) {
        return ErrorAt(file, end,
                       path + ": coordinate " + std::to_string(coords[a]) + " is outside axis " +
                           std::to_string(a) + " of size " + std::to_string(config.dims[a]));
      }
      // Saturating: dims are not yet checked against kMaxChips (CheckShape
      // refuses them after every key is read), and within it nothing saturates.
      id = SatAdd(SatMul(id, config.dims[a]), coords[a]);
    }
    ends[i] = id;
  }
  return LinkRef{ends[0], ends[1]};
}

Status ReadFaults(std::string_view file, const YAML::Node& node, TopologyConfig& config) {
  if (!node.IsSequence()) {
    return ErrorAt(file, node, "faults: expected a sequence, got " + std::string(NodeKind(node)));
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& item = node[i];
    const std::string path = "faults[" + std::to_string(i) + "]";
    if (!item.IsMap())
      return ErrorAt(file, item,
                     path + ": expected a mapping {link: [a, b], ...} or {chip: N, ...}");
    TPUSIM_ASSIGN_OR_RETURN(Entries entries,
                            ReadEntries(file, item, path, {"link", "chip", "at", "bandwidth"}));
    std::optional<LinkRef> link;
    std::optional<int64_t> chip;
    Picoseconds at;
    std::optional<double> fraction;
    for (const auto& [key, value] : entries) {
      const std::string key_path = path + "." + key;
      if (key == "link") {
        TPUSIM_ASSIGN_OR_RETURN(LinkRef ref, ReadLinkRef(file, value, key_path, config));
        link = ref;
        continue;
      }
      if (!value.IsScalar()) return ErrorAt(file, value, key_path + ": expected a single value");
      if (key == "chip") {
        StatusOr<int64_t> c = ParseCount(value.Scalar());
        if (!c.ok()) return ErrorAt(file, value, key_path + ": " + c.status().message());
        chip = *c;
      } else if (key == "at") {
        StatusOr<Picoseconds> t = ParseTime(value.Scalar());
        if (!t.ok()) return ErrorAt(file, value, key_path + ": " + t.status().message());
        at = *t;
      } else {
        StatusOr<double> f = ParseReal(value.Scalar());
        if (!f.ok() || *f >= 1.0) {
          return ErrorAt(file, value,
                         key_path + ": expected the remaining bandwidth fraction in [0, 1), got " +
                             Quote(value.Scalar()));
        }
        fraction = *f;
      }
    }
    if (link.has_value() == chip.has_value()) {
      return ErrorAt(file, item, path + ": needs exactly one of 'link' or 'chip'");
    }
    if (chip) {
      if (fraction) return ErrorAt(file, item, path + ": 'bandwidth' applies to links only");
      PlaceEntries(config, "chip_faults[" + std::to_string(config.chip_faults.size()) + "]", file,
                   item, path, entries);
      config.chip_faults.push_back(ChipFault{*chip, at});
    } else {
      PlaceEntries(config, "faults[" + std::to_string(config.faults.size()) + "]", file, item,
                   path, entries);
      config.faults.push_back(LinkFault{*link, at, fraction.value_or(0.0)});
    }
  }
  return Status::Ok();
}

Status ReadSlowDevices(std::string_view file, const YAML::Node& node, TopologyConfig& config) {
  if (!node.IsSequence()) {
    return ErrorAt(file, node,
                   "slow_devices: expected a sequence, got " + std::string(NodeKind(node)));
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& item = node[i];
    const std::string path = "slow_devices[" + std::to_string(i) + "]";
    if (!item.IsMap()) return ErrorAt(file, item, path + ": expected {device: N, factor: F}");
    TPUSIM_ASSIGN_OR_RETURN(Entries entries, ReadEntries(file, item, path, {"device", "factor"}));
    SlowDevice slow;
    bool has_device = false;
    for (const auto& [key, value] : entries) {
      if (!value.IsScalar())
        return ErrorAt(file, value, path + "." + key + ": expected a single value");
      if (key == "device") {
        StatusOr<int64_t> d = ParseCount(value.Scalar());
        if (!d.ok()) return ErrorAt(file, value, path + ".device: " + d.status().message());
        slow.device = *d;
        has_device = true;
      } else {
        StatusOr<double> f = ParseReal(value.Scalar());
        if (!f.ok() || *f < 1.0) {
          return ErrorAt(file, value,
                         path + ".factor: expected a number >= 1, got " + Quote(value.Scalar()));
        }
        slow.factor = *f;
      }
    }
    if (!has_device) return ErrorAt(file, item, path + ": needs 'device'");
    PlaceEntries(config, path, file, item, path, entries);
    config.slow_devices.push_back(slow);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<TopologyConfig> ParseTopologyShortForm(std::string_view text) {
  const std::string quoted = "invalid topology " + Quote(text) + ": ";
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return InvalidArgument(quoted + "expected KIND:SHAPE, e.g. torus:4x4 (kinds: " + KindList() +
                           ")");
  }
  const KindName* kind = FindKind(text.substr(0, colon));
  if (kind == nullptr || kind->kind == TopologyKind::kGraph) {
    return InvalidArgument(quoted + "unknown kind '" + std::string(text.substr(0, colon)) +
                           "' (short forms: torus, mesh, twisted, fattree, switch, multislice; "
                           "graph needs the YAML form)");
  }
  TopologyConfig config;
  config.kind = kind->kind;
  std::string_view rest = text.substr(colon + 1);
  // Grid kinds and switch start with their shape; the others are all key=value.
  if (kind->kind != TopologyKind::kFatTree && kind->kind != TopologyKind::kMultiSlice) {
    const size_t comma = rest.find(',');
    const Status shape = ApplyScalar(config, kind->kind == TopologyKind::kSwitch ? "chips" : "dims",
                                     rest.substr(0, comma));
    if (!shape.ok()) return InvalidArgument(quoted + shape.message());
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  std::set<std::string> seen;
  while (!rest.empty()) {
    const size_t eq = rest.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument(quoted + "expected key=value, got '" +
                             std::string(rest.substr(0, rest.find(','))) + "'");
    }
    const std::string key(rest.substr(0, eq));
    // `slice=` takes the rest of the text: the slice's own short form.
    const size_t comma = key == "slice" ? std::string_view::npos : rest.find(',', eq);
    const std::string_view value =
        rest.substr(eq + 1, comma == std::string_view::npos ? comma : comma - eq - 1);
    if (!Accepts(*kind, key) || key == "kind" || key == "dims" || key == "chips" ||
        key == "edges" || key == "device_assignment" || key == "faults" || key == "slow_devices") {
      std::string known;
      for (std::string_view k : kind->keys) {
        if (k != "dims" && k != "chips" && k != "edges")
          known += (known.empty() ? "" : ", ") + std::string(k);
      }
      known += std::string(known.empty() ? "" : ", ") +
               "link_bandwidth, hop_latency, devices_per_chip";
      return InvalidArgument(quoted + "unknown key " + Quote(key) + " for " +
                             std::string(kind->name) + " (known: " + known + ")");
    }
    if (!seen.insert(key).second)
      return InvalidArgument(quoted + "key " + Quote(key) + " given twice");
    const Status applied = ApplyScalar(config, key, value);
    if (!applied.ok()) return InvalidArgument(quoted + applied.message());
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  const Status shape = CheckShape(config);
  if (!shape.ok()) return InvalidArgument(quoted + shape.message());
  return config;
}

StatusOr<TopologyConfig> ParseTopologyYaml(const YAML::Node& node, std::string_view file) {
  if (node.IsScalar()) {
    StatusOr<TopologyConfig> config = ParseTopologyShortForm(node.Scalar());
    if (!config.ok()) {
      return ErrorAt(file, node, ": " + config.status().message());
    }
    Place(*config, "", file, node, "");
    return config;
  }
  if (!node.IsMap()) {
    return InvalidArgument(
        Where(file, node.Mark()) +
        ": error: topology: expected a short form like torus:4x4 or a mapping, got " +
        std::string(NodeKind(node)));
  }
  const YAML::Node kind_node = node["kind"];
  if (!kind_node) {
    return InvalidArgument(Where(file, node.Mark()) + ": error: topology: missing key 'kind' (" +
                           KindList() + ")");
  }
  const KindName* kind = kind_node.IsScalar() ? FindKind(kind_node.Scalar()) : nullptr;
  if (kind == nullptr) {
    return ErrorAt(file, kind_node, "kind: expected one of " + KindList());
  }
  TopologyConfig config;
  config.kind = kind->kind;
  Place(config, "", file, node, "");
  std::vector<std::string_view> known = {"kind"};
  known.insert(known.end(), kind->keys.begin(), kind->keys.end());
  known.insert(known.end(), kCommonKeys.begin(), kCommonKeys.end());
  TPUSIM_ASSIGN_OR_RETURN(Entries entries, ReadEntries(file, node, "", known));
  // dims first: wraparound and coordinates in faults depend on it. (Entries
  // are not reordered: assigning a YAML::Node rewrites the node it refers to.)
  std::vector<const std::pair<std::string, YAML::Node>*> order;
  for (const auto& entry : entries) {
    if (entry.first == "dims") order.insert(order.begin(), &entry);
    if (entry.first != "dims" && entry.first != "kind") order.push_back(&entry);
  }
  for (const auto* entry : order) {
    const std::string& key = entry->first;
    const YAML::Node& value = entry->second;
    Place(config, key, file, value, key);
    if (key == "dims" || (key == "device_assignment")) {
      TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> values, ReadCounts(file, value, key));
      (key == "dims" ? config.dims : config.device_assignment) = values;
      if (key == "device_assignment") {
        for (size_t i = 0; i < value.size(); ++i) {
          const std::string part = key + "[" + std::to_string(i) + "]";
          Place(config, part, file, value[i], part);
        }
      }
    } else if (key == "wraparound" && value.IsSequence()) {
      for (const YAML::Node& flag : value) {
        StatusOr<bool> f = flag.IsScalar()
                               ? ParseFlag(flag.Scalar())
                               : StatusOr<bool>(InvalidArgument("expected true or false"));
        if (!f.ok()) return ErrorAt(file, flag, "wraparound: " + f.status().message());
        config.wraparound.push_back(*f);
      }
    } else if (key == "edges") {
      if (!value.IsSequence()) return ErrorAt(file, value, "edges: expected a sequence of [a, b]");
      for (size_t i = 0; i < value.size(); ++i) {
        const std::string path = "edges[" + std::to_string(i) + "]";
        TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> ends, ReadCounts(file, value[i], path));
        if (ends.size() != 2) return ErrorAt(file, value[i], path + ": expected [a, b]");
        Place(config, path, file, value[i], path);
        config.edges.push_back(LinkRef{ends[0], ends[1]});
      }
    } else if (key == "faults") {
      TPUSIM_RETURN_IF_ERROR(ReadFaults(file, value, config));
    } else if (key == "slow_devices") {
      TPUSIM_RETURN_IF_ERROR(ReadSlowDevices(file, value, config));
    } else {
      if (!value.IsScalar()) {
        return ErrorAt(file, value,
                       key + ": expected a single value, got " + std::string(NodeKind(value)));
      }
      const Status applied = ApplyScalar(config, key, value.Scalar());
      if (!applied.ok()) return ErrorAt(file, value, applied.message());
    }
  }
  if (config.kind == TopologyKind::kTorus && config.wraparound.size() == 1 &&
      config.dims.size() > 1) {
    config.wraparound.assign(config.dims.size(), config.wraparound[0]);
  }
  const Status shape = CheckShape(config);
  if (!shape.ok()) {
    const std::string key = shape.message().substr(0, shape.message().find(':'));
    const YAML::Node at = node[key] ? node[key] : node;
    return ErrorAt(file, at, shape.message());
  }
  return config;
}

StatusOr<TopologyConfig> ParseTopologyFile(const std::string& text, std::string_view file) {
  YAML::Node root;
  try {
    root = LoadOneDocument(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(Printable(Where(file, e.mark) + ": error: " + e.msg));
  }
  const YAML::Node node = root.IsMap() && root["topology"] ? root["topology"] : root;
  return ParseTopologyYaml(node, file);
}

int64_t ChipCount(const TopologyConfig& c) {
  int64_t chips = 1;
  switch (c.kind) {
    case TopologyKind::kTorus:
    case TopologyKind::kMesh:
    case TopologyKind::kTwistedTorus:
      for (const int64_t d : c.dims) chips = SatMul(chips, d);
      return chips;
    case TopologyKind::kFatTree: {
      // arity^levels: arity 0 or 1 stays where it is, any other saturates
      // within 63 levels.
      const int64_t arity = c.fat_tree_radix / 2;
      if (arity <= 1) return c.fat_tree_levels > 0 ? arity : 1;
      for (int64_t l = 0; l < c.fat_tree_levels && chips < INT64_MAX; ++l) {
        chips = SatMul(chips, arity);
      }
      return chips;
    }
    case TopologyKind::kSwitch:
      return c.dims.empty() ? 0 : c.dims[0];
    case TopologyKind::kMultiSlice: {
      const StatusOr<TopologyConfig> slice = ParseTopologyShortForm(c.slice_topology_text);
      return slice.ok() ? SatMul(ChipCount(*slice), c.slices) : 0;
    }
    case TopologyKind::kGraph:
      return c.graph_chips;
  }
  return 0;
}

namespace {

Status NoTpuWraparoundRule(const TopologyConfig& config, const ChipConfig& chip) {
  return TopologyError(config, "wraparound",
                       "tpu has no rule for chip " + Quote(chip.name) +
                           " (known: tpu-v4, tpu-v5p, tpu-v7x, tpu-v5e, tpu-v6e and presets "
                           "inheriting from them; not tpu-v3); write the wraparound per axis");
}

/// `wraparound: tpu` resolved for `chip` (ResolveChipDefaults).
Status ApplyTpuWraparound(TopologyConfig& config, const ChipConfig& chip) {
  if (!config.tpu_wraparound) return Status::Ok();
  // Whole 4x4x4 cubes wrap [GC-v4, SB, GC-v5p; 7x: ASSUMPTION, the same cubes];
  // v5e and v6e pods are 16x16 and wrap only full axes [SB, GC-v6e]. tpu-facts
  // states no rule for v3 ("2D torus" only): its preset inherits tpu-v4's
  // numbers, not its pods, so the search stops there.
  enum class Rule { kMultipleOf4, kSize16, kUnknown };
  const std::vector<std::pair<std::string_view, Rule>> rules = {
      {"tpu-v4", Rule::kMultipleOf4},  {"tpu-v5p", Rule::kMultipleOf4},
      {"tpu-v7x", Rule::kMultipleOf4}, {"tpu-v5e", Rule::kSize16},
      {"tpu-v6e", Rule::kSize16},      {"tpu-v3", Rule::kUnknown},
  };
  for (const std::string& name : {chip.name, chip.inherits}) {
    for (const auto& [preset, rule] : rules) {
      if (name != preset) continue;
      if (rule == Rule::kUnknown) return NoTpuWraparoundRule(config, chip);
      config.wraparound.clear();
      for (int64_t d : config.dims) {
        config.wraparound.push_back(rule == Rule::kMultipleOf4 ? d % 4 == 0 : d == 16);
      }
      config.tpu_wraparound = false;
      return Status::Ok();
    }
  }
  return NoTpuWraparoundRule(config, chip);
}

}  // namespace

Status ResolveChipDefaults(TopologyConfig& config, const ChipConfig& chip) {
  if (!config.devices_per_chip.has_value()) config.devices_per_chip = DevicesPerChip(chip);
  if (config.kind == TopologyKind::kMultiSlice) {
    StatusOr<TopologyConfig> slice = ParseTopologyShortForm(config.slice_topology_text);
    if (!slice.ok()) return slice.status();
    const Status applied = ApplyTpuWraparound(*slice, chip);
    if (!applied.ok()) return TopologyError(config, "slice", applied.message());
    config.slice_topology_text = CanonicalTopologyText(*slice);
    return Status::Ok();
  }
  return ApplyTpuWraparound(config, chip);
}

Status TopologyError(const TopologyConfig& config, const std::string& part,
                     const std::string& message) {
  // "faults[0].link" -> "faults[0]" -> "faults" -> "": the nearest part
  // written; the rest of the path follows its key path.
  for (std::string at = part;;) {
    if (const auto it = config.where.find(at); it != config.where.end()) {
      const std::string rest = part.substr(at.size());
      return InvalidArgument(it->second + (at.empty() && !rest.empty() ? "." : "") + rest + ": " +
                             message);
    }
    if (at.empty()) break;
    const size_t cut = at.find_last_of(".[");
    at.resize(cut == std::string::npos ? 0 : cut);
  }
  return InvalidArgument((part.empty() ? "topology" : part) + ": " + message);
}

std::string CanonicalTopologyText(const TopologyConfig& c) {
  const KindName& kind = KindOf(c.kind);
  std::string s = std::string(kind.name) + ":";
  auto dims = [](const std::vector<int64_t>& v) {
    std::string t;
    for (size_t i = 0; i < v.size(); ++i) t += (i ? "x" : "") + std::to_string(v[i]);
    return t;
  };
  auto real = [](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  std::vector<std::string> parts;
  switch (c.kind) {
    case TopologyKind::kTorus: {
      parts.push_back(dims(c.dims));
      if (c.tpu_wraparound) {
        parts.push_back("wraparound=tpu");
      } else if (!c.wraparound.empty()) {
        std::vector<int64_t> flags;
        for (bool w : c.wraparound) flags.push_back(w ? 1 : 0);
        parts.push_back("wraparound=" + dims(flags));
      }
      break;
    }
    case TopologyKind::kMesh:
    case TopologyKind::kTwistedTorus:
      parts.push_back(dims(c.dims));
      break;
    case TopologyKind::kFatTree:
      parts.push_back("radix=" + std::to_string(c.fat_tree_radix));
      parts.push_back("levels=" + std::to_string(c.fat_tree_levels));
      parts.push_back("oversubscription=" + real(c.oversubscription));
      break;
    case TopologyKind::kSwitch:
      parts.push_back(dims(c.dims));
      break;
    case TopologyKind::kMultiSlice:
      parts.push_back("slices=" + std::to_string(c.slices));
      break;
    case TopologyKind::kGraph: {
      parts.push_back("chips=" + std::to_string(c.graph_chips));
      std::string edges;
      for (const LinkRef& e : c.edges)
        edges += (edges.empty() ? "" : "/") + std::to_string(e.a) + "-" + std::to_string(e.b);
      parts.push_back("edges=" + edges);
      break;
    }
  }
  if (c.switch_latency)
    parts.push_back("switch_latency=" + std::to_string(c.switch_latency->value()) + "ps");
  if (c.dcn_bandwidth)
    parts.push_back("dcn_bandwidth=" + std::to_string(c.dcn_bandwidth->value()) + "B/s");
  if (c.dcn_latency)
    parts.push_back("dcn_latency=" + std::to_string(c.dcn_latency->value()) + "ps");
  if (c.link_bandwidth)
    parts.push_back("link_bandwidth=" + std::to_string(c.link_bandwidth->value()) + "B/s");
  if (c.hop_latency)
    parts.push_back("hop_latency=" + std::to_string(c.hop_latency->value()) + "ps");
  // 1, the default of every single-device-per-chip preset, is left out, so
  // that a resolved topology's text (golden stamps) names only what differs.
  if (c.devices_per_chip.value_or(1) != 1)
    parts.push_back("devices_per_chip=" + std::to_string(*c.devices_per_chip));
  if (!c.device_assignment.empty()) {
    std::string d;
    for (int64_t v : c.device_assignment) d += (d.empty() ? "" : "/") + std::to_string(v);
    parts.push_back("device_assignment=" + d);
  }
  for (const LinkFault& f : c.faults) {
    parts.push_back("fault=link" + std::to_string(f.link.a) + "-" + std::to_string(f.link.b) + "@" +
                    std::to_string(f.at.value()) + "ps*" + real(f.bandwidth_fraction));
  }
  for (const ChipFault& f : c.chip_faults) {
    parts.push_back("fault=chip" + std::to_string(f.chip) + "@" + std::to_string(f.at.value()) +
                    "ps");
  }
  for (const SlowDevice& d : c.slow_devices) {
    parts.push_back("slow=device" + std::to_string(d.device) + "*" + real(d.factor));
  }
  // The slice's own short form goes last: everything after slice= is its text.
  if (c.kind == TopologyKind::kMultiSlice) parts.push_back("slice=" + c.slice_topology_text);
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "," : "") + parts[i];
  return s;
}

}  // namespace tpusim::arch
