// ObjectCatalog: one lazy open per distinct `ob=` path, absence remembered like success so a
// profile naming a missing object thousands of times costs one failed open and one warning.
#include "cg_inject/object_catalog.h"

#include "cg_inject/diagnostics.h"
#include "elf/elf_reader.h"

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
  std::unique_ptr<ObjectImage> image = TryOpenElfObject(image_path, options_, &why_absent);
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

const ObjectImage* ObjectCatalog::Add(std::string path, ObjectImage image) {
  std::unique_ptr<ObjectImage>& slot = images_[std::move(path)];
  slot = std::make_unique<ObjectImage>(std::move(image));
  return slot.get();
}

}  // namespace cg_inject
