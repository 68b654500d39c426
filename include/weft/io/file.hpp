// SPDX-License-Identifier: MIT
/// @file Whole-file access for weft::io: a shared read-only memory map, and a write that leaves either the complete file or none.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/core/error.hpp"

namespace weft::io::detail {

/// A file mapped read-only into memory. Tensors loaded from it share it through a shared_ptr:
/// the mapping lives as long as the last of them. A file of 0 bytes maps nothing.
class MappedFile {
 public:
  MappedFile(const std::string& path, const char* op) : path_(path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) weft::detail::fail(op, "cannot open '", path, "': ", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      weft::detail::fail(op, "'", path, "' is not a regular file");
    }
    size_ = std::size_t(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        int e = errno;
        ::close(fd);
        weft::detail::fail(op, "cannot map '", path, "': ", std::strerror(e));
      }
      data_ = static_cast<const char*>(p);
    }
    ::close(fd);  // the mapping stays valid without the descriptor
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Writes `pieces` one after another to `path`. They go to a sibling file that is renamed over
/// `path` at the end, so that a failed write (disk full, a bad directory) leaves no half file
/// that a later load would take for a damaged one.
inline void write_file(const std::string& path, const std::vector<std::string_view>& pieces, const char* op) {
  const std::string partial = path + ".weft-partial";
  std::FILE* f = std::fopen(partial.c_str(), "wb");
  if (!f) weft::detail::fail(op, "cannot create '", partial, "': ", std::strerror(errno));
  bool ok = true;
  for (std::string_view p : pieces) ok = ok && (p.empty() || std::fwrite(p.data(), 1, p.size(), f) == p.size());
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(partial.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(partial.c_str());
    weft::detail::fail(op, "cannot write '", path, "': ", std::strerror(e));
  }
}

}  // namespace weft::io::detail
