// Pieces of merged functions that must stay apart (see cycle_guard.h).
#include "rewrite/cycle_guard.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace cg_inject {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// The strongly connected component of each of `n` nodes (ids dense from 0) under `edges`
/// (Tarjan's algorithm, iterative: broken call graphs nest deeper than a stack allows).
std::vector<uint32_t> Components(size_t n,
                                 const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  std::vector<uint32_t> first(n + 1, 0);
  for (const auto& e : edges) ++first[e.first + 1];
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<uint32_t> succ(edges.size());
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (const auto& e : edges) succ[fill[e.first]++] = e.second;
  }
  std::vector<uint32_t> index(n, kNone), low(n, 0), component(n, kNone), stack;
  std::vector<bool> on_stack(n, false);
  std::vector<std::pair<uint32_t, uint32_t>> work;  // (node, next successor position)
  uint32_t next_index = 0, next_component = 0;
  for (uint32_t root = 0; root < n; ++root) {
    if (index[root] != kNone) continue;
    work.push_back({root, first[root]});
    index[root] = low[root] = next_index++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!work.empty()) {
      auto& [v, pos] = work.back();
      if (pos < first[v + 1]) {
        uint32_t w = succ[pos++];
        if (index[w] == kNone) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          on_stack[w] = true;
          work.push_back({w, first[w]});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const uint32_t done = v;
      work.pop_back();
      if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[done]);
      if (low[done] == index[done]) {
        uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component[w] = next_component;
        } while (w != done);
        ++next_component;
      }
    }
  }
  return component;
}

}  // namespace

void CycleGuard::Clear() {
  pieces_.clear();
  calls_.clear();
}

uint32_t CycleGuard::AddPiece(uint32_t output, uint64_t offset) {
  pieces_.push_back({output, offset, kAlone, offset != 0});
  return uint32_t(pieces_.size() - 1);
}

uint32_t CycleGuard::AddRanPiece(uint32_t output, uint32_t block, uint64_t offset, bool can_stay) {
  pieces_.push_back({output, offset, block, can_stay});
  return uint32_t(pieces_.size() - 1);
}

