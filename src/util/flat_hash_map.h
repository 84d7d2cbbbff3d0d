// An open-addressing hash map: keys and values inline in one array, linear probing, a one-byte
// tag per slot. The reader, injector and writer each keep a table entry per distinct function or
// name (a profile may name millions); std::unordered_map gave each entry its own heap node, and
// walking scattered nodes, allocating them and freeing them at exit took a quarter of a run with
// a perf map (perf, 100 MB profile).
//
// Not a drop-in std::unordered_map: no pointer stability (an insertion may move every entry, so
// keep an index, not a pointer, across insertions), no iteration order, Key and Value must be
// default-constructible and movable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace cg_inject {

/// The Value of a FlatHashMap used as a set: it takes no room in a slot.
struct NoValue {};

template <typename Key, typename Value, typename Hash = std::hash<Key>,
          typename Equal = std::equal_to<>>
class FlatHashMap {
 public:
  struct Slot {
    Key key{};
    [[no_unique_address]] Value value{};
  };

  FlatHashMap() = default;
  /// With hash and compare objects that carry state (KeyIndex's look keys up in a table).
  explicit FlatHashMap(Hash hash, Equal equal = Equal()) : hash_(hash), equal_(equal) {}
  // A moved-from map is empty and usable (the defaults would keep its capacity without slots).
  FlatHashMap(FlatHashMap&& other) noexcept { *this = std::move(other); }
  FlatHashMap& operator=(FlatHashMap&& other) noexcept {
    slots_ = std::move(other.slots_);
    tags_ = std::move(other.tags_);
    capacity_ = std::exchange(other.capacity_, 0);
    size_ = std::exchange(other.size_, 0);
    shift_ = std::exchange(other.shift_, 64);
    hash_ = other.hash_;
    equal_ = other.equal_;
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }

  /// The value of `key`, or null. `K` may be any type Hash and Equal take with Key (a
  /// std::string_view for a std::string key).
  template <typename K>
  Value* find(const K& key) {
    size_t i = FindSlot(key);
    return i == kNone ? nullptr : &slots_[i].value;
  }
  template <typename K>
  const Value* find(const K& key) const {
    return const_cast<FlatHashMap*>(this)->find(key);
  }
  template <typename K>
  bool contains(const K& key) const {
    return find(key) != nullptr;
  }
  /// The stored key equal to `key`, or null: what a set (Value NoValue) looks up.
  template <typename K>
  const Key* find_key(const K& key) const {
    size_t i = FindSlot(key);
    return i == kNone ? nullptr : &slots_[i].key;
  }

  /// The value of `key`, default-constructed and inserted when new; `second` says whether it was.
  template <typename K>
  std::pair<Value*, bool> try_emplace(const K& key) {
    auto [slot, inserted] = Insert(key, [&] { return Key(key); });
    return {&slot->value, inserted};
  }
  /// The slot of `key`; when there is none, one whose key is `stored`, which must hash and
  /// compare equal to `key` (KeyIndex stores an index where it looks up the key it names).
  template <typename K>
  std::pair<Slot*, bool> insert_as(const K& key, const Key& stored) {
    return Insert(key, [&] { return stored; });
  }
  template <typename K>
  Value& operator[](const K& key) {
    return *try_emplace(key).first;
  }

  /// Removes `key`; returns whether it was there. Later entries of its probe run move back, so
  /// lookups never need tombstones.
  template <typename K>
  bool erase(const K& key) {
    size_t hole = FindSlot(key);
    if (hole == kNone) return false;
    size_t mask = capacity_ - 1;
    for (size_t i = (hole + 1) & mask; tags_[i] != kEmpty; i = (i + 1) & mask) {
      // An entry may fill the hole when its home is not cyclically within (hole, i].
      size_t home = Home(Mix(slots_[i].key));
      if (((i - home) & mask) >= ((i - hole) & mask)) {
        tags_[hole] = tags_[i];
        slots_[hole] = std::move(slots_[i]);
        hole = i;
      }
    }
    tags_[hole] = kEmpty;
    slots_[hole] = Slot{};
    --size_;
    return true;
  }

