// The symbol index: every code version from every source, queried by address.
//
// Versions are kept in load order (the order readers add them: sources in add order, perf-map
// lines in file order, jitdump records in file order). Finish() sorts a compact node array by
// start address and augments it as an implicit binary search tree (the layout of Heng Li's
// cgranges: node i sits at level = number of trailing 1-bits of i, and each node stores the
// largest end in its subtree), so "which versions cover X" is O(log n + k) with no pointers and
// one allocation. Which of several versions at one address ran there is VersionChooser's
// question (src/resolve/), not the index's.
#include <algorithm>
#include <cassert>
#include <iterator>
#include <stdexcept>
#include <string>

#include "cg_inject/symbols.h"
#include "sources/version_store.h"

namespace cg_inject {

static_assert(sizeof(CodeVersion) == 48, "see version_store.h");

namespace {
// The end of version `v`, saturated (a range may reach the top of the address space).
uint64_t EndOf(const CodeVersion& v) {
  const uint64_t start = v.start(), size = v.size();
  return size > UINT64_MAX - start ? UINT64_MAX : start + size;
}
}  // namespace

struct SymbolIndex::Tree {
  // (start, version, size): 16 bytes, sorted in Finish and then kept for the lone ranges. The
  // size (UINT32_MAX: see the version) spares a lookup the version's record: with the end read
  // from the 48-byte records, 1M random lookups took twice as long (a cache and TLB miss more).
  struct Node {
    uint64_t start = 0;
    uint32_t version = 0;  // load order
    uint32_t size = 0;     // UINT32_MAX: as large or larger; read the version
    static Node Of(const CodeVersion& v, uint32_t version) {
      const uint64_t size = v.size();
      return {v.start(), version, size < UINT32_MAX ? static_cast<uint32_t>(size) : UINT32_MAX};
    }
  };
  // Most JIT code ranges overlap nothing. Those live in a flat array searched by binary search;
  // only ranges that overlap another go into the interval tree, which is then small and stays in
  // cache. With everything in the tree, 1M lookups over 1M symbols took twice as long (two cache
  // misses per level).
  std::vector<Node> lone;
  const VersionStore* store = nullptr;
  // The node's end, saturated as EndOf(CodeVersion).
  uint64_t EndOf(const Node& n) const {
    if (n.size == UINT32_MAX) return cg_inject::EndOf(store->at(n.version));
    return n.size > UINT64_MAX - n.start ? UINT64_MAX : n.start + n.size;
  }
  // The interval tree over overlapping ranges. What a query touches at every step (Hot) is kept
  // apart from what it reads only for candidates (Cold).
  struct Hot {
    uint64_t start = 0;
    uint64_t max_end = 0;  // largest end in this node's subtree
  };
  // Only read for nodes whose start is at or below the address.
  struct Cold {
    uint64_t end = 0;
    uint32_t version = 0;  // load order
  };
  std::vector<Hot> hot;
  std::vector<Cold> cold;
  int max_level = -1;
  // The overlapping ranges' union, merged, in start order: an address outside it is in none of
  // them, which a binary search over these few says without walking the tree (the tsc capture's
  // 25 overlapping ranges took 300 instructions a query to rule out, for 384,000 queries).
  struct Span {
    uint64_t start = 0, end = 0;
  };
  std::vector<Span> spans;
  // The overlapping ranges by end (ties in load order), for LookupNeighbors: their ends are not
  // in start order.
  struct End {
    uint64_t end = 0;
    uint32_t version = 0;
  };
  std::vector<End> by_end;

