// A symbol source file read through mmap, so a big perf map or jitdump is not copied into the
// heap (ReadWholeFile grows a string by doubling: a 650 MB jitdump peaked near 1 GB there) and
// the pages a reader is done with can leave the process's resident set.
//
// The bytes are those of the file when it was opened; a writer appending later changes nothing.
// A writer truncating the file while it is mapped would make reading the lost pages fault
// (SIGBUS): runtimes append to perf maps and jitdumps and never truncate them while running.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace cg_inject {

class MappedFile {
 public:
  /// Maps the regular file `path` read-only; null when it is not a regular file, is empty, or
  /// cannot be mapped (the caller reads it instead). Throws for a file that cannot be opened.
  static std::unique_ptr<MappedFile> TryOpen(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }
  /// Drops the whole pages of [begin, end) from the resident set. The bytes stay readable: the
  /// next read of them faults them back in from the page cache.
  void Release(size_t begin, size_t end) const;

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  const char* data_;
  size_t size_;
};

}  // namespace cg_inject
