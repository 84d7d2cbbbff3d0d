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
#include <functional>

#include "cg_inject/symbols.h"
#include "sources/arena.h"

namespace cg_inject {

const LineEntry* CodeVersion::LookupLine(uint64_t addr) const {
  if (!Contains(addr)) return nullptr;
  auto it = std::upper_bound(lines.begin(), lines.end(), addr,
                             [](uint64_t a, const LineEntry& entry) { return a < entry.addr; });
  if (it == lines.begin()) return nullptr;
  return &*(it - 1);
}

struct SymbolIndex::Tree {
  // Most JIT code ranges overlap nothing. Those live in a flat array searched by binary search
  // on an 8-byte-per-entry start array (one cache line per step); only ranges that overlap
  // another go into the interval tree, which is then small and stays in cache. With everything in
  // the tree, 1M lookups over 1M symbols took twice as long (two cache misses per level).
  std::vector<uint64_t> lone_starts;
  struct Cold;
  std::vector<Cold> lone;
  // The interval tree over overlapping ranges. What a query touches at every step (Hot) is kept
  // apart from what it reads only for candidates (Cold).
  struct Hot {
    uint64_t start = 0;
    uint64_t max_end = 0;  // largest end in this node's subtree
  };
  // Only read for nodes whose start is at or below the address.
  struct Cold {
    uint64_t end = 0;
    uint32_t version = 0;  // index into versions_ (= load order)
  };
  std::vector<Hot> hot;
  std::vector<Cold> cold;
  int max_level = -1;