  void Build();
  // Calls visit(version index) for every node containing `addr`, in start order.
  template <typename Visit>
  void Query(uint64_t addr, Visit&& visit) const;
};

void SymbolIndex::Tree::Build() {
  const size_t n = hot.size();
  max_level = -1;
  spans.clear();
  for (size_t i = 0; i < n; ++i) {  // in start order
    if (spans.empty() || hot[i].start > spans.back().end)
      spans.push_back({hot[i].start, cold[i].end});
    else
      spans.back().end = std::max(spans.back().end, cold[i].end);
  }
  if (n == 0) return;
  // Level 0: the leaves are the even indices.
  size_t last_i = 0;
  uint64_t last_max = 0;
  for (size_t i = 0; i < n; i += 2) {
    hot[i].max_end = cold[i].end;
    last_i = i;
    last_max = cold[i].end;
  }
  int k = 1;
  for (; (size_t{1} << k) <= n; ++k) {
    const size_t half = size_t{1} << (k - 1);
    for (size_t i = (half << 1) - 1; i < n; i += half << 2) {
      uint64_t left = hot[i - half].max_end;
      // A right child past the end stands for the partial subtree at the array's tail, whose
      // maximum is carried in last_max.
      uint64_t right = i + half < n ? hot[i + half].max_end : last_max;
      hot[i].max_end = std::max({cold[i].end, left, right});
    }
    last_i = ((last_i >> k) & 1) ? last_i - half : last_i + half;
    if (last_i < n && hot[last_i].max_end > last_max) last_max = hot[last_i].max_end;
  }
  max_level = k - 1;
}

template <typename Visit>
void SymbolIndex::Tree::Query(uint64_t addr, Visit&& visit) const {
  auto after = std::upper_bound(lone.begin(), lone.end(), addr,
                                [](uint64_t a, const Node& node) { return a < node.start; });
  if (after != lone.begin()) {
    const Node& candidate = *(after - 1);
    if (addr < EndOf(candidate)) visit(candidate.version);
  }
  const size_t n = hot.size();
  if (n == 0) return;
  auto span = std::upper_bound(spans.begin(), spans.end(), addr,
                               [](uint64_t a, const Span& s) { return a < s.start; });
  if (span == spans.begin() || addr >= (span - 1)->end) return;
  struct Frame {
    size_t x;
    int level;
    bool left_done;
  };
  Frame stack[130];  // two frames per level at most, 64 levels
  int top = 0;
  stack[top++] = {(size_t{1} << max_level) - 1, max_level, false};
  while (top > 0) {
    Frame z = stack[--top];
    if (z.level <= 3) {
      // Small subtree: scan it in index (= start) order.
      size_t i0 = z.x >> z.level << z.level;
      size_t i1 = std::min(n, i0 + (size_t{1} << (z.level + 1)) - 1);
      for (size_t i = i0; i < i1 && hot[i].start <= addr; ++i) {
        if (addr < cold[i].end) visit(cold[i].version);
      }
    } else if (!z.left_done) {
      size_t left = z.x - (size_t{1} << (z.level - 1));
      stack[top++] = {z.x, z.level, true};
      if (left >= n || hot[left].max_end > addr) stack[top++] = {left, z.level - 1, false};
    } else if (z.x < n && hot[z.x].start <= addr) {
      if (addr < cold[z.x].end) visit(cold[z.x].version);
      stack[top++] = {z.x + (size_t{1} << (z.level - 1)), z.level - 1, false};
    }
  }
}

SymbolIndex::SymbolIndex()
    : store_(std::make_unique<VersionStore>()), tree_(std::make_unique<Tree>()) {
  tree_->store = store_.get();
}
SymbolIndex::~SymbolIndex() = default;

std::string_view SymbolIndex::AdoptBuffer(std::string bytes) {
  auto owner = std::make_shared<const std::string>(std::move(bytes));
  std::string_view view = *owner;
  AdoptBytes(std::move(owner), view);
  return view;
}

void SymbolIndex::AdoptBytes(std::shared_ptr<const void> owner, std::string_view bytes,
                             std::function<void()> give_back_pages) {
  store_->adopted.push_back({std::move(owner), bytes, std::move(give_back_pages)});
}

void SymbolIndex::GiveBackAdoptedPages() const {
  for (const VersionStore::Adopted& a : store_->adopted)
    if (a.give_back_pages) a.give_back_pages();
}

uint32_t SymbolIndex::AddSource(SymbolSourceInfo info) {
  sources_.push_back(std::move(info));
  return static_cast<uint32_t>(sources_.size() - 1);
}

uint32_t SymbolIndex::Add(const CodeVersionSpec& version) {
  uint32_t id = version.function_id;
  if (id == 0) {
    id = next_function_id_++;
  } else if (id >= next_function_id_) {
    next_function_id_ = id + 1;
  }
  if (version.source < sources_.size()) ++sources_[version.source].records;
  store_->Append(size_, version, id);
  ++size_;
  return id;
}

const CodeVersion& SymbolIndex::version(size_t i) const { return store_->at(i); }
CodeVersion* SymbolIndex::mutable_version(size_t i) {
  if (i >= size_) throw std::out_of_range("SymbolIndex: no version " + std::to_string(i));
  return &store_->at(i);
}

void SymbolIndex::SetCode(size_t i, std::string_view code) {
  store_->SideOf(mutable_version(i)).code = store_->Keep(code);
}

void SymbolIndex::SetLineTable(size_t i, std::span<const std::string_view> files,
                               std::span<const LineEntry> lines) {
  VersionSide& side = store_->SideOf(mutable_version(i));
  side.files = store_->KeepFiles(files);
  side.lines = store_->arena.CopyArray(lines);
}

void SymbolIndex::SetSourceLine(size_t i, std::string_view file, uint32_t line) {
  CodeVersion* v = mutable_version(i);
  store_->SideOf(v).source_line = line;
  v->file_ = store_->Intern(file);
}

// A perf map and a jitdump of one process describe the same code twice (Superseded). Matched
// per start address, where the sorted nodes put the versions of one address side by side: the
// map's entry goes, the jitdump's version (code bytes, lines, moves) stays. Both sources' other
// versions stay as they are (a cut-off dump lacks the last code the map lists).
template <typename Node>
void SymbolIndex::SupersedeMapEntries(std::vector<Node>* nodes) {
  superseded_.assign(size_, false);
  std::vector<uint8_t> kind(sources_.size(), 0);  // 1: perf map, 2: jitdump
  uint8_t kinds = 0;
  for (size_t s = 0; s < sources_.size(); ++s) {
    kind[s] = sources_[s].kind == "perf-map" ? 1 : sources_[s].kind == "jitdump" ? 2 : 0;
    kinds |= kind[s];
  }
  if (kinds != 3) return;
  auto kind_of = [&](uint32_t version) {
    uint32_t s = store_->at(version).source();
    return s < kind.size() ? kind[s] : uint8_t{0};
  };
  // Nodes are sorted by start; the versions of one start are few (a reused address's).
  std::vector<uint32_t> dumps, maps;
  std::string map_name;
  size_t kept = 0;
  for (size_t i = 0; i < nodes->size();) {
    size_t end = i;
    dumps.clear();
    maps.clear();
    for (; end < nodes->size() && (*nodes)[end].start == (*nodes)[i].start; ++end) {
      uint8_t k = kind_of((*nodes)[end].version);
      if (k == 1) maps.push_back((*nodes)[end].version);
      if (k == 2) dumps.push_back((*nodes)[end].version);
    }
    if (!dumps.empty() && !maps.empty()) {
      for (uint32_t m : maps) {
        const CodeVersion& map_version = store_->at(m);
        map_name = map_version.raw_name();
        for (uint32_t d : dumps) {
          const CodeVersion& dump_version = store_->at(d);
          if (dump_version.size() != map_version.size()) continue;
          const bool nameless = dump_version.stored_name().empty();
          if (!nameless && dump_version.raw_name() != map_name) continue;
          if (nameless) TakeName(d, map_version);
          superseded_[m] = true;
          ++sources_[map_version.source()].superseded;
          break;
        }
      }
    }
    for (; i < end; ++i)
      if (!superseded_[(*nodes)[i].version]) (*nodes)[kept++] = (*nodes)[i];
  }
  nodes->resize(kept);
}

void SymbolIndex::Finish() {
  // Sorted by start, ties in load order. The start is in the node so the sort compares without
  // reaching into the versions (sorting bare indices that way took twice as long).
  using Node = Tree::Node;
  std::vector<Node> nodes(size_);
  for (size_t i = 0; i < nodes.size(); ++i)
    nodes[i] = Node::Of(store_->at(i), static_cast<uint32_t>(i));
  std::sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) {
    return a.start != b.start ? a.start < b.start : a.version < b.version;
  });
  SupersedeMapEntries(&nodes);
  auto start_of = [&](size_t node) { return nodes[node].start; };
  auto end_of = [&](size_t node) { return tree_->EndOf(nodes[node]); };
  auto function_of = [&](size_t node) { return store_->at(nodes[node].version).function_id(); };

  // Code reuse: count clusters of overlapping ranges that hold more than one function.
  reused_ranges_ = 0;
  for (size_t i = 0; i < nodes.size();) {
    if (start_of(i) == end_of(i)) {
      ++i;
      continue;
    }
    uint64_t cluster_end = end_of(i);
    uint32_t first_function = function_of(i);
    bool mixed = false;
    for (++i; i < nodes.size() && start_of(i) < cluster_end; ++i) {
      if (start_of(i) == end_of(i)) continue;
      cluster_end = std::max(cluster_end, end_of(i));
      if (function_of(i) != first_function) mixed = true;
    }
    if (mixed) ++reused_ranges_;
  }

  // Split off the ranges that overlap no other one (see Tree). Empty ranges cover nothing.
  std::vector<bool> overlaps(nodes.size(), false);
  size_t overlapping = 0;
  {
    uint64_t reach = 0;  // largest end so far
    size_t reach_node = SIZE_MAX;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const uint64_t start = start_of(i), end = end_of(i);
      if (start == end) continue;
      if (reach_node != SIZE_MAX && start < reach) {
        overlapping += !overlaps[i] + !overlaps[reach_node];
        overlaps[i] = true;
        overlaps[reach_node] = true;
      }
      if (reach_node == SIZE_MAX || end > reach) {
        reach = end;
        reach_node = i;
      }
    }
  }
  overlapped_.assign(size_, false);
  tree_->hot.clear();
  tree_->cold.clear();
  tree_->hot.reserve(overlapping);
  tree_->cold.reserve(overlapping);
  // The lone nodes stay where they are, moved to the front: no second array of them.
  size_t lone = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const uint64_t start = start_of(i), end = end_of(i);
    if (start == end) continue;
    if (overlaps[i]) {
      overlapped_[nodes[i].version] = true;
      tree_->hot.push_back({start, 0});
      tree_->cold.push_back({end, nodes[i].version});
    } else {
      nodes[lone++] = nodes[i];
    }
  }
  nodes.resize(lone);
  if (lone < nodes.capacity() / 2) nodes.shrink_to_fit();
  tree_->lone = std::move(nodes);
  tree_->Build();
  tree_->by_end.clear();
  tree_->by_end.reserve(tree_->cold.size());
  for (const Tree::Cold& c : tree_->cold) tree_->by_end.push_back({c.end, c.version});
  std::sort(tree_->by_end.begin(), tree_->by_end.end(), [](const Tree::End& a, const Tree::End& b) {
    return a.end != b.end ? a.end < b.end : a.version < b.version;
  });
}

