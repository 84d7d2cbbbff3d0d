#include "cli/record_options.h"

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

using Args = std::vector<std::string>;

ParsedRecordCommandLine Parse(std::vector<std::string_view> args) {
  return ParseRecordCommandLine(args);
}

TEST(RecordOptionsTest, QuickStart) {
  ParsedRecordCommandLine p = Parse({"--", "node", "app.js", "--flag"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.program, (Args{"node", "app.js", "--flag"}));
  EXPECT_TRUE(p.options.valgrind_args.empty());
  EXPECT_EQ(p.options.output_dir, ".");
  EXPECT_EQ(p.options.valgrind, "valgrind");
  EXPECT_FALSE(p.options.valgrind_given);
  EXPECT_EQ(p.options.stats, StatsFormat::kText);
}

TEST(RecordOptionsTest, WithoutDashDashTheFirstWordIsTheProgram) {
  ParsedRecordCommandLine p = Parse({"-o", "out", "java", "-cp", ".", "Work"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.output_dir, "out");
  EXPECT_EQ(p.options.program, (Args{"java", "-cp", ".", "Work"}));
}

TEST(RecordOptionsTest, ValgrindOptionsBetweenTwoDashDashes) {
  ParsedRecordCommandLine p =
      Parse({"--valgrind=/opt/vg/bin/valgrind", "-j2", "--", "--trace-children=yes",
             "--separate-threads=yes", "--", "sh", "-c", "node a.js -- x"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.options.valgrind, "/opt/vg/bin/valgrind");
  EXPECT_TRUE(p.options.valgrind_given);
  EXPECT_EQ(p.options.jobs, 2);
  EXPECT_EQ(p.options.valgrind_args, (Args{"--trace-children=yes", "--separate-threads=yes"}));
  EXPECT_EQ(p.options.program, (Args{"sh", "-c", "node a.js -- x"}));
}

TEST(RecordOptionsTest, RuntimeSwitches) {
  ParsedRecordCommandLine p = Parse({"--no-runtime-env=node,java", "--clean", "x"});
  ASSERT_EQ(p.error, "");
  EXPECT_FALSE(p.options.runtimes.Enabled("node"));
  EXPECT_FALSE(p.options.runtimes.Enabled("java"));
  EXPECT_TRUE(p.options.runtimes.Enabled("python"));
  EXPECT_TRUE(p.options.clean);
  p = Parse({"--no-runtime-env", "x"});
  EXPECT_FALSE(p.options.runtimes.Enabled("python"));
  p = Parse({"--no-runtime-env=php,erlang,mono", "x"});
  ASSERT_EQ(p.error, "");
  EXPECT_FALSE(p.options.runtimes.Enabled("php"));
  EXPECT_FALSE(p.options.runtimes.Enabled("erlang"));
  EXPECT_FALSE(p.options.runtimes.Enabled("mono"));
  EXPECT_TRUE(p.options.runtimes.Enabled("node"));
}

TEST(RecordOptionsTest, QuietDropsTheSummaryUnlessAskedFor) {
  EXPECT_EQ(Parse({"-q", "x"}).options.stats, StatsFormat::kNone);
  EXPECT_EQ(Parse({"-q", "--stats=json", "x"}).options.stats, StatsFormat::kJson);
  EXPECT_EQ(Parse({"--no-stats", "x"}).options.stats, StatsFormat::kNone);
}

TEST(RecordOptionsTest, Errors) {
  EXPECT_EQ(Parse({}).error, "record: no PROGRAM to run");
  EXPECT_EQ(Parse({"--"}).error, "record: no PROGRAM to run");
  EXPECT_EQ(Parse({"--", "--trace-children=yes", "node"}).error,
            "Valgrind options after '--' must end with another '--' before PROGRAM");
  EXPECT_EQ(Parse({"--", "--tool=memcheck", "--", "ls"}).error,
            "record runs Callgrind; '--tool=memcheck' is not allowed");
  EXPECT_EQ(Parse({"--", "--callgrind-out-file=x", "--", "ls"}).error,
            "record names the Callgrind files itself; use -o DIR instead of "
            "'--callgrind-out-file=x'");
  EXPECT_EQ(Parse({"--no-runtime-env=node,ruby", "x"}).error,
            "--no-runtime-env: unknown runtime 'ruby' (node, deno, bun, java, python, dotnet, "
            "moarvm, julia, wasmtime, php, erlang, mono)");
  EXPECT_EQ(Parse({"-j", "0", "x"}).error, "-j: expected a positive number");
  EXPECT_EQ(Parse({"-o"}).error, "-o: missing value");
  EXPECT_EQ(Parse({"--bogus", "x"}).error, "record: unknown option '--bogus'");
  EXPECT_TRUE(Parse({"--help"}).options.help);
}

}  // namespace
}  // namespace cg_inject
