// Test-only helpers shared by the rewrite stage's unit tests: code versions added by hand and
// objects with made-up extents and symbols.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cg_inject/inject.h"
#include "cg_inject/symbols.h"

namespace cg_inject::testing {

/// Adds a version named `name` (raw and readable) at [start, start + size) of `source`.
inline void AddVersion(SymbolIndex* index, uint32_t source, uint64_t start, uint64_t size,
                       std::string_view name) {
  CodeVersionSpec v;
  v.start = start;
  v.size = size;
  v.raw_name = v.function_name = name;
  v.source = source;
  index->Add(v);
}

/// Objects by name: one address range each, absolute or not, and symbols by start address.
class FakeExtents : public ObjectExtents {
 public:
  struct Object {
    uint64_t lo = 0, hi = 0;
    bool absolute = false;
    std::map<uint64_t, std::string> symbols;  // start -> name; each runs to the next or hi
    // KnownLoadBias (an ET_EXEC's 0, a PIE executable's Valgrind base); none by default.
    std::optional<uint64_t> load_bias = std::nullopt;
    std::map<uint64_t, std::string> plt = {};  // slot start -> NAME@plt; each slot is 8 bytes
    // Rebuilt since the profile: StubCallFits is false for a slot whose NAME is not the target.
    bool rebuilt = false;
  };
  std::map<std::string, Object, std::less<>> objects;
  std::map<std::string, std::string, std::less<>> programs;  // cmd: program -> its object path

  /// /usr/bin/node as Node's ET_EXEC: absolute addresses at [lo, hi), symbols as given.
  static FakeExtents Node(uint64_t lo, uint64_t hi, std::map<uint64_t, std::string> symbols = {}) {
    FakeExtents extents;
    extents.objects["/usr/bin/node"] = Object{lo, hi, true, std::move(symbols)};
    return extents;
  }

  std::optional<bool> Contains(std::string_view object, uint64_t addr) const override {
    auto it = objects.find(object);
    if (it == objects.end()) return std::nullopt;
    return addr >= it->second.lo && addr < it->second.hi;
  }
  bool AddressesAreAbsolute(std::string_view object) const override {
    auto it = objects.find(object);
    return it != objects.end() && it->second.absolute;
  }
  std::optional<std::string> FunctionAt(std::string_view object, uint64_t addr) const override {
    auto it = objects.find(object);
    if (it == objects.end()) return std::nullopt;
    auto symbol = it->second.symbols.upper_bound(addr);
    if (symbol == it->second.symbols.begin()) return std::nullopt;
    return std::prev(symbol)->second;
  }
  std::string ProgramObject(std::string_view program) const override {
    auto it = programs.find(program);
    return it == programs.end() ? std::string() : it->second;
  }
  std::optional<uint64_t> KnownLoadBias(std::string_view object) const override {
    auto it = objects.find(object);
    return it == objects.end() ? std::nullopt : it->second.load_bias;
  }
  // A shared library's (no load_bias): the page-aligned bias that puts `addr` at its slot
  // `target`@plt.
  std::optional<uint64_t> SlotLoadBias(std::string_view object, uint64_t addr,
                                       std::string_view target) const override {
    auto it = objects.find(object);
    if (it == objects.end() || it->second.load_bias) return std::nullopt;
    for (const auto& [slot, name] : it->second.plt)
      if (slot <= addr && (addr - slot) % 0x1000 == 0 && name == std::string(target) + "@plt")
        return addr - slot;
    return std::nullopt;
  }
  bool StubCallFits(std::string_view object, uint64_t addr, std::string_view,
                    std::string_view target) const override {
    auto it = objects.find(object);
    if (it == objects.end() || !it->second.rebuilt) return true;
    auto slot = it->second.plt.find(addr);
    return slot == it->second.plt.end() || slot->second == std::string(target) + "@plt";
  }
  std::optional<std::string> CodeNameAt(std::string_view object, uint64_t addr) const override {
    auto it = objects.find(object);
    if (it == objects.end() || addr < it->second.lo || addr >= it->second.hi) return std::nullopt;
    auto slot = it->second.plt.upper_bound(addr);
    if (slot != it->second.plt.begin() && addr - std::prev(slot)->first < 8)
      return std::prev(slot)->second;
    return FunctionAt(object, addr).value_or("");
  }
};

}  // namespace cg_inject::testing
