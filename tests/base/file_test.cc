#include "sim/base/file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace
}  // namespace tpusim
