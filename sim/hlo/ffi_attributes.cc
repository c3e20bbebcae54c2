#include "sim/hlo/ffi_attributes.h"

#include <charconv>
#include <system_error>
#include <vector>

namespace tpusim::hlo {
namespace {

std::string_view Trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

/// The positions in `text` of `separator` outside quoted strings and
/// brackets (`array<i64: 1, 2>` and `[1, 2]` hold commas and colons of their
/// own), or nullopt when the quotes or brackets do not balance.
std::optional<std::vector<size_t>> TopLevel(std::string_view text, char separator) {
  std::vector<size_t> at;
  std::vector<char> open;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      open.push_back(c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>');
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (open.empty() || open.back() != c) return std::nullopt;
      open.pop_back();
    } else if (c == separator && open.empty()) {
      at.push_back(i);
    }
  }
  if (quoted || !open.empty()) return std::nullopt;
  return at;
}

/// `text` split at `separator` where TopLevel finds it.
std::optional<std::vector<std::string_view>> SplitTopLevel(std::string_view text, char separator) {
  const std::optional<std::vector<size_t>> at = TopLevel(text, separator);
  if (!at) return std::nullopt;
  std::vector<std::string_view> parts;
  size_t begin = 0;
  for (size_t i : *at) {
    parts.push_back(text.substr(begin, i - begin));
    begin = i + 1;
  }
  parts.push_back(text.substr(begin));
  return parts;
}

/// An attribute's name: a bare identifier (`attn_heads`) or a quoted string,
/// given without its quotes; nullopt for anything else.
std::optional<std::string_view> AttributeName(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    const std::string_view inner = text.substr(1, text.size() - 2);
    if (inner.find('"') != std::string_view::npos) return std::nullopt;
    return inner;
  }
  const auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (text.empty() || !letter(text.front())) return std::nullopt;
  for (char c : text) {
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '$' && c != '.') return std::nullopt;
  }
  return text;
}

}  // namespace

std::optional<FfiAttributes> ParseFfiAttributes(std::string_view text) {
  text = Trim(text);
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  const std::string_view body = Trim(text.substr(1, text.size() - 2));
  FfiAttributes attributes;
  if (body.empty()) return attributes;
  const std::optional<std::vector<std::string_view>> entries = SplitTopLevel(body, ',');
  if (!entries) return std::nullopt;
  for (std::string_view entry : *entries) {
    const std::optional<std::vector<std::string_view>> sides = SplitTopLevel(entry, '=');
    if (!sides || sides->size() > 2) return std::nullopt;
    const std::optional<std::string_view> name = AttributeName(Trim(sides->front()));
    if (!name) return std::nullopt;
    std::string_view value;
    if (sides->size() == 2) {
      // `value : type`: the type follows the value's last top-level colon.
      const std::optional<std::vector<size_t>> colons = TopLevel((*sides)[1], ':');
      if (!colons) return std::nullopt;
      value = (*sides)[1].substr(0, colons->empty() ? std::string_view::npos : colons->back());
      value = Trim(value);
      if (value.empty()) return std::nullopt;
    }
    attributes.emplace(std::string(*name), std::string(value));
  }
  return attributes;
}

std::optional<int64_t> FfiInt(const FfiAttributes& attributes, std::string_view name) {
  const auto it = attributes.find(name);
  if (it == attributes.end()) return std::nullopt;
  const std::string& text = it->second;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace tpusim::hlo
