#include "sim/base/file.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace tpusim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

/// A fresh directory for one test, removed with everything in it afterwards.
class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "tpusim_file_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  int EntryCount() const {
    return static_cast<int>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }

  fs::path dir_;  ///< the scratch directory
};

TEST_F(FileTest, ReadFileReturnsBytesVerbatimIncludingNulAndCarriageReturns) {
  const std::string bytes("a\r\nb\0c\xff", 7);
  {
    std::ofstream out(Path("f.bin"), std::ios::binary);
    out << bytes;
  }
  StatusOr<std::string> read = ReadFile(Path("f.bin"));
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, bytes);
}

TEST_F(FileTest, ReadFileOfEmptyFileIsEmpty) {
  std::ofstream(Path("empty")).close();
  StatusOr<std::string> read = ReadFile(Path("empty"));
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, "");
}

TEST_F(FileTest, ReadFileOfMissingFileIsNotFoundNamingThePath) {
  StatusOr<std::string> read = ReadFile(Path("missing"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(read.status().message(),
            Path("missing") + ": error: cannot open file: No such file or directory");
}

TEST_F(FileTest, ReadFileOfDirectoryIsInvalidArgument) {
  StatusOr<std::string> read = ReadFile(dir_.string());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(read.status().message(), dir_.string() + ": error: cannot open file: Is a directory");
}

TEST_F(FileTest, ReadFileRefusesADeviceThatNeverEnds) {
  // /dev/zero would fill memory: refused before a byte is read.
  StatusOr<std::string> read = ReadFile("/dev/zero");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            "/dev/zero: error: cannot read file: it is a device, not a file");
}

TEST_F(FileTest, ReadFileReadsAPipeUpToItsLimit) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  // The writer has the FIFO open before ReadFile opens it (a reader held
  // here lets its open return), then writes after a pause ReadFile waits out.
  const int holder = ::open(Path("fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(holder, 0);
  const int write_end = ::open(Path("fifo").c_str(), O_WRONLY);
  ASSERT_GE(write_end, 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(::write(write_end, "HloModule piped\n", 16), 16);
    ::close(write_end);
  });
  StatusOr<std::string> read = ReadFile(Path("fifo"));
  writer.join();
  ::close(holder);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, "HloModule piped\n");
}

// A FIFO no process writes once made ReadFile (and `tpusim check`) wait forever.
TEST_F(FileTest, ReadFileOfAFifoWithNoWriterIsAnErrorAtOnce) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> read = ReadFile(Path("fifo"));
  // A bound on waiting forever, not a speed: the read ends at once.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), Path("fifo") +
                                         ": error: cannot read file: not a regular file, and no "
                                         "process wrote to the pipe");
}