  /// Empties the map and keeps its memory (tables cleared per block are reused).
  void clear() {
    if (size_ == 0) return;
    if constexpr (std::is_trivially_destructible_v<Slot>) {
      // Nothing to free: the tags alone say a slot is empty, and Insert resets a slot it takes.
      // The injector clears a block's tables per block (a branch per slot was 3% of a run).
      std::memset(tags_.get(), kEmpty, capacity_);
    } else {
      for (size_t i = 0; i < capacity_; ++i) {
        if (tags_[i] != kEmpty) slots_[i] = Slot{};
        tags_[i] = kEmpty;
      }
    }
    size_ = 0;
  }
  /// Room for `n` entries without growing.
  void reserve(size_t n) {
    size_t want = 16;
    while (want * 7 < n * 8) want *= 2;
    if (want > capacity_) Grow(want);
  }

  /// Iteration over the entries as Slots (key, value), in slot order.
  template <typename SlotT, typename MapT>
  class Iterator {
   public:
    Iterator(MapT* map, size_t i) : map_(map), i_(i) { Skip(); }
    SlotT& operator*() const { return map_->slots_[i_]; }
    SlotT* operator->() const { return &map_->slots_[i_]; }
    Iterator& operator++() {
      ++i_;
      Skip();
      return *this;
    }
    bool operator==(const Iterator& other) const { return i_ == other.i_; }

   private:
    // Eight empty tags at a compare: a table cleared for reuse keeps its capacity, and one that
    // a large block grew was walked slot by slot for each small block after it (mcs: 3,400
    // instructions per block's call table).
    void Skip() {
      const size_t capacity = map_->capacity_;
      const uint8_t* tags = map_->tags_.get();
      while (i_ < capacity && tags[i_] == kEmpty) {
        ++i_;
        while ((i_ & 7) == 0 && i_ + 8 <= capacity && EightEmpty(tags + i_)) i_ += 8;
      }
    }
    static bool EightEmpty(const uint8_t* tags) {
      uint64_t word;
      std::memcpy(&word, tags, sizeof word);
      return word == 0;  // kEmpty is 0
    }
    MapT* map_;
    size_t i_;
  };
  using iterator = Iterator<Slot, FlatHashMap>;
  using const_iterator = Iterator<const Slot, const FlatHashMap>;
  iterator begin() { return {this, size_ == 0 ? capacity_ : 0}; }
  iterator end() { return {this, capacity_}; }
  const_iterator begin() const { return {this, size_ == 0 ? capacity_ : 0}; }
  const_iterator end() const { return {this, capacity_}; }

 private:
  static constexpr uint8_t kEmpty = 0;  // Skip's EightEmpty relies on it
  static constexpr size_t kNone = ~size_t{0};

  // Fibonacci hashing on top of Hash: std::hash of an integer is the integer itself, and dense
  // ids would otherwise fill one run of slots.
  template <typename K>
  uint64_t Mix(const K& key) const {
    return uint64_t{hash_(key)} * 0x9E3779B97F4A7C15ull;
  }
  size_t Home(uint64_t hash) const { return size_t(hash >> shift_); }
  // Middle bits of the product (Home takes the top ones), never 0 (empty): most mismatches end
  // at the tag, before Equal.
  static uint8_t Tag(uint64_t hash) { return uint8_t((hash >> 32) | 1); }

  template <typename K>
  size_t FindSlot(const K& key) const {
    if (size_ == 0) return kNone;
    uint64_t hash = Mix(key);
    uint8_t tag = Tag(hash);
    for (size_t i = Home(hash);; i = (i + 1) & (capacity_ - 1)) {
      if (tags_[i] == kEmpty) return kNone;
      if (tags_[i] == tag && equal_(slots_[i].key, key)) return i;
    }
  }

