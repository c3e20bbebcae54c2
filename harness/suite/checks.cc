#include "harness/suite/checks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "sim/base/units.h"
#include "sim/hlo/opcode.h"
#include "sim/hlo/primitive_type.h"

namespace tpusim::harness {
namespace {

/// A value in a message, to 9 significant digits.
std::string Num(double value) { return FormatSignificant(value, 9); }

/// Whether `inst` is `opcode`, or starts it asynchronously when `opcode` is
/// a collective: TPU modules run their collectives as `all-reduce-start`
/// and `-done` pairs (or `async-start` around one), which a check naming
/// `all-reduce` must see. The start alone, so a pair counts once.
bool IsOpcode(const hlo::HloInstruction& inst, std::string_view opcode) {
  if (hlo::HloOpcodeName(inst.opcode()) == opcode) return true;
  const std::optional<hlo::HloOpcode> named = hlo::HloOpcodeFromName(opcode);
  if (!named.has_value() || !hlo::IsCollective(*named) ||
      hlo::OpRoleOf(inst.opcode()) != hlo::OpRole::kAsyncStart) {
    return false;
  }
  if (inst.OpcodeSpelling() == std::string(opcode) + "-start") return true;
  const std::vector<hlo::HloComputation*> wrapped = inst.called_computations();
  return inst.opcode() == hlo::HloOpcode::kAsyncStart && wrapped.size() == 1 &&
         wrapped[0]->root() != nullptr && wrapped[0]->root()->opcode() == *named;
}

/// Whether `inst`, an instruction of `module`, is one `m` names.
bool Matches(const OpMatcher& m, const hlo::HloInstruction& inst, const hlo::HloModule& module) {
  if (m.entry_only && inst.parent() != module.entry()) return false;
  if (!IsOpcode(inst, m.opcode)) return false;
  const std::span<const int64_t> permutation = inst.dimensions();
  const bool moves_minor = !permutation.empty() &&
                           permutation.back() != static_cast<int64_t>(permutation.size()) - 1;
  return !m.minor_dims || moves_minor;
}

}  // namespace

std::string CheckOutput(const std::string& name, const value::Literal& actual,
                        const value::Literal& golden, const value::ErrorSpec& tolerance) {
  if (actual.shape().ToString() != golden.shape().ToString()) {
    return name + ": shape " + actual.shape().ToString() + " differs from the golden's " +
           golden.shape().ToString();
  }
  const value::LiteralComparison c = value::CompareLiterals(golden, actual, tolerance);
  if (c.beyond_tolerance == 0) return "";
  std::string what = tolerance.exact ? "exact" : "";
  if (tolerance.atol > 0) what += "atol " + Num(tolerance.atol);
  if (tolerance.rtol > 0) what += (what.empty() ? "" : ", ") + ("rtol " + Num(tolerance.rtol));
  if (tolerance.ulp) what += (what.empty() ? "" : ", ") + ("ulp " + std::to_string(*tolerance.ulp));
  const int64_t first = c.first_beyond_index;
  std::string message = name + ": " + std::to_string(c.beyond_tolerance) + " of " +
                        std::to_string(c.elements) + " elements differ (" + what +
                        "); first at flat index " + std::to_string(first) + ": got " +
                        Num(actual.GetAsDouble(first)) + ", golden " +
                        Num(golden.GetAsDouble(first));
  if (!tolerance.exact) message += "; largest absolute difference " + Num(c.max_abs_error);
  return message;
}

std::vector<std::string> CheckMetrics(const Scenario& scenario,
                                      const std::map<std::string, double>& actual,
                                      const std::map<std::string, double>* golden) {
  std::vector<std::string> failures;
  for (const auto& [name, check] : scenario.metrics) {
    const auto it = actual.find(name);
    if (it == actual.end()) {
      failures.push_back(name + ": not measured");
      continue;
    }
    const double value = it->second;
    if (check.min && value < *check.min) {
      failures.push_back(name + ": " + Num(value) + " is below the minimum " + Num(*check.min));
    }
    if (check.max && value > *check.max) {
      failures.push_back(name + ": " + Num(value) + " is above the maximum " + Num(*check.max));
    }
    if (check.golden && golden != nullptr) {
      const auto g = golden->find(name);
      if (g == golden->end()) {
        failures.push_back(name + ": the golden has no value for it (run --update-golden)");
        continue;
      }
      const double diff = std::fabs(value - g->second);
      if (diff > check.tolerance * std::fabs(g->second)) {
        const double percent = g->second != 0 ? diff / std::fabs(g->second) * 100 : INFINITY;
        failures.push_back(name + ": " + Num(value) + " differs from the golden " + Num(g->second) +
                           " by " + Num(percent) + "% (tolerance " + Num(check.tolerance * 100) +
                           "%)");
      }
    }
  }
  return failures;
}

std::string NetworkExplanation(const timing::TimingResult& result) {
  const timing::CollectiveRecord* slowest = nullptr;
  for (const timing::CollectiveRecord& c : result.collectives) {
    if (slowest == nullptr || c.cycles > slowest->cycles) slowest = &c;
  }
  if (slowest == nullptr) return "";
  return "why: on " + result.interconnect + ", the slowest collective " +
         slowest->instruction->name() + " (" +
         std::string(timing::CollectiveKindSpelling(slowest->kind)) + ", " +
         std::string(ici::AlgorithmName(slowest->algorithm)) + ") was " + slowest->explanation;
}

std::vector<std::string> CheckOps(const Scenario& scenario, const hlo::HloModule& module) {
  const auto find = [&module](const OpMatcher& m) -> const hlo::HloInstruction* {
    for (const auto& computation : module.computations()) {
      for (const auto& inst : computation->instructions()) {
        if (Matches(m, *inst, module)) return inst.get();
      }
    }
    return nullptr;
  };
  std::vector<std::string> failures;
  for (const OpMatcher& m : scenario.forbid_ops) {
    if (const hlo::HloInstruction* inst = find(m)) {
      const hlo::SourceLocation at = inst->location();
      failures.push_back(
          "forbidden op " + m.opcode + (m.minor_dims ? " of the minor dimension" : "") +
          (m.entry_only ? " (entry)" : "") + " found: " + inst->name() + " at " +
          module.filename() + ":" + std::to_string(at.line) + ":" + std::to_string(at.column));
    }
  }
  for (const OpMatcher& m : scenario.require_ops) {
    if (find(m) == nullptr) {
      failures.push_back("required op " + m.opcode +
                         (m.minor_dims ? " of the minor dimension" : "") + " not found" +
                         (m.entry_only ? " in the entry computation" : ""));
    }
  }
  return failures;
}

std::vector<std::string> CheckNewOps(const Scenario& scenario, const hlo::HloModule& module,
                                     const ModuleDiff& since_golden) {
  std::vector<std::string> failures;
  for (const StructuralChange& c : since_golden.changes) {
    // New to the golden: added, or a matched instruction that was another op.
    const bool new_instruction = c.kind == ChangeKind::kAdded || c.kind == ChangeKind::kOpcode;
    if (!new_instruction || c.after == nullptr) continue;
    for (const OpMatcher& m : scenario.forbid_new_ops) {
      if (!Matches(m, *c.after, module)) continue;
      if (c.before != nullptr && Matches(m, *c.before, *c.before->parent()->parent())) continue;
      failures.push_back("new " + m.opcode + (m.minor_dims ? " of the minor dimension" : "") +
                         (m.entry_only ? " (entry)" : "") +
                         ", not in the golden module: " + c.description);
      break;
    }
  }
  return failures;
}

std::vector<std::string> CauseLines(const ModuleDiff& since_golden) {
  const std::vector<const StructuralChange*> ranked = ChangesByRelevance(since_golden);
  std::vector<std::string> lines;
  for (size_t i = 0; i < ranked.size() && i < kReportedCauses; ++i) {
    lines.push_back("cause: " + ranked[i]->description);
  }
  if (ranked.size() > kReportedCauses) {
    lines.push_back("cause: ... and " + std::to_string(ranked.size() - kReportedCauses) +
                    " more structural changes since the golden module (tpusim diff lists them)");
  }
  return lines;
}

}  // namespace tpusim::harness
