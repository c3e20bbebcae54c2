// Issue 15's "Done when" for `tpusim diff` over the whole corpus: for every
// module M (canonicalised by `tpusim fmt`),
//  - M' = M with every instruction and computation renamed is no change
//    (`tpusim diff M M'` exits 0), and
//  - each regression M'' the module admits, generated here by editing M's
//    text, exits 1 and names its cause in the first five lines of the report:
//    an inserted relayout copy pair, a changed dot/convolution precision, a
//    changed constant (a scalar, or the first element of a small 1-D array),
//    changed replica groups or source-target pairs.
// Every comparison runs in `--mode timing` (structure and time, no values),
// which keeps the test fast and lets SPMD modules too large to evaluate take
// part; a changed constant is still caught there, because a constant's values
// are part of its structural signature (docs/diff.md), reported as
// "attribute: ... (constant) constant values changed".
// A generated variant that `tpusim check` rejects is skipped (logged), not
// passed; each module must admit at least one variant, unless it is listed in
// NoVariants() with the reason, and that list holds at most 20% of the corpus;
// each kind of regression must be made from a floor share of the modules.
// Only computations reached from ENTRY are edited: a change in a computation
// that nothing calls is rightly no change.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Reading the canonical text (`tpusim fmt`): one instruction a line,
// "  [ROOT ]%name = TYPE opcode(%a, %b), attr=..., ..."; computations open
// with a line ending in "{" and close with "}".

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

/// One instruction line, taken apart.
struct Instruction {
  bool root = false;
  std::string name;        ///< without the '%'
  std::string type;        ///< e.g. "f32[64,128]{1,0}" or "(f32[], s32[])"
  std::string opcode;      ///< e.g. "dot"
  size_t operands_begin = 0;  ///< index in the line just after the opcode's '('
  size_t operands_end = 0;    ///< index in the line of the matching ')'
};

/// The index of the bracket closing the one at `open`, or npos.
size_t Matching(const std::string& s, size_t open) {
  const char o = s[open];
  const char c = o == '(' ? ')' : o == '{' ? '}' : ']';
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == o) ++depth;
    if (s[i] == c && --depth == 0) return i;
  }
  return std::string::npos;
}

std::optional<Instruction> ParseInstruction(const std::string& line) {
  Instruction ins;
  size_t i = line.find_first_not_of(' ');
  if (i == std::string::npos) return std::nullopt;
  if (line.compare(i, 5, "ROOT ") == 0) {
    ins.root = true;
    i += 5;
  }
  if (line[i] != '%') return std::nullopt;
  const size_t eq = line.find(" = ", i);
  if (eq == std::string::npos) return std::nullopt;
  ins.name = line.substr(i + 1, eq - i - 1);
  size_t t = eq + 3;
  size_t type_end;
  if (line[t] == '(') {
    type_end = Matching(line, t);
    if (type_end == std::string::npos) return std::nullopt;
    ++type_end;
  } else {
    type_end = line.find(' ', t);
    if (type_end == std::string::npos) return std::nullopt;
  }
  ins.type = line.substr(t, type_end - t);
  const size_t op_begin = type_end + 1;
  const size_t paren = line.find('(', op_begin);
  if (paren == std::string::npos) return std::nullopt;
  ins.opcode = line.substr(op_begin, paren - op_begin);
  ins.operands_begin = paren + 1;
  const size_t close = Matching(line, paren);
  if (close == std::string::npos) return std::nullopt;
  ins.operands_end = close;
  return ins;
}

/// [first, last) line indices of the ENTRY computation's instructions.
std::optional<std::pair<size_t, size_t>> EntryRange(const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("ENTRY ", 0) != 0) continue;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (lines[j] == "}") return std::make_pair(i + 1, j);
    }
  }
  return std::nullopt;
}

