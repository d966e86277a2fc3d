//===- RunTimeChecks.cpp - a failed check in generated code, as an error --===//

#include "runtime/RunTimeChecks.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {
std::atomic<const char *> toolName{"moec"};
} // namespace

int moert_check_message(const char *message) {
  std::fflush(stdout); // what the tool printed before comes before the error
  std::fprintf(stderr, "%s: error: run-time check failed: %s (the inputs' sizes do not agree)\n",
               toolName.load(), message);
  std::fflush(stderr);
  return 0;
}

void moert_check_failed() {
  std::fflush(nullptr);
  std::_Exit(1);
}

void moec::setRunTimeErrorToolName(const char *name) { toolName.store(name); }

const char *moec::runTimeErrorToolName() { return toolName.load(); }

std::vector<std::pair<const char *, void *>> moec::runTimeCheckSymbols() {
  return {{"puts", reinterpret_cast<void *>(&moert_check_message)},
          {"abort", reinterpret_cast<void *>(&moert_check_failed)}};
}
