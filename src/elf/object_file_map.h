// A read-only map of a whole object file, for the ELF readers (elf_reader.cc, whose images keep
// it for their symbol names, and object_image_stubs.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cg_inject {

class ObjectFileMap {
 public:
  ObjectFileMap() = default;
  ~ObjectFileMap();
  ObjectFileMap(const ObjectFileMap&) = delete;
  ObjectFileMap& operator=(const ObjectFileMap&) = delete;

  /// Maps the regular file at `path`. Returns "" or why it cannot be read ("not a regular
  /// file", strerror). Never blocks: open() of a FIFO does not wait for a writer (issue 22 item
  /// 8). An empty file maps to no bytes.
  std::string Open(const std::string& path);

  std::string_view bytes() const { return {data_, size_}; }

  /// Takes the pages read so far out of the resident set. The map stays valid: a page read again
  /// comes back from the file (a private map that was never written to has nothing of its own).
  void DropPages() const;

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace cg_inject
