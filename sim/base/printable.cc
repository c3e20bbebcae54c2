#include "sim/base/printable.h"

namespace tpusim {

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char byte) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  };
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\n') || byte == 0x7f) {
        escape(byte);
      } else {
        out += static_cast<char>(byte);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: lead C2..F4 and its continuation bytes; C1 controls
    // (U+0080..U+009F, C2 80..C2 9F) are escaped like C0's.
    const size_t length = byte >= 0xc2 && byte <= 0xdf   ? 2
                          : byte >= 0xe0 && byte <= 0xef ? 3
                          : byte >= 0xf0 && byte <= 0xf4 ? 4
                                                         : 0;
    bool valid = length != 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    }
    if (valid && !(byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      escape(byte);
      ++i;
    }
  }
  return out;
}

}  // namespace tpusim
