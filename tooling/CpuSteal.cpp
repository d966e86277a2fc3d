//===- CpuSteal.cpp - CPU time the hypervisor took, from /proc/stat -------===//
//
// Why by hand: neither LLVM's Support library nor the C library reads the
// kernel's CPU accounting; /proc/stat is a few lines of text.
//
//===----------------------------------------------------------------------===//

#include "tooling/CpuSteal.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

using namespace moec;

std::optional<CpuSteal> moec::parseProcStatSteal(std::string_view text) {
  // The aggregate line comes first, "cpu" and spaces; the per-CPU lines
  // are "cpu0 ...".
  constexpr std::string_view kPrefix = "cpu ";
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (line.substr(0, kPrefix.size()) == kPrefix) {
      std::string_view rest = line.substr(kPrefix.size());
      uint64_t value = 0;
      for (int column = 0; column < 8; ++column) {
        size_t first = rest.find_first_not_of(' ');
        if (first == std::string_view::npos)
          return std::nullopt;
        rest.remove_prefix(first);
        auto [next, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
        if (ec != std::errc() || (next != rest.data() + rest.size() && *next != ' '))
          return std::nullopt;
        rest.remove_prefix(size_t(next - rest.data()));
      }
      return CpuSteal{value};
    }
    if (end == std::string_view::npos)
      break;
    at = end + 1;
  }
  return std::nullopt;
}

std::optional<CpuSteal> moec::readCpuSteal() {
  std::ifstream file("/proc/stat");
  if (!file)
    return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return parseProcStatSteal(text.str());
}

double moec::stolenSeconds(const CpuSteal &before, const CpuSteal &after) {
  long ticksPerSecond = sysconf(_SC_CLK_TCK);
  if (ticksPerSecond <= 0 || after.ticks < before.ticks)
    return 0;
  return double(after.ticks - before.ticks) / double(ticksPerSecond);
}
