#include "cli/options.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

ParsedCommandLine Parse(std::vector<std::string_view> args) { return ParseCommandLine(args); }

TEST(OptionsTest, TypicalPipelineStep) {
  ParsedCommandLine p =
      Parse({"-i", "callgrind.out.1234", "--jitdump", "jit-1234.dump", "-o", "out.jit"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.inputs, std::vector<std::string>{"callgrind.out.1234"});
  EXPECT_EQ(p.options.jitdumps, std::vector<std::string>{"jit-1234.dump"});
  EXPECT_EQ(p.options.output, "out.jit");
  EXPECT_TRUE(p.options.discover);
  EXPECT_TRUE(p.options.compress_names);
}

TEST(OptionsTest, ValuesWithEqualsAttachedAndRepeated) {
  ParsedCommandLine p = Parse({"--input=a", "b", "-oout", "--perf-map=/tmp/perf-1.map",
                               "--perf-map", "m2", "--jit-dir=d1", "--jit-dir", "d2"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.inputs, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.options.output, "out");
  EXPECT_EQ(p.options.perf_maps, (std::vector<std::string>{"/tmp/perf-1.map", "m2"}));
  EXPECT_EQ(p.options.jit_dirs, (std::vector<std::string>{"d1", "d2"}));
}

TEST(OptionsTest, StatsFormats) {
  EXPECT_EQ(Parse({"x", "--stats"}).options.stats, StatsFormat::kText);
  EXPECT_EQ(Parse({"x", "--stats=text"}).options.stats, StatsFormat::kText);
  EXPECT_EQ(Parse({"x", "--stats=json"}).options.stats, StatsFormat::kJson);
  EXPECT_EQ(Parse({"x", "--stats=xml"}).error, "--stats: expected text or json, got 'xml'");
}

TEST(OptionsTest, FlagsAndVerbosity) {
  ParsedCommandLine p = Parse({"x", "--no-compress", "--zstd", "-f", "--in-place", "--no-discover",
                               "-v", "-v", "--no-progress"});
  ASSERT_EQ(p.error, "");
  EXPECT_FALSE(p.options.compress_names);
  EXPECT_TRUE(p.options.zstd_output);
  EXPECT_TRUE(p.options.force);
  EXPECT_TRUE(p.options.in_place);
  EXPECT_FALSE(p.options.discover);
  EXPECT_EQ(p.options.verbosity, 3);
  EXPECT_EQ(p.options.progress, false);
  EXPECT_EQ(Parse({"x", "-q"}).options.verbosity, 0);
}

TEST(OptionsTest, StdinAndDoubleDash) {
  ParsedCommandLine p = Parse({"-", "--", "-weird-name"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.inputs, (std::vector<std::string>{"-", "-weird-name"}));
}

TEST(OptionsTest, Errors) {
  EXPECT_EQ(Parse({"x", "--bogus"}).error, "unknown option '--bogus'");
  EXPECT_EQ(Parse({"x", "-o"}).error, "-o: missing value");
  EXPECT_EQ(Parse({"x", "--output="}).error, "--output: empty value");
  EXPECT_EQ(Parse({"x", "--zstd=1"}).error, "unknown option '--zstd=1'");
  EXPECT_EQ(Parse({}).error, "no input: give a Callgrind file with -i FILE (or - for stdin)");
  EXPECT_EQ(Parse({"a", "b", "-o", "-"}).error, "-o -: several inputs cannot all go to stdout");
}

TEST(OptionsTest, HelpAndVersionNeedNoInput) {
  EXPECT_EQ(Parse({"--help"}).error, "");
  EXPECT_TRUE(Parse({"-h"}).options.help);
  EXPECT_TRUE(Parse({"--version"}).options.version);
}

TEST(OptionsTest, HelpMentionsEveryOption) {
  for (std::string_view flag :
       {"--input", "--output", "--suffix", "--zstd", "--no-compress", "--in-place", "--force",
        "--perf-map", "--jitdump", "--jit-dir", "--no-discover", "--stats", "--callgraph",
        "--verbose", "--quiet", "--progress", "--no-progress", "--help", "--version"}) {
    EXPECT_NE(HelpText().find(flag), std::string_view::npos) << flag;
  }
}

}  // namespace
}  // namespace cg_inject

namespace cg_inject {
namespace {

TEST(OptionsTest, ElfImageOptions) {
  ParsedCommandLine p = Parse({"x", "-o", "out"});
  EXPECT_TRUE(p.options.elf_images);
  EXPECT_EQ(p.options.elf_dir, "");
  EXPECT_FALSE(p.options.elf_relative);
  p = Parse({"x", "--elf-dir", "/tmp/img", "--elf-path=absolute"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.elf_dir, "/tmp/img");
  EXPECT_FALSE(p.options.elf_relative);
  EXPECT_TRUE(Parse({"x", "--elf-path", "relative"}).options.elf_relative);
  EXPECT_FALSE(Parse({"x", "--no-elf"}).options.elf_images);
  EXPECT_EQ(Parse({"x", "--elf-path=rel"}).error,
            "--elf-path: expected absolute or relative, got 'rel'");
  EXPECT_EQ(Parse({"x", "--elf-dir=d", "--elf-path=relative"}).error,
            "--elf-path=relative: images in --elf-dir are named by absolute path");
}

}  // namespace
}  // namespace cg_inject
