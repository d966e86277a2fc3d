//===- RunTimeChecks.cpp - a failed check in generated code, as an error --===//

#include "runtime/RunTimeChecks.h"

#include <dlfcn.h>

#include <atomic>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>

namespace {
std::atomic<const char *> toolName{"moec"};

/// The innermost callPackedRecovering on this thread, and what failed.
struct RecoveryPoint {
  std::jmp_buf resume;
  std::string message;
};
thread_local RecoveryPoint *recovery = nullptr;
/// The message of the check that failed, between puts and abort.
thread_local std::string checkMessage;
} // namespace

int moert_check_message(const char *message) {
  checkMessage = std::string("run-time check failed: ") + message +
                 " (the inputs' sizes do not agree)";
  return 0;
}

void moert_check_failed() { moec::failRunTime(checkMessage); }

namespace {
/// Whether this thread is inside a parallel region of libomp (the runtime
/// the generated loops call, which the JIT loaded): jumping out of one
/// would leave its other threads waiting at the region's end. Asked of
/// libomp itself, not of whichever OpenMP runtime (torch's libgomp) the
/// name would resolve to first.
bool insideParallelRegion() {
  // Looked up at each failure (an error path): libomp may have been loaded
  // after an earlier one, under its soname or its development name.
  // RTLD_NOLOAD takes a reference to the library already loaded; it is
  // given back at once (whoever loaded libomp keeps it loaded).
  for (const char *name : {"libomp.so.5", "libomp.so"})
    if (void *libomp = dlopen(name, RTLD_LAZY | RTLD_NOLOAD)) {
      auto level = reinterpret_cast<int (*)()>(dlsym(libomp, "omp_get_level"));
      bool inside = level && level() > 0;
      dlclose(libomp);
      if (level)
        return inside;
    }
  return false;
}
} // namespace

void moec::failRunTime(const std::string &message) {
  if (RecoveryPoint *point = recovery; point && !insideParallelRegion()) {
    point->message = message;
    std::longjmp(point->resume, 1);
  }
  std::fflush(stdout); // what the tool printed before comes before the error
  std::fprintf(stderr, "%s: error: %s\n", toolName.load(), message.c_str());
  std::fflush(nullptr);
  std::_Exit(1);
}

bool moec::callPackedRecovering(void (*fn)(void **), void **args, std::string &message) {
  // Nothing with a destructor lives in this frame across the setjmp: the
  // point is a plain struct whose string is assigned before the jump.
  RecoveryPoint point;
  RecoveryPoint *outer = recovery;
  recovery = &point;
  if (setjmp(point.resume) != 0) {
    recovery = outer;
    message = std::move(point.message);
    return false;
  }
  fn(args);
  recovery = outer;
  return true;
}

void moec::setRunTimeErrorToolName(const char *name) { toolName.store(name); }

const char *moec::runTimeErrorToolName() { return toolName.load(); }

std::vector<std::pair<const char *, void *>> moec::runTimeCheckSymbols() {
  return {{"puts", reinterpret_cast<void *>(&moert_check_message)},
          {"abort", reinterpret_cast<void *>(&moert_check_failed)}};
}
