#include "harness/sweep/ranks.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <mpi.h>

namespace tpusim::harness {
namespace {

constexpr int kResultTag = 1;
constexpr int kDoneTag = 2;

bool StartedByMpiLauncher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

SweepRanks::SweepRanks() {
  if (!StartedByMpiLauncher()) return;
  MPI_Init(nullptr, nullptr);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

SweepRanks::~SweepRanks() {
  if (mpi_) MPI_Finalize();
}

std::optional<std::vector<int64_t>> SweepRanks::SharePending(
    const std::optional<std::vector<int64_t>>& pending) {
  if (!mpi_) return pending;
  // The count first (-1: refused), then the indices.
  long long count = rank_ == 0 ? (pending ? static_cast<long long>(pending->size()) : -1) : 0;
  MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (count < 0) return std::nullopt;
  std::vector<long long> indices(static_cast<size_t>(count));
  if (rank_ == 0) {
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = (*pending)[i];
  }
  MPI_Bcast(indices.data(), static_cast<int>(count), MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  return std::vector<int64_t>(indices.begin(), indices.end());
}

void SweepRanks::SendResult(const std::string& line) {
  if (mpi_) {
    MPI_Send(line.data(), static_cast<int>(line.size()), MPI_CHAR, 0, kResultTag, MPI_COMM_WORLD);
  }
}

void SweepRanks::SendDone() {
  if (mpi_) MPI_Send(nullptr, 0, MPI_CHAR, 0, kDoneTag, MPI_COMM_WORLD);
}

std::vector<std::string> SweepRanks::Receive() {
  std::vector<std::string> lines;
  if (!mpi_) return lines;
  for (;;) {
    int ready = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &ready, &status);
    if (ready == 0) break;
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string line(static_cast<size_t>(count), '\0');
    MPI_Recv(line.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kDoneTag) {
      ++done_ranks_;
    } else {
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

}  // namespace tpusim::harness
