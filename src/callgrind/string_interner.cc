// StringInterner (see string_interner.h).
#include "callgrind/string_interner.h"

#include <algorithm>
#include <stdexcept>

namespace cg_inject {

Name StringInterner::Intern(std::string_view text) {
  if (const char* const* found = records_.find(text)) return NameOf(*found);
  if (text.size() > UINT32_MAX - 8) throw std::length_error("name of 4 GB or more");
  size_t need = 8 + text.size();
  if (need > left_) {
    // Blocks of 256 KB: few allocations, little slack at the end of a small profile.
    size_t size = std::max(need, size_t{256} << 10);
    blocks_.push_back(std::make_unique<char[]>(size));
    free_ = blocks_.back().get();
    left_ = size;
  }
  char* record = free_;
  uint32_t id = static_cast<uint32_t>(records_.size() + 1);
  uint32_t size = static_cast<uint32_t>(text.size());
  std::memcpy(record, &id, 4);
  std::memcpy(record + 4, &size, 4);
  if (!text.empty()) std::memcpy(record + 8, text.data(), text.size());
  free_ += need;
  left_ -= need;
  // Found, then inserted: a second probe, once per distinct text.
  *records_.try_emplace(record).first = record;
  return NameOf(record);
}

}  // namespace cg_inject
