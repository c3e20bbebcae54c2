#include "sim/arch/yaml_position.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <string>
#include <vector>

namespace tpusim::arch {
namespace {

/// Where each document starts and where its root node is: enough to tell one
/// document from two, and a document that consumed no input from one that did.
class DocumentMarks final : public YAML::EventHandler {
 public:
  struct Document {
    YAML::Mark start;
    YAML::Mark root = YAML::Mark::null_mark();
  };
  std::vector<Document> documents;

  void OnDocumentStart(const YAML::Mark& mark) override { documents.push_back({mark}); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark) {
    if (documents.back().root.is_null()) documents.back().root = mark;
  }
};

/// The line and column of byte `offset` of `text`, as yaml-cpp counts them (0-based).
YAML::Mark MarkAt(const std::string& text, size_t offset) {
  YAML::Mark mark;
  mark.pos = static_cast<int>(offset);
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
    } else {
      ++mark.column;
    }
  }
  return mark;
}

/// The character `mark` points at, quoted, for a message. yaml-cpp counts
/// columns in characters after a byte-order mark, so the walk does too.
std::string CharacterAt(const std::string& text, const YAML::Mark& mark) {
  size_t at = text.rfind("\xef\xbb\xbf", 0) == 0 ? 3 : 0;
  for (int line = 0; line < mark.line && at < text.size(); ++at) {
    if (text[at] == '\n') ++line;
  }
  for (int column = 0; column < mark.column && at < text.size(); ++column) {
    do {
      ++at;
    } while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80);
  }
  if (at >= text.size()) return "the end of the text";
  const auto byte = static_cast<unsigned char>(text[at]);
  if (byte < 0x20 || byte >= 0x7F) {
    constexpr char kHex[] = "0123456789ABCDEF";
    return std::string("byte 0x") + kHex[byte >> 4] + kHex[byte & 0xF];
  }
  return "'" + std::string(1, text[at]) + "'";
}

}  // namespace

YAML::Node LoadOneDocument(const std::string& text) try {
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    throw YAML::ParserException(MarkAt(text, nul), "a NUL byte; YAML text cannot hold one");
  }
  // Three documents at most are asked for, so a parser that makes no progress
  // (a document starting where the one before it did) cannot loop.
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentMarks marks;
  for (int i = 0; i < 3 && parser.HandleNextDocument(marks); ++i) {
  }
  const std::vector<DocumentMarks::Document>& documents = marks.documents;
  for (size_t i = 1; i < documents.size(); ++i) {
    if (documents[i].start.pos == documents[i - 1].start.pos) {
      throw YAML::ParserException(
          documents[i].start, "expected a YAML node, got " + CharacterAt(text, documents[i].start));
    }
  }
  if (documents.size() > 1) {
    const DocumentMarks::Document& second = documents[1];
    throw YAML::ParserException(second.root.is_null() ? second.start : second.root,
                                "a second YAML document (after '---'); a file holds one");
  }
  return YAML::Load(text);
} catch (const YAML::DeepRecursion& e) {
  // yaml-cpp's own message for its depth limit is "bad file".
  throw YAML::ParserException(e.mark, "collections nested " + std::to_string(e.depth()) +
                                          " deep, more than the YAML reader takes");
}

}  // namespace tpusim::arch
