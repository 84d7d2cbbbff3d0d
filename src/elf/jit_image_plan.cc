// Greedy interval colouring per source: versions in load order (SymbolIndex::version), each into
// the first image where it overlaps nothing (see jit_image_plan.h). Each image keeps its placed
// ranges in a map by start; placed ranges never overlap, so the one with the greatest start below a
// version's end is the only one that can overlap it.
#include "elf/jit_image_plan.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "cg_inject/symbols.h"
#include "elf/jit_image_writer.h"

namespace cg_inject {
namespace {

/// The code bytes of `v` that an image holds.
std::string_view ImageCode(const CodeVersion& v) {
  return std::string_view(v.code()).substr(0, std::min<uint64_t>(v.size(), v.code().size()));
}

/// A source file's name without directories and a compression suffix: "jit-1234.dump".
std::string SourceStem(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.ends_with(".zst")) name.resize(name.size() - 4);
  return name.empty() ? "jit" : name;
}

uint16_t MachineOf(const SymbolSourceInfo& source) {
  if (source.elf_machine == kElfMachineX86_64 || source.elf_machine == kElfMachineAArch64)
    return uint16_t(source.elf_machine);
  if (source.elf_machine != 0) return 0;  // another architecture: no image
    // A source that does not say (MoarVM's raw dumps) ran on this machine.
#if defined(__aarch64__)
  return kElfMachineAArch64;
#else
  return kElfMachineX86_64;
#endif
}

struct ImageState {
  std::map<uint64_t, uint64_t> ranges;  // start -> end of placed versions
  bool Overlaps(uint64_t start, uint64_t end) const {
    auto it = ranges.lower_bound(end);
    if (it == ranges.begin()) return false;
    --it;
    return it->second > start;
  }
};

}  // namespace

JitImagePlan PlanJitImages(const SymbolIndex& index, const JitImageNaming& naming) {
  JitImagePlan plan;
  plan.object_by_version.resize(index.size());

  std::vector<std::string> stems;  // per source, unique within this plan
  for (uint32_t s = 0; s < index.sources().size(); ++s) {
    std::string stem = SourceStem(index.sources()[s].path);
    if (std::find(stems.begin(), stems.end(), stem) != stems.end())
      stem += "-" + std::to_string(s + 1);
    stems.push_back(stem);
  }

  // Per source: the images a version may share (indices into plan.images, at most
  // max_shared_images), how many images it has in all, and their occupancy.
  std::map<uint32_t, std::vector<size_t>> images_of_source;
  std::map<uint32_t, size_t> image_count;
  std::vector<ImageState> states;
  // Placed versions, for reloads of identical code (same source, start, name and code): found
  // by their start, then compared (a map ordered by the four compared names and code bytes at
  // every step, 2/3 of this plan's time on erlc's 21,000 versions).
  struct Placed {
    uint32_t version = 0;
    size_t image = 0;
    uint32_t next = UINT32_MAX;  // the previous one placed at the same start, or UINT32_MAX
  };
  std::vector<Placed> placed;
  std::unordered_map<uint64_t, uint32_t> placed_at;  // start -> last placed there
  // At most one placed version matches: a second one would have shared the first's symbol.
  auto find_placed = [&](const CodeVersion& v, std::string_view code) -> const Placed* {
    auto at = placed_at.find(v.start());
    for (uint32_t p = at == placed_at.end() ? UINT32_MAX : at->second; p != UINT32_MAX;
         p = placed[p].next) {
      const CodeVersion& w = index.version(placed[p].version);
      if (w.source() == v.source() && w.function_name() == v.function_name() &&
          ImageCode(w) == code)
        return &placed[p];
    }
    return nullptr;
  };

  // SymbolIndex::version(i) is in load order.
  for (uint32_t i = 0; i < index.size(); ++i) {
    const CodeVersion& v = index.version(i);
    std::string_view code = ImageCode(v);
    if (code.empty() || v.source() >= index.sources().size()) continue;
    const uint16_t machine = MachineOf(index.sources()[v.source()]);
    if (machine == 0) {
      ++plan.versions_skipped;
      continue;
    }
    ++plan.versions_placed;
    if (v.salted_code_tail() > 0) ++plan.salted_versions;
    if (const Placed* same = find_placed(v, code)) {
      plan.object_by_version[i] = plan.images[same->image].object;
      plan.shared_with.emplace_back(i, same->version);
      ++plan.versions_shared;
      continue;
    }
    const uint64_t end = v.start() + code.size();
    std::vector<size_t>& mine = images_of_source[v.source()];
    size_t image = SIZE_MAX;
    for (size_t candidate : mine) {
      if (states[candidate].ranges.size() < naming.max_functions &&
          !states[candidate].Overlaps(v.start(), end)) {
        image = candidate;
        break;
      }
    }
    if (image == SIZE_MAX) {
      image = plan.images.size();
      PlannedJitImage& p = plan.images.emplace_back();
      size_t& count = image_count[v.source()];
      std::string name = naming.stem + "." + stems[v.source()];
      if (count > 0) name += "." + std::to_string(count + 1);
      ++count;
      name += ".elf";
      p.path = naming.dir.empty() ? name : naming.dir + "/" + name;
      p.object = naming.relative ? name : p.path;
      p.source = v.source();
      p.machine = machine;
      // Past the shared images, a version has its image to itself: later versions never look
      // at it, so placing one costs at most max_shared_images lookups.
      if (mine.size() < naming.max_shared_images) {
        mine.push_back(image);
      } else {
        ++plan.versions_alone;
      }
      states.emplace_back();
    }
    states[image].ranges.emplace(v.start(), end);
    plan.images[image].versions.push_back(i);
    plan.object_by_version[i] = plan.images[image].object;
    auto [at, first] = placed_at.try_emplace(v.start(), uint32_t(placed.size()));
    placed.push_back({i, image, first ? UINT32_MAX : at->second});
    at->second = uint32_t(placed.size() - 1);
  }
  return plan;
}

