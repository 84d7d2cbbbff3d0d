#include "resolve/name_table.h"

namespace cg_inject {

namespace {
// Upstream ids are dense in practice (the reader counts them); past this we fall back to a hash
// map rather than growing a vector to an absurd size.
constexpr uint32_t kDenseUpstreamLimit = 1u << 24;
}  // namespace

Name NameTable::Intern(std::string_view text) {
  if (const uint32_t* id = ids_.find(text)) return Name{*id, texts_[*id]};
  return Add(storage_.Copy(text));
}

Name NameTable::Add(std::string_view stored) {
  uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.push_back(stored);
  ids_.insert(stored, id);
  return Name{id, stored};
}

uint32_t NameTable::InternUpstream(std::string_view text) {
  // The upstream reader keeps its names for its whole life (see Map): no copy.
  const uint32_t* id = ids_.find(text);
  return id ? *id : Add(text).id;
}

Name NameTable::Map(Name upstream) {
  if (upstream.id == 0) return Name{};
  if (upstream.id < kDenseUpstreamLimit) {
    if (upstream.id >= upstream_.size()) upstream_.resize(size_t{upstream.id} * 2 + 16, 0);
    uint32_t& ours = upstream_[upstream.id];
    if (ours == 0) ours = InternUpstream(upstream.text);
    return Name{ours, texts_[ours]};
  }
  auto [ours, inserted] = upstream_sparse_.try_emplace(upstream.id);
  if (inserted) *ours = InternUpstream(upstream.text);
  return Name{*ours, texts_[*ours]};
}

}  // namespace cg_inject
