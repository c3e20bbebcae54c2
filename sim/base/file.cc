#include "sim/base/file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sim/base/printable.h"

namespace tpusim {
namespace {

/// Closes a file descriptor on scope exit unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  /// Closes now and reports close()'s errno (0 on success).
  int Close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;  ///< the descriptor to close; -1 once closed
};

Status ReadError(const std::string& path, int err) {
  std::string message = Printable(path) + ": error: cannot open file: " + std::strerror(err);
  return err == ENOENT ? NotFound(std::move(message)) : InvalidArgument(std::move(message));
}

Status WriteError(const std::string& path, int err) {
  return InvalidArgument(Printable(path) + ": error: cannot write file: " + std::strerror(err));
}

/// Writes all of `data`, retrying short writes and EINTR; returns errno or 0.
int WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

/// The process umask. umask() can only be read by setting it, so this sets it
/// and restores it at once; tpusim writes files from one thread per process.
mode_t CurrentUmask() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

/// Where a write to `path` lands: `path` itself, or what its chain of
/// symbolic links names (relative targets taken from each link's directory;
/// the last target may not exist yet). ELOOP after 40 links, as the kernel.
StatusOr<std::string> ResolveSymlinks(const std::string& path) {
  std::string at = path;
  for (int links = 0; links < 40; ++links) {
    struct stat st;
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return at;
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(at.c_str(), target.data(), target.size());
    if (n < 0) return WriteError(path, errno);
    target.resize(static_cast<size_t>(n));
    const size_t slash = at.rfind('/');
    at = target.starts_with('/') || slash == std::string::npos ? target
                                                              : at.substr(0, slash + 1) + target;
  }
  return WriteError(path, ELOOP);
}

/// Writes `contents` straight into the existing non-regular file at `path`
/// (a device such as /dev/null or /dev/full, a FIFO): such a file cannot be
/// replaced, only written.
Status WriteThrough(const std::string& path, std::string_view contents) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return WriteError(path, errno);
  FdCloser closer(fd);
  if (int err = WriteAll(fd, contents); err != 0) return WriteError(path, err);
  if (int err = closer.Close(); err != 0) return WriteError(path, err);
  return Status::Ok();
}

/// WriteFileAtomically on a path that is no link: a temporary file renamed
/// over it.

Status ReplaceFile(const std::string& path, std::string_view contents) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) return WriteError(path, EISDIR);

  mode_t mode = 0666 & ~CurrentUmask();
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return WriteError(path, EISDIR);
    mode = st.st_mode & 07777;
  }

  std::string temp = (dir == "/" ? "" : dir) + "/." + base + ".tmpXXXXXX";
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return WriteError(path, errno);
  FdCloser closer(fd);
  auto fail = [&](int err) {
    ::unlink(temp.c_str());
    return WriteError(path, err);
  };

  if (int err = WriteAll(fd, contents); err != 0) return fail(err);
  if (::fchmod(fd, mode) != 0) return fail(errno);
  if (::fsync(fd) != 0) return fail(errno);
  if (int err = closer.Close(); err != 0) return fail(err);
  if (::rename(temp.c_str(), path.c_str()) != 0) return fail(errno);

  // Make the rename itself durable. Failing here leaves the new file in place,
  // so it is not reported as an error.
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO that no process writes would otherwise wait
  // for a writer forever. It changes nothing for a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ReadError(path, errno);
  FdCloser closer(fd);

  struct stat st;
  if (::fstat(fd, &st) != 0) return ReadError(path, errno);
  if (S_ISDIR(st.st_mode)) return ReadError(path, EISDIR);
  // A device such as /dev/zero never ends: no input of tpusim's is one.
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    return InvalidArgument(Printable(path) +
                           ": error: cannot read file: it is a device, not a file");
  }

  std::string contents;
  if (S_ISREG(st.st_mode) && st.st_size > 0) contents.reserve(static_cast<size_t>(st.st_size));
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      // A pipe whose writer has not written yet: wait for data or its end.
      if (errno == EAGAIN) {
        pollfd ready = {fd, POLLIN, 0};
        if (::poll(&ready, 1, -1) < 0 && errno != EINTR) return ReadError(path, errno);
        continue;
      }
      return ReadError(path, errno);
    }
    if (n == 0) break;
    // A pipe may not end either; a regular file's size is what it is.
    if (!S_ISREG(st.st_mode) && contents.size() + static_cast<size_t>(n) > kMaxStreamBytes) {
      return InvalidArgument(Printable(path) + ": error: cannot read file: more than " +
                             std::to_string(kMaxStreamBytes >> 30) +
                             " GiB from a pipe; write it to a file first");
    }
    contents.append(buffer, static_cast<size_t>(n));
  }
  // A pipe ends at once when no process has it open for writing: what a FIFO
  // nothing writes gives, rather than an empty module.
  if (S_ISFIFO(st.st_mode) && contents.empty()) {
    return InvalidArgument(Printable(path) +
                           ": error: cannot read file: not a regular file, and no process "
                           "wrote to the pipe");
  }
  return contents;
}

Status WriteFileAtomically(const std::string& requested, std::string_view contents) {
  // A device or pipe is opened by the name given: the kernel follows links
  // such as /dev/stdout -> /proc/self/fd/1 -> "pipe:[N]" to it, where the
  // link text resolved by hand names no file.
  struct stat existing;
  if (::stat(requested.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) &&
      !S_ISDIR(existing.st_mode)) {
    return WriteThrough(requested, contents);
  }
  // A symbolic link stays one: its target is replaced.
  TPUSIM_ASSIGN_OR_RETURN(const std::string path, ResolveSymlinks(requested));
  return ReplaceFile(path, contents);
}
}  // namespace tpusim