/// For each line, whether it is an instruction of a computation reached from
/// ENTRY (a change elsewhere changes nothing the module runs).
std::vector<bool> ReachableLines(const std::vector<std::string>& lines) {
  static const std::regex kName("%([A-Za-z0-9_.\\-]+)");
  struct Computation {
    size_t begin = 0, end = 0;  ///< instruction lines [begin, end)
    std::set<std::string> refs;
  };
  std::map<std::string, Computation> computations;
  std::string entry;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line.back() != '{' || (line[0] != '%' && line.rfind("ENTRY ", 0) != 0)) continue;
    const size_t at = line.find('%');
    const std::string name = line.substr(at + 1, line.find(' ', at) - at - 1);
    if (line.rfind("ENTRY ", 0) == 0) entry = name;
    Computation c;
    c.begin = i + 1;
    c.end = c.begin;
    while (c.end < lines.size() && lines[c.end] != "}") {
      const std::string& ins = lines[c.end];
      for (auto it = std::sregex_iterator(ins.begin(), ins.end(), kName); it != std::sregex_iterator(); ++it) {
        c.refs.insert((*it)[1].str());
      }
      ++c.end;
    }
    computations[name] = c;
  }
  std::vector<bool> reachable(lines.size(), false);
  std::set<std::string> seen = {entry};
  std::vector<std::string> work = {entry};
  while (!work.empty()) {
    const auto c = computations.find(work.back());
    work.pop_back();
    if (c == computations.end()) continue;
    for (size_t i = c->second.begin; i < c->second.end; ++i) reachable[i] = true;
    for (const std::string& ref : c->second.refs) {
      if (computations.count(ref) != 0 && seen.insert(ref).second) work.push_back(ref);
    }
  }
  return reachable;
}

// ---------------------------------------------------------------------------
// The equivalent rewrite and the regressions.

/// Every %name (instructions and computations) renamed; the same rewrite as
/// tests/harness/module_diff_test.cc's RenameAll.
std::string RenameAll(const std::string& text) {
  static const std::regex kName("%([A-Za-z0-9_.\\-]+)");
  return std::regex_replace(text, kName, "%r$1.7");
}

/// For an array type of rank >= 2 ("f32[64,128]{1,0:T(8,128)}", or without
/// a layout, which is then the default {rank-1,...,0}): the same array in the
/// reversed minor-to-major order without tiles, which is another layout.
std::optional<std::string> OtherLayout(const std::string& type) {
  static const std::regex kArray(R"(^([a-z0-9]+)\[([0-9]+(?:,[0-9]+)+)\](?:\{([0-9]+(?:,[0-9]+)+)(:[^}]*)?\})?$)");
  std::smatch m;
  if (!std::regex_match(type, m, kArray)) return std::nullopt;
  std::vector<std::string> minor_to_major;
  if (m[3].matched) {
    std::istringstream dims(m[3].str());
    for (std::string d; std::getline(dims, d, ',');) minor_to_major.push_back(d);
    std::reverse(minor_to_major.begin(), minor_to_major.end());
  } else {
    const auto rank = std::count(m[2].first, m[2].second, ',') + 1;
    for (int d = 0; d < rank; ++d) minor_to_major.push_back(std::to_string(d));
  }
  std::string other;
  for (const std::string& d : minor_to_major) other += (other.empty() ? "" : ",") + d;
  return m[1].str() + "[" + m[2].str() + "]{" + other + "}";
}

/// The ENTRY root's first operand that is an array of rank >= 2 goes through
/// a copy to another layout and a copy back: the same values, one relayout
/// pair more. Where no operand is such an array but the root is, the root is
/// copied and copied back instead.
std::optional<std::string> InsertRelayoutCopy(const std::string& text) {
  std::vector<std::string> lines = SplitLines(text);
  const auto entry = EntryRange(lines);
  if (!entry) return std::nullopt;
  std::map<std::string, std::string> types;
  std::optional<size_t> root_line;
  for (size_t i = entry->first; i < entry->second; ++i) {
    const auto ins = ParseInstruction(lines[i]);
    if (!ins) continue;
    types[ins->name] = ins->type;
    if (ins->root) root_line = i;
  }
  if (!root_line) return std::nullopt;
  const auto root = ParseInstruction(lines[*root_line]);
  const std::string operands =
      lines[*root_line].substr(root->operands_begin, root->operands_end - root->operands_begin);
  std::istringstream list(operands);
  std::string operand;
  while (std::getline(list, operand, ',')) {
    operand.erase(0, operand.find_first_not_of(' '));
    if (operand.empty() || operand[0] != '%') continue;
    const std::string name = operand.substr(1);
    const auto type = types.find(name);
    if (type == types.end()) continue;
    const std::optional<std::string> copy_type = OtherLayout(type->second);
    if (!copy_type) continue;
    // The root uses the copy back in place of this operand (its first use).
    const std::regex use("%" + std::regex_replace(name, std::regex(R"([.\-])"), R"(\$&)") + "(?=,|$)");
    const std::string rewritten =
        std::regex_replace(operands, use, "%relayout_back", std::regex_constants::format_first_only);
    lines[*root_line].replace(root->operands_begin, root->operands_end - root->operands_begin, rewritten);
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(*root_line),
                 {"  %relayout_copy = " + *copy_type + " copy(%" + name + ")",
                  "  %relayout_back = " + type->second + " copy(%relayout_copy)"});
    return JoinLines(lines);
  }
  const std::optional<std::string> copy_type = OtherLayout(root->type);
  if (!copy_type) return std::nullopt;
  lines[*root_line].erase(lines[*root_line].find("ROOT "), 5);
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(*root_line) + 1,
               {"  %relayout_copy = " + *copy_type + " copy(%" + root->name + ")",
                "  ROOT %relayout_back = " + root->type + " copy(%relayout_copy)"});
  return JoinLines(lines);
}

