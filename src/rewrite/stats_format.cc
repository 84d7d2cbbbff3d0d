// Renderers for InjectStats: the `--stats` text on stderr and `--stats=json` for pipelines.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "cg_inject/inject.h"
#include "util/append_format.h"

namespace cg_inject {

namespace {

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\r':
        *out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          AppendF(out, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

double Percent(double share) { return share * 100.0; }

}  // namespace

void AppendStatsText(const InjectStats& s, std::string* out) {
  *out += "cg-inject: sources:";
  if (s.sources.empty()) *out += " none";
  *out += '\n';
  for (const auto& src : s.sources) {
    AppendF(out, "  %s (%s, ob=%s): %" PRId64 " code versions", src.path.c_str(), src.kind.c_str(),
            src.object_name.c_str(), src.records);
    if (!src.damage.empty()) AppendF(out, "; %s", src.damage.c_str());
    if (src.superseded > 0)
      AppendF(out, "; a jitdump describes %" PRId64 " of them too, and its versions are used",
              src.superseded);
    *out += '\n';
  }
  AppendF(out,
          "cg-inject: parts: %" PRId64 ", JIT-looking blocks: %" PRId64 ", resolved: %" PRId64
          ", functions named: %" PRId64 " (names given their definition's position: %" PRId64 ")\n",
          s.parts, s.jit_blocks, s.jit_blocks_resolved, s.functions_resolved,
          s.definitions_disambiguated);
  if (s.blocks_kept_apart + s.ran_code_kept_in_block > 0)
    AppendF(out,
            "cg-inject: pieces kept apart so that merging makes no call cycle the input did not "
            "have: %" PRId64 " blocks, %" PRId64
            " functions' code left with the block that ran "
            "it\n",
            s.blocks_kept_apart, s.ran_code_kept_in_block);
  if (s.new_cycles_left + s.new_cycles_merged > 0)
    AppendF(out,
            "cg-inject: pieces of JIT functions whose merging makes call cycles the input did not "
            "have, written merged: %" PRId64 "\n",
            s.new_cycles_left + s.new_cycles_merged);
  if (s.unnamed_code_named > 0)
    AppendF(out,
            "cg-inject: JIT code no source lists, named by its place (trampolines): %" PRId64 "\n",
            s.unnamed_code_named);
  const char* event = s.first_event.empty() ? "cost" : s.first_event.c_str();
  AppendF(out,
          "cg-inject: %s in unnamed JIT code: %.2f%% before, %.2f%% after "
          "(%" PRIu64 " -> %" PRIu64 " of %" PRIu64 ")\n",
          event, Percent(s.unnamed_share_before()), Percent(s.unnamed_share_after()),
          s.unnamed_jit_cost_before, s.unnamed_jit_cost_after, s.total_cost);
  AppendF(out,
          "cg-inject: calls renamed: %" PRId64 ", cost lines moved to the code that ran: %" PRId64
          " (%" PRIu64 " %s), synthesized edges: %" PRId64 ", internal transfers dropped: %" PRId64
          "\n",
          s.calls_renamed, s.cost_lines_moved, s.cost_moved, event, s.edges_synthesized,
          s.internal_transfers_dropped);
  AppendF(out,
          "cg-inject: reused code ranges in sources: %" PRId64
          ", reused addresses in the profile: %" PRId64 ", ambiguous version choices: %" PRId64
          ", blocks split among reused versions: %" PRId64 "\n",
          s.reused_ranges, s.reused_addresses_seen, s.ambiguous_choices, s.reused_blocks_split);
  if (s.ambiguous_functions > 0)
    AppendF(out,
            "cg-inject: functions named ambiguous (reused code a perf map cannot tell apart): "
            "%" PRId64 " (%" PRIu64 " %s self)\n",
            s.ambiguous_functions, s.ambiguous_cost, event);
  if (s.overflowing_call_edges > 0)
    AppendF(out,
            "cg-inject: call edges worth more than their whole part: %" PRId64
            " (Callgrind's call tracking most likely broke: self costs are exact, inclusive "
            "costs and the call graph may not be)\n",
            s.overflowing_call_edges);
  if (s.object_code_lines > 0)
    AppendF(out,
            "cg-inject: cost lines in JIT blocks given back to real objects' functions: %" PRId64
            "\n",
            s.object_code_lines);
  if (!s.has_instr_positions)
    *out +=
        "cg-inject: note: no instruction positions; blocks were named by their entry address "
        "only (--dump-instr=yes gives exact attribution)\n";
  if (s.added_line_column) *out += "cg-inject: added a line column to `positions: instr`\n";
  if (!s.top_unresolved.empty()) {
    *out += "cg-inject: top unresolved JIT-looking addresses:\n";
    for (const auto& u : s.top_unresolved)
      AppendF(out, "  %s  %" PRIu64 " %s (%.2f%%)\n", u.name.c_str(), u.cost, event,
              s.total_cost ? Percent(double(u.cost) / double(s.total_cost)) : 0.0);
  }
  for (const std::string& v : s.invariant_violations)
    *out += "cg-inject: invariant violated: " + v + "\n";
}

void AppendStatsJson(const InjectStats& s, std::string* out) {
  *out += "{\"sources\":[";
  for (size_t i = 0; i < s.sources.size(); ++i) {
    if (i) *out += ',';
    *out += "{\"path\":";
    AppendJsonString(s.sources[i].path, out);
    *out += ",\"kind\":";
    AppendJsonString(s.sources[i].kind, out);
    *out += ",\"object\":";
    AppendJsonString(s.sources[i].object_name, out);
    AppendF(out, ",\"records\":%" PRId64, s.sources[i].records);
    *out += ",\"damage\":";
    AppendJsonString(s.sources[i].damage, out);
    AppendF(out,
            ",\"dropped_records\":%" PRId64 ",\"dropped_bytes\":%" PRIu64
            ",\"superseded\":%" PRId64,
            s.sources[i].dropped_records, s.sources[i].dropped_bytes, s.sources[i].superseded);
    *out += '}';
  }
  *out += "],\"event\":";
  AppendJsonString(s.first_event, out);
  AppendF(out,
          ",\"parts\":%" PRId64
          ",\"instr_positions\":%s,\"added_line_column\":%s"
          ",\"total_cost\":%" PRIu64 ",\"unnamed_jit_cost_before\":%" PRIu64
          ",\"unnamed_jit_cost_after\":%" PRIu64
          ",\"unnamed_share_before\":%.6f"
          ",\"unnamed_share_after\":%.6f",
          s.parts, s.has_instr_positions ? "true" : "false", s.added_line_column ? "true" : "false",
          s.total_cost, s.unnamed_jit_cost_before, s.unnamed_jit_cost_after,
          s.unnamed_share_before(), s.unnamed_share_after());
  AppendF(out,
          ",\"jit_blocks\":%" PRId64 ",\"jit_blocks_resolved\":%" PRId64
          ",\"functions_resolved\":%" PRId64 ",\"definitions_disambiguated\":%" PRId64
          ",\"calls_renamed\":%" PRId64 ",\"cost_lines_moved\":%" PRId64 ",\"cost_moved\":%" PRIu64
          ",\"edges_synthesized\":%" PRId64 ",\"internal_transfers_dropped\":%" PRId64
          ",\"object_code_lines\":%" PRId64 ",\"reused_ranges\":%" PRId64
          ",\"reused_addresses_seen\":%" PRId64 ",\"ambiguous_choices\":%" PRId64
          ",\"reused_blocks_split\":%" PRId64 ",\"overflowing_call_edges\":%" PRId64
          ",\"unnamed_code_named\":%" PRId64 ",\"blocks_kept_apart\":%" PRId64
          ",\"ran_code_kept_in_block\":%" PRId64 ",\"new_cycles_left\":%" PRId64
          ",\"new_cycles_merged\":%" PRId64,
          s.jit_blocks, s.jit_blocks_resolved, s.functions_resolved, s.definitions_disambiguated,
          s.calls_renamed, s.cost_lines_moved, s.cost_moved, s.edges_synthesized,
          s.internal_transfers_dropped, s.object_code_lines, s.reused_ranges,
          s.reused_addresses_seen, s.ambiguous_choices, s.reused_blocks_split,
          s.overflowing_call_edges, s.unnamed_code_named, s.blocks_kept_apart,
          s.ran_code_kept_in_block, s.new_cycles_left, s.new_cycles_merged);
  AppendF(out, ",\"ambiguous_functions\":%" PRId64 ",\"ambiguous_cost\":%" PRIu64,
          s.ambiguous_functions, s.ambiguous_cost);
  *out += ",\"top_unresolved\":[";
  for (size_t i = 0; i < s.top_unresolved.size(); ++i) {
    if (i) *out += ',';
    *out += "{\"name\":";
    AppendJsonString(s.top_unresolved[i].name, out);
    AppendF(out, ",\"addr\":%" PRIu64 ",\"cost\":%" PRIu64 "}", s.top_unresolved[i].addr,
            s.top_unresolved[i].cost);
  }
  *out += "],\"invariant_violations\":[";
  for (size_t i = 0; i < s.invariant_violations.size(); ++i) {
    if (i) *out += ',';
    AppendJsonString(s.invariant_violations[i], out);
  }
  *out += "]}\n";
}

}  // namespace cg_inject
