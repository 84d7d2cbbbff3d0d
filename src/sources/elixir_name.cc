// Elixir's spelling of Elixir modules' functions (see elixir_name.h). The rules follow Elixir
// 1.14's Macro.inspect_atom(:remote_call, ...) for names and Exception.format_mfa for anonymous
// functions (Code.Identifier.extract_anonymous_fun_parent: "-NAME/ARITY-KIND-COUNT-").
#include "sources/elixir_name.h"

#include <array>

namespace cg_inject {
namespace {

constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
// Bytes of UTF-8 sequences: Elixir's identifiers may have non-ASCII letters.
constexpr bool IsNonAscii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

bool IsDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// An alias segment: an ASCII capital, then letters, digits and '_'.
bool IsAliasSegment(std::string_view text) {
  if (text.empty() || !IsUpper(text[0])) return false;
  for (char c : text) {
    if (!IsUpper(c) && !IsLower(c) && !IsDigit(c) && c != '_') return false;
  }
  return true;
}

// A name Elixir calls without quotes: a lowercase letter or '_', then letters, digits and '_',
// optionally ending in '?' or '!'.
bool IsCallableIdentifier(std::string_view text) {
  if (text.empty()) return false;
  if (text.back() == '?' || text.back() == '!') text.remove_suffix(1);
  if (text.empty() || !(IsLower(text[0]) || text[0] == '_' || IsNonAscii(text[0]))) return false;
  for (char c : text) {
    if (!IsUpper(c) && !IsLower(c) && !IsDigit(c) && c != '_' && !IsNonAscii(c)) return false;
  }
  return true;
}

// Operators that Kernel and Bitwise define as functions; Elixir writes them bare (Kernel.+/2).
constexpr std::array<std::string_view, 30> kOperators = {
    "+",  "-", "*",  "/",   "**",  "++",  "--",  "..",  "..//", "<>",
    "<",  ">", "<=", ">=",  "==",  "!=",  "===", "!==", "=~",   "&&",
    "||", "!", "|>", "&&&", "|||", "^^^", "~~~", "<<<", ">>>",  "<~>"};

bool IsOperator(std::string_view text) {
  for (std::string_view op : kOperators) {
    if (text == op) return true;
  }
  return false;
}

// A function name as Elixir writes it after "Module.": bare, or in double quotes.
std::string RemoteCallName(std::string_view function) {
  if (IsCallableIdentifier(function) || IsOperator(function)) return std::string(function);
  std::string quoted = "\"";
  for (char c : function) {
    if (c == '"' || c == '\\') quoted.push_back('\\');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

}  // namespace

std::string AtomValue(std::string_view text) {
  if (text.size() < 2 || text.front() != '\'' || text.back() != '\'') return std::string(text);
  std::string value;
  text = text.substr(1, text.size() - 2);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    value.push_back(text[i]);
  }
  return value;
}

std::string ElixirAlias(std::string_view module) {
  constexpr std::string_view kPrefix = "Elixir.";
  if (!module.starts_with(kPrefix)) return "";
  std::string_view alias = module.substr(kPrefix.size());
  std::string_view rest = alias;
  while (true) {
    size_t dot = rest.find('.');
    if (!IsAliasSegment(rest.substr(0, dot))) return "";
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  return std::string(alias);
}

std::string ElixirFunctionName(std::string_view alias, std::string_view function,
                               std::string_view arity) {
  // "-build/1-fun-0-": NAME/ARITY, then the kind and the count, each after a '-'.
  if (function.size() > 2 && function.front() == '-' && function.back() == '-') {
    std::string_view inner = function.substr(1, function.size() - 2);
    size_t count_dash = inner.rfind('-');
    size_t kind_dash = count_dash == std::string_view::npos || count_dash == 0
                           ? std::string_view::npos
                           : inner.rfind('-', count_dash - 1);
    if (kind_dash != std::string_view::npos) {
      std::string_view parent = inner.substr(0, kind_dash);
      std::string_view kind = inner.substr(kind_dash + 1, count_dash - kind_dash - 1);
      std::string_view count = inner.substr(count_dash + 1);
      size_t slash = parent.rfind('/');
      if (slash != std::string_view::npos && slash > 0 && IsDigits(parent.substr(slash + 1)) &&
          !kind.empty() && kind.find('/') == std::string_view::npos && IsDigits(count)) {
        std::string name = "anonymous fn/" + std::string(arity) + " in " + std::string(alias) +
                           "." + RemoteCallName(parent.substr(0, slash)) +
                           std::string(parent.substr(slash));
        if (count != "0") name += " #" + std::string(count);
        return name;
      }
    }
  }
  return std::string(alias) + "." + RemoteCallName(function) + "/" + std::string(arity);
}

}  // namespace cg_inject
