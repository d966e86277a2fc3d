//===- StageTimer.cpp - wall time per stage of a generated function -------===//

#include "runtime/StageTimer.h"

#include "runtime/RuntimeAbi.h"

#include <chrono>

namespace {
using Clock = std::chrono::steady_clock;

struct StageClock {
  bool timing = false;
  std::vector<double> seconds;
  int64_t current = -1; // the stage running since `since`, -1: none
  Clock::time_point since;
  int64_t outOfRange = -1; // the first mark past the slots
};
thread_local StageClock clock_;
} // namespace

extern "C" void moert_stage_mark(int64_t stage) {
  Clock::time_point now = Clock::now();
  StageClock &c = clock_;
  if (!c.timing)
    return;
  if (c.current >= 0)
    c.seconds[c.current] += std::chrono::duration<double>(now - c.since).count();
  if (stage >= int64_t(c.seconds.size())) {
    if (c.outOfRange < 0)
      c.outOfRange = stage;
    stage = -1;
  }
  c.current = stage < 0 ? -1 : stage;
  c.since = now;
}

void moec::beginStageTiming(size_t stages) {
  StageClock &c = clock_;
  c.timing = true;
  c.seconds.assign(stages, 0.0);
  c.current = -1;
  c.outOfRange = -1;
}

std::vector<double> moec::takeStageTimes(std::string &error) {
  StageClock &c = clock_;
  std::vector<double> seconds;
  if (!c.timing)
    return seconds;
  if (c.outOfRange >= 0)
    error = "a stage mark named stage " + std::to_string(c.outOfRange) + " of " +
            std::to_string(c.seconds.size()) + " timed";
  else if (c.current >= 0)
    error = "stage " + std::to_string(c.current) + " was still running: the function did not "
            "reach its end mark";
  seconds.swap(c.seconds);
  c = StageClock();
  return seconds;
}

std::vector<std::pair<const char *, void *>> moec::stageTimerSymbols() {
  return {{MOERT_NAME(moert_stage_mark), reinterpret_cast<void *>(&moert_stage_mark)}};
}
