// StringInterner (see string_interner.h).
#include "callgrind/string_interner.h"

#include <algorithm>
#include <stdexcept>

namespace cg_inject {

Name StringInterner::Intern(std::string_view text) {
  if (const char* const* found = records_.find_key(text)) return NameOf(*found);
  if (text.size() > UINT32_MAX - 8) throw std::length_error("name of 4 GB or more");
  char* record = static_cast<char*>(records_storage_.Allocate(8 + text.size(), 1));
  uint32_t id = static_cast<uint32_t>(records_.size() + 1);
  uint32_t size = static_cast<uint32_t>(text.size());
  std::memcpy(record, &id, 4);
  std::memcpy(record + 4, &size, 4);
  if (!text.empty()) std::memcpy(record + 8, text.data(), text.size());
  // Found, then inserted: a second probe, once per distinct text.
  records_.try_emplace(record);
  return NameOf(record);
}

}  // namespace cg_inject
