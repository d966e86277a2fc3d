//===- Library.cpp - load a block compiled with moec -o lib.so ------------===//

#include "runtime/Library.h"
#include "runtime/Invoke.h"

#include <dlfcn.h>
#include <sstream>

using namespace moec;

std::unique_ptr<Library> Library::open(const std::string &path, std::string &error) {
  // RTLD_LOCAL: several blocks may be loaded side by side.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = dlerror();
    return nullptr;
  }
  std::unique_ptr<Library> lib(new Library());
  lib->handle_ = handle;
  auto *manifest = static_cast<const char *>(dlsym(handle, "moec_manifest"));
  if (!manifest) {
    error = path + ": no moec_manifest: not a library built by moec";
    return nullptr;
  }
  std::istringstream lines(manifest);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty())
      continue;
    auto sig = FunctionSignature::parse(line, error);
    if (!sig) {
      error = path + ": " + error;
      return nullptr;
    }
    lib->functions_.push_back(*sig);
  }
  return lib;
}

Library::~Library() {
  if (handle_)
    dlclose(handle_);
}

const FunctionSignature *Library::find(const std::string &name) const {
  for (const FunctionSignature &f : functions_)
    if (f.name == name)
      return &f;
  return nullptr;
}

std::optional<std::vector<Buffer>> Library::run(const std::string &name,
                                                std::vector<Buffer> &inputs,
                                                std::string &error) {
  const FunctionSignature *sig = find(name);
  if (!sig) {
    std::string names;
    for (auto &f : functions_)
      names += (names.empty() ? "" : ", ") + f.name;
    error = "no entry point '" + name + "' (the library has: " + names + ")";
    return std::nullopt;
  }
  using Entry = void (*)(void **);
  auto entry = reinterpret_cast<Entry>(dlsym(handle_, ("moec_call_" + name).c_str()));
  if (!entry) {
    error = "the library lists '" + name + "' but has no moec_call_" + name;
    return std::nullopt;
  }
  return invoke(*sig, inputs,
                [&](void **args, std::string &) {
                  entry(args);
                  return true;
                },
                error);
}
