// No switch over HloOpcode in sim/ or harness/ has a `default:` label, so
// that adding an opcode to opcode.def makes -Wswitch (an error under -Werror)
// point at every switch that must decide about it. -Wswitch-enum would also
// flag the switches over other enums that rightly have a default, so this test
// reads the sources instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// `text` with comments, string and character literals blanked (newlines
/// kept, so offsets still give line numbers).
std::string StripCommentsAndLiterals(const std::string& text) {
  std::string out = text;
  auto blank = [&](size_t from, size_t to) {
    for (size_t i = from; i < to && i < out.size(); ++i) {
      if (out[i] != '\n') out[i] = ' ';
    }
  };
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "//") == 0) {
      const size_t end = text.find('\n', i);
      const size_t to = end == std::string::npos ? text.size() : end;
      blank(i, to);
      i = to;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      const size_t to = end == std::string::npos ? text.size() : end + 2;
      blank(i, to);
      i = to;
    } else if (text.compare(i, 2, "R\"") == 0) {
      const size_t open = text.find('(', i);
      const std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
      const size_t end = text.find(close, open);
      const size_t to = end == std::string::npos ? text.size() : end + close.size();
      blank(i, to);
      i = to;
    } else if (text[i] == '"' ||
               (text[i] == '\'' &&
                (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))))) {
      // A quote after a digit or letter is a digit separator (1'000'000).
      size_t j = i + 1;
      while (j < text.size() && text[j] != text[i]) j += text[j] == '\\' ? 2 : 1;
      blank(i, j + 1);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

/// The offset of the brace that closes the one at `open`.
size_t MatchingBrace(const std::string& code, size_t open) {
  int depth = 0;
  for (size_t i = open; i < code.size(); ++i) {
    if (code[i] == '{') ++depth;
    if (code[i] == '}' && --depth == 0) return i;
  }
  return code.size();
}

/// The line of every switch in `source` that has a case label naming an
/// HloOpcode (or an opcode.def expansion of them) and a `default:` of its
/// own (one of a switch nested inside it does not count).
std::vector<int> OpcodeSwitchesWithDefault(const std::string& source) {
  const std::string code = StripCommentsAndLiterals(source);
  static const std::regex kSwitch(R"(\bswitch\s*\()");
  static const std::regex kOpcodeCase(
      R"(\bcase\s+(::)?(tpusim::)?(hlo::)?HloOpcode::|TPUSIM_HLO_CASE)");
  static const std::regex kDefault(R"(\bdefault\s*:)");
  std::vector<int> lines;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kSwitch);
       it != std::sregex_iterator(); ++it) {
    const size_t start = static_cast<size_t>(it->position());
    const size_t open = code.find('{', start);
    if (open == std::string::npos) continue;
    std::string body = code.substr(open + 1, MatchingBrace(code, open) - open - 1);
    // Blank the bodies of nested switches: their labels are their own.
    size_t nested = 0;
    std::smatch m;
    while (std::regex_search(body.cbegin() + static_cast<std::ptrdiff_t>(nested), body.cend(), m,
                             kSwitch)) {
      const size_t at = nested + static_cast<size_t>(m.position());
      const size_t nested_open = body.find('{', at);
      if (nested_open == std::string::npos) break;
      const size_t nested_close = std::min(MatchingBrace(body, nested_open), body.size() - 1);
      for (size_t k = at; k <= nested_close; ++k) {
        if (body[k] != '\n') body[k] = ' ';
      }
      nested = nested_close + 1;
    }
    if (std::regex_search(body, kOpcodeCase) && std::regex_search(body, kDefault)) {
      lines.push_back(1 + static_cast<int>(std::count(code.begin(), code.begin() + start, '\n')));
    }
  }
  return lines;
}

TEST(OpcodeSwitch, FindsADefaultInASwitchOverOpcodes) {
  EXPECT_THAT(OpcodeSwitchesWithDefault("int F(HloOpcode op) {\n"
                                        "  switch (op) {\n"
                                        "    case HloOpcode::kAdd: return 1;\n"
                                        "    default: return 0;\n"
                                        "  }\n"
                                        "}\n"),
              ::testing::ElementsAre(2));
}

TEST(OpcodeSwitch, IgnoresOtherSwitchesCommentsAndStrings) {
  EXPECT_THAT(
      OpcodeSwitchesWithDefault("// switch (op) { case HloOpcode::kAdd: default: }\n"
                                "const char* s = \"switch (op) { case HloOpcode::kAdd: "
                                "default: }\";\n"
                                "int n = 1'000;\n"
                                "switch (op) {\n"
                                "  case HloOpcode::kAdd:\n"
                                "    switch (kind) { case Kind::kA: break; default: break; }\n"
                                "    break;\n"
                                "}\n"
                                "switch (kind) { case Kind::kA: break; default: break; }\n"),
      ::testing::IsEmpty());
}

TEST(OpcodeSwitch, NoSwitchOverOpcodesHasADefault) {
  const std::filesystem::path root = TPUSIM_SOURCE_DIR;
  int files = 0;
  for (const char* dir : {"sim", "harness"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      ++files;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::vector<int> lines = OpcodeSwitchesWithDefault(text.str());
      EXPECT_THAT(lines, ::testing::IsEmpty())
          << std::filesystem::relative(entry.path(), root).string()
          << ": list every opcode instead of `default:` (see sim/hlo/opcode.def)";
    }
  }
  EXPECT_GT(files, 100) << "no sources under " << root;
}

}  // namespace