  template <typename K, typename MakeKey>
  std::pair<Slot*, bool> Insert(const K& key, MakeKey make_key) {
    if ((size_ + 1) * 8 > capacity_ * 7) Grow(capacity_ ? capacity_ * 2 : 16);
    uint64_t hash = Mix(key);
    uint8_t tag = Tag(hash);
    for (size_t i = Home(hash);; i = (i + 1) & (capacity_ - 1)) {
      if (tags_[i] == kEmpty) {
        tags_[i] = tag;
        slots_[i].key = make_key();
        if constexpr (std::is_trivially_destructible_v<Slot>) slots_[i].value = Value{};
        ++size_;
        return {&slots_[i], true};
      }
      if (tags_[i] == tag && equal_(slots_[i].key, key)) return {&slots_[i], false};
    }
  }

  void Grow(size_t capacity) {
    std::unique_ptr<Slot[]> old_slots = std::move(slots_);
    std::unique_ptr<uint8_t[]> old_tags = std::move(tags_);
    size_t old_capacity = capacity_;
    slots_ = std::make_unique<Slot[]>(capacity);
    tags_ = std::make_unique<uint8_t[]>(capacity);  // zeroed: all empty
    capacity_ = capacity;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (size_t j = 0; j < old_capacity; ++j) {
      if (old_tags[j] == kEmpty) continue;
      uint64_t hash = Mix(old_slots[j].key);
      size_t i = Home(hash);
      while (tags_[i] != kEmpty) i = (i + 1) & (capacity_ - 1);
      tags_[i] = old_tags[j];
      slots_[i] = std::move(old_slots[j]);
    }
  }

  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<uint8_t[]> tags_;
  size_t capacity_ = 0;  // a power of two, or 0
  size_t size_ = 0;
  int shift_ = 64;  // 64 - log2(capacity_): Home takes the hash's top bits
  [[no_unique_address]] Hash hash_{};
  [[no_unique_address]] Equal equal_{};
};

/// The index of each element of a table (an array of elements that hold their key: a
/// ChunkedVector, a NameTable) by that key. Tables of millions of functions already store the key:
/// a slot here is the 4-byte index, not a copy of the key and an index (16 bytes and more). The
/// table must stay where it is (the owner is neither copied nor moved) and hold every index
/// inserted here. `KeyAt(table, i)` gives element i's key.
template <typename Key, typename KeyHash, typename Table, Key (*KeyAt)(const Table&, uint32_t)>
class KeyIndex {
 public:
  explicit KeyIndex(const Table* table) : set_(Hash{table}, Equal{table}) {}
  KeyIndex(const KeyIndex&) = delete;
  KeyIndex& operator=(const KeyIndex&) = delete;

  /// The index of `key`, or null.
  const uint32_t* find(const Key& key) const { return set_.find_key(key); }
  /// The index of `key`; when it has none, `next`, whose element the caller fills in the table
  /// before the index is used again (`second`: it was new).
  std::pair<uint32_t, bool> insert(const Key& key, uint32_t next) {
    auto [slot, inserted] = set_.insert_as(key, next);
    return {slot->key, inserted};
  }
  size_t size() const { return set_.size(); }
  void clear() { set_.clear(); }

 private:
  struct Hash {
    const Table* table;
    size_t operator()(uint32_t i) const { return KeyHash{}(KeyAt(*table, i)); }
    size_t operator()(const Key& key) const { return KeyHash{}(key); }
  };
  struct Equal {
    const Table* table;
    bool operator()(uint32_t i, const Key& key) const { return KeyAt(*table, i) == key; }
    bool operator()(uint32_t i, uint32_t j) const { return i == j; }
  };
  FlatHashMap<uint32_t, NoValue, Hash, Equal> set_;
};

}  // namespace cg_inject
