#include "util/arena.h"

namespace cg_inject {

void* Arena::Allocate(size_t size, size_t align) {
  // Blocks come from new char[], aligned for any fundamental type (16 on the targets here).
  size_t pad = (align - reinterpret_cast<uintptr_t>(next_) % align) % align;
  if (next_ != nullptr && pad <= left_ && size <= left_ - pad) {
    char* out = next_ + pad;
    next_ = out + size;
    left_ -= pad + size;
    return out;
  }
  // A big piece (a large function's code) gets a block of its own, so the current block's rest
  // is not wasted.
  if (size > block_size_ / 4) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    reserved_ += size;
    return blocks_.back().get();
  }
  blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
  reserved_ += block_size_;
  next_ = blocks_.back().get() + size;
  left_ = block_size_ - size;
  return blocks_.back().get();
}

std::string_view Arena::Copy(std::string_view bytes) {
  if (bytes.empty()) return {};
  char* out = static_cast<char*>(Allocate(bytes.size(), 1));
  std::memcpy(out, bytes.data(), bytes.size());
  return {out, bytes.size()};
}

uint32_t StringPool::Intern(std::string_view text) {
  if (text.empty()) return 0;
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  std::string_view copy = arena_->Copy(text);
  const auto id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(copy);
  ids_.emplace(copy, id);
  return id;
}

}  // namespace cg_inject
