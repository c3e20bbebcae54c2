// The resolved description of an interconnect, as written in a scenario's
// `topology:` key or in a short form (`torus:16x16`): what kind of network,
// its shape, link figures that override the chip preset's, faults, and how
// logical devices map to physical chips. Plain data; sim/ici builds the graph.
// docs/interconnect.md documents every key.
#ifndef TPUSIM_SIM_ARCH_TOPOLOGY_CONFIG_H_
#define TPUSIM_SIM_ARCH_TOPOLOGY_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/base/status.h"
#include "sim/base/units.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace tpusim::arch {

enum class TopologyKind : uint8_t {
  kTorus,         ///< N-dimensional, wraparound per axis
  kMesh,          ///< N-dimensional, no wraparound
  kTwistedTorus,  ///< 3D torus with twisted wraparound (v4/v5p shapes)
  kFatTree,       ///< k-ary n-tree of switches, optional oversubscription
  kSwitch,        ///< every chip on one switch
  kMultiSlice,    ///< slices of one topology joined by DCN
  kGraph,         ///< arbitrary edge list
};

/// A link between two nodes, by chip id (graph kind) or by chip coordinates.
struct LinkRef {
  int64_t a = 0;
  int64_t b = 0;
};

/// A fault injected into the interconnect.
struct LinkFault {
  LinkRef link;
  Picoseconds at;                 ///< when it happens (0: from the start)
  double bandwidth_fraction = 0;  ///< 0: link down; otherwise remaining bandwidth fraction
};

/// A chip that fails: every link it has goes down. Routes through it are
/// recomputed around it; a flow from or to it fails with a clear error.
struct ChipFault {
  int64_t chip = 0;
  Picoseconds at;  ///< when it happens (0: from the start)
};

/// A logical device whose compute runs slower than the preset says (noise
/// injection); the timing runtime multiplies that device's op times by `factor`.
struct SlowDevice {
  int64_t device = 0;
  double factor = 1.0;  ///< >= 1: 1.2 means 20% slower
};

/// The most chips a topology may have. Building one and timing a collective
/// on it takes about 10 s at 65,536 chips (a TPU v5p pod is 8,960); a
/// million chips ran for minutes without a word. Loaders refuse more up front.
inline constexpr int64_t kMaxChips = int64_t{1} << 16;
/// The most dimensions a torus, mesh or twisted torus may have: 16 axes of 2
/// make kMaxChips, and each axis, even of size 1, adds work to every chip.
inline constexpr int64_t kMaxGridDims = 16;
/// The most levels a fat tree may have: 16 levels of radix 4 make kMaxChips.
/// Radix 2 makes one chip at any depth, so the chip limit alone bounds nothing.
inline constexpr int64_t kMaxFatTreeLevels = 16;
/// The most devices a chip may expose: a preset's most TensorCores
/// (tensorcores_per_chip). Keeps chips x devices, and the device table, small.
inline constexpr int64_t kMaxDevicesPerChip = 16;

