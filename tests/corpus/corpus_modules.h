// Which modules of the HLO corpus (TPUSIM_CORPUS_DIR) a test runs: one
// definition for the tests that walk the corpus's collectives, so that they
// cover the same modules.
#ifndef TPUSIM_TESTS_CORPUS_CORPUS_MODULES_H_
#define TPUSIM_TESTS_CORPUS_CORPUS_MODULES_H_

#include <string>
#include <vector>

namespace tpusim::test {

/// The `.hlo` files of `corpus_dir` that parse and contain a collective, by
/// file name, sorted; empty when the directory cannot be read.
std::vector<std::string> CollectiveModuleNames(const std::string& corpus_dir);

}  // namespace tpusim::test

#endif  // TPUSIM_TESTS_CORPUS_CORPUS_MODULES_H_
