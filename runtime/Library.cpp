//===- Library.cpp - load a block compiled with moec -o lib.so ------------===//

#include "runtime/Library.h"
#include "runtime/CpuFeatures.h"
#include "runtime/Invoke.h"

#include <dlfcn.h>
#include <sstream>

using namespace moec;

std::unique_ptr<Library> Library::open(const std::string &path, std::string &error) {
  // A bare name is a file here, as for every other tool: dlopen would
  // search the library path for it instead.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_LOCAL: several blocks may be loaded side by side.
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
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
  // Code for a CPU with more extensions than this one would stop on an
  // illegal instruction at the first call: refuse it here, naming them.
  if (auto *features = static_cast<const char *>(dlsym(handle, "moec_cpu_features"))) {
    std::vector<std::string> required;
    std::istringstream words(features);
    for (std::string word; words >> word;)
      required.push_back(word);
    std::vector<std::string> missing = missingCpuFeatures(required);
    if (!missing.empty()) {
      std::string names;
      for (const std::string &m : missing)
        names += (names.empty() ? "" : " ") + m;
      error = path + ": compiled for a CPU with " + features + "; this CPU lacks " + names +
              " (compile it again on this machine, or for it with moec --target-cpu)";
      return nullptr;
    }
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
