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
  // The pieces of each merged function, for the functions of two or more.
  std::unordered_map<uint32_t, std::vector<uint32_t>> pieces_of;
  for (uint32_t p = 0; p < n; ++p)
    if (output_[p] != kAlone) pieces_of[output_[p]].push_back(p);
  std::erase_if(pieces_of, [](const auto& entry) { return entry.second.size() < 2; });
  if (pieces_of.empty()) return {};
  // Successors of each piece (counting sort by caller).
  std::vector<uint32_t> first(n + 1, 0);
  for (const Call& c : calls_) ++first[c.from + 1];
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<uint32_t> succ(calls_.size());
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (const Call& c : calls_) succ[fill[c.from]++] = c.to;
  }

  // A search per function from its pieces' calls cost O(functions x calls): 0.8 s of a 1.4 s run
  // on the mcs capture of issue 35. Reachability is the same for every piece of a strongly
  // connected component, and the components form a DAG: one pass over it in topological order
  // carries, per component, a bit per function whose pieces' calls reach it, 64 functions a word.
  std::vector<uint32_t> component(n, UINT32_MAX);
  uint32_t components = 0;  // numbered as Tarjan's algorithm finishes them: callees first
  {
    std::vector<uint32_t> low(n), order(n, UINT32_MAX), open, path;
    struct Frame {
      uint32_t piece, next;
    };
    std::vector<Frame> frames;
    uint32_t visited = 0;
    for (uint32_t root = 0; root < n; ++root) {
      if (order[root] != UINT32_MAX) continue;
      order[root] = low[root] = visited++;
      open.push_back(root);
      frames.push_back({root, first[root]});
      while (!frames.empty()) {
        Frame& f = frames.back();
        if (f.next < first[f.piece + 1]) {
          const uint32_t w = succ[f.next++];
          if (order[w] == UINT32_MAX) {
            order[w] = low[w] = visited++;
            open.push_back(w);
            frames.push_back({w, first[w]});
          } else if (component[w] == UINT32_MAX) {
            low[f.piece] = std::min(low[f.piece], order[w]);  // on the open path
          }
          continue;
        }
        const uint32_t v = f.piece;
        frames.pop_back();
        if (!frames.empty()) low[frames.back().piece] = std::min(low[frames.back().piece], low[v]);
        if (low[v] != order[v]) continue;
        uint32_t w;
        do {
          w = open.back();
          open.pop_back();
          component[w] = components;
        } while (w != v);
        ++components;
      }
    }
  }
  // The DAG's edges by caller component; callers have higher numbers than their callees.
  std::vector<uint32_t> dag_first(components + 1, 0);
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t i = first[v]; i < first[v + 1]; ++i)
      if (component[succ[i]] != component[v]) ++dag_first[component[v] + 1];
  for (uint32_t c = 0; c < components; ++c) dag_first[c + 1] += dag_first[c];
  std::vector<uint32_t> dag_succ(dag_first[components]);
  {
    std::vector<uint32_t> fill(dag_first.begin(), dag_first.end() - 1);
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t i = first[v]; i < first[v + 1]; ++i)
        if (component[succ[i]] != component[v]) dag_succ[fill[component[v]]++] = component[succ[i]];
  }

  std::vector<const std::vector<uint32_t>*> functions;
  functions.reserve(pieces_of.size());
  for (const auto& [output, pieces] : pieces_of) functions.push_back(&pieces);
  // Words per component in one pass: at most about 2 MB of bits, however many functions.
  const size_t words_needed = (functions.size() + 63) / 64;
  const size_t words = std::clamp<size_t>((size_t{2} << 20) / 8 / components, 1, words_needed);
  std::vector<uint64_t> reached;
  std::vector<uint32_t> apart;
  for (size_t base = 0; base < functions.size(); base += words * 64) {
    const size_t batch = std::min(functions.size() - base, words * 64);
    reached.assign(size_t{components} * words, 0);
    // Where a path leaves a function's pieces: a piece of the function reached from there is
    // nested in another piece's calls.
    for (size_t j = 0; j < batch; ++j) {
      const std::vector<uint32_t>& pieces = *functions[base + j];
      const uint32_t output = output_[pieces[0]];
      for (uint32_t p : pieces)
        for (uint32_t i = first[p]; i < first[p + 1]; ++i)
          if (output_[succ[i]] != output)
            reached[size_t{component[succ[i]]} * words + j / 64] |= uint64_t{1} << (j % 64);
    }
    for (uint32_t c = components; c-- > 0;) {
      const uint64_t* from = &reached[size_t{c} * words];
      for (uint32_t i = dag_first[c]; i < dag_first[c + 1]; ++i) {
        uint64_t* to = &reached[size_t{dag_succ[i]} * words];
        for (size_t k = 0; k < words; ++k) to[k] |= from[k];
      }
    }
    for (size_t j = 0; j < batch; ++j) {
      const std::vector<uint32_t>& pieces = *functions[base + j];
      // The piece entered nearest the entry keeps the function, a block of its own before code
      // another function's block ran (ties: the first piece).
      uint32_t main_piece = pieces[0];
      for (uint32_t p : pieces) {
        if (std::make_pair(bool(ran_by_other_[p]), offset_[p]) <
            std::make_pair(bool(ran_by_other_[main_piece]), offset_[main_piece]))
          main_piece = p;
      }
      for (uint32_t p : pieces) {
        if (p != main_piece &&
            (reached[size_t{component[p]} * words + j / 64] >> (j % 64) & 1) != 0)
          apart.push_back(p);
      }
    }
  }
  std::sort(apart.begin(), apart.end());
  return apart;
}

}  // namespace cg_inject
