#include "sim/base/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace tpusim {
namespace {

TEST(Printable, EscapesControlCharactersAndBytesThatAreNoUtf8) {
  EXPECT_EQ(Printable("plain text, tab-free"), "plain text, tab-free");
  EXPECT_EQ(Printable("a\x1b[31mb\x07"
                      "c\td\x7f"),
            "a\\x1b[31mb\\x07c\\x09d\\x7f");
  EXPECT_EQ(Printable("two\nlines"), "two\nlines");  // messages may span lines
  EXPECT_EQ(Printable(std::string("nul\0!", 5)), "nul\\x00!");
  // UTF-8 stays; a C1 control (U+009B, CSI) and a lone or cut byte do not.
  const std::string utf8 = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x99\x82";  // é € 🙂
  EXPECT_EQ(Printable(utf8), utf8);
  EXPECT_EQ(Printable("\xc2\x9b"), "\\xc2\\x9b");
  EXPECT_EQ(Printable("\x9b"
                      "2J \xe2\x82"),
            "\\x9b2J \\xe2\\x82");
  // Escaping twice changes nothing.
  EXPECT_EQ(Printable(Printable("a\x1b"
                                "b")),
            "a\\x1bb");
}

}  // namespace
}  // namespace tpusim