  void Build();
  // Calls visit(version index) for every node containing `addr`, in start order.
  template <typename Visit>
  void Query(uint64_t addr, Visit&& visit) const;
};

void SymbolIndex::Tree::Build() {
  const size_t n = hot.size();
  max_level = -1;
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
  auto after = std::upper_bound(lone_starts.begin(), lone_starts.end(), addr);
  if (after != lone_starts.begin()) {
    const Cold& candidate = lone[static_cast<size_t>(after - lone_starts.begin()) - 1];
    if (addr < candidate.end) visit(candidate.version);
  }
  const size_t n = hot.size();
  if (n == 0) return;
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

// What the versions' views point into. Names are copied once per version (they are what makes
// a version distinct); file names are interned (every function of a module names its file);
// code bytes and names inside an adopted jitdump are referenced where they are.
struct SymbolIndex::Storage {
  Arena arena;
  StringPool pool{&arena};  // file names and made-up function names
  struct Adopted {
    std::shared_ptr<const void> owner;
    std::string_view bytes;
  };
  std::vector<Adopted> adopted;

  bool IsAdopted(std::string_view bytes) const {
    if (bytes.empty()) return true;
    std::less<const char*> before;
    for (const Adopted& a : adopted) {
      const char* begin = a.bytes.data();
      const char* end = begin + a.bytes.size();
      if (!before(bytes.data(), begin) && !before(end, bytes.data() + bytes.size())) return true;
    }
    return false;
  }
  std::string_view Keep(std::string_view bytes) {
    return IsAdopted(bytes) ? bytes : arena.Copy(bytes);
  }
  std::span<const std::string_view> KeepFiles(std::span<const std::string_view> files) {
    if (files.empty()) return {};
    std::string_view* out = static_cast<std::string_view*>(
        arena.Allocate(files.size_bytes(), alignof(std::string_view)));
    for (size_t i = 0; i < files.size(); ++i) new (out + i) std::string_view(pool.Intern(files[i]));
    return {out, files.size()};
  }
};

SymbolIndex::SymbolIndex()
    : tree_(std::make_unique<Tree>()), storage_(std::make_unique<Storage>()) {}
SymbolIndex::~SymbolIndex() = default;

std::string_view SymbolIndex::AdoptBuffer(std::string bytes) {
  auto owner = std::make_shared<const std::string>(std::move(bytes));
  std::string_view view = *owner;
  AdoptBytes(std::move(owner), view);
  return view;
}

void SymbolIndex::AdoptBytes(std::shared_ptr<const void> owner, std::string_view bytes) {
  storage_->adopted.push_back({std::move(owner), bytes});
}

std::string_view SymbolIndex::Store(std::string_view bytes) { return storage_->Keep(bytes); }

uint32_t SymbolIndex::AddSource(SymbolSourceInfo info) {
  sources_.push_back(std::move(info));
  return static_cast<uint32_t>(sources_.size() - 1);
}

uint32_t SymbolIndex::Add(CodeVersion version) {
  if (version.function_id == 0) {
    version.function_id = next_function_id_++;
  } else if (version.function_id >= next_function_id_) {
    next_function_id_ = version.function_id + 1;
  }
  version.load_order = versions_.size();
  if (version.source < sources_.size()) ++sources_[version.source].records;
  // Into the index's storage (see CodeVersion). The readable name is usually a piece of the raw
  // name (V8's `LazyCompile:~f file.js:1` gives `LazyCompile:~f`) and then costs nothing more;
  // made-up ones (`(anonymous)`) repeat and are interned.
  Storage& storage = *storage_;
  const std::string_view raw = version.raw_name;
  version.raw_name = storage.arena.Copy(raw);
  // Any occurrence will do: equal bytes are an equal name (readers parse the name into a string
  // of their own, so the function name does not point into the raw name even when it is a piece).
  const std::string_view function = version.function_name;
  if (size_t at = function.empty() ? std::string_view::npos : raw.find(function);
      at != std::string_view::npos) {
    version.function_name = version.raw_name.substr(at, function.size());
  } else {
    version.function_name = storage.pool.Intern(function);
  }
  version.source_file = storage.pool.Intern(version.source_file);
  version.code = storage.Keep(version.code);
  version.files = storage.KeepFiles(version.files);
  version.lines = storage.arena.CopyArray(version.lines);
  uint32_t id = version.function_id;
  versions_.push_back(std::move(version));
  return id;
}

void SymbolIndex::SetLineTable(size_t i, std::span<const std::string_view> files,
                               std::span<const LineEntry> lines) {
  CodeVersion& version = versions_.at(i);
  version.files = storage_->KeepFiles(files);
  version.lines = storage_->arena.CopyArray(lines);
}

void SymbolIndex::Reserve(size_t versions) { versions_.reserve(versions_.size() + versions); }

void SymbolIndex::Finish() {
  // (start, version) sorted: 16 bytes per version where a copy of (start, end, version) took 24
  // (80 MB less for 10 million versions). The start is in the node so the sort compares without
  // reaching into the 160-byte versions (sorting bare indices that way took twice as long); the
  // end is read from the version in the linear passes below.
  struct Node {
    uint64_t start;
    uint32_t version;
  };
  std::vector<Node> nodes(versions_.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    nodes[i] = {versions_[i].start, static_cast<uint32_t>(i)};
  std::sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) {
    return a.start != b.start ? a.start < b.start : a.version < b.version;
  });
  auto end_of = [&](uint32_t i) {
    const CodeVersion& v = versions_[i];
    return v.size > UINT64_MAX - v.start ? UINT64_MAX : v.start + v.size;
  };
  struct Order {  // order[i]: the version of the i-th node, as the passes below read it
    const std::vector<Node>& nodes;
    uint32_t operator[](size_t i) const { return nodes[i].version; }
    size_t size() const { return nodes.size(); }
  } order{nodes};
  // Split off the ranges that overlap no other one (see Tree). Empty ranges cover nothing.
  std::vector<bool> overlaps(order.size(), false);
  size_t overlapping = 0;
  {
    uint64_t reach = 0;  // largest end so far
    size_t reach_node = SIZE_MAX;
    for (size_t i = 0; i < order.size(); ++i) {
      const uint64_t start = versions_[order[i]].start, end = end_of(order[i]);
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
  tree_->lone_starts.clear();
  tree_->lone.clear();
  tree_->hot.clear();
  tree_->cold.clear();
  tree_->hot.reserve(overlapping);
  tree_->cold.reserve(overlapping);
  tree_->lone_starts.reserve(order.size() - overlapping);
  tree_->lone.reserve(order.size() - overlapping);
  for (size_t i = 0; i < order.size(); ++i) {
    const uint64_t start = versions_[order[i]].start, end = end_of(order[i]);
    if (start == end) continue;
    if (overlaps[i]) {
      tree_->hot.push_back({start, 0});
      tree_->cold.push_back({end, order[i]});
    } else {
      tree_->lone_starts.push_back(start);
      tree_->lone.push_back({end, order[i]});
    }
  }
  tree_->Build();

  // Code reuse: count clusters of overlapping ranges that hold more than one function.
  reused_ranges_ = 0;
  size_t i = 0;
  while (i < order.size()) {
    if (versions_[order[i]].start == end_of(order[i])) {
      ++i;
      continue;
    }
    uint64_t cluster_end = end_of(order[i]);
    uint32_t first_function = versions_[order[i]].function_id;
    bool mixed = false;
    for (++i; i < order.size() && versions_[order[i]].start < cluster_end; ++i) {
      if (versions_[order[i]].start == end_of(order[i])) continue;
      cluster_end = std::max(cluster_end, end_of(order[i]));
      if (versions_[order[i]].function_id != first_function) mixed = true;
    }
    if (mixed) ++reused_ranges_;
  }
}

std::vector<const CodeVersion*> SymbolIndex::LookupAll(uint64_t addr) const {
  std::vector<uint32_t> found;
  tree_->Query(addr, [&](uint32_t version) { found.push_back(version); });
  std::sort(found.begin(), found.end());
  std::vector<const CodeVersion*> result;
  result.reserve(found.size());
  for (uint32_t index : found) result.push_back(&versions_[index]);
  return result;
}

const CodeVersion* SymbolIndex::Lookup(uint64_t addr) const {
  // No allocation: only the latest-loaded match is kept.
  int64_t latest = -1;
  tree_->Query(addr, [&](uint32_t version) { latest = std::max<int64_t>(latest, version); });
  return latest < 0 ? nullptr : &versions_[static_cast<size_t>(latest)];
}

}  // namespace cg_inject
