#include "elf/name_ends.h"

#include <algorithm>
#include <cstring>

namespace cg_inject {

bool NameEnds::Quick(uint64_t table_begin, uint64_t table_end, uint64_t offset,
                     std::string_view* name) const {
  // Callers checked that the table lies inside the file.
  if (offset >= table_end - table_begin) {
    *name = {};
    return true;
  }
  const uint64_t start = table_begin + offset;
  const uint64_t window = std::min(kQuickScan, table_end - start);
  const void* nul = std::memchr(file_.data() + start, 0, window);
  if (nul == nullptr) {
    if (window < kQuickScan) {  // the table ends first: no name
      *name = {};
      return true;
    }
    return false;
  }
  *name = file_.substr(start, uint64_t(static_cast<const char*>(nul) - file_.data()) - start);
  return true;
}

void NameEnds::Later(uint64_t table_begin, uint64_t table_end, uint64_t offset, uint32_t tag) {
  pending_.push_back({table_begin + offset, table_end, tag});
}

std::vector<NameEnds::Resolved> NameEnds::Resolve() {
  std::sort(pending_.begin(), pending_.end(),
            [](const Pending& a, const Pending& b) { return a.start < b.start; });
  std::vector<Resolved> resolved;
  resolved.reserve(pending_.size());
  // The first NUL at or after the last start looked from; none when `nul` is the file's size.
  uint64_t nul = 0;
  bool have_nul = false;
  for (const Pending& p : pending_) {
    if (!have_nul || p.start > nul) {
      const void* found = std::memchr(file_.data() + p.start, 0, file_.size() - p.start);
      nul = found ? uint64_t(static_cast<const char*>(found) - file_.data()) : file_.size();
      have_nul = true;
    }
    // A name must end inside its own table.
    std::string_view name =
        nul < p.limit ? file_.substr(p.start, nul - p.start) : std::string_view();
    resolved.push_back({p.tag, name});
  }
  pending_.clear();
  return resolved;
}

}  // namespace cg_inject