/// The first dot or convolution computes at another precision: highest, or
/// default where it already was highest.
std::optional<std::string> ChangePrecision(const std::string& text) {
  static const std::regex kPrecision(R"(operand_precision=\{[^}]*\})");
  std::vector<std::string> lines = SplitLines(text);
  const std::vector<bool> reachable = ReachableLines(lines);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string& line = lines[i];
    const auto ins = reachable[i] ? ParseInstruction(line) : std::nullopt;
    if (!ins || (ins->opcode != "dot" && ins->opcode != "convolution")) continue;
    std::smatch m;
    if (std::regex_search(line, m, kPrecision)) {
      const std::string now = m.str() == "operand_precision={highest,highest}"
                                  ? "operand_precision={default,default}"
                                  : "operand_precision={highest,highest}";
      line.replace(static_cast<size_t>(m.position()), static_cast<size_t>(m.length()), now);
    } else {
      line += ", operand_precision={highest,highest}";
    }
    return JoinLines(lines);
  }
  return std::nullopt;
}

/// Another literal for one element of a constant: a float becomes 0.375 (or
/// 0.625), an integer moves by one towards zero (away from it at 0), a pred
/// flips; nullopt for what is none of those.
std::optional<std::string> OtherElement(const std::string& element, bool floating) {
  if (floating) return element == "0.375" ? "0.625" : "0.375";
  if (element == "true" || element == "false") return element == "true" ? "false" : "true";
  if (element.empty() || element.find_first_not_of("-0123456789") != std::string::npos) return std::nullopt;
  const long long v = std::stoll(element);
  return std::to_string(v > 0 ? v - 1 : v + 1);
}

/// A constant gets another value: a scalar (floating point first, then
/// integer, then pred), else the first element of a small 1-D array; those of
/// the ENTRY computation before those of the computations it calls.
std::optional<std::string> ChangeConstant(const std::string& text) {
  static const std::regex kFloat(R"(^(f16|bf16|f32|f64)\[\](\{\})?$)");
  static const std::regex kInt(R"(^(s8|s16|s32|s64|u8|u16|u32|u64)\[\](\{\})?$)");
  static const std::regex kPred(R"(^pred\[\](\{\})?$)");
  static const std::regex kArray(R"(^(f16|bf16|f32|f64|s8|s16|s32|s64|u8|u16|u32|u64|pred)\[[0-9]{1,3}\](\{0\})?$)");
  std::vector<std::string> lines = SplitLines(text);
  const std::vector<bool> reachable = ReachableLines(lines);
  const auto entry = EntryRange(lines);
  std::vector<size_t> order;
  if (entry) {
    for (size_t i = entry->first; i < entry->second; ++i) order.push_back(i);
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (reachable[i] && (!entry || i < entry->first || i >= entry->second)) order.push_back(i);
  }
  for (const std::regex* kind : {&kFloat, &kInt, &kPred, &kArray}) {
    for (size_t i : order) {
      const auto ins = ParseInstruction(lines[i]);
      std::smatch m;
      if (!ins || ins->opcode != "constant" || !std::regex_match(ins->type, m, *kind)) continue;
      const bool floating = m[1].str().find('f') != std::string::npos;
      const size_t begin = ins->operands_begin, end = ins->operands_end;
      std::optional<std::string> now;
      if (kind != &kArray) {
        now = OtherElement(lines[i].substr(begin, end - begin), floating);
        if (!now) continue;
        lines[i].replace(begin, end - begin, *now);
      } else {
        if (lines[i][begin] != '{') continue;
        const size_t first_end = lines[i].find_first_of(",}", begin);
        now = OtherElement(lines[i].substr(begin + 1, first_end - begin - 1), floating);
        if (!now) continue;
        lines[i].replace(begin + 1, first_end - begin - 1, *now);
      }
      return JoinLines(lines);
    }
  }
  return std::nullopt;
}

