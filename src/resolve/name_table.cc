#include "resolve/name_table.h"

#include <cstdint>
#include <stdexcept>

namespace cg_inject {

namespace {
// Upstream ids are dense in practice (the reader counts them); past this we fall back to a hash
// map rather than growing a vector to an absurd size.
constexpr uint32_t kDenseUpstreamLimit = 1u << 24;
}  // namespace

Name NameTable::Intern(std::string_view text) {
  if (const uint32_t* id = ids_.find(text)) return Name{*id, Text(*id)};
  return Add(storage_.Copy(text));
}

void NameTable::Push(std::string_view text) {
  // Profile lines are at most 64 MB (line_reader.h); a symbol source's name could only pass
  // 4 GB in a file of that size.
  if (text.size() > UINT32_MAX) throw std::length_error("a name longer than 4 GB");
  texts_.push_back(StoredText{text.data(), static_cast<uint32_t>(text.size())});
}

Name NameTable::Add(std::string_view stored) {
  uint32_t id = static_cast<uint32_t>(size());
  Push(stored);
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
    if (upstream.id >= upstream_.size()) upstream_.resize(size_t{upstream.id} + 1);
    uint32_t& ours = upstream_[upstream.id];
    if (ours == 0) ours = InternUpstream(upstream.text);
    // The upstream text is the same text and lives as long (see Map's contract): returning it
    // spares two lookups in tables of every name (a cache miss each with many functions).
    return Name{ours, upstream.text};
  }
  auto [ours, inserted] = upstream_sparse_.try_emplace(upstream.id);
  if (inserted) *ours = InternUpstream(upstream.text);
  return Name{*ours, upstream.text};
}

}  // namespace cg_inject
