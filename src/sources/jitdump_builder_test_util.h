// Test-only: builds jitdump bytes from a readable description, in either byte order, so tests
// state what a dump contains instead of committing hex.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace cg_inject::testing {

struct BuilderDebugEntry {
  uint64_t addr = 0;
  uint32_t line_no = 0;
  uint32_t discriminator = 0;
  std::string file;  // "\xff" = same as the previous entry
};

class JitdumpBuilder {
 public:
  /// `swapped`: write every field in the opposite byte order to this machine's.
  explicit JitdumpBuilder(bool swapped = false) : swapped_(swapped) {}

  JitdumpBuilder& Header(uint32_t elf_machine = 62, uint32_t pid = 1234, uint64_t flags = 0,
                         uint32_t version = 1, uint32_t header_size = 40) {
    U32(0x4A695444);
    U32(version);
    U32(header_size);
    U32(elf_machine);
    U32(0);  // pad1
    U32(pid);
    U64(1000);  // timestamp
    U64(flags);
    bytes_.append(header_size > 40 ? header_size - 40 : 0, '\xee');
    return *this;
  }

  JitdumpBuilder& CodeLoad(uint64_t timestamp, uint64_t code_addr, std::string_view code,
                           std::string_view name, uint64_t code_index, uint64_t vma = ~0ull,
                           size_t padding = 0) {
    size_t at = Begin(0, timestamp);
    U32(1234);
    U32(1235);
    U64(vma == ~0ull ? code_addr : vma);
    U64(code_addr);
    U64(code.size());
    U64(code_index);
    bytes_.append(name);
    bytes_.push_back('\0');
    bytes_.append(code);
    bytes_.append(padding, '\0');
    End(at);
    return *this;
  }

  JitdumpBuilder& CodeMove(uint64_t timestamp, uint64_t old_addr, uint64_t new_addr,
                           uint64_t code_size, uint64_t code_index) {
    size_t at = Begin(1, timestamp);
    U32(1234);
    U32(1235);
    U64(new_addr);
    U64(old_addr);
    U64(new_addr);
    U64(code_size);
    U64(code_index);
    End(at);
    return *this;
  }

  JitdumpBuilder& DebugInfo(uint64_t timestamp, uint64_t code_addr,
                            const std::vector<BuilderDebugEntry>& entries, size_t padding = 0) {
    size_t at = Begin(2, timestamp);
    U64(code_addr);
    U64(entries.size());
    for (const BuilderDebugEntry& e : entries) {
      U64(e.addr);
      U32(e.line_no);
      U32(e.discriminator);
      bytes_.append(e.file);
      bytes_.push_back('\0');
    }
    bytes_.append(padding, '\0');
    End(at);
    return *this;
  }

  JitdumpBuilder& UnwindingInfo(uint64_t timestamp, std::string_view data,
                                uint64_t eh_frame_hdr_size = 0) {
    size_t at = Begin(4, timestamp);
    U64(data.size());
    U64(eh_frame_hdr_size);
    U64((data.size() + 15) / 16 * 16);
    bytes_.append(data);
    End(at);
    return *this;
  }

  JitdumpBuilder& Close(uint64_t timestamp) {
    End(Begin(3, timestamp));
    return *this;
  }

  /// A record with any id and body.
  JitdumpBuilder& Record(uint32_t id, uint64_t timestamp, std::string_view body) {
    size_t at = Begin(id, timestamp);
    bytes_.append(body);
    End(at);
    return *this;
  }

  /// Overwrites the u32 / u64 at `offset` (in the dump's byte order), to corrupt a field.
  JitdumpBuilder& PatchU32(size_t offset, uint32_t value) {
    if (swapped_) value = __builtin_bswap32(value);
    std::memcpy(&bytes_[offset], &value, sizeof value);
    return *this;
  }
  JitdumpBuilder& PatchU64(size_t offset, uint64_t value) {
    if (swapped_) value = __builtin_bswap64(value);
    std::memcpy(&bytes_[offset], &value, sizeof value);
    return *this;
  }

  /// Offset where the most recent record starts.
  size_t last_record_offset() const { return last_record_; }
  size_t size() const { return bytes_.size(); }
  const std::string& bytes() const { return bytes_; }

 private:
  size_t Begin(uint32_t id, uint64_t timestamp) {
    last_record_ = bytes_.size();
    U32(id);
    U32(0);  // total_size, set by End
    U64(timestamp);
    return last_record_;
  }
  void End(size_t at) { PatchU32(at + 4, static_cast<uint32_t>(bytes_.size() - at)); }
  void U32(uint32_t value) {
    if (swapped_) value = __builtin_bswap32(value);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void U64(uint64_t value) {
    if (swapped_) value = __builtin_bswap64(value);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }

  bool swapped_;
  std::string bytes_;
  size_t last_record_ = 0;
};

}  // namespace cg_inject::testing