/// Explicit groups "{{0,1},{2,3}}" as lists; nullopt for another form.
std::optional<std::vector<std::vector<int>>> ParseGroups(const std::string& groups) {
  static const std::regex kGroup(R"(\{([0-9,]*)\})");
  if (groups.size() < 2 || groups.front() != '{' || groups.back() != '}') return std::nullopt;
  std::vector<std::vector<int>> parsed;
  const std::string inner = groups.substr(1, groups.size() - 2);
  for (auto it = std::sregex_iterator(inner.begin(), inner.end(), kGroup); it != std::sregex_iterator(); ++it) {
    std::vector<int> group;
    std::istringstream ids((*it)[1].str());
    for (std::string id; std::getline(ids, id, ',');) group.push_back(std::stoi(id));
    parsed.push_back(group);
  }
  return parsed;
}

std::string PrintGroups(const std::vector<std::vector<int>>& groups) {
  std::string text = "{";
  for (size_t g = 0; g < groups.size(); ++g) {
    text += g == 0 ? "{" : ",{";
    for (size_t i = 0; i < groups[g].size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(groups[g][i]);
    text += "}";
  }
  return text + "}";
}

/// The replica groups of an all-reduce, as another valid partition of the
/// same devices (its shape does not depend on the group size): one group is
/// split in halves, several are merged. Of another collective with several
/// groups of one size (whose shapes depend on that size): two devices swap
/// groups; with one group (all-gather, reduce-scatter, all-to-all order their
/// shards by the position in the group), its order is reversed. Or a
/// collective-permute loses its last source-target pair (or its
/// only pair turns around).
std::optional<std::string> ChangeReplicaGroups(const std::string& text) {
  static const std::regex kExplicit(R"(replica_groups=(\{\{[0-9,{}]*\}\}))");
  static const std::regex kIota(R"(replica_groups=\[([0-9]+),([0-9]+)\]<=\[([0-9]+)\](?=[,\s]|$))");
  static const std::regex kPairs(R"(source_target_pairs=(\{\{[0-9,{}]*\}\}))");
  std::vector<std::string> lines = SplitLines(text);
  const std::vector<bool> reachable = ReachableLines(lines);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string& line = lines[i];
    const auto ins = reachable[i] ? ParseInstruction(line) : std::nullopt;
    if (!ins) continue;
    const bool all_reduce = ins->opcode == "all-reduce" || ins->opcode == "all-reduce-start";
    std::smatch m;
    if (std::regex_search(line, m, kExplicit)) {
      auto groups = ParseGroups(m[1].str());
      if (!groups || groups->empty()) continue;
      if (all_reduce && groups->size() == 1 && (*groups)[0].size() >= 2) {
        const std::vector<int> all = (*groups)[0];
        const auto half = static_cast<std::ptrdiff_t>(all.size() / 2);
        *groups = {std::vector<int>(all.begin(), all.begin() + half), std::vector<int>(all.begin() + half, all.end())};
      } else if (all_reduce) {
        std::vector<int> all;
        for (const auto& g : *groups) all.insert(all.end(), g.begin(), g.end());
        *groups = {all};
      } else if (groups->size() >= 2 && (*groups)[0].size() >= 2 && (*groups)[0].size() == (*groups)[1].size()) {
        std::swap((*groups)[0].back(), (*groups)[1].front());
      } else if (groups->size() == 1 && (*groups)[0].size() >= 2) {
        std::reverse((*groups)[0].begin(), (*groups)[0].end());
      } else {
        continue;
      }
      line.replace(static_cast<size_t>(m.position(1)), static_cast<size_t>(m.length(1)), PrintGroups(*groups));
      return JoinLines(lines);
    }
    if (all_reduce && std::regex_search(line, m, kIota)) {
      const int g = std::stoi(m[1].str()), s = std::stoi(m[2].str()), n = std::stoi(m[3].str());
      std::string now;
      if (g == 1 && s >= 2 && s % 2 == 0) {
        now = "[2," + std::to_string(s / 2) + "]<=[" + std::to_string(n) + "]";
      } else if (g > 1) {
        now = "[1," + std::to_string(g * s) + "]<=[" + std::to_string(n) + "]";
      } else {
        continue;
      }
      line.replace(static_cast<size_t>(m.position()), static_cast<size_t>(m.length()), "replica_groups=" + now);
      return JoinLines(lines);
    }
    if (ins->opcode.rfind("collective-permute", 0) == 0 && std::regex_search(line, m, kPairs)) {
      auto pairs = ParseGroups(m[1].str());
      if (!pairs || pairs->empty()) continue;
      if (pairs->size() >= 2) {
        pairs->pop_back();
      } else if ((*pairs)[0].size() == 2 && (*pairs)[0][0] != (*pairs)[0][1]) {
        std::swap((*pairs)[0][0], (*pairs)[0][1]);
      } else {
        continue;
      }
      line.replace(static_cast<size_t>(m.position(1)), static_cast<size_t>(m.length(1)), PrintGroups(*pairs));
      return JoinLines(lines);
    }
  }
  return std::nullopt;
}

