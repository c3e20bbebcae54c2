// Text from the user's files, made safe to print in a message.
#ifndef TPUSIM_SIM_BASE_PRINTABLE_H_
#define TPUSIM_SIM_BASE_PRINTABLE_H_

#include <string>
#include <string_view>

namespace tpusim {

/// `text` safe to print in an error message: control characters (C0 but
/// newline, DEL, C1) and bytes that are no UTF-8 become "\xNN" escapes, so a
/// key, value or file name quoted from the user cannot drive the terminal.
/// Every loader's located error goes through it; escaping twice changes
/// nothing.
std::string Printable(std::string_view text);

}  // namespace tpusim

#endif  // TPUSIM_SIM_BASE_PRINTABLE_H_
