#include "cli/output_plan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>

#include "cg_inject/error.h"
#include "cli/options.h"

namespace cg_inject {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Basename(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

/// What names one file among a run's outputs: its device and inode when it exists, else its
/// absolute path with the existing part's symlinks followed. Character devices get none: writing
/// /dev/null twice loses nothing.
std::string OutputKey(const std::string& path) {
  struct stat st;
  if (path == "-") {
    if (fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode))
      return "id:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    return "-";
  }
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode)) return "";
    return "id:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
  std::error_code ec;
  std::filesystem::path p =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) return "path:" + path;
  return "path:" + p.lexically_normal().string();
}

/// `what` of a planned output, for messages.
struct NamedOutput {
  std::string path;
  std::string what;  // "output", "--callgraph output"
  size_t input = 0;  // index in the plan
};

}  // namespace

void ReadFiles::Add(const std::string& path, const std::string& role) {
  struct stat st;
  if (path == "-" || stat(path.c_str(), &st) != 0 || S_ISCHR(st.st_mode)) return;
  files_.push_back({st.st_dev, st.st_ino, path, role});
}

void ReadFiles::AddStdin() {
  struct stat st;
  if (fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return;
  files_.push_back({st.st_dev, st.st_ino, "", "the file on standard input"});
}

void ReadFiles::CheckOutput(const std::string& output, const std::string& what,
                            bool in_place) const {
  struct stat st;
  if (output == "-" ? fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode)
                    : stat(output.c_str(), &st) != 0) {
    return;
  }
  for (const File& f : files_) {
    if (f.dev != st.st_dev || f.ino != st.st_ino) continue;
    const bool input = f.role == "the input file" || f.path.empty();
    if (input && in_place) continue;
    std::string which = f.path.empty() ? f.role : f.role + " " + f.path;
    ThrowForFile(output == "-" ? "<stdout>" : output,
                 what + " is " + which +
                     (input && what == "output" ? "; use --in-place to replace it"
                                                : "; refusing to replace what this run reads"));
  }
}

ReadFiles CollectReadFiles(const CliOptions& options, const std::vector<std::string>& sources) {
  ReadFiles files;
  for (const std::string& input : options.inputs) {
    if (input == "-") {
      files.AddStdin();
    } else {
      files.Add(input, "the input file");
    }
  }
  for (const std::string& p : options.perf_maps) files.Add(p, "the perf map");
  for (const std::string& p : options.jitdumps) files.Add(p, "the jitdump");
  for (const std::string& p : sources) files.Add(p, "the symbol source");
  return files;
}

std::vector<PlannedOutput> PlanOutputs(const CliOptions& options) {
  std::vector<PlannedOutput> plan;
  const bool several = options.inputs.size() > 1;
  if (several && !options.output.empty() && !IsDirectory(options.output)) {
    ThrowForFile(options.output,
                 "several inputs need an output directory (or no -o: each input gets " +
                     options.suffix + ")");
  }
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string& input = options.inputs[i];
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
    if (!options.callgraph_path.empty()) {
      out.callgraph = options.callgraph_path;
      if (several) out.callgraph += "." + std::to_string(i + 1);
    }
    out.zstd = options.zstd_output || out.output.ends_with(".zst");
    plan.push_back(std::move(out));
  }
  CheckPlannedOutputs(options, plan, {});
  return plan;
}

void CheckPlannedOutputs(const CliOptions& options, const std::vector<PlannedOutput>& plan,
                         const std::vector<std::string>& sources) {
  // Every output against every file read...
  ReadFiles read = CollectReadFiles(options, sources);
  std::vector<NamedOutput> outputs;
  for (size_t i = 0; i < plan.size(); ++i) {
    const PlannedOutput& p = plan[i];
    outputs.push_back({p.output, "output", i});
    read.CheckOutput(p.output, "output", options.in_place);
    if (!p.callgraph.empty()) {
      outputs.push_back({p.callgraph, "--callgraph output", i});
      read.CheckOutput(p.callgraph, "--callgraph output", false);
    }
  }
  // ...and against the other outputs: the later one would replace the earlier.
  std::vector<std::pair<std::string, size_t>> keys;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string key = OutputKey(outputs[i].path);
    if (key.empty()) continue;
    for (const auto& [other_key, j] : keys) {
      if (other_key != key) continue;
      const NamedOutput& a = outputs[j];
      const NamedOutput& b = outputs[i];
      if (a.path == "-" && b.path == "-") {
        ThrowForFile("-", "the " + b.what + " and the " + a.what +
                              " would both go to standard output; give one of them a file");
      }
      std::string whose_a = a.what, whose_b = b.what;
      if (plan.size() > 1) {
        whose_a += " of " + plan[a.input].input;
        whose_b += " of " + plan[b.input].input;
      }
      ThrowForFile(
          b.path,
          "the " + whose_b + " is also the " + whose_a + ": one would overwrite the other; " +
              (a.what == b.what && a.what == "output" ? "run inputs with one basename separately"
                                                      : "give them different names"));
    }
    keys.emplace_back(std::move(key), i);
  }
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
