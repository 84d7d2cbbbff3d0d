// The benchmark profile generator (see profile_generator.h). Randomness is std::mt19937_64 reduced
// with `%` only (no std::*_distribution, whose results differ between standard libraries), so a
// seed gives the same bytes everywhere.
//
// Shape, per fn= block: a run of 3..27 instructions of one function (a basic-block run), the first
// position absolute, the rest relative (`+N`, `*` for an unchanged line), costs Ir Dr Dw; one line
// in 8 is followed by a call (cob=/cfi= when they differ, cfn=, calls=, the call site as `* *`).
// ob=/fl= are written when they change, as Callgrind does. JIT code uses line 0 (Callgrind knows
// no line there); ordinary code has lines that move by -1..+3.
#include "bench/profile_generator.h"

#include <charconv>
#include <cstring>
#include <random>

#include "cg_inject/io.h"

namespace cg_inject::bench {
namespace {

constexpr uint64_t kJitBase = 0x0000000004a2e000;  // what Node's code space looked like
constexpr int kObjects = 40, kFiles = 3000;
constexpr size_t kFlushBytes = size_t{1} << 20;

// x86-64 instructions Capstone decodes to the given lengths.
struct Insn {
  const char* bytes;
  size_t size;
};
constexpr Insn kInsns[] = {
    {"\x55", 1},                          // push rbp
    {"\x48\x89\xe5", 3},                  // mov rbp, rsp
    {"\x48\x83\xc0\x07", 4},              // add rax, 7
    {"\xb8\x01\x00\x00\x00", 5},          // mov eax, 1
    {"\x48\xc7\xc0\x01\x00\x00\x00", 7},  // mov rax, 1
    {"\x31\xc0", 2},                      // xor eax, eax
    {"\x0f\x84\x10\x00\x00\x00", 6},      // je +0x10
    {"\x48\x8b\x47\x08", 4},              // mov rax, [rdi + 8]
};

void AppendU64(std::string* out, uint64_t value) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  out->append(buf, end);
}

void AppendHex(std::string* out, uint64_t value, int min_digits = 0) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof buf, value, 16).ptr;
  for (int pad = min_digits - int(end - buf); pad > 0; --pad) out->push_back('0');
  out->append(buf, end);
}

std::string ObjectName(int i) {
  return "/usr/lib/x86_64-linux-gnu/libbench" + std::to_string(i) + ".so.1";
}
std::string FileName(int i) {
  return "/build/project/src/module" + std::to_string(i / 10) + "/file" + std::to_string(i) + ".cc";
}
std::string OrdinaryFunctionName(int64_t i) {
  return "bench::ns" + std::to_string(i % 97) + "::Class" + std::to_string(i % 1013) + "::method" +
         std::to_string(i) + "(std::vector<int, std::allocator<int> > const&)";
}

/// Streams the profile into a ByteSink through a buffer that is flushed every megabyte.
class ProfileWriter {
 public:
  ProfileWriter(const GeneratorOptions& options, const std::vector<JitFunction>& jit, ByteSink* out)
      : options_(options),
        jit_(jit),
        out_(out),
        rng_(options.seed * 0x9E3779B97F4A7C15ull + 7),
        objects_(options.objects.empty() ? kObjects : int(options.objects.size())),
        fn_seen_(size_t(options.functions), false),
        ob_seen_(size_t(objects_) + 1, false),
        fl_seen_(kFiles + 1, false) {}

  uint64_t Run() {
    buf_ += "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: " +
            std::to_string(options_.pid) +
            "\ncmd:  node --perf-basic-prof bench.js\npart: 1\n\n"
            "desc: I1 cache: \ndesc: D1 cache: \ndesc: LL cache: \n\n"
            "desc: Timerange: Basic block 0 - 123456789\ndesc: Trigger: Program termination\n\n"
            "positions: instr line\nevents: Ir Dr Dw\n\n";
    while (written_ + buf_.size() < options_.target_bytes) Block();
    buf_ += "\ntotals: ";
    for (int e = 0; e < 3; ++e) {
      if (e > 0) buf_ += ' ';
      AppendU64(&buf_, totals_[e]);
    }
    buf_ += '\n';
    Flush();
    out_->Finish();
    return written_;
  }

 private:
  bool IsJit(int64_t fn) const { return fn < int64_t(jit_.size()); }
  // Object and file ids: 0 is `???` (JIT code), 1.. the ordinary ones.
  int ObjectOf(int64_t fn) const { return IsJit(fn) ? 0 : 1 + int(fn % objects_); }
  int FileOf(int64_t fn) const { return IsJit(fn) ? 0 : 1 + int(fn % kFiles); }
  uint64_t EntryOf(int64_t fn) const {
    return IsJit(fn) ? jit_[size_t(fn)].start : 0x400000 + uint64_t(fn) * 0x140;
  }
  uint64_t EntryLine(int64_t fn) const { return IsJit(fn) ? 0 : 100 + uint64_t(fn % 900); }