void KeepTouched(JitImagePlan* plan, const std::vector<bool>& touched_versions) {
  // A reload the output names keeps the symbol it shares.
  std::vector<bool> touched = touched_versions;
  for (auto [reload, placed] : plan->shared_with) {
    if (reload < touched.size() && touched[reload] && placed < touched.size())
      touched[placed] = true;
  }
  auto is_touched = [&](uint32_t v) { return v < touched.size() && touched[v]; };
  std::vector<PlannedJitImage> kept;
  for (PlannedJitImage& image : plan->images) {
    // An image the output names is written whole: its other functions' code and lines are what
    // KCachegrind's machine-code view and addr2line show around the code that ran.
    if (std::any_of(image.versions.begin(), image.versions.end(), is_touched)) {
      kept.push_back(std::move(image));
    } else {
      plan->versions_untouched += int64_t(image.versions.size());
      ++plan->images_untouched;
    }
  }
  plan->images = std::move(kept);
}

JitImageWriteStats WriteJitImages(const JitImagePlan& plan, const SymbolIndex& index,
                                  OutputGroup* group) {
  JitImageWriteStats stats;
  for (const PlannedJitImage& p : plan.images) {
    JitImageSpec spec;
    spec.machine = p.machine;
    spec.give_back_code = [&index] { index.GiveBackAdoptedPages(); };
    for (uint32_t i : p.versions) {
      const CodeVersion& v = index.version(i);
      std::string_view name = v.display_name();
      spec.functions.push_back({v.start(), name, ImageCode(v), v.files(), v.lines()});
    }
    JitImageLayout layout = WriteJitImage(p.path, spec, group);
    ++stats.images;
    stats.symbols += layout.symbols;
    stats.line_rows += layout.line_rows;
    stats.file_bytes += layout.file_size;
  }
  return stats;
}

}  // namespace cg_inject
