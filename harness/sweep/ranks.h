// The processes one `tpusim sweep` runs on: this process alone, or the ranks
// of an MPI job (`mpirun -n K tpusim sweep ...`, `srun --mpi=pmix ...`). Rank
// 0 owns the results directory: it decides which points are left, every rank
// runs its share, and the others send each finished point's result line to
// rank 0, which writes them (docs/sweeps.md, "MPI").
#ifndef TPUSIM_HARNESS_SWEEP_RANKS_H_
#define TPUSIM_HARNESS_SWEEP_RANKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tpusim::harness {

class SweepRanks {
 public:
  /// Joins the MPI job when an MPI launcher started this process (its
  /// environment says so: OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE), else
  /// runs alone without initialising MPI, so a plain run needs no launcher.
  SweepRanks();
  /// Leaves the MPI job (MPI_Finalize).
  ~SweepRanks();
  SweepRanks(const SweepRanks&) = delete;
  SweepRanks& operator=(const SweepRanks&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Collective: rank 0 passes the indices of the points left to run, or
  /// nullopt when it refuses to run (a bad results directory); every rank
  /// gets what rank 0 passed.
  std::optional<std::vector<int64_t>> SharePending(
      const std::optional<std::vector<int64_t>>& pending);
  /// Ranks other than 0: sends a finished point's result line to rank 0.
  void SendResult(const std::string& line);
  /// Ranks other than 0: tells rank 0 this rank will send nothing more.
  void SendDone();
  /// Rank 0: the result lines that have arrived since the last call.
  std::vector<std::string> Receive();
  /// Rank 0: whether every other rank has sent SendDone.
  bool OthersDone() const { return done_ranks_ == size_ - 1; }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;
  int done_ranks_ = 0;
};

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SWEEP_RANKS_H_