struct TopologyConfig {
  TopologyKind kind = TopologyKind::kTorus;
  /// torus, mesh, twisted torus: chips per axis. switch: {chips}.
  std::vector<int64_t> dims;
  /// torus: per axis (default: every axis wraps; a preset may say otherwise).
  std::vector<bool> wraparound;
  /// torus: `wraparound: tpu` was written; ApplyTpuWraparound must resolve it
  /// from the chip preset before Topology::Build.
  bool tpu_wraparound = false;
  /// fat tree: switch radix k (k/2 down, k/2 up), levels n, chips = (k/2)^n
  /// (a k/2-ary n-tree; docs/interconnect.md).
  int64_t fat_tree_radix = 0;
  int64_t fat_tree_levels = 0;
  double oversubscription = 1.0;  ///< down:up bandwidth ratio at the leaf switches
  std::optional<Picoseconds> switch_latency;
  /// multi-slice: number of slices, each a copy of `slice_topology_text`
  /// (canonical short form), joined by DCN.
  int64_t slices = 0;
  std::string slice_topology_text;
  std::optional<BytesPerSecond> dcn_bandwidth;  ///< per chip, one-way
  std::optional<Picoseconds> dcn_latency;
  /// graph: chip count and undirected edges.
  int64_t graph_chips = 0;
  std::vector<LinkRef> edges;
  /// Overrides of the chip preset's ICI figures.
  std::optional<BytesPerSecond> link_bandwidth;  ///< one-way per link
  std::optional<Picoseconds> hop_latency;
  /// Devices (TensorCores the runtime exposes as devices) per chip: 2 for
  /// TPU7x and v3, and v4/v5p without megacore. They share their chip's ICI
  /// links. Unset: the chip's (ResolveChipDefaults); 1 where no chip is known.
  std::optional<int64_t> devices_per_chip;
  /// Logical device d runs on physical chip device_assignment[d], which names
  /// every chip devices_per_chip times; empty: d / devices_per_chip.
  std::vector<int64_t> device_assignment;
  std::vector<LinkFault> faults;
  std::vector<ChipFault> chip_faults;
  /// Per-device slowdowns, parsed here so a scenario's noise lives in one place.
  std::vector<SlowDevice> slow_devices;
  /// Where the YAML form wrote each part, as the start of an error message
  /// about it: part -> "FILE:LINE:COL: error: topology.faults[2].link". Parts
  /// are named by key path below `topology` ("" for the topology itself,
  /// "dims", "edges[3]", "device_assignment[2]", "slow_devices[0].device"),
  /// except that `faults` entries are counted per list: "faults[j].link" is
  /// faults[j], "chip_faults[j].chip" is chip_faults[j]. Empty for a short
  /// form; TopologyError reads it.
  std::map<std::string, std::string> where;
};

/// An error in `part` of `config` (named as in TopologyConfig::where, e.g.
/// "faults[0].link"): "FILE:LINE:COL: error: topology.KEY.PATH: MESSAGE" at
/// the part, else at the nearest enclosing part the YAML form wrote; "PART:
/// MESSAGE" for a config with no YAML form. Topology::Build and
/// ApplyTpuWraparound report through it, so errors found after loading point
/// into the file like the loader's own.
Status TopologyError(const TopologyConfig& config, const std::string& part,
                     const std::string& message);

/// Parses the short form "KIND:SHAPE[,key=value...]", e.g. "torus:16x16",
/// "torus:4x4x4", "torus:16x8,wraparound=1x0", "mesh:8x4", "twisted:4x4x8",
/// "fattree:radix=16,levels=3,oversubscription=2", "switch:64",
/// "multislice:slices=2,slice=torus:4x4" (slice= last: the rest is its text),
/// "torus:2x2x1,devices_per_chip=2".
/// Errors quote the text and say what was expected.
StatusOr<TopologyConfig> ParseTopologyShortForm(std::string_view text);

/// Parses a `topology:` YAML value (a short-form string or a mapping).
/// `file` is used in errors: "FILE:LINE:COL: error: topology.dims: ...".
StatusOr<TopologyConfig> ParseTopologyYaml(const YAML::Node& node, std::string_view file);

/// Parses the text of a topology file as `--topology FILE` reads it: one YAML
/// document whose root, or the root's `topology:` key (so a scenario file
/// serves), is a topology value for ParseTopologyYaml. `file` is used in errors.
StatusOr<TopologyConfig> ParseTopologyFile(const std::string& text, std::string_view file);

/// The chips `config` describes, from its shape alone (INT64_MAX when the
/// product overflows; 0 for a multi-slice whose slice text does not parse):
/// what the loaders hold to kMaxChips before anything is built.
int64_t ChipCount(const TopologyConfig& config);

/// Resolves what `config` leaves to the chip that runs on it:
/// - `wraparound: tpu` (TopologyConfig::tpu_wraparound): TPU v4, v5p and 7x
///   wrap an axis whose size is a multiple of 4 (whole cubes); v5e and v6e
///   wrap only axes of size 16 (tpu-facts section 2; docs/interconnect.md).
///   `chip` is matched by its preset name, else by the preset it inherits
///   from; kInvalidArgument for a chip with no known rule.
/// - an unset devices_per_chip: the devices the runtime exposes per chip
///   (DevicesPerChip: 2 on TPU7x and v3, 1 with megacore or one TensorCore).
Status ResolveChipDefaults(TopologyConfig& config, const ChipConfig& chip);

/// Canonical text of `config` (stable; hashed into golden stamps).
std::string CanonicalTopologyText(const TopologyConfig& config);

}  // namespace tpusim::arch

#endif  // TPUSIM_SIM_ARCH_TOPOLOGY_CONFIG_H_
