#include "kernels/io/file_io.h"

#include <cerrno>
#include <cstdio>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

absl::Status PathError(int error, absl::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(error, absl::StrCat(what, " ", path));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RandomAccessFile>> RandomAccessFile::Open(
    const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PathError(errno, "Cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return PathError(error, "Cannot stat", path);
  }
  return std::unique_ptr<RandomAccessFile>(
      new RandomAccessFile(path, fd, static_cast<uint64_t>(st.st_size)));
}

RandomAccessFile::~RandomAccessFile() { ::close(fd_); }

absl::Status RandomAccessFile::Read(uint64_t offset, uint64_t n, char* dst) const {
  if (offset > size_ || n > size_ - offset) {
    return absl::DataLossError(absl::StrCat("Reading ", n, " bytes at offset ", offset, " of ",
                                            path_, ", which has only ", size_,
                                            " bytes (truncated file?)"));
  }
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, dst + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return PathError(errno, "Cannot read", path_);
    if (got == 0) {
      return absl::DataLossError(absl::StrCat("Unexpected end of file in ", path_, " at offset ",
                                              offset + done));
    }
    done += static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

absl::Status RenameFile(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return PathError(errno, "Cannot rename", absl::StrCat(from, " to ", to));
  }
  return absl::OkStatus();
}

absl::Status DeleteFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return PathError(errno, "Cannot delete", path);
  return absl::OkStatus();
}

bool FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

absl::Status RecursivelyCreateDir(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return PathError(errno, "Cannot create directory", part);
    }
  }
  return absl::OkStatus();
}

absl::Status DeleteDir(const std::string& dir) {
  if (::rmdir(dir.c_str()) != 0) return PathError(errno, "Cannot delete directory", dir);
  return absl::OkStatus();
}

}  // namespace dflow
