// The file operations checkpoints need beyond graph/proto_io.h's ReadFileToString and
// WriteStringToFile, as absl::Status: errors name the path and carry errno's meaning (a
// missing file is NOT_FOUND).
#ifndef DFLOW_KERNELS_IO_FILE_IO_H_
#define DFLOW_KERNELS_IO_FILE_IO_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dflow {

// A file opened for positional reads. Thread-safe: Read uses pread.
class RandomAccessFile {
 public:
  static absl::StatusOr<std::unique_ptr<RandomAccessFile>> Open(const std::string& path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Reads exactly `n` bytes at `offset` into `dst`. DATA_LOSS naming the path when the
  // file is shorter (a truncated file).
  absl::Status Read(uint64_t offset, uint64_t n, char* dst) const;

 private:
  RandomAccessFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_;
  uint64_t size_;
};

absl::Status RenameFile(const std::string& from, const std::string& to);
absl::Status DeleteFile(const std::string& path);
bool FileExists(const std::string& path);
// Creates `dir` and its missing parents (like `mkdir -p`); OK when it exists.
absl::Status RecursivelyCreateDir(const std::string& dir);
// Removes the empty directory `dir`.
absl::Status DeleteDir(const std::string& dir);

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_FILE_IO_H_
