#include "elf/object_file_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cg_inject {

ObjectFileMap::~ObjectFileMap() {
  if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
}

std::string ObjectFileMap::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return strerror(errno);
  struct stat st;
  std::string reason;
  if (fstat(fd, &st) != 0) {
    reason = strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    reason = "not a regular file";
  } else if (st.st_size > 0) {
    void* data = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      reason = strerror(errno);
    } else {
      data_ = static_cast<const char*>(data);
      size_ = static_cast<size_t>(st.st_size);
    }
  }
  close(fd);
  return reason;
}

void ObjectFileMap::DropPages() const {
  if (data_ != nullptr) madvise(const_cast<char*>(data_), size_, MADV_DONTNEED);
}

}  // namespace cg_inject