SymbolIndex::Neighbors SymbolIndex::LookupNeighbors(uint64_t addr) const {
  const Tree& t = *tree_;
  int64_t before = -1, after = -1;
  uint64_t before_end = 0, after_start = 0;
  auto take_before = [&](uint64_t end, uint32_t version) {
    if (before < 0 || end > before_end || (end == before_end && version > before)) {
      before = version;
      before_end = end;
    }
  };
  auto take_after = [&](uint64_t start, uint32_t version) {
    if (after < 0 || start < after_start || (start == after_start && version < after)) {
      after = version;
      after_start = start;
    }
  };
  // The lone ranges overlap nothing, so their ends are in start order too: at most the one
  // range that contains `addr` lies between the last one starting at or below it and the last
  // one ending there.
  auto next = std::upper_bound(t.lone.begin(), t.lone.end(), addr,
                               [](uint64_t a, const Tree::Node& node) { return a < node.start; });
  if (next != t.lone.end()) take_after(next->start, next->version);
  for (auto it = next; it != t.lone.begin();) {
    --it;
    if (t.EndOf(*it) <= addr) {
      take_before(t.EndOf(*it), it->version);
      break;
    }
  }
  auto first_after = std::upper_bound(t.hot.begin(), t.hot.end(), addr,
                                      [](uint64_t a, const Tree::Hot& h) { return a < h.start; });
  // Ties of start among overlapping ranges: the earliest loaded.
  for (auto it = first_after; it != t.hot.end() && it->start == first_after->start; ++it)
    take_after(it->start, t.cold[size_t(it - t.hot.begin())].version);
  auto ended = std::upper_bound(t.by_end.begin(), t.by_end.end(), addr,
                                [](uint64_t a, const Tree::End& e) { return a < e.end; });
  if (ended != t.by_end.begin()) take_before(std::prev(ended)->end, std::prev(ended)->version);
  Neighbors n;
  if (before >= 0) n.before = &store_->at(size_t(before));
  if (after >= 0) n.after = &store_->at(size_t(after));
  return n;
}

