// The checks of a scenario (docs/scenarios.md): outputs against their golden
// within per-output tolerances, metrics against their golden and bounds, and
// opcodes a module must not or must contain. Each failed check gives one
// message that says what differed.
#ifndef TPUSIM_HARNESS_SUITE_CHECKS_H_
#define TPUSIM_HARNESS_SUITE_CHECKS_H_

#include <map>
#include <string>
#include <vector>

#include "harness/diff/module_diff.h"
#include "harness/suite/scenario.h"
#include "sim/hlo/module.h"
#include "sim/timing/timing.h"
#include "sim/value/compare.h"
#include "sim/value/literal.h"

namespace tpusim::harness {

/// Checks the array `actual` against `golden` under `tolerance`. Empty when
/// every element is within it; otherwise "NAME: ..." with the number of
/// elements beyond it, the first one and the largest difference.
std::string CheckOutput(const std::string& name, const value::Literal& actual,
                        const value::Literal& golden, const value::ErrorSpec& tolerance);

/// Checks every metric the scenario names against its bounds and, when
/// `golden` is given, its golden value. One message per failed check.
std::vector<std::string> CheckMetrics(const Scenario& scenario,
                                      const std::map<std::string, double>& actual,
                                      const std::map<std::string, double>* golden);

/// One line on what bounded the slowest collective of a run on a network
/// ("why: on torus 4x4 ..., the slowest collective ar (all-reduce, ring) was
/// bandwidth-bound: ..."), reported beside a failed network metric; "" when
/// the run had no network.
std::string NetworkExplanation(const timing::TimingResult& result);

/// Checks `forbid_ops` and `require_ops` over the module's instructions (the
/// entry computation only, or every computation including fusion bodies).
std::vector<std::string> CheckOps(const Scenario& scenario, const hlo::HloModule& module);

/// Checks `forbid_new_ops` against the module's structural changes since the
/// module its golden was made from: one failure per instruction a matcher
/// names that is new (added, or another opcode in the golden module), in
/// tpusim diff's words.
std::vector<std::string> CheckNewOps(const Scenario& scenario, const hlo::HloModule& module,
                                     const ModuleDiff& since_golden);

/// The "cause: ..." lines of a failed scenario: the structural changes since
/// the golden module that best explain a regression (tpusim diff's ranking);
/// none when the module is the golden's.
std::vector<std::string> CauseLines(const ModuleDiff& since_golden);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_CHECKS_H_
