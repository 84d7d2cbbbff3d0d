// Which JIT code versions go into which ELF image (src/elf/jit_image_writer.h), and what `ob=`
// names each image, so that KCachegrind's machine-code view finds the bytes that really ran.
//
// Every version with code bytes (jitdump CODE_LOAD/CODE_MOVE, MoarVM's raw dumps) gets an STT_FUNC
// symbol in an image of its source, and `ob=` names it; only the images holding versions the
// output names are written, each whole (KeepTouched). Versions whose code overlaps
// (address reuse) cannot share an image: a version goes into the first image of its source where it
// overlaps nothing, so image 1 holds the first code at each address, image 2 what replaced it, and
// so on. A reloaded version with the same name, address and bytes as one already placed is the same
// code: it shares that symbol. A moved function has a version at each address; both fit one image
// when they do not overlap.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cg_inject {

class OutputGroup;
class SymbolIndex;

/// Where images are written and how `ob=` refers to them.
struct JitImageNaming {
  std::string dir;        // directory to write the images to (absolute for absolute `ob=`)
  std::string stem;       // images are named STEM.SOURCE[.N].elf (STEM: the output's basename)
  bool relative = false;  // `ob=` holds the bare file name, else DIR/NAME
  /// Functions per image at most: each may need its own section, and section indices are 16-bit
  /// (no extended numbering here), so a source with more spills into further images.
  size_t max_functions = 60000;
  /// Images per source that a version may be placed in among other versions. Code reused at one
  /// address more often than this (a jitdump loading one address 10,000 times, issue 36 item 6)
  /// gets an image of its own per version: placing it would otherwise try every image so far.
  size_t max_shared_images = 64;
};

struct PlannedJitImage {
  std::string path;    // DIR/NAME
  std::string object;  // what `ob=` says for its functions
  uint32_t source = 0;
  uint16_t machine = 0;            // EM_X86_64 or EM_AARCH64
  std::vector<uint32_t> versions;  // SymbolIndex::version indices, one symbol each
};

struct JitImagePlan {
  std::vector<PlannedJitImage> images;
  /// One entry per SymbolIndex::version(i): its image's `ob=`, or "" (no code bytes, or an
  /// architecture no image is written for). Feeds InjectOptions::version_objects.
  std::vector<std::string> object_by_version;
  int64_t versions_placed = 0;  // versions with an image
  int64_t versions_shared = 0;  // of those, reloads that share an identical version's symbol
  /// Those reloads: (reload, the version whose symbol it shares).
  std::vector<std::pair<uint32_t, uint32_t>> shared_with;
  int64_t salted_versions = 0;   // versions whose last bytes the runtime overwrote (CPython)
  int64_t versions_skipped = 0;  // code bytes of an architecture without images
  int64_t versions_alone = 0;    // placed in an image of their own (past max_shared_images)
  // After KeepTouched: the images dropped because the output names none of their versions, and
  // the versions they held.
  int64_t versions_untouched = 0;
  int64_t images_untouched = 0;
};

/// Keeps only the planned images holding a version `touched` marks (Injector::touched_versions:
/// the output names its image), each whole; counts what was dropped. An empty `touched` (nothing
/// was injected) keeps nothing.
void KeepTouched(JitImagePlan* plan, const std::vector<bool>& touched);

/// Plans the images of every source with code bytes. Requires: `index` finished.
JitImagePlan PlanJitImages(const SymbolIndex& index, const JitImageNaming& naming);

/// What writing the images produced.
struct JitImageWriteStats {
  int64_t images = 0;
  int64_t symbols = 0;
  int64_t line_rows = 0;
  uint64_t file_bytes = 0;
};

/// Writes every planned image (each atomically; with a `group`, renamed into place by the
/// group's CommitAll). Throws InputError on I/O errors.
JitImageWriteStats WriteJitImages(const JitImagePlan& plan, const SymbolIndex& index,
                                  OutputGroup* group = nullptr);

}  // namespace cg_inject
