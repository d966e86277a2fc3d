//===- CpuFeatures.cpp - what a library needs of the CPU that loads it ----===//

#include "runtime/CpuFeatures.h"

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace {
/// LLVM's name -> the kernel's /proc/cpuinfo flag.
const std::vector<std::pair<std::string, std::string>> &featureFlags() {
  static const std::vector<std::pair<std::string, std::string>> flags = {
      {"sse4.2", "sse4_2"},         {"avx", "avx"},
      {"avx2", "avx2"},             {"fma", "fma"},
      {"f16c", "f16c"},             {"bmi", "bmi1"},
      {"bmi2", "bmi2"},             {"avx512f", "avx512f"},
      {"avx512bw", "avx512bw"},     {"avx512dq", "avx512dq"},
      {"avx512vl", "avx512vl"},     {"avx512cd", "avx512cd"},
      {"avx512vnni", "avx512_vnni"}, {"avx512bf16", "avx512_bf16"},
      {"avx512fp16", "avx512_fp16"}, {"avx512vbmi", "avx512vbmi"},
      {"avx512vbmi2", "avx512_vbmi2"}, {"avx512bitalg", "avx512_bitalg"},
      {"avx512vpopcntdq", "avx512_vpopcntdq"}, {"avx512ifma", "avx512ifma"},
      {"avxvnni", "avx_vnni"},      {"gfni", "gfni"},
      {"vpclmulqdq", "vpclmulqdq"}, {"vaes", "vaes"},
  };
  return flags;
}
} // namespace

const std::vector<std::string> &moec::knownIsaFeatures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto &[llvmName, flag] : featureFlags())
      out.push_back(llvmName);
    return out;
  }();
  return names;
}

std::vector<std::string> moec::missingCpuFeatures(const std::vector<std::string> &required) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0)
      continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string word; words >> word;)
      flags.insert(word);
    break;
  }
  std::vector<std::string> missing;
  if (flags.empty())
    return missing;
  for (const std::string &name : required)
    for (const auto &[llvmName, flag] : featureFlags())
      if (llvmName == name && !flags.count(flag))
        missing.push_back(name);
  return missing;
}
