#include "cli/jit_image_output.h"

#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "cg_inject/error.h"
#include "cg_inject/symbols.h"
#include "cli/options.h"
#include "util/append_format.h"

namespace cg_inject {
namespace {

bool AnyCode(const SymbolIndex& index) {
  for (size_t i = 0; i < index.size(); ++i)
    if (!index.version(i).code().empty()) return true;
  return false;
}

}  // namespace

JitImagePlan PlanImagesForOutput(const CliOptions& options, const std::string& output_path,
                                 const SymbolIndex& index) {
  if (!options.elf_images || !AnyCode(index)) return {};
  namespace fs = std::filesystem;
  const bool to_file = output_path != "-";
  struct stat st;
  const bool special = to_file && stat(output_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (options.elf_dir.empty() && (!to_file || special)) return {};

  JitImageNaming naming;
  std::error_code ec;
  fs::path dir;
  if (!options.elf_dir.empty()) {
    fs::create_directories(options.elf_dir, ec);
    if (ec) ThrowForFile(options.elf_dir, "cannot create directory: " + ec.message());
    dir = options.elf_dir;
  } else {
    dir = fs::path(output_path).parent_path();
    if (dir.empty()) dir = ".";
  }
  dir = fs::absolute(dir, ec).lexically_normal();
  if (ec) ThrowForFile(dir.string(), "cannot make the path absolute: " + ec.message());
  naming.dir = dir.string();
  if (naming.dir.size() > 1 && naming.dir.back() == '/') naming.dir.pop_back();
  naming.stem = to_file && !special ? fs::path(output_path).filename().string() : "stdout";
  naming.relative = options.elf_relative;
  JitImagePlan plan = PlanJitImages(index, naming);
  // An image's name is the output's plus ".SOURCE.elf": a long (valid) output name would make
  // it longer than a file name may be. The stem gives up what is too much.
  size_t longest = 0;
  for (const PlannedJitImage& image : plan.images)
    longest = std::max(longest, fs::path(image.path).filename().string().size());
  if (longest > NAME_MAX) {
    size_t over = longest - NAME_MAX;
    size_t keep = naming.stem.size() > over ? naming.stem.size() - over : 1;
    // Cut before a UTF-8 sequence, not inside one.
    while (keep > 1 && (static_cast<unsigned char>(naming.stem[keep]) & 0xc0) == 0x80) --keep;
    naming.stem.resize(std::min(keep, naming.stem.size()));
    plan = PlanJitImages(index, naming);
  }
  return plan;
}

void AppendImageStatsText(const JitImagePlan& plan, const JitImageWriteStats& written,
                          const std::vector<MoarCodeStats>& moar_code, std::string* out) {
  for (const MoarCodeStats& m : moar_code)
    AppendF(out,
            "cg-inject: MoarVM code files in %s: %" PRId64 " of %" PRId64
            " paired with the perf map's %" PRId64 " lines (%" PRId64 " size mismatches)\n",
            m.dir.c_str(), m.paired, m.files, m.lines, m.size_mismatches);
  if (plan.versions_untouched > 0)
    AppendF(out,
            "cg-inject: %" PRId64 " code versions the profile never ran: no image (%" PRId64
            " images not written)\n",
            plan.versions_untouched, plan.images_untouched);
  if (plan.images.empty()) return;
  AppendF(out,
          "cg-inject: ELF images for machine code: %" PRId64 " (%" PRId64 " functions, %" PRId64
          " line rows, %" PRIu64 " bytes), first: %s\n",
          written.images, written.symbols, written.line_rows, written.file_bytes,
          plan.images.front().path.c_str());
  if (plan.versions_shared > 0 || plan.images.size() > 1)
    AppendF(out,
            "cg-inject: images: %zu for %" PRId64
            " code versions (reused addresses need further "
            "images; %" PRId64 " identical reloads share a symbol)\n",
            plan.images.size(), plan.versions_placed, plan.versions_shared);
  if (plan.salted_versions > 0)
    AppendF(out,
            "cg-inject: %" PRId64
            " functions' last bytes in the images are the runtime's marker, "
            "not the code that ran (CPython salts each function it dumps)\n",
            plan.salted_versions);
  if (plan.versions_skipped > 0)
    AppendF(out, "cg-inject: %" PRId64 " code versions of another architecture: no image\n",
            plan.versions_skipped);
}

void AddImageStatsJson(const JitImagePlan& plan, const JitImageWriteStats& written,
                       const std::vector<MoarCodeStats>& moar_code, std::string* json) {
  size_t close = json->rfind('}');
  if (close == std::string::npos) return;
  std::string member;
  if (!moar_code.empty()) {
    member += ",\"moar_code\":[";
    for (size_t i = 0; i < moar_code.size(); ++i) {
      const MoarCodeStats& m = moar_code[i];
      AppendF(&member,
              "%s{\"files\":%" PRId64 ",\"lines\":%" PRId64 ",\"paired\":%" PRId64
              ",\"size_mismatches\":%" PRId64 "}",
              i ? "," : "", m.files, m.lines, m.paired, m.size_mismatches);
    }
    member += "]";
  }
  if (plan.images.empty() && plan.images_untouched == 0) {
    json->insert(close, member);
    return;
  }
  AppendF(&member,
          ",\"elf_images\":{\"images\":%" PRId64 ",\"functions\":%" PRId64 ",\"line_rows\":%" PRId64
          ",\"bytes\":%" PRIu64 ",\"versions\":%" PRId64 ",\"shared\":%" PRId64
          ",\"salted\":%" PRId64 ",\"skipped\":%" PRId64 ",\"untouched_versions\":%" PRId64
          ",\"untouched_images\":%" PRId64 "}",
          written.images, written.symbols, written.line_rows, written.file_bytes,
          plan.versions_placed, plan.versions_shared, plan.salted_versions, plan.versions_skipped,
          plan.versions_untouched, plan.images_untouched);
  json->insert(close, member);
}

}  // namespace cg_inject