  void NameLine(const char* tag, std::vector<bool>* seen, size_t id, const std::string& text) {
    buf_ += tag;
    buf_ += "=(";
    AppendU64(&buf_, id + 1);
    buf_ += ')';
    if (!(*seen)[id]) {
      (*seen)[id] = true;
      buf_ += ' ';
      buf_ += text;
    }
    buf_ += '\n';
  }
  void FunctionLine(const char* tag, int64_t fn) {
    std::string text;
    if (!fn_seen_[size_t(fn)]) {
      if (IsJit(fn)) {
        text = "0x";
        AppendHex(&text, jit_[size_t(fn)].start, 16);
      } else {
        text = OrdinaryFunctionName(fn);
      }
    }
    NameLine(tag, &fn_seen_, size_t(fn), text);
  }
  void ObjectLine(const char* tag, int ob) { NameLine(tag, &ob_seen_, size_t(ob), Object(ob)); }
  void FileLine(const char* tag, int fl) { NameLine(tag, &fl_seen_, size_t(fl), File(fl)); }
  std::string Object(int ob) const {
    if (ob == 0) return "???";
    // Real files on the machine, when asked, so that cg-inject pays for reading them.
    if (!options_.objects.empty())
      return options_.objects[size_t(ob - 1) % options_.objects.size()];
    return ObjectName(ob - 1);
  }
  static std::string File(int fl) { return fl == 0 ? "???" : FileName(fl - 1); }

  // One position line's position part, relative to the previous position where Callgrind would.
  void PositionText(uint64_t addr, uint64_t line) {
    if (addr == last_addr_) {
      buf_ += '*';
    } else if (addr > last_addr_ && addr - last_addr_ < 4096) {
      buf_ += '+';
      AppendU64(&buf_, addr - last_addr_);
    } else {
      buf_ += "0x";
      AppendHex(&buf_, addr);
    }
    buf_ += ' ';
    if (line == last_line_) {
      buf_ += '*';
    } else if (line > last_line_) {
      buf_ += '+';
      AppendU64(&buf_, line - last_line_);
    } else {
      buf_ += '-';
      AppendU64(&buf_, last_line_ - line);
    }
    last_addr_ = addr;
    last_line_ = line;
  }

  void CostLine(uint64_t addr, uint64_t line) {
    PositionText(addr, line);
    uint64_t costs[3] = {1 + rng_() % 5000, rng_() % 2000, rng_() % 1000};
    for (int e = 0; e < 3; ++e) {
      buf_ += ' ';
      AppendU64(&buf_, costs[e]);
      totals_[e] += costs[e];
    }
    buf_ += '\n';
    if (rng_() % 8 == 0) Call();
  }

  void Call() {
    int64_t callee = int64_t(rng_() % uint64_t(options_.functions));
    if (ObjectOf(callee) != ob_) ObjectLine("cob", ObjectOf(callee));
    if (FileOf(callee) != fl_) FileLine("cfi", FileOf(callee));
    FunctionLine("cfn", callee);
    buf_ += "calls=";
    AppendU64(&buf_, 1 + rng_() % 300);
    buf_ += " 0x";
    AppendHex(&buf_, EntryOf(callee));
    buf_ += ' ';
    AppendU64(&buf_, EntryLine(callee));
    buf_ += "\n* *";
    uint64_t inclusive[3] = {rng_() % 9000000, rng_() % 90000, rng_() % 9000};
    for (uint64_t cost : inclusive) {
      buf_ += ' ';
      AppendU64(&buf_, cost);
    }
    buf_ += '\n';
  }

  void Block() {
    int64_t fn = int64_t(rng_() % uint64_t(options_.functions));
    buf_ += '\n';
    if (ObjectOf(fn) != ob_) ObjectLine("ob", ob_ = ObjectOf(fn));
    if (FileOf(fn) != fl_) FileLine("fl", fl_ = FileOf(fn));
    FunctionLine("fn", fn);
    int run = 3 + int(rng_() % 25);
    if (IsJit(fn)) {
      const JitFunction& f = jit_[size_t(fn)];
      size_t first = rng_() % f.insn_offsets.size();
      size_t last = std::min(f.insn_offsets.size(), first + size_t(run));
      for (size_t i = first; i < last; ++i) CostLine(f.start + f.insn_offsets[i], 0);
      // A tail jump: the block runs on into the next function's first instructions.
      if (last == f.insn_offsets.size() && size_t(fn) + 1 < jit_.size() && rng_() % 20 == 0) {
        const JitFunction& next = jit_[size_t(fn) + 1];
        for (size_t i = 0; i < std::min<size_t>(3, next.insn_offsets.size()); ++i)
          CostLine(next.start + next.insn_offsets[i], 0);
      }
    } else {
      uint64_t addr = EntryOf(fn) + (rng_() % 32) * 4;
      uint64_t line = EntryLine(fn) + rng_() % 50;
      for (int i = 0; i < run; ++i) {
        CostLine(addr, line);
        addr += 1 + rng_() % 7;
        line = line + rng_() % 5 - 1;
      }
    }
    if (buf_.size() >= kFlushBytes) Flush();
  }

