//===- AtomicFile.cpp - whole files or none -------------------------------===//

#include "runtime/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

bool moec::writeFileAtomically(const std::string &path, const std::string &bytes,
                               std::string &error) {
  auto failWith = [&](const std::string &why) {
    error = path + ": " + why;
    return false;
  };
  // A name of our own beside the target (the rename must not cross file
  // systems); O_EXCL so two writers never share one.
  static unsigned counter = 0;
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      return failWith(std::strerror(errno));
  }
  if (fd < 0)
    return failWith("no free temporary name beside it");
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      std::string why = n < 0 ? std::strerror(errno) : "write failed";
      close(fd);
      unlink(temp.c_str());
      return failWith(why);
    }
    p += n, left -= size_t(n);
  }
  if (close(fd) != 0) {
    std::string why = std::strerror(errno);
    unlink(temp.c_str());
    return failWith(why);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    unlink(temp.c_str());
    return failWith(why);
  }
  return true;
}

namespace {
/// "a/b" -> "a", "b" -> ".", "/b" -> "/".
std::string parentOf(const std::string &path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/')
    trimmed.pop_back();
  size_t slash = trimmed.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : trimmed.substr(0, slash);
}
} // namespace

bool moec::checkOutputFile(const std::string &path, std::string &error) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    error = path + ": " + std::strerror(EISDIR);
    return false;
  }
  std::string dir = parentOf(path);
  if (stat(dir.c_str(), &info) != 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = path + ": " + std::strerror(ENOTDIR);
    return false;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

bool moec::checkOutputDirectory(const std::string &dir, std::string &error) {
  struct stat info;
  std::string existing = dir;
  while (stat(existing.c_str(), &info) != 0) {
    if (errno != ENOENT) {
      error = dir + ": " + std::strerror(errno);
      return false;
    }
    std::string parent = parentOf(existing);
    if (parent == existing) {
      error = dir + ": " + std::strerror(ENOENT);
      return false;
    }
    existing = parent;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = dir + ": " + std::strerror(ENOTDIR);
    return false;
  }
  return true;
}
