//===- HugePagesTest.cpp - large buffers advised onto huge pages ----------===//
//
// runtime/HugePages.h on real allocations: the advice is taken for large
// buffers only, lands on the mapping that holds them (the kernel's own
// account, /proc/self/smaps "THPeligible"), and leaves their contents as
// they were; the generated code's malloc and the runtime's Buffer ask for it.
//
//===----------------------------------------------------------------------===//

#include "runtime/Buffer.h"
#include "runtime/HugePages.h"
#include "runtime/MemoryGuard.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <sys/mman.h>

namespace {

constexpr uintptr_t kHugePage = uintptr_t(2) << 20;

/// The kernel's transparent huge page mode ("always", "madvise", "never"),
/// or empty when it has none.
std::string hugePageMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(in, text);
  auto open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos)
    return "";
  return text.substr(open + 1, close - open - 1);
}

/// THPeligible of the mapping of this process that holds `address`.
std::optional<int> hugePageEligible(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = begin <= address && address < end;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0)
      return std::stoi(line.substr(12));
  }
  return std::nullopt;
}

uintptr_t firstHugePage(const void *data) {
  return (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
}

TEST(HugePages, SmallBuffersAndNullAreNotAdvised) {
  EXPECT_FALSE(moec::adviseHugePages(nullptr, size_t(64) << 20));
  // Below the size, whatever its alignment (malloc: aligned_alloc wants a
  // size that is a multiple of the alignment).
  void *small = std::malloc(moec::kHugePageAdviceBytes - 4096);
  ASSERT_NE(small, nullptr);
  EXPECT_FALSE(moec::adviseHugePages(small, moec::kHugePageAdviceBytes - 4096));
  std::free(small);
}

TEST(HugePages, LargeBufferIsAdvisedAndKeepsItsContents) {
  std::string mode = hugePageMode();
  if (mode.empty())
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  // A mapping of its own, which nothing advised before (malloc's heap may
  // hold ranges other tests' buffers advised).
  size_t bytes = size_t(16) << 20;
  void *mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  auto *data = static_cast<unsigned char *>(mapping);
  for (size_t i = 0; i < bytes; i += 4096)
    data[i] = static_cast<unsigned char>(i / 4096);
  // Before the advice: eligible only where the kernel gives huge pages to
  // every mapping.
  EXPECT_EQ(hugePageEligible(firstHugePage(data)), std::optional<int>(mode == "always" ? 1 : 0));
  EXPECT_TRUE(moec::adviseHugePages(data, bytes));
  for (size_t i = 0; i < bytes; i += 4096)
    ASSERT_EQ(data[i], static_cast<unsigned char>(i / 4096)) << "byte " << i;
  std::optional<int> eligible = hugePageEligible(firstHugePage(data));
  ASSERT_TRUE(eligible.has_value()) << "no smaps entry holds the buffer";
  // With "never" nothing is eligible; otherwise the advice made it so.
  EXPECT_EQ(*eligible, mode == "never" ? 0 : 1) << "mode " << mode;
  munmap(mapping, bytes);
}

TEST(HugePages, GeneratedCodeMallocAndBuffersAsk) {
  std::string mode = hugePageMode();
  if (mode.empty() || mode == "never")
    GTEST_SKIP() << "this kernel gives no transparent huge pages";
  size_t bytes = size_t(12) << 20;
  void *data = moert_guarded_malloc(bytes);
  ASSERT_NE(data, nullptr);
  std::memset(data, 7, bytes);
  EXPECT_EQ(hugePageEligible(firstHugePage(data)), std::optional<int>(1));
  std::free(data);

  moec::Buffer tensor(moec::DType::F32, {1024, 4096}); // 16 MiB
  EXPECT_EQ(hugePageEligible(firstHugePage(tensor.data())), std::optional<int>(1));
  EXPECT_EQ(static_cast<const float *>(tensor.data())[1024 * 4096 - 1], 0.0f);
}

} // namespace
