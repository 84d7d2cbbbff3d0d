// Counted warnings (see include/cg_inject/diagnostics.h).
#include "cg_inject/diagnostics.h"

#include <utility>

#include "cg_inject/error.h"

namespace cg_inject {

void Diagnostics::Warn(std::string_view kind, std::string message) {
  // Few kinds exist per run, so a linear search keeps first-seen order for the summary.
  Kind* entry = nullptr;
  for (Kind& k : kinds_) {
    if (k.kind == kind) {
      entry = &k;
      break;
    }
  }
  if (entry == nullptr) {
    kinds_.push_back(Kind{std::string(kind), 0, {}});
    entry = &kinds_.back();
  }
  ++entry->count;
  if (static_cast<int64_t>(entry->first_messages.size()) < kKeptPerKind)
    entry->first_messages.push_back(std::move(message));
}

void Diagnostics::Absorb(const Diagnostics& other) {
  for (const Kind& k : other.kinds_) {
    Kind* entry = nullptr;
    for (Kind& mine : kinds_) {
      if (mine.kind == k.kind) {
        entry = &mine;
        break;
      }
    }
    if (entry == nullptr) {
      kinds_.push_back(Kind{k.kind, 0, {}});
      entry = &kinds_.back();
    }
    entry->count += k.count;
    for (const std::string& message : k.first_messages) {
      if (static_cast<int64_t>(entry->first_messages.size()) < kKeptPerKind)
        entry->first_messages.push_back(message);
    }
  }
}

int64_t Diagnostics::total() const {
  int64_t sum = 0;
  for (const Kind& k : kinds_) sum += k.count;
  return sum;
}

void Diagnostics::AppendSummary(std::string* out) const {
  for (const Kind& k : kinds_) {
    for (const std::string& message : k.first_messages) {
      out->append("warning: ");
      // Messages may quote input: control bytes are escaped so none reaches the terminal.
      out->append(EscapeControlBytes(message));
      out->push_back('\n');
    }
    int64_t rest = k.count - static_cast<int64_t>(k.first_messages.size());
    if (rest > 0) {
      out->append("warning: ");
      out->append(k.kind);
      out->append(": and ");
      out->append(std::to_string(rest));
      out->append(" more\n");
    }
  }
}

}  // namespace cg_inject