TEST_F(FileTest, WriteFileAtomicallyCreatesFileWithUmaskPermissions) {
  const mode_t old_mask = ::umask(022);
  Status written = WriteFileAtomically(Path("new.txt"), std::string("x\0y", 3));
  ::umask(old_mask);
  ASSERT_TRUE(written.ok()) << written.message();
  StatusOr<std::string> read = ReadFile(Path("new.txt"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, std::string("x\0y", 3));
  struct stat st;
  ASSERT_EQ(::stat(Path("new.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(EntryCount(), 1);  // no temporary file left behind
}

TEST_F(FileTest, WriteFileAtomicallyReplacesContentsAndKeepsPermissions) {
  ASSERT_TRUE(WriteFileAtomically(Path("f"), "a much longer first version").ok());
  ASSERT_EQ(::chmod(Path("f").c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(Path("f"), "v2").ok());
  EXPECT_EQ(*ReadFile(Path("f")), "v2");
  struct stat st;
  ASSERT_EQ(::stat(Path("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(EntryCount(), 1);
}

TEST_F(FileTest, WriteFileAtomicallyIntoMissingDirectoryFailsNamingThePath) {
  const std::string path = Path("no_such_dir/f");
  Status written = WriteFileAtomically(path, "x");
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(written.message(), path + ": error: cannot write file: No such file or directory");
}

TEST_F(FileTest, WriteFileAtomicallyOverDirectoryFailsAndLeavesNoTemporary) {
  fs::create_directory(Path("d"));
  Status written = WriteFileAtomically(Path("d"), "x");
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.message(), HasSubstr("Is a directory"));
  EXPECT_EQ(EntryCount(), 1);
}

TEST_F(FileTest, WriteFileAtomicallyRelativePathUsesCurrentDirectory) {
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir_);
  Status written = WriteFileAtomically("rel.txt", "r");
  fs::current_path(old_cwd);
  ASSERT_TRUE(written.ok()) << written.message();
  EXPECT_EQ(*ReadFile(Path("rel.txt")), "r");
}

TEST_F(FileTest, WriteFileAtomicallyThroughASymlinkReplacesTheTargetAndKeepsTheLink) {
  ASSERT_TRUE(WriteFileAtomically(Path("target"), "old").ok());
  fs::create_directory(Path("sub"));
  fs::create_symlink("../target", Path("sub/relative"));  // relative to the link's directory
  fs::create_symlink(Path("sub/relative"), Path("chained"));
  ASSERT_TRUE(WriteFileAtomically(Path("chained"), "new").ok());
  EXPECT_TRUE(fs::is_symlink(Path("chained")));
  EXPECT_TRUE(fs::is_symlink(Path("sub/relative")));
  EXPECT_EQ(*ReadFile(Path("target")), "new");
  // A link whose target does not exist yet creates it.
  fs::create_symlink(Path("later"), Path("dangling"));
  ASSERT_TRUE(WriteFileAtomically(Path("dangling"), "made").ok());
  EXPECT_TRUE(fs::is_symlink(Path("dangling")));
  EXPECT_EQ(*ReadFile(Path("later")), "made");
  // A loop of links is an error, not a hang.
  fs::create_symlink(Path("loop_b"), Path("loop_a"));
  fs::create_symlink(Path("loop_a"), Path("loop_b"));
  EXPECT_THAT(WriteFileAtomically(Path("loop_a"), "x").message(),
              HasSubstr("cannot write file: Too many levels of symbolic links"));
}

TEST_F(FileTest, WriteFileAtomicallyWritesDevicesDirectlyAndReportsTheirErrors) {
  // /dev/null stays a device (replacing it would need root, and must not happen).
  EXPECT_TRUE(WriteFileAtomically("/dev/null", "discarded").ok());
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  if (::stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
    Status written = WriteFileAtomically("/dev/full", "x");
    EXPECT_EQ(written.message(), "/dev/full: error: cannot write file: No space left on device");
  }
  // A symlink to a device writes the device.
  fs::create_symlink("/dev/null", Path("null"));
  EXPECT_TRUE(WriteFileAtomically(Path("null"), "discarded").ok());
  EXPECT_TRUE(fs::is_symlink(Path("null")));
}

TEST_F(FileTest, WriteFileAtomicallyIntoAFifoWritesThePipe) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  // A reader held open lets the write's open return, and keeps what it wrote
  // in the pipe for ReadFile.
  const int holder = ::open(Path("fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(holder, 0);
  EXPECT_TRUE(WriteFileAtomically(Path("fifo"), "through the pipe").ok());
  StatusOr<std::string> read = ReadFile(Path("fifo"));
  ::close(holder);
  EXPECT_EQ(read.ok() ? *read : read.status().message(), "through the pipe");
  struct stat st;
  ASSERT_EQ(::stat(Path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// /dev/stdout, /dev/fd/N and /proc/self/fd/N of a pipe are links whose text,
// "pipe:[N]", names no file: resolving them by hand once failed with ENOENT.
TEST_F(FileTest, WriteFileAtomicallyIntoAPipeByItsProcLinkWritesThePipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string link = "/proc/self/fd/" + std::to_string(fds[1]);
  const Status written = WriteFileAtomically(link, "through the link");
  ::close(fds[1]);
  char buffer[64] = {};
  const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
  ::close(fds[0]);
  ASSERT_TRUE(written.ok()) << written.message();
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0), "through the link");
}

}  // namespace
}  // namespace tpusim
