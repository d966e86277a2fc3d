//===- ThreadsOption.cpp - --threads, read before LLVM's options ----------===//

#include "tooling/ThreadsOption.h"
#include "runtime/ThreadLimit.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

using llvm::StringRef;

bool moec::takeThreadsOption(int &argc, char **argv, unsigned &threads, std::string &error) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    StringRef arg(argv[i]);
    std::optional<StringRef> value;
    if (arg == "--threads" || arg == "-threads") {
      if (i + 1 >= argc) {
        error = "--threads needs a value";
        return false;
      }
      value = StringRef(argv[++i]);
    } else if (arg.consume_front("--threads=") || arg.consume_front("-threads=")) {
      value = arg;
    }
    if (!value) {
      argv[out++] = argv[i];
      continue;
    }
    if (value->getAsInteger(10, threads) || threads < 1) {
      error = "--threads must be a positive integer (got '" + value->str() + "')";
      return false;
    }
    if (std::string why = moec::threadCountRefusal(threads, "--threads " + value->str());
        !why.empty()) {
      error = why;
      return false;
    }
  }
  argc = out;
  return true;
}
