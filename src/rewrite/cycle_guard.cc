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

/// A reading of the pieces in which pieces move between nodes (functions) as they are merged:
/// each node's pieces in a list, each piece's calls both ways (built once: a merge changes which
/// node a piece is part of, never its calls).
class NodeGraph {
 public:
  template <class Call>
  NodeGraph(const std::vector<uint32_t>& node_of, const std::vector<Call>& calls)
      : node(node_of),
        head_(node_of.size(), kNone),
        next_(node_of.size(), kNone),
        prev_(node_of.size(), kNone),
        first_out_(node_of.size() + 1, 0),
        first_in_(node_of.size() + 1, 0),
        callee_(calls.size()),
        caller_(calls.size()) {
    const size_t n = node_of.size();
    for (const Call& c : calls) ++first_out_[c.from + 1], ++first_in_[c.to + 1];
    for (size_t i = 0; i < n; ++i)
      first_out_[i + 1] += first_out_[i], first_in_[i + 1] += first_in_[i];
    std::vector<uint32_t> out_fill(first_out_.begin(), first_out_.end() - 1),
        in_fill(first_in_.begin(), first_in_.end() - 1);
    for (const Call& c : calls)
      callee_[out_fill[c.from]++] = c.to, caller_[in_fill[c.to]++] = c.from;
    for (uint32_t q = 0; q < n; ++q) Link(q, node[q]);
  }
  /// Each piece's node (read only: Move and MoveAll change it).
  std::vector<uint32_t> node;

  /// Piece q becomes part of node v.
  void Move(uint32_t q, uint32_t v) {
    if (prev_[q] != kNone)
      next_[prev_[q]] = next_[q];
    else
      head_[node[q]] = next_[q];
    if (next_[q] != kNone) prev_[next_[q]] = prev_[q];
    Link(q, v);
  }
  /// All pieces of node `from` become part of node `to`.
  void MoveAll(uint32_t from, uint32_t to) {
    uint32_t last = kNone;
    for (uint32_t q = head_[from]; q != kNone; q = next_[q]) node[q] = to, last = q;
    if (last == kNone) return;
    next_[last] = head_[to];
    if (head_[to] != kNone) prev_[head_[to]] = last;
    head_[to] = head_[from];
    head_[from] = kNone;
  }
  /// Visits each node one call away from node v (forward: the nodes it calls, else its callers).
  template <class Visit>
  void ForEachNeighbour(uint32_t v, bool forward, Visit&& visit) const {
    const std::vector<uint32_t>& first = forward ? first_out_ : first_in_;
    const std::vector<uint32_t>& other = forward ? callee_ : caller_;
    for (uint32_t q = head_[v]; q != kNone; q = next_[q])
      for (uint32_t i = first[q]; i < first[q + 1]; ++i)
        if (const uint32_t w = node[other[i]]; w != v) visit(w);
  }

 private:
  void Link(uint32_t q, uint32_t v) {
    node[q] = v;
    prev_[q] = kNone;
    next_[q] = head_[v];
    if (head_[v] != kNone) prev_[head_[v]] = q;
    head_[v] = q;
  }
  std::vector<uint32_t> head_, next_, prev_;  // pieces by node: first, and each one's neighbours
  std::vector<uint32_t> first_out_, first_in_, callee_, caller_;
};

/// A depth-first search over a NodeGraph that runs a node at a time.
struct Search {
  explicit Search(size_t n) : seen(n, 0) {}
  void Start(const std::vector<uint32_t>& from) {
    ++stamp;
    stack = from;
    for (uint32_t v : from) seen[v] = stamp;
  }
  bool Saw(uint32_t v) const { return seen[v] == stamp; }
  std::vector<uint32_t> seen, stack;
  uint32_t stamp = 0;
};

