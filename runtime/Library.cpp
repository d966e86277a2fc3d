//===- Library.cpp - load a block compiled with moec -o lib.so ------------===//

#include "runtime/Library.h"
#include "runtime/CpuFeatures.h"
#include "runtime/Invoke.h"

#include "runtime/AtomicFile.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace moec;

namespace {

/// Why `path` is not a whole x86-64 ELF shared object, or "". dlopen maps a
/// truncated library's segments past the end of the file, and the first
/// touch of those pages is a SIGBUS (run_block died of one): checked here,
/// from the headers, before dlopen sees it.
std::string elfProblem(const std::string &path) {
  std::string error;
  if (!checkInputFile(path, error))
    return error;
  // Missing, unreadable or a directory: dlopen's own message says so.
  struct stat info;
  std::ifstream in(path, std::ios::binary);
  if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || !in)
    return "";
  in.seekg(0, std::ios::end);
  const uint64_t size = uint64_t(in.tellg());
  in.seekg(0);
  Elf64_Ehdr header;
  if (size < sizeof header || !in.read(reinterpret_cast<char *>(&header), sizeof header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return path + ": not an ELF file (" + std::to_string(size) + " bytes)";
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB ||
      header.e_machine != EM_X86_64 || header.e_type != ET_DYN)
    return path + ": not an x86-64 shared library";
  auto within = [&](uint64_t offset, uint64_t bytes) {
    return offset <= size && bytes <= size - offset;
  };
  auto truncated = [&](const std::string &what, uint64_t end) {
    return path + ": truncated: the file has " + std::to_string(size) + " bytes, " + what +
           " needs " + std::to_string(end) + " (rebuild it with moec -o)";
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !within(header.e_phoff, uint64_t(header.e_phnum) * sizeof(Elf64_Phdr)))
    return truncated("the program headers",
                     header.e_phoff + uint64_t(header.e_phnum) * header.e_phentsize);
  in.seekg(std::streamoff(header.e_phoff));
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (!in.read(reinterpret_cast<char *>(&segment), sizeof segment))
      return truncated("the program headers", header.e_phoff + (i + 1) * sizeof segment);
    if (segment.p_type != PT_NULL && !within(segment.p_offset, segment.p_filesz))
      return truncated("segment " + std::to_string(i), segment.p_offset + segment.p_filesz);
  }
  if (header.e_shoff != 0 &&
      !within(header.e_shoff, uint64_t(header.e_shnum) * header.e_shentsize))
    return truncated("the section headers",
                     header.e_shoff + uint64_t(header.e_shnum) * header.e_shentsize);
  return "";
}

} // namespace

std::unique_ptr<Library> Library::open(const std::string &path, std::string &error) {
  // A bare name is a file here, as for every other tool: dlopen would
  // search the library path for it instead.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  if (std::string problem = elfProblem(file); !problem.empty()) {
    error = path.find('/') == std::string::npos ? problem.substr(2) : problem;
    return nullptr;
  }
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
  // Libraries built with --prepare-weights=false (or before it) have none.
  if (auto *forms = static_cast<const char *>(dlsym(handle, "moec_prepared_forms"))) {
    std::istringstream formLines(forms);
    while (std::getline(formLines, line)) {
      if (line.empty())
        continue;
      auto form = PreparedForm::parse(line, error);
      const FunctionSignature *f = form ? lib->find(form->function) : nullptr;
      const FunctionSignature *prepare = form ? lib->find(form->prepare) : nullptr;
      const FunctionSignature *prepared = form ? lib->find(form->prepared) : nullptr;
      if (form && (!f || !prepare || !prepared))
        error = "its manifest lacks a function of the prepared form '" + line + "'";
      else if (form)
        error = form->mismatch(*f, *prepare, *prepared);
      if (!form || !error.empty()) {
        error = path + ": " + error;
        return nullptr;
      }
      lib->preparedForms_.push_back(*form);
    }
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

const FunctionSignature *Library::findOrSay(const std::string &name, std::string &error) const {
  const FunctionSignature *sig = find(name);
  if (!sig) {
    std::string names;
    for (auto &f : functions_)
      names += (names.empty() ? "" : ", ") + f.name;
    error = "no entry point '" + name + "' (the library has: " + names + ")";
  }
  return sig;
}

std::optional<std::vector<Buffer>> Library::run(const std::string &name,
                                                std::vector<Buffer> &inputs,
                                                std::string &error) {
  const FunctionSignature *sig = findOrSay(name, error);
  if (!sig)
    return std::nullopt;
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

const PreparedForm *Library::preparedForm(const std::string &name) const {
  for (const PreparedForm &form : preparedForms_)
    if (form.function == name)
      return &form;
  return nullptr;
}

CallByName Library::caller() {
  return [this](const std::string &name, std::vector<Buffer> &args, std::string &error) {
    return run(name, args, error);
  };
}

std::optional<PreparedWeights> Library::prepare(const std::string &name, std::vector<Buffer> &inputs,
                                                std::string &error) {
  const FunctionSignature *f = findOrSay(name, error);
  if (!f)
    return std::nullopt;
  const PreparedForm *form = preparedForm(name);
  if (!form) {
    error = "'" + name + "' has no prepared form in this library (build it with moec -o and "
            "--prepare-weights, the default; a block that trains has none): call run('" + name + "')";
    return std::nullopt;
  }
  return PreparedWeights::prepare(*form, *f, inputs, caller(), error);
}

std::optional<std::vector<Buffer>> Library::run(const PreparedWeights &weights, std::vector<Buffer> &inputs,
                                                std::string &error) {
  const FunctionSignature *f = findOrSay(weights.form().function, error);
  if (!f)
    return std::nullopt;
  const PreparedForm *form = preparedForm(weights.form().function);
  if (!form) {
    error = "'" + weights.form().function + "' has no prepared form in this library: these weights were "
            "prepared by another";
    return std::nullopt;
  }
  return weights.run(*form, *f, inputs, caller(), error);
}
