// StringInterner (see string_interner.h).
#include "callgrind/string_interner.h"

#include <algorithm>
#include <stdexcept>

namespace cg_inject {

uint32_t StringInterner::Intern(std::string_view text) {
  if (const uint32_t* found = ids_.find(text)) return *found;
  if (text.size() > UINT32_MAX) throw std::length_error("name of 4 GB or more");
  size_t need = 4 + text.size();
  if (need > left_) {
    // Blocks of 256 KB: few allocations, little slack at the end of a small profile.
    size_t size = std::max(need, size_t{256} << 10);
    blocks_.push_back(std::make_unique<char[]>(size));
    free_ = blocks_.back().get();
    left_ = size;
  }
  char* record = free_;
  uint32_t size = static_cast<uint32_t>(text.size());
  std::memcpy(record, &size, 4);
  if (!text.empty()) std::memcpy(record + 4, text.data(), text.size());
  free_ += need;
  left_ -= need;
  // Found, then inserted: a second probe, once per distinct text.
  uint32_t id = static_cast<uint32_t>(records_.size());
  records_.push_back(record);
  *ids_.try_emplace(record).first = id;
  return id;
}

}  // namespace cg_inject
