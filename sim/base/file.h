// Whole-file I/O for loaders and tools: read a file into memory, and replace a
// file atomically so that readers never see a partial write.
#ifndef TPUSIM_SIM_BASE_FILE_H_
#define TPUSIM_SIM_BASE_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "sim/base/status.h"

namespace tpusim {

/// Reads the whole file at `path` in binary mode (no newline translation, NUL
/// bytes kept). Errors are kNotFound when the file does not exist and
/// kInvalidArgument otherwise (a directory, no permission, a read error); the
/// message reads "PATH: error: cannot open file: REASON", REASON being
/// strerror's text (e.g. "No such file or directory", "Is a directory").
/// A pipe or FIFO is read until its writers close it; one that no process
/// writes (or that ends empty) is an error at once, not a wait for a writer.
StatusOr<std::string> ReadFile(const std::string& path);

/// The most ReadFile takes from a pipe or socket, which need not end; a
/// device (e.g. /dev/zero) it refuses outright.
inline constexpr size_t kMaxStreamBytes = size_t{1} << 30;

/// Replaces the file at `path` with `contents`: writes a temporary file in the
/// same directory, fsyncs it, renames it over `path` and fsyncs the directory.
/// Readers see either the old file or the new one, never a mix. An existing
/// file keeps its permission bits; a new one gets 0666 minus the umask. On
/// failure the temporary file is removed and `path` is untouched; the message
/// reads "PATH: error: cannot write file: REASON".
///
/// Only regular files are replaced. A symbolic link is followed (through
/// relative and chained links) and its target replaced, so the link stays; an
/// existing device, FIFO or socket (/dev/null, /dev/full, a pipe, /dev/stdout)
/// is opened by the name given and written directly, and its write errors
/// (ENOSPC on /dev/full) are returned.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace tpusim

#endif  // TPUSIM_SIM_BASE_FILE_H_