/// One kind of regression: how to make it, and what the report's first lines
/// must say (any one of `names`).
struct VariantKind {
  std::string id;
  std::optional<std::string> (*make)(const std::string&);
  std::vector<std::string> names;
};

const std::vector<VariantKind>& VariantKinds() {
  static const auto* kinds = new std::vector<VariantKind>{
      {"relayout_copy", InsertRelayoutCopy, {"copy"}},
      {"precision", ChangePrecision, {"precision"}},
      {"constant", ChangeConstant, {"constant"}},
      {"replica_groups", ChangeReplicaGroups, {"replica_groups", "source_target_pairs", "collective"}},
  };
  return *kinds;
}

/// Modules that admit no variant at all, each with the reason.
const std::map<std::string, std::string>& NoVariants() {
  static const auto* none = new std::map<std::string, std::string>{
      // Collections of test computations behind a dummy ENTRY that returns
      // its scalar parameter and calls none of them: nothing that runs can
      // be changed (a change in a computation never called is no change).
      {"custom_call_variants.hlo", "dummy scalar ENTRY, other computations never called"},
      {"hlo_import_all_ops.hlo", "dummy scalar ENTRY, other computations never called"},
      // Only 1-D arrays (no relayout possible), and no dot, convolution,
      // constant or collective: asynchronous slices and copies alone.
      {"msa_async_slice_and_copy.hlo", "only 1-D arrays; no dot, constant or collective"},
  };
  return *none;
}

/// Variants `tpusim diff` does not catch (a tpusim gap), "module/kind" with
/// the reason; the test checks they are still not caught, so a fix must
/// remove the entry. None at the time of writing: every variant is caught.
const std::map<std::string, std::string>& Gaps() {
  static const auto* gaps = new std::map<std::string, std::string>{};
  return *gaps;
}

// ---------------------------------------------------------------------------

/// The first `n` lines of the report.
std::string Head(const std::string& text, int n = 5) {
  std::istringstream in(text);
  std::string line, head;
  for (int i = 0; i < n && std::getline(in, line); ++i) head += line + "\n";
  return head;
}

RunResult DiffTiming(const std::string& before, const std::string& after) {
  return RunBinary(TPUSIM_BINARY, {"diff", before, after, "--mode", "timing", "--chip", "tpu-v5e"});
}

bool NamesAny(const std::string& head, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return head.find(n) != std::string::npos; });
}

std::vector<std::string> CorpusModules() {
  std::vector<fs::path> paths;
  EXPECT_TRUE(ListModules(TPUSIM_CORPUS_DIR, paths));
  std::vector<std::string> names;
  for (const fs::path& p : paths) names.push_back(p.filename().string());
  return names;
}

class DiffCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(DiffCorpus, RenamedIsNoChangeAndEachRegressionIsNamed) {
  const std::string& name = GetParam();
  ScratchDir dir;
  const RunResult fmt = RunBinary(TPUSIM_BINARY, {"fmt", (fs::path(TPUSIM_CORPUS_DIR) / name).string()});
  ASSERT_EQ(fmt.exit_code, 0) << Describe(fmt);
  const std::string canonical = fmt.out;
  const std::string before = dir / "before.hlo";
  WriteText(before, canonical);

  const std::string renamed = dir / "renamed.hlo";
  WriteText(renamed, RenameAll(canonical));
  const RunResult same = DiffTiming(before, renamed);
  EXPECT_EQ(same.exit_code, 0) << "renaming every instruction is no change, but:\n" << Describe(same);