CycleGuard::Decision CycleGuard::Decide() const {
  const size_t n = pieces_.size();
  Decision decision;
  // The main piece of each output function: a block before code others ran, nearest the entry.
  auto rank = [&](uint32_t p) {
    return std::make_tuple(pieces_[p].ran_in != kAlone, pieces_[p].offset, p);
  };
  std::unordered_map<uint32_t, uint32_t> main_of;  // output -> main piece
  std::unordered_map<uint32_t, uint32_t> size_of;  // output -> pieces
  for (uint32_t p = 0; p < n; ++p) {
    const uint32_t out = pieces_[p].output;
    if (out == kAlone) continue;
    ++size_of[out];
    auto [it, added] = main_of.try_emplace(out, p);
    if (!added && rank(p) < rank(it->second)) it->second = p;
  }
  if (std::none_of(size_of.begin(), size_of.end(), [](const auto& s) { return s.second >= 2; }))
    return decision;  // a sound call graph: nothing merged, nothing to look at
  // Per piece, once: whether it is merged with others, and its function's main piece (set_nodes
  // below runs once per tried piece, so no hash lookups there).
  std::vector<bool> is_merged(n);
  std::vector<uint32_t> main_piece(n);
  for (uint32_t p = 0; p < n; ++p) {
    is_merged[p] = pieces_[p].output != kAlone && size_of[pieces_[p].output] >= 2;
    main_piece[p] = is_merged[p] ? main_of[pieces_[p].output] : p;
  }
  auto merged = [&](uint32_t p) { return bool(is_merged[p]); };

  // The input's reading: every block is a function, code another block ran is that block's.
  std::vector<uint32_t> input_node(n);
  for (uint32_t p = 0; p < n; ++p)
    input_node[p] = pieces_[p].ran_in != kAlone ? pieces_[p].ran_in : p;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  edges.reserve(calls_.size());
  for (const Call& c : calls_)
    if (input_node[c.from] != input_node[c.to])
      edges.push_back({input_node[c.from], input_node[c.to]});
  std::vector<uint32_t> input_cycle = Components(n, edges);
  for (uint32_t p = 0; p < n; ++p) input_cycle[p] = input_cycle[input_node[p]];
  // Which input cycles are cycles (two functions or more): a function alone is in none.
  std::vector<uint32_t> functions_in(n, 0);
  for (uint32_t p = 0; p < n; ++p)
    if (input_node[p] == p) ++functions_in[input_cycle[p]];
  std::vector<bool> is_cycle(n);
  for (uint32_t c = 0; c < n; ++c) is_cycle[c] = functions_in[c] >= 2;

  // A reading in which piece p is part of function node[p] (a piece id): its cycles, and which
  // of them are new against `reference` (each piece's cycle in an earlier reading; `real`: that
  // cycle has two functions or more). A cycle is the earlier reading's when one earlier cycle
  // has a piece in each of its functions (merging only renamed that cycle's members); otherwise
  // it is new.
  std::vector<uint32_t> node(n), cycle;
  std::vector<bool> is_new;
  auto read = [&](const std::vector<uint32_t>& reference, const std::vector<bool>& real) {
    edges.clear();
    for (const Call& c : calls_)
      if (node[c.from] != node[c.to]) edges.push_back({node[c.from], node[c.to]});
    cycle = Components(n, edges);
    std::vector<uint32_t> members(n, 0);  // by cycle: its functions
    for (uint32_t p = 0; p < n; ++p)
      if (node[p] == p) ++members[cycle[p]];
    std::vector<std::pair<uint32_t, uint32_t>> seen;  // (function, earlier cycle) of its pieces
    for (uint32_t p = 0; p < n; ++p)
      if (members[cycle[node[p]]] >= 2 && real[reference[p]])
        seen.push_back({node[p], reference[p]});
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    is_new.assign(n, false);
    for (uint32_t c = 0; c < n; ++c) is_new[c] = members[c] >= 2;
    std::unordered_map<uint64_t, uint32_t> covered;  // (cycle, earlier cycle) -> functions
    for (const auto& [v, earlier] : seen) {
      const uint32_t c = cycle[v];
      if (++covered[uint64_t{c} << 32 | earlier] == members[c]) is_new[c] = false;
    }
  };
  // Calls between two functions of one cycle: their pieces take part in it.
  auto for_each_taking_part = [&](auto&& visit) {
    for (const Call& c : calls_) {
      if (node[c.from] == node[c.to] || cycle[node[c.from]] != cycle[node[c.to]]) continue;
      visit(c.from);
      visit(c.to);
    }
  };

  // What must be merged whatever it makes (entry blocks, real objects' code) is merged first:
  // the cycles that makes are counted, and are what the pieces that may go are measured by.
  std::vector<bool> apart(n, false);
  auto set_nodes = [&] {
    for (uint32_t p = 0; p < n; ++p) {
      if (pieces_[p].ran_in != kAlone) continue;
      node[p] = !apart[p] && merged(p) ? main_piece[p] : p;
    }
    for (uint32_t p = 0; p < n; ++p) {
      if (pieces_[p].ran_in == kAlone) continue;
      node[p] = apart[p] ? node[pieces_[p].ran_in] : merged(p) ? main_piece[p] : p;
    }
  };
  for (uint32_t p = 0; p < n; ++p) apart[p] = merged(p) && pieces_[p].can_go;
  set_nodes();
  read(input_cycle, is_cycle);
  std::vector<uint32_t> stuck;
  for_each_taking_part([&](uint32_t p) {
    if (merged(p) && !apart[p] && main_piece[p] != p && is_new[cycle[node[p]]]) stuck.push_back(p);
  });
  std::sort(stuck.begin(), stuck.end());
  decision.left_merged = size_t(std::unique(stuck.begin(), stuck.end()) - stuck.begin());
  std::vector<uint32_t> base_cycle(n);
  for (uint32_t p = 0; p < n; ++p) base_cycle[p] = cycle[node[p]];
  std::fill(functions_in.begin(), functions_in.end(), 0);
  for (uint32_t p = 0; p < n; ++p)
    if (node[p] == p) ++functions_in[cycle[p]];
  for (uint32_t c = 0; c < n; ++c) is_cycle[c] = functions_in[c] >= 2;

  // Then the pieces that may go are merged. Those taking part in a new cycle, in a function
  // whose best-ranked piece taking part lies in another earlier cycle, are candidates: each is
  // tried in turn (best-ranked first) with the others apart, and merged unless that brings
  // functions into its function's cycle that were in neither its cycle nor the piece's (the
  // functions on the calls between them). Many pieces take part in one large cycle that merging
  // them does not change (the Node capture's interpreter cycle): only the ones that would pull
  // others in are given up.
  std::fill(apart.begin(), apart.end(), false);
  set_nodes();
  read(base_cycle, is_cycle);
  auto candidate = [&](uint32_t p) { return merged(p) && is_new[cycle[node[p]]]; };
  std::unordered_map<uint32_t, uint32_t> keep;  // output -> best-ranked piece taking part
  for_each_taking_part([&](uint32_t p) {
    if (!candidate(p)) return;
    auto [it, added] = keep.try_emplace(pieces_[p].output, p);
    if (!added && rank(p) < rank(it->second)) it->second = p;
  });
  std::vector<uint32_t> tried;
  for_each_taking_part([&](uint32_t p) {
    if (candidate(p) && pieces_[p].can_go && base_cycle[p] != base_cycle[keep[pieces_[p].output]])
      tried.push_back(p);
  });
  std::sort(tried.begin(), tried.end(), [&](uint32_t a, uint32_t b) { return rank(a) < rank(b); });
  tried.erase(std::unique(tried.begin(), tried.end()), tried.end());
  for (uint32_t p : tried) apart[p] = true;
  std::vector<uint32_t> first(n + 1), succ, first_back(n + 1), pred, work;
  std::vector<uint8_t> reach(n);  // bits: 1 from f, 2 to f, 4 from the piece, 8 to the piece
  auto flood = [&](uint32_t from, const std::vector<uint32_t>& head,
                   const std::vector<uint32_t>& next, uint8_t bit) {
    work.assign(1, from);
    reach[from] |= bit;
    while (!work.empty()) {
      uint32_t v = work.back();
      work.pop_back();
      for (uint32_t i = head[v]; i < head[v + 1]; ++i) {
        uint32_t w = next[i];
        if (reach[w] & bit) continue;
        reach[w] |= bit;
        work.push_back(w);
      }
    }
  };
  for (uint32_t p : tried) {
    set_nodes();
    edges.clear();
    for (const Call& c : calls_)
      if (node[c.from] != node[c.to]) edges.push_back({node[c.from], node[c.to]});
    for (auto [head, next, forward] :
         {std::tuple{&first, &succ, true}, std::tuple{&first_back, &pred, false}}) {
      std::fill(head->begin(), head->end(), 0);
      for (const auto& e : edges) ++(*head)[(forward ? e.first : e.second) + 1];
      for (size_t i = 0; i < n; ++i) (*head)[i + 1] += (*head)[i];
      next->resize(edges.size());
      std::vector<uint32_t> fill(head->begin(), head->end() - 1);
      for (const auto& e : edges)
        (*next)[fill[forward ? e.first : e.second]++] = forward ? e.second : e.first;
    }
    const uint32_t f = main_piece[p], piece = node[p];
    const bool ran = pieces_[p].ran_in != kAlone;
    std::fill(reach.begin(), reach.end(), 0);
    flood(f, first, succ, 1);
    flood(f, first_back, pred, 2);
    flood(piece, first, succ, 4);
    flood(piece, first_back, pred, 8);
    bool pulls_in = false;
    for (uint32_t v = 0; v < n && !pulls_in; ++v) {
      const uint8_t r = reach[v];
      const bool between = ((r & 1) && (r & 8)) || ((r & 4) && (r & 2));
      // Functions in the function's cycle stay in it; those in the cycle of a block merged
      // into it were that block's partners (the cycle is renamed). Code another block ran
      // leaves that block a function of its own, which joins the cycle.
      const bool in_own_cycle = (r & 3) == 3 || (!ran && (r & 12) == 12);
      pulls_in = between && !in_own_cycle && node[v] == v;
    }
    if (!pulls_in) apart[p] = false;
  }
  for (uint32_t p = 0; p < n; ++p)
    if (apart[p]) decision.apart.push_back(p);
  return decision;
}

}  // namespace cg_inject
