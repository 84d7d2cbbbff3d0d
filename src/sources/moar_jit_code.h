// MoarVM's raw JIT code files. With MVM_JIT_DUMP_BYTECODE=1 MoarVM writes the machine code of
// each frame it compiles to moar-jit-N.bin (N counts from 1 in compile order; zero-padded to four
// digits in some versions) in the directory moar-jit.PID under its temporary directory, right
// after that frame's perf-map line (MVM_JIT_PERF_MAP=1). Paired with the map, they are the code
// bytes a jitdump would carry: the ELF images (src/elf/jit_image_plan.h) and instruction
// boundaries (resolve/version_chooser.h) use them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cg_inject {

class SymbolIndex;

/// One moar-jit-N.bin file.
struct MoarCodeFile {
  uint64_t number = 0;  // N
  std::string code;
};

struct MoarCodeStats {
  std::string dir;
  int64_t files = 0;
  int64_t lines = 0;            // versions of the perf map
  int64_t paired = 0;           // files whose size matched their line's size
  int64_t size_mismatches = 0;  // files paired with a line of another size (left without code)
};

/// The raw code directory for a perf map: moar-jit.PID beside `perf_map_path` (perf-PID.map), or
/// "" when there is none.
std::string FindMoarCodeDir(const std::string& perf_map_path);

/// Reads every moar-jit-N.bin in `dir`. Throws InputError when one cannot be read.
std::vector<MoarCodeFile> ReadMoarCodeDir(const std::string& dir);

/// Pairs `files` (any order; sorted by N here) with the versions of `source` in the order they
/// were added (the map's line order): the k-th file with the k-th line, when its size equals the
/// line's. Paired versions get the file's bytes as their code, and when any was paired the
/// source's machine becomes this host's (MoarVM's JIT targets x86-64 only).
/// Requires: no query on `index` yet (boundaries decoded from code are cached on first use).
MoarCodeStats AttachMoarCode(std::vector<MoarCodeFile> files, uint32_t source, SymbolIndex* index);

}  // namespace cg_inject