  void Flush() {
    out_->Write(buf_);
    written_ += buf_.size();
    buf_.clear();
  }

  const GeneratorOptions& options_;
  const std::vector<JitFunction>& jit_;
  ByteSink* out_;
  std::mt19937_64 rng_;
  int objects_;  // how many ordinary objects: kObjects, or options.objects' count
  std::vector<bool> fn_seen_, ob_seen_, fl_seen_;
  int ob_ = -1, fl_ = -1;  // current ob=/fl= ids
  uint64_t last_addr_ = 0, last_line_ = 0;
  uint64_t totals_[3] = {0, 0, 0};
  uint64_t written_ = 0;
  std::string buf_;  // reused: filled to kFlushBytes, then handed to the sink
};

void AppendU32(std::string* out, uint32_t value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof value);
}
void AppendU64Raw(std::string* out, uint64_t value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

std::vector<JitFunction> MakeJitFunctions(const GeneratorOptions& options) {
  std::mt19937_64 rng(options.seed);
  int64_t count = int64_t(double(options.functions) * options.jit_share);
  std::vector<JitFunction> jit(static_cast<size_t>(count));
  uint64_t addr = kJitBase;
  for (int64_t i = 0; i < count; ++i) {
    JitFunction& f = jit[size_t(i)];
    f.start = addr;
    size_t size = 64 + rng() % 960;
    while (f.code.size() < size) {
      const Insn& insn = kInsns[rng() % std::size(kInsns)];
      f.insn_offsets.push_back(uint32_t(f.code.size()));
      f.code.append(insn.bytes, insn.size);
    }
    // V8's --perf-basic-prof names: tier marker, function, script and line.
    f.name = std::string(rng() % 4 == 0 ? "LazyCompile:*" : "LazyCompile:~") + "fn" +
             std::to_string(i) + " /app/src/module" + std::to_string(i % 700) +
             ".js:" + std::to_string(1 + rng() % 3000);
    addr += (f.code.size() + 15 + (rng() % 4) * 16) / 16 * 16;
  }
  return jit;
}

uint64_t WriteProfile(const GeneratorOptions& options, const std::vector<JitFunction>& jit,
                      ByteSink* out) {
  return ProfileWriter(options, jit, out).Run();
}

std::string MakePerfMap(const std::vector<JitFunction>& jit) {
  std::string map;
  for (const JitFunction& f : jit) {
    AppendHex(&map, f.start);
    map += ' ';
    AppendHex(&map, f.code.size());
    map += ' ';
    map += f.name;
    map += '\n';
  }
  return map;
}

std::string MakeJitdump(const GeneratorOptions& options, const std::vector<JitFunction>& jit) {
  // tools/perf/Documentation/jitdump-specification.txt: a 40-byte header, then records of
  // {u32 id, u32 total_size, u64 timestamp} + body; JIT_CODE_LOAD is id 0.
  std::string dump;
  AppendU32(&dump, 0x4A695444);  // "JiTD" as this machine writes it
  AppendU32(&dump, 1);           // version
  AppendU32(&dump, 40);          // header size
  AppendU32(&dump, 62);          // EM_X86_64
  AppendU32(&dump, 0);           // pad
  AppendU32(&dump, options.pid);
  AppendU64Raw(&dump, 1000);  // timestamp
  AppendU64Raw(&dump, 0);     // flags
  uint64_t timestamp = 2000;
  for (size_t i = 0; i < jit.size(); ++i) {
    const JitFunction& f = jit[i];
    uint32_t total = uint32_t(16 + 40 + f.name.size() + 1 + f.code.size());
    AppendU32(&dump, 0);
    AppendU32(&dump, total);
    AppendU64Raw(&dump, timestamp++);
    AppendU32(&dump, options.pid);
    AppendU32(&dump, options.pid);
    AppendU64Raw(&dump, f.start);  // vma
    AppendU64Raw(&dump, f.start);  // code_addr
    AppendU64Raw(&dump, f.code.size());
    AppendU64Raw(&dump, i + 1);  // code_index
    dump += f.name;
    dump += '\0';
    dump += f.code;
  }
  return dump;
}

}  // namespace cg_inject::bench
