// The injector's per-function memos (see function_memos.h).
#include "rewrite/function_memos.h"

namespace cg_inject {

void FunctionMemos::Clear() {
  by_name_.clear();
  other_.clear();
  memos_.clear();
}

uint32_t FunctionMemos::Add(uint32_t object, uint32_t file) {
  FunctionMemo& memo = memos_.emplace_back();
  memo.upstream_object = object;
  memo.upstream_file = file;
  return uint32_t(memos_.size() - 1);
}

FunctionMemo& FunctionMemos::Find(uint32_t object, uint32_t file, uint32_t function, bool* added) {
  *added = false;
  if (function < kDenseIds) {
    if (function >= by_name_.size()) by_name_.resize(size_t{function} + 1);
    uint32_t& first = by_name_[function];
    if (first == 0) {
      *added = true;
      first = Add(object, file) + 1;
      return memos_[first - 1];
    }
    FunctionMemo& memo = memos_[first - 1];
    if (memo.upstream_object == object && memo.upstream_file == file) return memo;
  }
  auto [index, inserted] = other_.try_emplace(Ids{object, file, function});
  if (inserted) {
    *added = true;
    *index = Add(object, file);
  }
  return memos_[*index];
}

}  // namespace cg_inject
