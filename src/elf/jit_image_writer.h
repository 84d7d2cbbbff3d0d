// An ELF64 image of JIT code, so that objdump (KCachegrind's machine-code view, perf annotate)
// and addr2line find the code a profile names at its runtime addresses. The code sits at its
// runtime virtual address (one PT_LOAD and one .text section per run of nearby functions), each
// function has an STT_FUNC symbol with its size, `.note.gnu.build-id` hashes the content, and
// `.debug_line` (DWARF 4, one sequence per function, with a minimal `.debug_info` unit that points
// at it) carries the JIT's own line table.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cg_inject/symbols.h"

namespace cg_inject {

class OutputGroup;

inline constexpr uint16_t kElfMachineX86_64 = 62;    // EM_X86_64
inline constexpr uint16_t kElfMachineAArch64 = 183;  // EM_AARCH64

/// One function of an image. Views and spans are owned by the caller and must outlive the call.
struct JitImageFunction {
  uint64_t addr = 0;                        // runtime address of the first code byte
  std::string_view name;                    // the symbol name (readable)
  std::string_view code;                    // the code bytes; the symbol's size is code.size()
  std::span<const std::string_view> files;  // LineEntry::file_index -> file name
  std::span<const LineEntry> lines;         // any order; rows outside the code are ignored
};

/// What one image holds. Requires: functions do not overlap and have code; little-endian target.
struct JitImageSpec {
  uint16_t machine = kElfMachineX86_64;
  std::vector<JitImageFunction> functions;
  /// Called after every few MB of code bytes written and at the end of each of the writer's two
  /// passes (build id, then file): the code's source may give its pages back, so a mapped
  /// dump's code does not all stay resident until the image is done.
  std::function<void()> give_back_code;
};

/// Sizes of a built image, for `--stats` and tests.
struct JitImageLayout {
  int64_t code_ranges = 0;  // PT_LOAD segments = .text sections
  int64_t symbols = 0;      // STT_FUNC symbols
  int64_t line_rows = 0;    // rows in .debug_line
  uint64_t code_bytes = 0;  // bytes of .text, gaps between nearby functions included
  uint64_t file_size = 0;
};

/// Returns the bytes of the image (ET_EXEC, ELF64, little-endian). Throws InputError naming
/// `display_name` when the spec breaks its requirements (overlap, empty code, too many ranges).
std::string BuildJitImage(const JitImageSpec& spec, std::string_view display_name,
                          JitImageLayout* layout = nullptr);

/// Builds the image and replaces `path` with it atomically (temporary file + rename; with a
/// `group`, the rename waits for the group's CommitAll).
JitImageLayout WriteJitImage(const std::string& path, const JitImageSpec& spec,
                             OutputGroup* group = nullptr);

}  // namespace cg_inject