/// Whether a path of calls leads from one of the nodes `from` to one of the nodes `to`, through
/// nodes that `expand` only: a search forward from `from` (for a node that `is_to`) and one
/// backward from `to` (for a node that `is_from`), a node each in turn, until one finds its goal
/// or a node the other saw (yes) or runs out of nodes (no). Either answers alone; together they
/// cost about twice the smaller one (a cycle's member that reaches a large part of the graph
/// forward is often called by few functions, or the other way).
template <class IsTo, class IsFrom, class Expands>
bool Connected(const NodeGraph& graph, Search& forward, Search& backward,
               const std::vector<uint32_t>& from, IsTo&& is_to, Expands&& expands,
               const std::vector<uint32_t>& to, IsFrom&& is_from) {
  forward.Start(from);
  backward.Start(to);
  for (uint32_t v : from)
    if (is_to(v) || backward.Saw(v)) return true;
  for (uint32_t v : to)
    if (is_from(v)) return true;
  // 1: found, 0: not yet, -1: no path.
  auto step = [&](Search& search, const Search& other, bool ahead, auto&& goal) {
    if (search.stack.empty()) return -1;
    const uint32_t v = search.stack.back();
    search.stack.pop_back();
    if (!expands(v)) return 0;
    bool found = false;
    graph.ForEachNeighbour(v, ahead, [&](uint32_t w) {
      if (found || search.seen[w] == search.stamp) return;
      search.seen[w] = search.stamp;
      if (goal(w) || other.Saw(w))
        found = true;
      else
        search.stack.push_back(w);
    });
    return found ? 1 : 0;
  };
  for (;;) {
    if (int r = step(forward, backward, true, is_to); r != 0) return r > 0;
    if (int r = step(backward, forward, false, is_from); r != 0) return r > 0;
  }
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
  struct Output {
    uint32_t main = 0, pieces = 0;
  };
  std::unordered_map<uint32_t, Output> outputs;
  for (uint32_t p = 0; p < n; ++p) {
    const uint32_t out = pieces_[p].output;
    if (out == kAlone) continue;
    auto [it, added] = outputs.try_emplace(out, Output{p, 0});
    ++it->second.pieces;
    if (!added && rank(p) < rank(it->second.main)) it->second.main = p;
  }
  if (std::none_of(outputs.begin(), outputs.end(),
                   [](const auto& o) { return o.second.pieces >= 2; }))
    return decision;  // a sound call graph: nothing merged, nothing to look at
  // Per piece, once: whether it is merged with others, and its function's main piece.
  std::vector<bool> is_merged(n);
  std::vector<uint32_t> main_piece(n);
  for (uint32_t p = 0; p < n; ++p) {
    const Output* o = pieces_[p].output != kAlone ? &outputs[pieces_[p].output] : nullptr;
    is_merged[p] = o != nullptr && o->pieces >= 2;
    main_piece[p] = is_merged[p] ? o->main : p;
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
  std::vector<bool> taking_part(n);
  auto find_taking_part = [&] {
    std::fill(taking_part.begin(), taking_part.end(), false);
    for (const Call& c : calls_) {
      if (node[c.from] == node[c.to] || cycle[node[c.from]] != cycle[node[c.to]]) continue;
      taking_part[c.from] = taking_part[c.to] = true;
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
  find_taking_part();
  for (uint32_t p = 0; p < n; ++p)
    decision.left_merged +=
        taking_part[p] && merged(p) && !apart[p] && main_piece[p] != p && is_new[cycle[node[p]]];
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
  find_taking_part();
  std::vector<uint32_t> keep(n, kNone);  // by main piece: its function's best-ranked taking part
  for (uint32_t p = 0; p < n; ++p) {
    if (!taking_part[p] || !candidate(p)) continue;
    uint32_t& k = keep[main_piece[p]];
    if (k == kNone || rank(p) < rank(k)) k = p;
  }
  std::vector<uint32_t> tried;
  for (uint32_t p = 0; p < n; ++p)
    if (taking_part[p] && candidate(p) && pieces_[p].can_go &&
        base_cycle[p] != base_cycle[keep[main_piece[p]]])
      tried.push_back(p);
  std::sort(tried.begin(), tried.end(), [&](uint32_t a, uint32_t b) { return rank(a) < rank(b); });
  if (tried.empty()) return decision;
  for (uint32_t p : tried) apart[p] = true;
  set_nodes();
  NodeGraph graph(node, calls_);

  // The cycles of the current reading (strongly connected components of the nodes), kept across
  // tries: merging a block unites two of them at most (see below); moving code another block
  // ran may split or join others, and then they are found again before a block's try, while a
  // ran piece's try looks at single nodes until then.
  std::vector<uint32_t> component, up(n), size(n), ring(n), ring_node(n);
  bool components_stale = true;
  auto find = [&](uint32_t v) {
    uint32_t c = component[v];
    while (up[c] != c) c = up[c] = up[up[c]];
    return c;
  };
  auto compute_components = [&] {
    edges.clear();
    for (const Call& c : calls_)
      if (graph.node[c.from] != graph.node[c.to])
        edges.push_back({graph.node[c.from], graph.node[c.to]});
    component = Components(n, edges);
    std::fill(size.begin(), size.end(), 0);
    std::fill(ring_node.begin(), ring_node.end(), kNone);
    for (uint32_t v = 0; v < n; ++v) {
      const uint32_t c = component[v];
      up[c] = c;
      if (graph.node[v] != v) continue;
      ++size[c];
      // Each component's nodes as a ring: uniting two rings swaps one successor each.
      if (ring_node[c] == kNone) {
        ring_node[c] = v;
        ring[v] = v;
      } else {
        ring[v] = ring[ring_node[c]];
        ring[ring_node[c]] = v;
      }
    }
    components_stale = false;
  };
  auto unite = [&](uint32_t a, uint32_t b) {  // two components' roots
    if (a == b) return;
    if (size[a] < size[b]) std::swap(a, b);
    up[b] = a;
    size[a] += size[b];
    std::swap(ring[ring_node[a]], ring[ring_node[b]]);
  };
  Search forward(n), backward(n);
  std::vector<uint32_t> from(1), to(1), target(n, 0);
  uint32_t targets = 0;
  auto everywhere = [](uint32_t) { return true; };
  // Whether node a reaches node b (by_node: without the components, which may be stale).
  auto reaches = [&](uint32_t a, uint32_t b, bool by_node = false) {
    from[0] = a, to[0] = b;
    if (components_stale || by_node)
      return Connected(
          graph, forward, backward, from, [&](uint32_t w) { return w == b; }, everywhere, to,
          [&](uint32_t w) { return w == a; });
    const uint32_t a_cycle = find(a), b_cycle = find(b);
    return a_cycle == b_cycle ||
           Connected(
               graph, forward, backward, from, [&](uint32_t w) { return find(w) == b_cycle; },
               everywhere, to, [&](uint32_t w) { return find(w) == a_cycle; });
  };

  for (uint32_t p : tried) {
    const bool ran = pieces_[p].ran_in != kAlone;
    if (components_stale && !ran) compute_components();
    // Both are nodes (a function's own piece): a main piece ranks first, so it is its
    // function's `keep` or takes no part, is never tried and never apart.
    const uint32_t f = main_piece[p], piece = graph.node[p];
    // A function that pulls others in lies on a path between f and the piece and outside f's
    // cycle, so exactly one of them reaches the other (both: one cycle; neither: no path). Code
    // another block ran then always does (that block is such a function); a block only with a
    // function outside the piece's cycle too.
    const bool f_reaches = reaches(f, piece);
    const bool piece_reaches = reaches(piece, f);
    bool pulls_in = f_reaches != piece_reaches && ran;
    if (f_reaches != piece_reaches && !ran) {
      // The one that reaches the other: from; the other: to. A function outside both cycles
      // between them has a path into to's cycle whose last node before it lies outside both
      // too (a node of from's cycle there would put the function in from's cycle): so it is
      // enough to look for a caller of to's cycle, in neither, that from reaches. No path from
      // from to such a caller passes through to's cycle (the caller would be in it).
      from[0] = f_reaches ? f : piece;
      const uint32_t from_cycle = find(from[0]), to_cycle = find(f_reaches ? piece : f);
      ++targets;
      to.clear();
      const uint32_t start = ring_node[to_cycle];
      uint32_t v = start;
      do {
        if (graph.node[v] == v)
          graph.ForEachNeighbour(v, false, [&](uint32_t u) {
            const uint32_t c = find(u);
            if (c == to_cycle || c == from_cycle || target[c] == targets) return;
            target[c] = targets;
            to.push_back(u);
          });
        v = ring[v];
      } while (v != start);
      pulls_in = !to.empty() && Connected(
                                    graph, forward, backward, from,
                                    [&](uint32_t w) { return target[find(w)] == targets; },
                                    [&](uint32_t w) { return find(w) != to_cycle; }, to,
                                    [&](uint32_t w) { return find(w) == from_cycle; });
      to.resize(1);
    }
    if (pulls_in) continue;
    apart[p] = false;
    if (!ran) {
      // The block joins its function: its pieces (itself, code it ran that stays with it) move
      // to f. A cycle through them both is made of paths between them, all inside their two
      // cycles (nothing pulled in): the two cycles become one, the others stay as they are.
      graph.MoveAll(piece, f);
      unite(find(f), find(piece));
    } else if (piece != f) {
      // Code another block ran joins its function: its calls move from that block to f. Where
      // the two were in one cycle and still reach each other, every path of before has one
      // now (through f instead of the block, or the other way) and none is new: the cycles
      // stay as they are. Otherwise they may not.
      graph.Move(p, f);
      if (!components_stale && !(f_reaches && reaches(piece, f, true) && reaches(f, piece, true)))
        components_stale = true;
    }
  }
  for (uint32_t p = 0; p < n; ++p)
    if (apart[p]) decision.apart.push_back(p);
  return decision;
}

}  // namespace cg_inject
