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

std::optional<CpuTicks> moec::parseProcStatCpu(std::string_view text) {
  // The aggregate line, "cpu" and spaces; the per-CPU lines are "cpu0 ...".
  constexpr std::string_view kPrefix = "cpu ";
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (line.substr(0, kPrefix.size()) == kPrefix) {
      std::string_view rest = line.substr(kPrefix.size());
      CpuTicks ticks;
      for (int column = 0; column < 8; ++column) {
        size_t first = rest.find_first_not_of(' ');
        if (first == std::string_view::npos)
          return std::nullopt;
        rest.remove_prefix(first);
        uint64_t value = 0;
        auto [next, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
        if (ec != std::errc() || (next != rest.data() + rest.size() && *next != ' '))
          return std::nullopt;
        rest.remove_prefix(size_t(next - rest.data()));
        ticks.total += value;
        if (column == 7)
          ticks.steal = value;
      }
      return ticks;
    }
    if (end == std::string_view::npos)
      break;
    at = end + 1;
  }
  return std::nullopt;
}

std::optional<CpuTicks> moec::readCpuTicks() {
  std::ifstream file("/proc/stat");
  if (!file)
    return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return parseProcStatCpu(text.str());
}

bool moec::addWindow(CpuTicks &sum, const CpuTicks &before, const CpuTicks &after) {
  if (after.steal < before.steal || after.total < before.total)
    return false;
  sum.steal += after.steal - before.steal;
  sum.total += after.total - before.total;
  return true;
}

std::optional<Steal> moec::stealBetween(const CpuTicks &before, const CpuTicks &after) {
  long ticksPerSecond = sysconf(_SC_CLK_TCK);
  CpuTicks window;
  if (ticksPerSecond <= 0 || !addWindow(window, before, after))
    return std::nullopt;
  uint64_t steal = window.steal, total = window.total;
  Steal s;
  s.seconds = double(steal) / double(ticksPerSecond);
  if (total >= kMinShareTicks)
    s.sharePct = 100.0 * double(steal) / double(total);
  return s;
}
