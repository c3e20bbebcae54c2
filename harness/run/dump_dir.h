// XLA dump directories (--xla_dump_to): finding the after-optimizations HLO
// modules in one, by name for a scenario's `module:` (docs/scenarios.md), and
// pairing them by module name across two compiler runs for `tpusim diff
// DUMP_BEFORE DUMP_AFTER` (docs/diff.md, which names the files recognised).
#ifndef TPUSIM_HARNESS_RUN_DUMP_DIR_H_
#define TPUSIM_HARNESS_RUN_DUMP_DIR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"

namespace tpusim::harness {

/// What an after-optimizations file name says about its module.
struct DumpFileName {
  std::string module;  ///< the module's name, e.g. jit_train_step
  int64_t number = 0;  ///< XLA's module_NNNN id: differs between runs, orders one run's modules
};

/// The module a file name of XLA's `module_NNNN.NAME.[PLATFORM_]after_optimizations.txt`
/// form names (PLATFORM: tpu, cpu, gpu, sm_8.0_gpu, ... or none); nullopt for
/// any other file, XLA's reports beside the modules included.
std::optional<DumpFileName> ParseDumpFileName(std::string_view file_name);

/// One after-optimizations module of a dump directory.
struct DumpModule {
  DumpFileName name;
  std::string path;
};

/// The after-optimizations modules directly in `dir`, by name then number. An
/// unreadable directory, or one without such modules, is an input error.
StatusOr<std::vector<DumpModule>> ListDumpModules(const std::string& dir);

/// One module name's comparison: both sides, or the one side it is on.
struct DumpModulePair {
  /// The module's name; "NAME#k" for the k-th (by number) of several modules
  /// of one name in a directory.
  std::string label;
  std::optional<DumpModule> before;
  std::optional<DumpModule> after;
};

/// Every module of two dump directories, paired.
struct DumpPairing {
  std::vector<DumpModulePair> pairs;  ///< by name, then k
  /// One line per name that several modules share, saying how they were paired.
  std::vector<std::string> notes;
};

/// The path of the one module of dump directory `dir` whose name matches
/// `pattern` (a shell pattern: `*`, `?`, `[...]`), e.g. `jit_train_step` or
/// `jit_train_step*`. No match or several are input errors ("DIR holds ...",
/// for the caller to locate) that list what the directory holds; a directory
/// that is no dump is ListDumpModules' error.
StatusOr<std::string> FindDumpModule(const std::string& dir, const std::string& pattern);

/// Pairs the modules of two dumps by name, as ListDumpModules orders them.
/// Several modules of one name (a function compiled for several shapes) are
/// paired k-th with k-th in module-number order, since the numbering follows
/// compilation order; the surplus on one side stands alone.
DumpPairing PairDumpModules(const std::vector<DumpModule>& before,
                            const std::vector<DumpModule>& after);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_DUMP_DIR_H_
