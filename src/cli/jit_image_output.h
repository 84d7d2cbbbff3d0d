// The ELF images of JIT code that go with one output file: where they are written, what `ob=`
// calls them, and their lines in `--stats`. The images themselves: src/elf/jit_image_plan.h.
#pragma once

#include <string>

#include <vector>

#include "elf/jit_image_plan.h"
#include "sources/moar_jit_code.h"

namespace cg_inject {

struct CliOptions;
class SymbolIndex;

/// Plans the images for the output at `output_path` ("-" = stdout): none with --no-elf, for
/// stdout or a non-regular file (/dev/null, a FIFO) without --elf-dir, or when no source has
/// code bytes. Otherwise they go beside the output (or into --elf-dir, created here), are named
/// after the output's basename and the source, and `ob=` holds their absolute path (or, with
/// --elf-path=relative, the bare name). Throws InputError when --elf-dir cannot be created.
JitImagePlan PlanImagesForOutput(const CliOptions& options, const std::string& output_path,
                                 const SymbolIndex& index);

/// Appends the `--stats` text lines about the images and MoarVM's code files (nothing when
/// there are none).
void AppendImageStatsText(const JitImagePlan& plan, const JitImageWriteStats& written,
                          const std::vector<MoarCodeStats>& moar_code, std::string* out);
/// Adds an "elf_images" member to the JSON object at the end of `json` (AppendStatsJson's
/// output: one object and a newline), and "moar_code" when MoarVM code files were read.
void AddImageStatsJson(const JitImagePlan& plan, const JitImageWriteStats& written,
                       const std::vector<MoarCodeStats>& moar_code, std::string* json);

}  // namespace cg_inject
