#include "sim/hlo/dot_dimensions.h"

#include <algorithm>

namespace tpusim::hlo {

std::vector<int64_t> DotFreeDimensions(int64_t rank, std::span<const int64_t> batch,
                                       std::span<const int64_t> contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

}  // namespace tpusim::hlo
