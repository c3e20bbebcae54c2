// The verdict of `tpusim diff` and its reports: the terminal report (headline
// and causes first, then the structure, numerics and performance sections)
// and the --json document. docs/diff.md describes both.
#ifndef TPUSIM_HARNESS_DIFF_DIFF_REPORT_H_
#define TPUSIM_HARNESS_DIFF_DIFF_REPORT_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "harness/diff/program_diff.h"
#include "harness/report/exit.h"

namespace tpusim::harness {

/// The verdict and the headline's parts.
struct Verdict {
  bool failed = false;
  bool worse = false;  ///< something got slower, bigger or less accurate
  std::vector<std::string> effects;
  std::string headline;
};

/// Fails on a structural change (unless spec.thresholds.structure_fails is
/// false), an output beyond tolerance or reshaped, or time or HBM bytes beyond
/// their tolerance; the headline names the top-ranked structural change (or,
/// with none, a change of network), then the effects.
Verdict Judge(const DiffReport& report, const DiffSpec& spec);

/// One pair's comparison, judged.
struct PairDiff {
  DiffReport report;
  Verdict verdict;
  int exit_code = kExitOk;  ///< kExitOk or kExitCheckFailed, as the verdict says
};

/// Judges what a pair's comparison found: the one judgement both the
/// two-file and the dump-directory forms make.
PairDiff JudgePair(DiffReport report, const DiffSpec& spec);

/// The terminal report: the headline and up to kReportedCauses causes, then one section
/// each for structure, numerics and performance.
void PrintDiffReport(const DiffReport& report, const Verdict& verdict, const DiffSpec& spec,
                     std::ostream& out);

/// The whole comparison as JSON (--json), with the process's `exit_code`.
std::string DiffReportJson(const DiffReport& report, const Verdict& verdict, const DiffSpec& spec,
                           int exit_code);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_DIFF_DIFF_REPORT_H_
