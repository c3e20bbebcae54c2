#include "sim/arch/yaml_position.h"

#include <gtest/gtest.h>

#include <string>

namespace tpusim::arch {
namespace {

/// "LINE:COL: MESSAGE" of the exception LoadOneDocument throws on `text`, or "no error".
std::string LoadError(const std::string& text) {
  try {
    LoadOneDocument(text);
  } catch (const YAML::ParserException& e) {
    return std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + ": " + e.msg;
  }
  return "no error";
}

TEST(LoadOneDocument, GivesTheDocument) {
  const YAML::Node root = LoadOneDocument("a: 1\nb: [2, 3]\n");
  EXPECT_EQ(root["a"].as<int>(), 1);
  EXPECT_EQ(root["b"][1].as<int>(), 3);
  EXPECT_TRUE(LoadOneDocument("").IsNull());
  EXPECT_TRUE(LoadOneDocument("# only a comment\n").IsNull());
}

// yaml-cpp 0.7's LoadAll never returns on these: the ',' starts no node and
// is never consumed, so each round makes another empty document.
TEST(LoadOneDocument, ATokenNoNodeStartsWithIsAnErrorNotAHang) {
  EXPECT_EQ(LoadError(","), "1:1: expected a YAML node, got ','");
  EXPECT_EQ(LoadError("# comment\n  , x: 1\n"), "2:3: expected a YAML node, got ','");
  EXPECT_EQ(LoadError("--- ,"), "1:5: expected a YAML node, got ','");
  EXPECT_EQ(LoadError("&anchor ,"), "1:9: expected a YAML node, got ','");
  EXPECT_EQ(LoadError("\xef\xbb\xbf,"), "1:1: expected a YAML node, got ','");
  // After a first document too.
  EXPECT_EQ(LoadError("a: 1\n...\n,\n"), "3:1: expected a YAML node, got ','");
}

TEST(LoadOneDocument, ASecondDocumentIsAnError) {
  EXPECT_EQ(LoadError("a: 1\n---\nb: 2\n"),
            "3:1: a second YAML document (after '---'); a file holds one");
}

TEST(LoadOneDocument, DeepNestingIsALocatedErrorThatSaysSo) {
  const std::string deep = "a: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  const std::string error = LoadError(deep);
  EXPECT_EQ(error.rfind("1:", 0), 0u) << error;
  EXPECT_NE(error.find("deep, more than the YAML reader takes"), std::string::npos) << error;
  EXPECT_EQ(LoadError("a: " + std::string(100, '[') + std::string(100, ']') + "\n"), "no error");
}

// yaml-cpp stops reading at a NUL byte: without the check, "mode: val\0ues"
// would load as "mode: val" and the rest of the file would vanish.
TEST(LoadOneDocument, ANulByteIsAnErrorAtItsPosition) {
  EXPECT_EQ(LoadError(std::string("a: 1\nmode: val\0ues\n", 19)),
            "2:10: a NUL byte; YAML text cannot hold one");
  EXPECT_EQ(LoadError(std::string("\0", 1)), "1:1: a NUL byte; YAML text cannot hold one");
}

}  // namespace
}  // namespace tpusim::arch
