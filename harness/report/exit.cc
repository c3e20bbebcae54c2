#include "harness/report/exit.h"

#include <ostream>
#include <string>

namespace tpusim::harness {

void PrintError(const Status& status, std::ostream& err) {
  const std::string& message = status.message();
  err << message;
  if (message.empty() || message.back() != '\n') err << '\n';
  err.flush();
}

}  // namespace tpusim::harness
