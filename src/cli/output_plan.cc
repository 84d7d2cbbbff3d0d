#include "cli/output_plan.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "cg_inject/error.h"
#include "cli/options.h"

namespace cg_inject {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool SameFile(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return false;
  struct stat sa, sb;
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string Basename(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace

std::vector<PlannedOutput> PlanOutputs(const CliOptions& options) {
  std::vector<PlannedOutput> plan;
  const bool several = options.inputs.size() > 1;
  if (several && !options.output.empty() && !IsDirectory(options.output)) {
    ThrowForFile(options.output,
                 "several inputs need an output directory (or no -o: each input gets " +
                     options.suffix + ")");
  }
  for (const std::string& input : options.inputs) {
    PlannedOutput out;
    out.input = input;
    if (!several) {
      out.output = options.output.empty() ? "-" : options.output;
    } else if (input == "-") {
      ThrowForFile("-", "stdin cannot be one of several inputs");
    } else if (options.output.empty()) {
      out.output = input + options.suffix;
    } else {
      out.output =
          (std::filesystem::path(options.output) / (Basename(input) + options.suffix)).string();
    }
    if (!options.in_place) {
      for (const std::string& other : options.inputs) {
        if (SameFile(out.output, other)) {
          ThrowForFile(out.output,
                       "output is the input file " + other + "; use --in-place to replace it");
        }
      }
    }
    out.zstd = options.zstd_output || out.output.ends_with(".zst");
    plan.push_back(std::move(out));
  }
  return plan;
}

std::vector<std::string> FindPerThreadSiblings(const std::string& input) {
  std::vector<std::string> siblings;
  struct stat st;
  if (input == "-" || stat(input.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0)
    return siblings;
  std::filesystem::path path(input);
  const std::string prefix = path.filename().string() + "-";
  std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() > prefix.size() && name.starts_with(prefix) &&
        std::all_of(name.begin() + prefix.size(), name.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      siblings.push_back(
          (path.has_parent_path() ? entry.path() : entry.path().filename()).string());
    }
  }
  std::sort(siblings.begin(), siblings.end());
  return siblings;
}

}  // namespace cg_inject
