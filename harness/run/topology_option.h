// `--topology` of the subcommands that time on a network (collective, exec,
// diff): a short form ("torus:4x4x4") or a YAML file.
#ifndef TPUSIM_HARNESS_RUN_TOPOLOGY_OPTION_H_
#define TPUSIM_HARNESS_RUN_TOPOLOGY_OPTION_H_

#include <string>
#include <string_view>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/base/status.h"

namespace tpusim::harness {

/// Reads `text`: a short form (arch::ParseTopologyShortForm), or a file
/// ending in .yaml/.yml (arch::ParseTopologyFile), and with a `chip` resolves
/// what it leaves to the chip (arch::ResolveChipDefaults). A short form's
/// errors start with `command` (e.g. "tpusim exec: error: ") and `flag`,
/// the option as the user gave it, as the other option errors do; a file's
/// are located in it.
StatusOr<arch::TopologyConfig> LoadTopologyOption(const std::string& text, std::string_view command,
                                                  const arch::ChipConfig* chip,
                                                  std::string_view flag = "--topology");

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_TOPOLOGY_OPTION_H_
