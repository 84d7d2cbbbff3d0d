#include "sources/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "cg_inject/error.h"

namespace cg_inject {

std::unique_ptr<MappedFile> MappedFile::TryOpen(const std::string& path) {
  if (path == "-") return nullptr;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) ThrowSystemError("open", path, errno);
  struct stat st;
  void* data = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    data = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  }
  close(fd);  // the mapping keeps the file
  if (data == MAP_FAILED) return nullptr;
  // Readers go front to back: read ahead generously.
  madvise(data, size_t(st.st_size), MADV_SEQUENTIAL);
  return std::unique_ptr<MappedFile>(
      new MappedFile(static_cast<const char*>(data), size_t(st.st_size)));
}

MappedFile::~MappedFile() { munmap(const_cast<char*>(data_), size_); }

void MappedFile::Release(size_t begin, size_t end) const {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  begin = (begin + page - 1) / page * page;
  end = end >= size_ ? size_ : end / page * page;
  if (begin >= end) return;
  // On a read-only private file mapping this only unmaps the pages; their contents stay in the
  // page cache and in the file.
  madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
}

}  // namespace cg_inject
