// The least work any rewriter of a Callgrind profile does: read the file, find every line, parse
// every number of its position and cost lines, and write every byte back. No names, no ids, no
// checks. bench/run.sh times it beside cat to show how much of "N times cat" is parsing at all.
//
//   parse_floor FILE > OUT
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

bool IsPositionOrCostLine(char first) {
  return (first >= '0' && first <= '9') || first == '+' || first == '-' || first == '*';
}

// Adds every decimal number of [p, end) to *sum (hex positions are parsed as their digit runs:
// the point is to touch every byte the way a parser does).
void SumNumbers(const char* p, const char* end, uint64_t* sum) {
  uint64_t value = 0;
  for (; p < end; ++p) {
    unsigned digit = static_cast<unsigned char>(*p) - '0';
    if (digit < 10) {
      value = value * 10 + digit;
    } else {
      *sum += value;
      value = 0;
    }
  }
  *sum += value;
}

bool WriteAll(const char* p, size_t n) {
  while (n > 0) {
    ssize_t written = write(STDOUT_FILENO, p, n);
    if (written <= 0) return false;
    p += written;
    n -= static_cast<size_t>(written);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: parse_floor FILE > OUT\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<char> buffer(size_t{1} << 20);
  size_t carried = 0;  // bytes of an unfinished line at the buffer's start
  uint64_t lines = 0, sum = 0;
  for (;;) {
    ssize_t got = read(fd, buffer.data() + carried, buffer.size() - carried);
    if (got < 0) {
      std::perror(argv[1]);
      return 1;
    }
    const char* p = buffer.data();
    const char* end = p + carried + static_cast<size_t>(got);
    if (got == 0) {  // end of file: a last line without a newline
      if (p != end && IsPositionOrCostLine(*p)) SumNumbers(p, end, &sum);
      if (!WriteAll(p, static_cast<size_t>(end - p))) return 1;
      break;
    }
    const char* line = p;
    while (const char* newline =
               static_cast<const char*>(std::memchr(line, '\n', static_cast<size_t>(end - line)))) {
      if (IsPositionOrCostLine(*line)) SumNumbers(line, newline, &sum);
      ++lines;
      line = newline + 1;
    }
    if (!WriteAll(p, static_cast<size_t>(line - p))) return 1;
    carried = static_cast<size_t>(end - line);
    std::memmove(buffer.data(), line, carried);
    if (carried == buffer.size()) buffer.resize(buffer.size() * 2);  // a line longer than it
  }
  std::fprintf(stderr, "%llu lines, numbers sum to %llu\n", static_cast<unsigned long long>(lines),
               static_cast<unsigned long long>(sum));
  return 0;
}