  std::string applied, skipped;
  for (const VariantKind& kind : VariantKinds()) {
    const std::optional<std::string> variant = kind.make(canonical);
    if (!variant) continue;
    const std::string path = dir / (kind.id + ".hlo");
    WriteText(path, *variant);
    const RunResult check = RunBinary(TPUSIM_BINARY, {"check", path});
    if (check.exit_code != 0) {
      skipped += " " + kind.id;
      std::cout << "[ variant ] " << name << ": " << kind.id << " rejected by check, skipped: "
                << Head(check.err + check.out, 3);
      continue;
    }
    applied += " " + kind.id;
    const RunResult r = DiffTiming(before, path);
    ASSERT_NE(r.exit_code, 2) << kind.id << ": " << Describe(r);
    std::cout << "[ verdict ] " << name << " " << kind.id << ": " << Head(r.out, 1);
    const auto gap = Gaps().find(name + "/" + kind.id);
    const bool caught = r.exit_code == 1 && NamesAny(Head(r.out), kind.names);
    if (gap == Gaps().end()) {
      EXPECT_EQ(r.exit_code, 1) << kind.id << " is a regression, but:\n" << Describe(r);
      EXPECT_TRUE(NamesAny(Head(r.out), kind.names))
          << kind.id << ": the first 5 lines do not name the cause (any of "
          << ::testing::PrintToString(kind.names) << "):\n" << Describe(r);
    } else {
      EXPECT_FALSE(caught) << name << "/" << kind.id << " is listed as a gap (" << gap->second
                           << ") but is now caught: remove it from Gaps()";
    }
  }
  std::cout << "[ variants ] " << name << ":" << (applied.empty() ? " none" : applied)
            << (skipped.empty() ? "" : " (rejected by check:" + skipped + ")") << "\n";
  if (NoVariants().count(name) == 0) {
    EXPECT_FALSE(applied.empty()) << name << " admits no regression variant";
  } else {
    EXPECT_TRUE(applied.empty()) << name << " is listed in NoVariants() but admits:" << applied;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, DiffCorpus, ::testing::ValuesIn(CorpusModules()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id;
                           for (char c : fs::path(info.param).stem().string()) {
                             id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return id;
                         });

TEST(DiffCorpusLists, AtMostOneFifthWithoutVariantsAndAllInTheCorpus) {
  const std::vector<std::string> modules = CorpusModules();
  const std::set<std::string> present(modules.begin(), modules.end());
  EXPECT_LE(NoVariants().size() * 5, modules.size());
  for (const auto& [name, reason] : NoVariants()) {
    EXPECT_EQ(present.count(name), 1u) << name << " is listed but not in the corpus";
  }
  for (const auto& [entry, reason] : Gaps()) {
    EXPECT_EQ(present.count(entry.substr(0, entry.find('/'))), 1u) << entry << " is listed but not in the corpus";
  }
}

// The generators keep their reach: each kind of regression is made from at
// least this share of the corpus (what `tpusim check` then accepts is checked
// module by module above). At the time of writing, of 64 modules: 46 relayout
// copies, 25 precisions, 39 constants, 21 replica groups or pairs.
TEST(DiffCorpusLists, EachKindOfRegressionIsMadeFromEnoughModules) {
  const std::map<std::string, double> floors = {
      {"relayout_copy", 0.6}, {"precision", 0.3}, {"constant", 0.5}, {"replica_groups", 0.25}};
  const std::vector<std::string> modules = CorpusModules();
  std::map<std::string, int> made;
  for (const std::string& name : modules) {
    const RunResult fmt = RunBinary(TPUSIM_BINARY, {"fmt", (fs::path(TPUSIM_CORPUS_DIR) / name).string()});
    ASSERT_EQ(fmt.exit_code, 0) << Describe(fmt);
    for (const VariantKind& kind : VariantKinds()) made[kind.id] += kind.make(fmt.out).has_value() ? 1 : 0;
  }
  for (const VariantKind& kind : VariantKinds()) {
    std::cout << "[ variants ] " << kind.id << ": " << made[kind.id] << " of " << modules.size() << " modules\n";
    EXPECT_GE(made[kind.id], floors.at(kind.id) * static_cast<double>(modules.size())) << kind.id;
  }
}

}  // namespace
}  // namespace tpusim::test
