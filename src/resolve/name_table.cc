#include "resolve/name_table.h"

namespace cg_inject {

namespace {
// Upstream ids are dense in practice (the reader counts them); past this we fall back to a hash
// map rather than growing a vector to an absurd size.
constexpr uint32_t kDenseUpstreamLimit = 1u << 24;
}  // namespace

Name NameTable::Intern(std::string_view text) {
  auto it = ids_.find(text);
  if (it != ids_.end()) return Name{it->second, texts_[it->second]};
  const std::string& stored = storage_.emplace_back(text);
  uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.push_back(stored);
  ids_.emplace(stored, id);
  return Name{id, stored};
}

Name NameTable::Map(Name upstream) {
  if (upstream.id == 0) return Name{};
  if (upstream.id < kDenseUpstreamLimit) {
    if (upstream.id >= upstream_.size()) upstream_.resize(size_t{upstream.id} * 2 + 16, 0);
    uint32_t& ours = upstream_[upstream.id];
    if (ours == 0) ours = Intern(upstream.text).id;
    return Name{ours, texts_[ours]};
  }
  auto [it, inserted] = upstream_sparse_.emplace(upstream.id, 0);
  if (inserted) it->second = Intern(upstream.text).id;
  return Name{it->second, texts_[it->second]};
}

}  // namespace cg_inject
