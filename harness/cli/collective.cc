// `tpusim collective`: its options and the call that times them
// (harness/collective/collective_bench.h does the work).
#include <CLI/CLI.hpp>

#include <ostream>
#include <string>

#include "harness/cli/cli.h"
#include "harness/collective/collective_bench.h"
#include "sim/ici/collectives.h"
#include "sim/ici/interconnect.h"

namespace tpusim::harness {
namespace {

constexpr std::string_view kCommand = "tpusim collective: error: ";

/// The command line, typed: the sizes, the collective, its algorithm and
/// nccl-tests' element type parsed here; the groups once the topology says
/// how many chips there are.
StatusOr<CollectiveBench> CollectiveBenchOf(const CollectiveOptions& options) {
  CollectiveBench bench;
  StatusOr<ici::CollectiveKind> kind = ici::ParseCollectiveKind(options.op);
  if (!kind.ok()) return kind.status().WithContext(std::string(kCommand) + "--op");
  bench.kind = *kind;
  StatusOr<ici::Algorithm> algorithm = ici::ParseAlgorithm(options.algorithm);
  if (!algorithm.ok()) return algorithm.status().WithContext(std::string(kCommand) + "--algorithm");
  bench.algorithm = *algorithm;
  TPUSIM_ASSIGN_OR_RETURN(bench.sizes, CollectiveSizes(options.sizes));
  TPUSIM_ASSIGN_OR_RETURN(bench.datatype, ParseNcclType(options.datatype));
  bench.chip = options.chip;
  bench.overrides = options.overrides;
  bench.models_dir = options.models_dir;
  bench.topology = options.topology;
  bench.groups = options.groups;
  bench.first_devices = options.ngpus;
  bench.report = options.format == "nccl-tests" ? CollectiveReport::kNcclTests : CollectiveReport::kTable;
  bench.json = options.json;
  bench.allow_large = options.allow_large;
  return bench;
}

}  // namespace

CLI::App* AddCollectiveCommand(CLI::App& app, CollectiveOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "collective", "Time one collective (or a sweep of sizes) on an interconnect, like nccl-tests");
  cmd->add_option("--op", options.op, "The collective")
      ->required()
      ->option_text("all-reduce|all-gather|reduce-scatter|all-to-all|ragged-all-to-all|"
                    "collective-permute|collective-broadcast|send-recv");
  cmd->add_option("--bytes", options.sizes.bytes,
                  "V: all-gather the gathered result, reduce-scatter and all-reduce the operand, "
                  "all-to-all one participant's operand, permute/broadcast/send what one source "
                  "sends (e.g. 64MiB, 1GB, 4096)")
      ->option_text("SIZE");
  cmd->add_option("--sweep", options.sizes.sweep,
                  "Time every power of two from LO to HI (both included) instead of --bytes "
                  "(e.g. 1KiB:1GiB; 3:1000 times 4 to 512)")
      ->option_text("LO:HI");
  cmd->add_option("-b,--minbytes", options.sizes.min_bytes,
                  "nccl-tests' sweep instead of --bytes: the smallest size (with -e and -f)")
      ->option_text("SIZE");
  cmd->add_option("-e,--maxbytes", options.sizes.max_bytes, "nccl-tests' sweep: the largest size")
      ->option_text("SIZE");
  cmd->add_option("-f,--stepfactor", options.sizes.step_factor,
                  "nccl-tests' sweep: each size is the last times this (at least 2)")
      ->option_text("N")
      ->capture_default_str();
  cmd->add_option("-g,--ngpus", options.ngpus,
                  "One group of devices 0 to N-1 (nccl-tests' ranks) instead of --groups")
      ->option_text("N")
      ->check(PositiveNumber());
  cmd->add_option("--format", options.format,
                  "table: tpusim's, with the algorithm and what bounded it; nccl-tests: "
                  "nccl-tests' columns, header and footer, for its parsers and plots")
      ->option_text("table|nccl-tests")
      ->check(CLI::IsMember({"table", "nccl-tests"}))
      ->capture_default_str();
  cmd->add_option("-d,--datatype", options.datatype,
                  "nccl-tests' element type, for its count and type columns: int8, uint8, int32, "
                  "uint32, int64, uint64, half, float, double, bfloat16")
      ->option_text("TYPE")
      ->capture_default_str();
  cmd->add_option("--chip", options.chip,
                  "Chip preset whose ICI link bandwidth and hop latency apply: a name from "
                  "'tpusim presets' or a YAML file")
      ->required()
      ->option_text("NAME|FILE");
  cmd->add_option("-p,--param", options.overrides,
                  "Override one preset field, e.g. -p ici.hop_latency=0.5us (repeatable)")
      ->option_text("KEY=VALUE");
  AddModelsDirOption(*cmd, options.models_dir);
  cmd->add_option("--topology", options.topology,
                  "The interconnect: a short form (torus:4x4x4, mesh:8x4, twisted:4x4x8, "
                  "fattree:radix=32,levels=3, switch:64; add ,link_bandwidth=45GB/s,hop_latency=1us "
                  "to override the chip) or a YAML file (docs/interconnect.md)")
      ->required()
      ->option_text("SHORTFORM|FILE.yaml");
  cmd->add_option("--algorithm", options.algorithm, CollectiveAlgorithmChoices())
      ->option_text("NAME")
      ->capture_default_str();
  cmd->add_option(
         "--groups", options.groups,
         "Replica groups of logical devices, e.g. 0,1,2,3;4,5,6,7 (default: one group of "
         "every device); permute and send-recv send from each device to the next of its group")
      ->option_text("GROUPS");
  cmd->add_option("--json", options.json, "Also write the rows as JSON to OUT (atomically)")
      ->option_text("OUT")
      ->check(OutputFile());
  cmd->add_flag("--allow-large", options.allow_large,
                "Time a direct collective (all-to-all) of more than " +
                    std::to_string(ici::kMaxDirectTransfers) +
                    " transfers (device pairs), or any collective of more than " +
                    std::to_string(kMaxDeviceSteps) +
                    " device-steps (devices x log2 of their group, about " +
                    std::to_string(kMaxDeviceSteps / kDeviceStepsPerSecond) +
                    " s); such runs take minutes and gigabytes");
  cmd->footer(R"(Columns (as nccl-tests, doc/PERFORMANCE.md): size is --bytes; time is the
simulated duration; algbw = size / time; busbw = algbw x factor with factor
2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all,
1 for permute, broadcast and send-recv (n: devices per group). The explanation
says whether latency or bandwidth bounded the collective, the busiest link and
how many flows share it, and the longest route in hops.

Exit codes:
  0  timed
  2  usage error, unknown preset or topology, impossible topology or groups, an
     algorithm that cannot run this collective, a collective of more transfers
     or device-steps than --allow-large lets through)");
  cmd->callback([&options]() {
    const CollectiveSizeOptions& sizes = options.sizes;
    const int given = (sizes.bytes.empty() ? 0 : 1) + (sizes.sweep.empty() ? 0 : 1) +
                      (sizes.min_bytes.empty() && sizes.max_bytes.empty() ? 0 : 1);
    if (given != 1) {
      throw CLI::ValidationError("give exactly one of --bytes, --sweep and -b/-e");
    }
  });
  return cmd;
}

int RunCollective(const CollectiveOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<CollectiveBench> bench = CollectiveBenchOf(options);
  const Status status = bench.ok() ? TimeCollectiveBench(*bench, out) : bench.status();
  if (!status.ok()) {
    PrintError(status, err);
    return kExitInputError;
  }
  out.flush();
  return kExitOk;
}

}  // namespace tpusim::harness
