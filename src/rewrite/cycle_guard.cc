// Pieces of merged functions that must stay apart (see cycle_guard.h).
#include "rewrite/cycle_guard.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace cg_inject {

void CycleGuard::Clear() {
  output_.clear();
  offset_.clear();
  ran_by_other_.clear();
  calls_.clear();
}

uint32_t CycleGuard::AddPiece(uint32_t output, uint64_t offset, bool ran_by_other) {
  output_.push_back(output);
  offset_.push_back(offset);
  ran_by_other_.push_back(ran_by_other);
  return uint32_t(output_.size() - 1);
}

std::vector<uint32_t> CycleGuard::PiecesToKeepApart() const {
  const size_t n = output_.size();
  // Successors of each piece (counting sort by caller).
  std::vector<uint32_t> first(n + 1, 0);
  for (const Call& c : calls_) ++first[c.from + 1];
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<uint32_t> succ(calls_.size());
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (const Call& c : calls_) succ[fill[c.from]++] = c.to;
  }
  // The pieces of each merged function, for the functions of two or more.
  std::unordered_map<uint32_t, std::vector<uint32_t>> pieces_of;
  for (uint32_t p = 0; p < n; ++p)
    if (output_[p] != kAlone) pieces_of[output_[p]].push_back(p);
  std::vector<uint32_t> apart;
  std::vector<uint32_t> seen(n, UINT32_MAX);  // the search (by function) that reached a piece
  std::vector<uint32_t> stack;
  uint32_t search = 0;
  for (auto& [output, pieces] : pieces_of) {
    if (pieces.size() < 2) continue;
    ++search;
    // Everything reachable from the function's pieces once a path has left them: a piece of the
    // function reached so is nested in another piece's calls.
    stack.clear();
    for (uint32_t p : pieces) {
      for (uint32_t i = first[p]; i < first[p + 1]; ++i) {
        uint32_t w = succ[i];
        if (output_[w] != output && seen[w] != search) {
          seen[w] = search;
          stack.push_back(w);
        }
      }
    }
    while (!stack.empty()) {
      uint32_t v = stack.back();
      stack.pop_back();
      for (uint32_t i = first[v]; i < first[v + 1]; ++i) {
        uint32_t w = succ[i];
        if (seen[w] == search) continue;
        seen[w] = search;
        stack.push_back(w);
      }
    }
    // The piece entered nearest the entry keeps the function, a block of its own before code
    // another function's block ran (ties: the first piece).
    uint32_t main_piece = pieces[0];
    for (uint32_t p : pieces) {
      if (std::make_pair(bool(ran_by_other_[p]), offset_[p]) <
          std::make_pair(bool(ran_by_other_[main_piece]), offset_[main_piece]))
        main_piece = p;
    }
    for (uint32_t p : pieces)
      if (p != main_piece && seen[p] == search) apart.push_back(p);
  }
  std::sort(apart.begin(), apart.end());
  return apart;
}

}  // namespace cg_inject
