#include "sim/arch/preset_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sim/arch/yaml_position.h"
#include "sim/base/file.h"
#include "sim/base/fingerprint.h"
#include "sim/base/printable.h"
#include "sim/base/units.h"

namespace tpusim::arch {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// The schema: one row per leaf field, in the order of models/README.md. Both
// loading and the canonical dump walk this table, so a field added here is
// parsed, range-checked, hashed and reported as "known" everywhere at once.

template <typename T>
using Accessor = T* (*)(ChipConfig&);

/// Where a field lives in ChipConfig; the alternative also picks its parser.
using AnyAccessor = std::variant<Accessor<int64_t>, Accessor<bool>, Accessor<std::string>,
                                 Accessor<Hertz>, Accessor<Bytes>, Accessor<BytesPerSecond>,
                                 Accessor<Picoseconds>, Accessor<FlopsPerSecond>, Accessor<Cycles>>;

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

struct Field {
  std::string_view path;  ///< dotted key path, e.g. "mxu.rows"
  AnyAccessor access;     ///< member it sets
  int64_t min;            ///< smallest allowed value in the base unit (numbers only)
  int64_t max;            ///< largest allowed value: the limits keep MxuPeakBf16 in int64
  bool required;          ///< must be set by the preset chain or an override
};

#define TPUSIM_FIELD(path, member, min, max, required)                 \
  Field {                                                              \
    path, +[](ChipConfig& c) { return &c.member; }, min, max, required \
  }

constexpr int64_t kTenGHz = 10'000'000'000;

const std::array<Field, 39>& Schema() {
  static const std::array<Field, 39> kSchema = {{
      TPUSIM_FIELD("description", description, 0, 0, false),
      TPUSIM_FIELD("clock", clock, 1, kTenGHz, true),
      TPUSIM_FIELD("tensorcores_per_chip", tensorcores_per_chip, 1, 16, true),
      TPUSIM_FIELD("megacore", megacore, 0, 0, true),
      TPUSIM_FIELD("mxu.rows", mxu.rows, 1, 1024, true),
      TPUSIM_FIELD("mxu.cols", mxu.cols, 1, 1024, true),
      TPUSIM_FIELD("mxu.count_per_core", mxu.count_per_core, 1, 16, true),
      TPUSIM_FIELD("mxu.int8_rate", mxu.int8_rate, 0, 16, true),
      TPUSIM_FIELD("mxu.fp8_rate", mxu.fp8_rate, 0, 16, true),
      TPUSIM_FIELD("mxu.f16_passes", mxu.f16_passes, 0, 6, false),
      TPUSIM_FIELD("mxu.convert_exposed_percent", mxu.convert_exposed_percent, 0, 100, false),
      TPUSIM_FIELD("vpu.sublanes", vpu.sublanes, 1, 1024, true),
      TPUSIM_FIELD("vpu.lanes", vpu.lanes, 1, 1024, true),
      TPUSIM_FIELD("vpu.alus_per_slot", vpu.alus_per_slot, 1, 64, true),
      TPUSIM_FIELD("vpu.medium_op_cycles", vpu.medium_op_cycles, 1, 1024, true),
      TPUSIM_FIELD("vpu.transcendental_op_cycles", vpu.transcendental_op_cycles, 1, 1024, true),
      TPUSIM_FIELD("vpu.f16_load_ops", vpu.f16_load_ops, 0, 1024, false),
      TPUSIM_FIELD("vpu.f16_store_ops", vpu.f16_store_ops, 0, 1024, false),
      TPUSIM_FIELD("xlu.count", xlu.count, 1, 16, true),
      TPUSIM_FIELD("xlu.cycles_per_vreg", xlu.cycles_per_vreg, 1, 1024, true),
      TPUSIM_FIELD("vmem.capacity", vmem.capacity, 1, kNoLimit, true),
      TPUSIM_FIELD("vmem.bandwidth", vmem.bandwidth, 1, kNoLimit, true),
      TPUSIM_FIELD("vmem.pipeline_block", vmem.pipeline_block, 0, kNoLimit, false),
      TPUSIM_FIELD("hbm.capacity", hbm.capacity, 1, kNoLimit, true),
      TPUSIM_FIELD("hbm.bandwidth", hbm.bandwidth, 1, kNoLimit, true),
      TPUSIM_FIELD("hbm.efficiency_percent", hbm.efficiency_percent, 0, 100, false),
      TPUSIM_FIELD("hbm.access_granularity", hbm.access_granularity, 1, kNoLimit, true),
      TPUSIM_FIELD("ici.links", ici.links, 0, 64, true),
      TPUSIM_FIELD("ici.bandwidth_per_link_per_direction", ici.bandwidth_per_link_per_direction, 1,
                   kNoLimit, true),
      TPUSIM_FIELD("ici.hop_latency", ici.hop_latency, 0, kNoLimit, true),
      TPUSIM_FIELD("ici.efficiency_percent", ici.efficiency_percent, 1, 100, false),
      TPUSIM_FIELD("ici.collective_latency", ici.collective_latency, 0, kNoLimit, false),
      TPUSIM_FIELD("pcie.bandwidth", pcie.bandwidth, 0, kNoLimit, false),
      TPUSIM_FIELD("peak.bf16", peak.bf16, 1, kNoLimit, true),
      TPUSIM_FIELD("peak.int8", peak.int8, 0, kNoLimit, true),
      TPUSIM_FIELD("overhead.kernel_start", overhead.kernel_start, 0, 1'000'000'000, true),
      TPUSIM_FIELD("overhead.dma_start", overhead.dma_start, 0, 1'000'000'000, true),
      TPUSIM_FIELD("overhead.program_launch", overhead.program_launch, 0, 1'000'000'000, false),
      TPUSIM_FIELD("overhead.pipeline_step", overhead.pipeline_step, 0, 1'000'000'000, false),
  }};
  return kSchema;
}

#undef TPUSIM_FIELD

const Field* FindField(std::string_view path) {
  for (const Field& f : Schema()) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

/// True when `path` names a group of fields ("mxu"), not a leaf.
bool IsGroup(std::string_view path) {
  for (const Field& f : Schema()) {
    if (f.path.size() > path.size() && f.path.starts_with(path) && f.path[path.size()] == '.') {
      return true;
    }
  }
  return false;
}

/// The keys allowed directly under `group` ("" for the top level), in schema order.
std::string KnownKeys(std::string_view group) {
  std::vector<std::string_view> keys;
  if (group.empty()) keys.push_back("inherits");
  const std::string prefix = group.empty() ? "" : std::string(group) + ".";
  for (const Field& f : Schema()) {
    if (!f.path.starts_with(prefix)) continue;
    std::string_view rest = f.path.substr(prefix.size());
    rest = rest.substr(0, rest.find('.'));
    if (std::find(keys.begin(), keys.end(), rest) == keys.end()) keys.push_back(rest);
  }
  std::string list;
  for (std::string_view k : keys) {
    if (!list.empty()) list += ", ";
    list += k;
  }
  return list;
}

std::string_view Parent(std::string_view path) {
  const size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

// ---------------------------------------------------------------------------
// Typed values.

Status ParseValue(std::string_view text, int64_t* out) {
  int64_t v = 0;
  bool ok = !text.empty();
  for (char c : text) {
    if (c < '0' || c > '9' || v > (kNoLimit - 9) / 10) {
      ok = false;
      break;
    }
    v = v * 10 + (c - '0');
  }
  if (!ok) return InvalidArgument("expected a whole number, got " + Quote(text));
  *out = v;
  return Status::Ok();
}

Status ParseValue(std::string_view text, bool* out) {
  if (text != "true" && text != "false") {
    return InvalidArgument("expected true or false, got " + Quote(text));
  }
  *out = text == "true";
  return Status::Ok();
}

Status ParseValue(std::string_view text, std::string* out) {
  *out = std::string(text);
  return Status::Ok();
}

template <typename Q>
Status ParseQuantity(StatusOr<Q> parsed, Q* out) {
  if (!parsed.ok()) return parsed.status();
  *out = *parsed;
  return Status::Ok();
}
Status ParseValue(std::string_view t, Hertz* out) { return ParseQuantity(ParseHertz(t), out); }
Status ParseValue(std::string_view t, Bytes* out) { return ParseQuantity(ParseBytes(t), out); }
Status ParseValue(std::string_view t, BytesPerSecond* out) {
  return ParseQuantity(ParseBytesPerSecond(t), out);
}
Status ParseValue(std::string_view t, Picoseconds* out) {
  return ParseQuantity(ParsePicoseconds(t), out);
}
Status ParseValue(std::string_view t, FlopsPerSecond* out) {
  return ParseQuantity(ParseFlopsPerSecond(t), out);
}
Status ParseValue(std::string_view t, Cycles* out) { return ParseQuantity(ParseCycles(t), out); }

/// The base-unit suffix the canonical dump and range messages print.
template <typename T>
std::string_view BaseUnit() {
  if constexpr (std::is_same_v<T, Hertz>) return "Hz";
  if constexpr (std::is_same_v<T, Bytes>) return "B";
  if constexpr (std::is_same_v<T, BytesPerSecond>) return "B/s";
  if constexpr (std::is_same_v<T, Picoseconds>) return "ps";
  if constexpr (std::is_same_v<T, FlopsPerSecond>) return "FLOP/s";
  if constexpr (std::is_same_v<T, Cycles>) return "cycles";
  return "";
}

/// Parses `text` into `field` of `config`, then checks the field's range.
/// Messages start with the key path: "mxu.rows: must be at most 1024, got 2048".
Status ApplyField(const Field& field, std::string_view text, ChipConfig& config) {
  return std::visit(
      [&](auto access) -> Status {
        using T = std::remove_pointer_t<decltype(access(config))>;
        T* slot = access(config);
        T value{};
        Status parsed = ParseValue(text, &value);
        if (!parsed.ok()) return parsed.WithContext(std::string(field.path));
        if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, std::string>) {
          int64_t n = 0;
          if constexpr (std::is_same_v<T, int64_t>) {
            n = value;
          } else {
            n = value.value();
          }
          const std::string unit(BaseUnit<T>());
          if (n < field.min) {
            return InvalidArgument(std::string(field.path) + ": must be at least " +
                                   std::to_string(field.min) + unit + ", got " + Quote(text));
          }
          if (n > field.max) {
            return InvalidArgument(std::string(field.path) + ": must be at most " +
                                   std::to_string(field.max) + unit + ", got " + Quote(text));
          }
        }
        *slot = value;
        return Status::Ok();
      },
      field.access);
}

// ---------------------------------------------------------------------------
// Reading one file into flat settings.

/// One field's value as written, and where, for messages after merging.
struct Setting {
  std::string text;   ///< the scalar as written
  std::string where;  ///< "FILE:LINE:COL" or "override 'KEY=VALUE'"
};

using Settings = std::map<std::string, Setting>;

/// One preset file, validated on its own, before merging with its parents.
struct PresetFile {
  std::string inherits;        ///< the `inherits:` value, or ""
  std::string inherits_where;  ///< where `inherits:` was written
  Settings settings;           ///< every leaf this file sets
};

Status ErrorAt(const std::string& where, const std::string& message) {
  return InvalidArgument(Printable(where + ": error: " + message));
}

/// Walks the mapping `node` found at key path `group` ("" at the top level),
/// checking every key against the schema and every leaf value by parsing it.
Status ReadGroup(const std::string& file, const YAML::Node& node, const std::string& group,
                 PresetFile& out) {
  std::map<std::string, std::string> seen;  // key -> where, to report duplicates
  ChipConfig scratch;                       // leaves are parsed here only to validate them
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    const YAML::Node& value = entry.second;
    const std::string key_where = Where(file, key.Mark());
    if (!key.IsScalar()) return ErrorAt(key_where, "keys must be plain names");
    const std::string path = group.empty() ? key.Scalar() : group + "." + key.Scalar();
    const std::string value_where = value.Mark().is_null() ? key_where : Where(file, value.Mark());

    if (auto [it, inserted] = seen.emplace(path, key_where); !inserted) {
      return ErrorAt(key_where, "duplicate key " + Quote(path) + " (first at " + it->second + ")");
    }
    if (path == "inherits") {
      if (!value.IsScalar() || value.Scalar().empty()) {
        return ErrorAt(value_where, "inherits: expected a preset name or path, got " +
                                        std::string(NodeKind(value)));
      }
      out.inherits = value.Scalar();
      out.inherits_where = value_where;
      continue;
    }
    if (IsGroup(path)) {
      if (!value.IsMap()) {
        return ErrorAt(value_where,
                       path + ": expected a mapping, got " + std::string(NodeKind(value)));
      }
      TPUSIM_RETURN_IF_ERROR(ReadGroup(file, value, path, out));
      continue;
    }
    const Field* field = FindField(path);
    if (field == nullptr) {
      return ErrorAt(key_where,
                     "unknown key " + Quote(path) + " (known: " + KnownKeys(group) + ")");
    }
    if (!value.IsScalar()) {
      return ErrorAt(value_where,
                     path + ": expected a single value, got " + std::string(NodeKind(value)));
    }
    const Status valid = ApplyField(*field, value.Scalar(), scratch);
    if (!valid.ok()) return ErrorAt(value_where, valid.message());
    out.settings[path] = Setting{value.Scalar(), value_where};
  }
  return Status::Ok();
}

StatusOr<PresetFile> ReadPresetFile(const std::string& file) {
  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(file));
  YAML::Node root;
  try {
    root = LoadOneDocument(text);
  } catch (const YAML::Exception& e) {
    return ErrorAt(Where(file, e.mark), e.msg);
  }
  if (!root.IsMap()) {
    return ErrorAt(Where(file, root.Mark()),
                   "a preset must be a mapping of keys, got " + std::string(NodeKind(root)));
  }
  PresetFile preset;
  TPUSIM_RETURN_IF_ERROR(ReadGroup(file, root, "", preset));
  return preset;
}

// ---------------------------------------------------------------------------
// Names, paths and inheritance.

bool LooksLikePath(std::string_view name_or_path) {
  return name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(".yaml");
}

std::string Joined(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) {
    if (!list.empty()) list += ", ";
    list += n;
  }
  return list;
}

/// The file a preset name or path refers to. Names must exist in `models_dir`;
/// paths are taken relative to `base_dir` and checked when read.
StatusOr<std::string> ResolvePreset(std::string_view name_or_path, const fs::path& base_dir,
                                    const std::string& models_dir) {
  if (LooksLikePath(name_or_path)) {
    const fs::path path(name_or_path);
    return (path.is_absolute() ? path : base_dir / path).lexically_normal().string();
  }
  const fs::path file = fs::path(models_dir) / (std::string(name_or_path) + ".yaml");
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) return file.string();
  StatusOr<std::vector<std::string>> known = ListPresets(models_dir);
  if (!known.ok()) {
    // The directory itself is the mistake (a mistyped --models-dir), not the name.
    return NotFound("unknown chip preset " + Quote(name_or_path) + ": " + known.status().message());
  }
  return NotFound("unknown chip preset " + Quote(name_or_path) + " (known: " + Joined(*known) +
                  ")");
}

/// Reads `file` and its `inherits:` chain into merged settings, parents first.
/// `chain` holds the files being read, to detect cycles.
Status ResolveChain(const std::string& file, const std::string& models_dir,
                    std::vector<std::string>& chain, Settings& merged, std::string& inherits) {
  TPUSIM_ASSIGN_OR_RETURN(PresetFile preset, ReadPresetFile(file));
  inherits = preset.inherits;
  if (!preset.inherits.empty()) {
    StatusOr<std::string> parent =
        ResolvePreset(preset.inherits, fs::path(file).parent_path(), models_dir);
    if (!parent.ok()) {
      return Status(parent.status().code(),
                    ErrorAt(preset.inherits_where, "inherits: " + parent.status().message())
                        .message());
    }
    std::error_code ec;
    const std::string id = fs::weakly_canonical(*parent, ec).string();
    chain.push_back(fs::weakly_canonical(file, ec).string());
    if (std::find(chain.begin(), chain.end(), id) != chain.end()) {
      std::string cycle;
      for (const std::string& f : chain) cycle += fs::path(f).filename().string() + " -> ";
      return ErrorAt(preset.inherits_where,
                     "inheritance cycle: " + cycle + fs::path(id).filename().string());
    }
    std::string grandparent;
    TPUSIM_RETURN_IF_ERROR(ResolveChain(*parent, models_dir, chain, merged, grandparent));
  }
  for (auto& [path, setting] : preset.settings) merged[path] = std::move(setting);
  return Status::Ok();
}

/// Applies one "key.path=value" override to `merged`, validating it.
Status ApplyOverride(const std::string& override_text, Settings& merged) {
  const std::string where = "override " + Quote(override_text);
  const size_t eq = override_text.find('=');
  if (eq == std::string::npos) return ErrorAt(where, "expected KEY=VALUE, e.g. mxu.rows=256");
  const std::string path = override_text.substr(0, eq);
  const std::string value = override_text.substr(eq + 1);
  const Field* field = FindField(path);
  if (field == nullptr) {
    if (IsGroup(path)) {
      return ErrorAt(where,
                     Quote(path) + " is a group; set one of its keys (" + KnownKeys(path) + ")");
    }
    const std::string_view group = Parent(path);
    if (!group.empty() && !IsGroup(group)) {
      return ErrorAt(where, "unknown key " + Quote(path) + " (known: " + KnownKeys("") + ")");
    }
    return ErrorAt(where, "unknown key " + Quote(path) + " (known: " + KnownKeys(group) + ")");
  }
  ChipConfig scratch;
  const Status valid = ApplyField(*field, value, scratch);
  if (!valid.ok()) return ErrorAt(where, valid.message());
  merged[path] = Setting{value, where};
  return Status::Ok();
}

}  // namespace

StatusOr<ChipConfig> LoadChipPreset(std::string_view name_or_path, const std::string& models_dir,
                                    const std::vector<std::string>& overrides) {
  TPUSIM_ASSIGN_OR_RETURN(const std::string file,
                          ResolvePreset(name_or_path, fs::path(), models_dir));
  Settings merged;
  std::vector<std::string> chain;
  ChipConfig config;
  TPUSIM_RETURN_IF_ERROR(ResolveChain(file, models_dir, chain, merged, config.inherits));
  for (const std::string& o : overrides) TPUSIM_RETURN_IF_ERROR(ApplyOverride(o, merged));

  config.name = fs::path(file).stem().string();
  for (const Field& field : Schema()) {
    const auto it = merged.find(std::string(field.path));
    if (it == merged.end()) {
      if (field.required) {
        // No line holds a key that is missing: the preset's start stands for it.
        return ErrorAt(file + ":1:1", "missing required key " + Quote(field.path) +
                                          " (in this preset or one it inherits)");
      }
      continue;
    }
    // Values were validated when read, so this only fails if the two paths diverge.
    const Status applied = ApplyField(field, it->second.text, config);
    if (!applied.ok()) return ErrorAt(it->second.where, applied.message());
  }
  if (config.megacore && config.tensorcores_per_chip < 2) {
    return ErrorAt(merged.at("megacore").where,
                   "megacore: needs at least 2 tensorcores_per_chip, got " +
                       std::to_string(config.tensorcores_per_chip));
  }
  if (config.hbm.efficiency_percent == 0) config.hbm.efficiency_percent = 100;
  return config;
}

StatusOr<std::vector<std::string>> ListPresets(const std::string& models_dir) {
  std::error_code ec;
  fs::directory_iterator it(models_dir, ec);
  if (ec) {
    return NotFound(models_dir + ": error: cannot list chip presets: " + ec.message());
  }
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : it) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".yaml") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string CanonicalDump(const ChipConfig& config) {
  ChipConfig copy = config;  // accessors take a mutable config; the caller's stays untouched
  std::string dump;
  for (const Field& field : Schema()) {
    if (field.path == "description") continue;  // prose, not hardware
    dump += std::string(field.path) + "=";
    std::visit(
        [&](auto access) {
          using T = std::remove_pointer_t<decltype(access(copy))>;
          const T& value = *access(copy);
          if constexpr (std::is_same_v<T, bool>) {
            dump += value ? "true" : "false";
          } else if constexpr (std::is_same_v<T, int64_t>) {
            dump += std::to_string(value);
          } else if constexpr (std::is_same_v<T, std::string>) {
            dump += value;
          } else {
            dump += std::to_string(value.value()) + std::string(BaseUnit<T>());
          }
        },
        field.access);
    dump += "\n";
  }
  return dump;
}

uint64_t ConfigHash(const ChipConfig& config) { return Fnv1a(CanonicalDump(config)); }

}  // namespace tpusim::arch
