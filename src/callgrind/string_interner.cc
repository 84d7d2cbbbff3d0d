// StringInterner (see string_interner.h).
#include "callgrind/string_interner.h"

#include <algorithm>
#include <cstring>

namespace cg_inject {

uint32_t StringInterner::Intern(std::string_view text) {
  if (const uint32_t* found = ids_.find(text)) return *found;
  std::string_view stored("");
  if (!text.empty()) {
    if (text.size() > left_) {
      // Blocks of 256 KB: few allocations, little slack at the end of a small profile.
      size_t size = std::max(text.size(), size_t{256} << 10);
      blocks_.push_back(std::make_unique<char[]>(size));
      free_ = blocks_.back().get();
      left_ = size;
    }
    std::memcpy(free_, text.data(), text.size());
    stored = std::string_view(free_, text.size());
    free_ += text.size();
    left_ -= text.size();
  }
  // Found then inserted (two probes, once per distinct text): the key must be the stored copy,
  // not the caller's view.
  uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.push_back(stored);
  *ids_.try_emplace(stored).first = id;
  return id;
}

}  // namespace cg_inject
