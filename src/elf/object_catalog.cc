// ObjectCatalog: one lazy open per distinct `ob=` path, absence remembered like success so a
// profile naming a missing object thousands of times costs one failed open and one warning.
#include "cg_inject/object_catalog.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cg_inject/diagnostics.h"
#include "elf/elf_header.h"
#include "elf/elf_reader.h"
#include "elf/object_image_stubs.h"

namespace cg_inject {

ObjectCatalog::ObjectCatalog(ObjectCatalogOptions options, Diagnostics* diagnostics)
    : options_(std::move(options)), diagnostics_(diagnostics) {}

ObjectCatalog::~ObjectCatalog() = default;

const ObjectImage* ObjectCatalog::Lookup(std::string_view path) {
  if (auto it = images_.find(path); it != images_.end()) return it->second.get();

  std::string image_path(path);
  // Callgrind writes "???" (and names like "[vdso]") for code outside any file. Such names are
  // not objects at all, so they are neither counted nor warned about.
  if (path.empty() || path.front() != '/') {
    return images_.emplace(std::move(image_path), nullptr).first->second.get();
  }
  std::string why_absent;
  std::unique_ptr<ObjectImage> image;
  if (auto it = preloaded_images_.find(path); it != preloaded_images_.end()) {
    image = std::move(it->second.image);
    why_absent = std::move(it->second.why_absent);
    preloaded_images_.erase(it);
  } else {
    image = TryOpenElfObject(image_path, options_, &why_absent);
  }
  if (image) {
    ++opened_;
  } else {
    if (diagnostics_ != nullptr) {
      diagnostics_->Warn("elf: object absent", options_.root + image_path + ": " + why_absent);
    }
    absent_.push_back({image_path, std::move(why_absent)});
  }
  return images_.emplace(std::move(image_path), std::move(image)).first->second.get();
}

void ObjectCatalog::Preload(std::string_view path) {
  if (path.empty() || path.front() != '/') return;
  const std::string image_path(path);
  if (!images_.contains(path) && !preloaded_images_.contains(path) && MayHaveFixedAddresses(path)) {
    Preloaded preloaded;  // kept only once whole: a read that throws leaves nothing behind
    preloaded.image = TryOpenElfObject(image_path, options_, &preloaded.why_absent);
    preloaded_images_.emplace(image_path, std::move(preloaded));
  }
  if (!stubs_.contains(path) && !preloaded_stubs_.contains(path)) {
    auto stubs = std::make_unique<ObjectStubs>(ReadObjectStubsFile(options_.root + image_path));
    preloaded_stubs_.emplace(image_path, std::move(stubs));
  }
}

bool ObjectCatalog::MayHaveFixedAddresses(std::string_view path) {
  if (auto it = images_.find(path); it != images_.end())
    return it->second != nullptr && !it->second->is_pie();
  if (auto it = fixed_.find(path); it != fixed_.end()) return it->second;
  bool fixed = false;
  if (!path.empty() && path.front() == '/') {
    std::string file = options_.root + std::string(path);
    // O_NONBLOCK: open() of a FIFO would otherwise wait for a writer; only regular files are read.
    int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st {};
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      char bytes[kElfHeaderBytes];
      ssize_t n = pread(fd, bytes, sizeof bytes, 0);
      ElfHeaderFacts facts;
      if (n > 0 &&
          CheckElfHeader(std::string_view(bytes, size_t(n)), uint64_t(st.st_size), &facts).empty())
        fixed = facts.type == 2;  // ET_EXEC
    }
    if (fd >= 0) close(fd);
  }
  fixed_.emplace(std::string(path), fixed);
  return fixed;
}

const ObjectStubs* ObjectCatalog::Stubs(std::string_view path) {
  if (path.empty() || path.front() != '/') return nullptr;
  if (Changed(path)) {
    if (!no_stubs_) no_stubs_ = std::make_unique<ObjectStubs>();
    return no_stubs_.get();
  }
  if (auto it = stubs_.find(path); it != stubs_.end()) return it->second.get();
  std::unique_ptr<ObjectStubs> stubs;
  if (auto it = preloaded_stubs_.find(path); it != preloaded_stubs_.end()) {
    stubs = std::move(it->second);
    preloaded_stubs_.erase(it);
  } else {
    stubs = std::make_unique<ObjectStubs>(ReadObjectStubsFile(options_.root + std::string(path)));
  }
  // A file that cannot be read is warned about by Lookup, when asked; one whose tables would cost
  // more than the file holds is read by Lookup without them, so it is said here.
  if (!stubs->skipped.empty() && diagnostics_ != nullptr) {
    diagnostics_->Warn("elf: object skipped", options_.root + std::string(path) + ": " +
                                                  stubs->skipped +
                                                  "; its code in ??? keeps its addresses");
  }
  return stubs_.emplace(std::string(path), std::move(stubs)).first->second.get();
}

namespace {

/// "2024-05-01 12:00:01" in local time, for messages.
std::string LocalTime(int64_t ns) {
  const time_t seconds = time_t(ns / 1000000000);
  struct tm tm {};
  char text[32] = "?";
  if (localtime_r(&seconds, &tm) != nullptr) strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

}  // namespace

bool ObjectCatalog::Changed(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  if (auto it = changed_.find(path); it != changed_.end()) return it->second;
  bool changed = false;
  struct stat st {};
  const std::string file = options_.root + std::string(path);
  if (options_.profile_mtime_ns != 0 && stat(file.c_str(), &st) == 0) {
    const int64_t modified = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    // Callgrind writes the profile when the program ends, after every object was mapped: an
    // object modified later was rebuilt, or rewritten, since (issue 36 item 3: its stubs were
    // named after the new file's PLT slots, every name wrong).
    if (modified > options_.profile_mtime_ns) {
      changed = true;
      if (diagnostics_ != nullptr) {
        diagnostics_->Warn("elf: object changed",
                           file + ": modified after the profile was written (at " +
                               LocalTime(modified) + ", the profile at " +
                               LocalTime(options_.profile_mtime_ns) +
                               "): not the file the profile ran, so its code in ??? keeps its "
                               "addresses");
      }
    }
  }
  changed_.emplace(std::string(path), changed);
  return changed;
}

void ObjectCatalog::MarkChanged(std::string_view path, const std::string& why) {
  auto [it, inserted] = changed_.try_emplace(std::string(path), true);
  if (!inserted && it->second) return;  // said already
  it->second = true;
  if (diagnostics_ != nullptr) {
    diagnostics_->Warn("elf: object changed", options_.root + std::string(path) +
                                                  ": changed since the profile was written: " +
                                                  why + "; its code in ??? keeps its addresses");
  }
}

const ObjectImage* ObjectCatalog::Add(std::string path, ObjectImage image) {
  std::unique_ptr<ObjectImage>& slot = images_[std::move(path)];
  slot = std::make_unique<ObjectImage>(std::move(image));
  return slot.get();
}

}  // namespace cg_inject
