// What a module shows of the backend that compiled it: tpusim times TPU
// programs, and a module XLA compiled for a GPU, a CPU or another accelerator
// holds that backend's kernels (custom calls, fusion kinds) which tpusim can
// only time by their bytes.
#ifndef TPUSIM_SIM_HLO_PLATFORM_H_
#define TPUSIM_SIM_HLO_PLATFORM_H_

#include <cstdint>
#include <optional>
#include <string>

#include "sim/hlo/module.h"

namespace tpusim::hlo {

/// Evidence that a module was compiled for another platform than TPU.
struct ForeignPlatform {
  std::string platform;                   ///< "GPU", "CPU" or "AWS Neuron"
  const HloInstruction* first = nullptr;  ///< the first instruction that shows it
  std::string evidence;                   ///< what `first` shows, e.g. "custom call 'te_...'"
  int64_t instructions = 0;               ///< instructions that show some platform's backend
};

/// The other platform `module` was compiled for, from its custom-call targets
/// (`__cublas$gemm`, `__cudnn$fmha...`, TransformerEngine's `te_...`,
/// `__onednn$...`, `AwsNeuron...`) and GPU fusion kinds (`__triton_gemm`);
/// nullopt when nothing in it belongs to another backend. The first such
/// instruction in computation order names the platform.
std::optional<ForeignPlatform> ForeignPlatformOf(const HloModule& module);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_PLATFORM_H_
