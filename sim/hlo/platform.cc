#include "sim/hlo/platform.h"

#include <string_view>

#include "sim/base/status.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/instruction.h"

namespace tpusim::hlo {
namespace {

/// Custom-call target prefixes that belong to one backend's runtime or
/// kernel libraries (XLA's GPU and CPU backends, NVIDIA TransformerEngine's
/// JAX extension, the AWS Neuron compiler).
struct TargetPrefix {
  std::string_view prefix;
  std::string_view platform;
};
constexpr TargetPrefix kForeignTargets[] = {
    {"__cublas", "GPU"}, {"__cudnn", "GPU"},     {"__triton", "GPU"},
    {"__gpu$", "GPU"},   {"te_", "GPU"},         {"__onednn", "CPU"},
    {"__xla_cpu", "CPU"}, {"AwsNeuron", "AWS Neuron"},
};

/// What `inst` shows of another backend: its platform and how, or nullopt.
std::optional<ForeignPlatform> Shows(const HloInstruction& inst) {
  if (inst.opcode() == HloOpcode::kCustomCall) {
    const std::string_view target = inst.string_attr(AttrId::kCustomCallTarget);
    for (const TargetPrefix& t : kForeignTargets) {
      if (target.starts_with(t.prefix)) {
        return ForeignPlatform{std::string(t.platform), &inst, "custom call " + Quote(target), 0};
      }
    }
  }
  if (inst.opcode() == HloOpcode::kFusion) {
    // XLA's GPU backend names its Triton and cuDNN fusions in the fusion's
    // backend config: {"fusion_backend_config": {"kind": "__triton_gemm", ...}}.
    if (const auto* config = inst.GetAttr<BackendConfig>(AttrId::kBackendConfig)) {
      for (std::string_view kind : {"\"__triton", "\"__cudnn"}) {
        if (const size_t at = config->text.find(kind); at != std::string::npos) {
          const size_t end = config->text.find('"', at + 1);
          return ForeignPlatform{"GPU", &inst,
                                 "fusion kind " + config->text.substr(at, end - at + 1), 0};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ForeignPlatform> ForeignPlatformOf(const HloModule& module) {
  std::optional<ForeignPlatform> found;
  int64_t instructions = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      std::optional<ForeignPlatform> shown = Shows(*inst);
      if (!shown.has_value()) continue;
      ++instructions;
      if (!found.has_value()) found = std::move(shown);
    }
  }
  if (found.has_value()) found->instructions = instructions;
  return found;
}

}  // namespace tpusim::hlo
