// `--topology` of the subcommands that time on a network (collective, exec,
// diff): a short form ("torus:4x4x4") or a YAML file.
#ifndef TPUSIM_HARNESS_RUN_TOPOLOGY_OPTION_H_
#define TPUSIM_HARNESS_RUN_TOPOLOGY_OPTION_H_

#include <string>
#include <string_view>

#include "sim/arch/topology_config.h"
#include "sim/base/status.h"

namespace tpusim::harness {

/// Reads `text`: a short form (arch::ParseTopologyShortForm), or a file
/// ending in .yaml/.yml (arch::ParseTopologyFile). Errors start with
/// `command` (e.g. "tpusim exec: error: ").
StatusOr<arch::TopologyConfig> LoadTopologyOption(const std::string& text,
                                                  std::string_view command);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_TOPOLOGY_OPTION_H_