void SymbolIndex::TakeName(uint32_t dump_version, const CodeVersion& map_version) {
  std::string raw_name, map_raw_name;
  CodeVersionSpec spec = store_->at(dump_version).Spec(&raw_name);
  CodeVersionSpec named = map_version.Spec(&map_raw_name);
  spec.raw_name = named.raw_name;
  spec.function_name = named.function_name;
  // The location the map's name gives, where the dump's line table gave none.
  if (spec.source_file.empty()) {
    spec.source_file = named.source_file;
    if (spec.source_line == 0) spec.source_line = named.source_line;
  }
  spec.definition_line = named.definition_line;
  spec.definition_column = named.definition_column;
  store_->Fill(dump_version, spec, spec.function_id);
}

bool SymbolIndex::Superseded(const CodeVersion& version) const {
  size_t order = version.load_order();
  return order < superseded_.size() && superseded_[order];
}

std::vector<const CodeVersion*> SymbolIndex::LookupAll(uint64_t addr) const {
  std::vector<const CodeVersion*> result;
  LookupAll(addr, &result);
  return result;
}

void SymbolIndex::LookupAll(uint64_t addr, std::vector<const CodeVersion*>* out) const {
  out->clear();
  tree_->Query(addr, [&](uint32_t version) { out->push_back(&store_->at(version)); });
  // In load order (a version's load_order() is its index in the store).
  if (out->size() > 1) {
    std::sort(out->begin(), out->end(), [](const CodeVersion* a, const CodeVersion* b) {
      return a->load_order() < b->load_order();
    });
  }
}

bool SymbolIndex::Overlapped(const CodeVersion& version) const {
  size_t order = version.load_order();
  return order < overlapped_.size() && overlapped_[order];
}

const CodeVersion* SymbolIndex::Lookup(uint64_t addr) const {
  // No allocation: only the latest-loaded match is kept.
  int64_t latest = -1;
  tree_->Query(addr, [&](uint32_t version) { latest = std::max<int64_t>(latest, version); });
  return latest < 0 ? nullptr : &store_->at(static_cast<size_t>(latest));
}

}  // namespace cg_inject
