//===- AtomicFile.cpp - whole outputs or none -----------------------------===//

#include "runtime/AtomicFile.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace moec;

namespace {

std::string errnoText(int err = errno) { return std::strerror(err); }

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

std::string baseOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// `path` with its symlinks followed (the last component's: the parents'
/// are the kernel's business), up to 40 as the kernel allows. A dangling
/// link resolves to where it points (the output creates that file).
bool followLinks(const std::string &path, std::string &resolved, std::string &error) {
  resolved = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat info;
    if (lstat(resolved.c_str(), &info) != 0 || !S_ISLNK(info.st_mode))
      return true;
    char target[PATH_MAX];
    ssize_t n = readlink(resolved.c_str(), target, sizeof target - 1);
    if (n < 0) {
      error = path + ": " + errnoText();
      return false;
    }
    target[n] = '\0';
    resolved = target[0] == '/' ? std::string(target) : parentOf(resolved) + "/" + target;
  }
  error = path + ": " + errnoText(ELOOP);
  return false;
}

enum class TargetKind { Replace, WriteThrough };

/// How an output at `resolved` (links followed) is made, or false with the
/// reason: a new or regular file is replaced, a character device or FIFO
/// written through; the rest refused.
bool targetKind(const std::string &given, const std::string &resolved, TargetKind &kind,
                std::string &error) {
  struct stat info;
  if (stat(resolved.c_str(), &info) != 0) {
    if (errno != ENOENT) {
      error = given + ": " + errnoText();
      return false;
    }
    kind = TargetKind::Replace;
    return true;
  }
  std::string via = given == resolved ? "" : " (" + given + " points to " + resolved + ")";
  if (S_ISDIR(info.st_mode)) {
    error = given + ": " + errnoText(EISDIR) + via;
    return false;
  }
  if (S_ISBLK(info.st_mode)) {
    error = given + ": is a block device" + via +
            "; an output is never written over a disk (write a file and copy it)";
    return false;
  }
  if (S_ISSOCK(info.st_mode)) {
    error = given + ": is a socket" + via + "; an output can only go to a file, a character "
                                            "device or a FIFO";
    return false;
  }
  kind = S_ISREG(info.st_mode) ? TargetKind::Replace : TargetKind::WriteThrough;
  return true;
}

/// A name no other writer uses, hidden beside `path`.
std::string uniqueSibling(const std::string &path, const char *what) {
  static std::atomic<unsigned> counter{0};
  static thread_local std::mt19937_64 random(std::random_device{}() ^ uint64_t(getpid()));
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, ".%s-%d-%u-%08llx", what, int(getpid()), counter++,
                static_cast<unsigned long long>(random() & 0xffffffffu));
  std::string dir = parentOf(path);
  return (dir == "." && path.find('/') == std::string::npos ? "" : dir + "/") + "." +
         baseOf(path) + suffix;
}

bool writeAll(int fd, const char *p, size_t left, std::string &error) {
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = n < 0 ? errnoText() : "write failed";
      return false;
    }
    p += n, left -= size_t(n);
  }
  return true;
}

/// Reads all of `fd` from its start, chunk by chunk, into `sink(data,
/// size, error)` (false stops the read); false with the reason in `error`.
template <typename Sink> bool readChunks(int fd, Sink sink, std::string &error) {
  char buffer[1 << 16];
  off_t at = 0;
  for (;;) {
    ssize_t n = pread(fd, buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = errnoText();
      return false;
    }
    if (n == 0)
      return true;
    if (!sink(buffer, size_t(n), error))
      return false;
    at += n;
  }
}

/// Copies all of `from` (read from its start) into `to`.
bool copyContents(int from, int to, std::string &error) {
  return readChunks(
      from, [to](const char *p, size_t n, std::string &why) { return writeAll(to, p, n, why); },
      error);
}

/// Gives `file` the name `name` (which must not exist): linkat where the
/// kernel lets us name an O_TMPFILE, else a copy.
bool nameFile(AnonymousFile &file, const std::string &name, std::string &error) {
  if (file.linkable()) {
    // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH on older kernels; the /proc
    // path does not, but some sandboxes refuse it across mounts.
    if (linkat(file.fd(), "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0)
      return true;
    std::string self = "/proc/self/fd/" + std::to_string(file.fd());
    if (linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0)
      return true;
  }
  struct stat info;
  mode_t mode = fstat(file.fd(), &info) == 0 ? info.st_mode & 07777 : 0666;
  int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = errnoText();
    return false;
  }
  bool ok = copyContents(file.fd(), fd, error) && fchmod(fd, mode) == 0;
  if (ok && fsync(fd) != 0 && errno != EINVAL) {
    error = errnoText();
    ok = false;
  }
  if (close(fd) != 0 && ok) {
    error = errnoText();
    ok = false;
  }
  if (!ok)
    unlink(name.c_str());
  return ok;
}

/// Holds an exclusive flock on a directory for its lifetime.
class DirectoryLock {
public:
  explicit DirectoryLock(const std::string &dir) {
    fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
      while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~DirectoryLock() {
    if (fd >= 0)
      close(fd); // releases the lock
  }
  DirectoryLock(const DirectoryLock &) = delete;
  DirectoryLock &operator=(const DirectoryLock &) = delete;

private:
  int fd = -1;
};

mode_t currentUmask() {
  mode_t mask = umask(0);
  umask(mask);
  return mask;
}

} // namespace

//===----------------------------------------------------------------------===//
// AnonymousFile
//===----------------------------------------------------------------------===//

std::unique_ptr<AnonymousFile> AnonymousFile::create(const std::string &dir,
                                                     std::string &error) {
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  if (fd >= 0) {
    // O_TMPFILE applies no umask until the file is named: do it now, as a
    // new file's mode would be.
    fchmod(fd, 0666 & ~currentUmask());
    return std::unique_ptr<AnonymousFile>(new AnonymousFile(fd, /*tmpfile=*/true));
  }
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
    error = dir + ": " + errnoText();
    return nullptr;
  }
  // No O_TMPFILE here: a named file, unlinked at once.
  std::string name = (dir.empty() ? std::string(".") : dir) + "/.moec-XXXXXX";
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  fd = mkostemp(buffer.data(), O_CLOEXEC);
  if (fd < 0) {
    error = dir + ": " + errnoText();
    return nullptr;
  }
  unlink(buffer.data());
  fchmod(fd, 0666 & ~currentUmask());
  return std::unique_ptr<AnonymousFile>(new AnonymousFile(fd, /*tmpfile=*/false));
}

std::unique_ptr<AnonymousFile> AnonymousFile::createTemporary(std::string &error) {
  const char *dir = std::getenv("TMPDIR");
  return create(dir && *dir ? dir : "/tmp", error);
}

AnonymousFile::~AnonymousFile() { close(descriptor); }

std::string AnonymousFile::procPath() const {
  return "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(descriptor);
}

bool AnonymousFile::append(const std::string &bytes, std::string &error) {
  if (lseek(descriptor, 0, SEEK_END) < 0) {
    error = errnoText();
    return false;
  }
  return writeAll(descriptor, bytes.data(), bytes.size(), error);
}

std::string AnonymousFile::contents() const {
  std::string text, error;
  readChunks(
      descriptor,
      [&text](const char *p, size_t n, std::string &) {
        text.append(p, n);
        return true;
      },
      error);
  return text;
}

//===----------------------------------------------------------------------===//
// PendingOutput
//===----------------------------------------------------------------------===//

std::unique_ptr<PendingOutput> PendingOutput::create(const std::string &target,
                                                     std::string &error) {
  if (!checkOutputFile(target, error))
    return nullptr;
  std::unique_ptr<PendingOutput> out(new PendingOutput());
  out->given = target;
  TargetKind kind;
  if (!followLinks(target, out->resolved, error) ||
      !targetKind(target, out->resolved, kind, error))
    return nullptr;
  out->through = kind == TargetKind::WriteThrough;
  // Beside the target, so that naming it is a link, not a copy; a device's
  // or FIFO's contents wait in $TMPDIR (/dev is no place for them).
  out->file = out->through ? AnonymousFile::createTemporary(error)
                           : AnonymousFile::create(parentOf(out->resolved), error);
  if (!out->file) {
    error = target + ": cannot make a temporary file: " + error;
    return nullptr;
  }
  return out;
}

PendingOutput::~PendingOutput() = default;

bool moec::publishOutputs(const std::vector<PendingOutput *> &outputs, std::string &error) {
  // 1. Open the write-through targets first: a FIFO nobody reads fails
  // here (O_NONBLOCK: ENXIO), before any file is replaced.
  std::vector<std::pair<PendingOutput *, int>> through;
  auto closeThrough = [&] {
    for (auto &t : through)
      close(t.second);
  };
  for (PendingOutput *out : outputs) {
    if (!out->through)
      continue;
    int fd = open(out->resolved.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      struct stat info;
      bool fifo = stat(out->resolved.c_str(), &info) == 0 && S_ISFIFO(info.st_mode);
      error = out->given + ": " +
              (fifo && err == ENXIO ? std::string("a FIFO that no process is reading")
                                    : errnoText(err));
      closeThrough();
      return false;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    through.push_back({out, fd});
  }

  // 2. The replaced targets: lock their directories (in one order, so two
  // publishers cannot deadlock), check each target again, and give each
  // output a hidden name beside its target.
  struct Replacement {
    PendingOutput *out;
    std::string temp, backup;
    bool replaced = false;
  };
  std::vector<Replacement> replacements;
  std::vector<std::string> dirs;
  for (PendingOutput *out : outputs)
    if (!out->through) {
      replacements.push_back({out, "", ""});
      dirs.push_back(parentOf(out->resolved));
    }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  std::vector<std::unique_ptr<DirectoryLock>> locks;
  for (const std::string &dir : dirs)
    locks.push_back(std::make_unique<DirectoryLock>(dir));

  auto undo = [&](const std::string &why) {
    for (Replacement &r : replacements) {
      if (r.replaced) {
        if (!r.backup.empty())
          std::rename(r.backup.c_str(), r.out->resolved.c_str());
        else
          unlink(r.out->resolved.c_str());
      } else if (!r.backup.empty()) {
        unlink(r.backup.c_str());
      }
      if (!r.temp.empty() && !r.replaced)
        unlink(r.temp.c_str());
    }
    closeThrough();
    error = why;
    return false;
  };
  bool several = replacements.size() > 1;
  for (Replacement &r : replacements) {
    TargetKind kind;
    if (!targetKind(r.out->given, r.out->resolved, kind, error))
      return undo(error);
    if (kind != TargetKind::Replace)
      return undo(r.out->given + ": changed into a device or FIFO while the output was made");
    std::string temp = uniqueSibling(r.out->resolved, "moec-new");
    if (!nameFile(*r.out->file, temp, error))
      return undo(r.out->given + ": " + error);
    r.temp = temp;
    // A set keeps what it replaces until every rename succeeded.
    struct stat info;
    if (several && lstat(r.out->resolved.c_str(), &info) == 0) {
      std::string backup = uniqueSibling(r.out->resolved, "moec-old");
      if (link(r.out->resolved.c_str(), backup.c_str()) != 0)
        return undo(r.out->given + ": cannot keep the file it replaces until the set is "
                                   "complete: " + errnoText());
      r.backup = backup;
    }
  }
  // 3. Rename: all or, after a failure, none.
  for (Replacement &r : replacements) {
    if (std::rename(r.temp.c_str(), r.out->resolved.c_str()) != 0)
      return undo(r.out->given + ": " + errnoText());
    r.replaced = true;
  }
  for (Replacement &r : replacements)
    if (!r.backup.empty())
      unlink(r.backup.c_str());
  locks.clear();

  // 4. Write through.
  for (auto &[out, fd] : through) {
    std::string why;
    if (!copyContents(out->file->fd(), fd, why)) {
      error = out->given + ": " + why;
      closeThrough();
      return false;
    }
  }
  bool closed = true;
  for (auto &[out, fd] : through)
    if (close(fd) != 0 && errno != EINTR && closed) {
      error = out->given + ": " + errnoText();
      closed = false;
    }
  return closed;
}

bool moec::writeFileAtomically(const std::string &path, const std::string &bytes,
                               std::string &error) {
  auto out = PendingOutput::create(path, error);
  if (!out)
    return false;
  if (!out->append(bytes, error)) {
    error = path + ": " + error;
    return false;
  }
  return publishOutputs({out.get()}, error);
}

bool moec::checkOutputFile(const std::string &path, std::string &error) {
  std::string resolved;
  TargetKind kind;
  if (!followLinks(path, resolved, error) || !targetKind(path, resolved, kind, error))
    return false;
  if (kind == TargetKind::WriteThrough)
    return true;
  std::string dir = parentOf(resolved);
  struct stat info;
  if (stat(dir.c_str(), &info) != 0) {
    error = path + ": " + errnoText();
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = path + ": " + errnoText(ENOTDIR);
    return false;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    error = path + ": " + errnoText();
    return false;
  }
  return true;
}

bool moec::checkOutputDirectory(const std::string &dir, std::string &error) {
  struct stat info;
  std::string existing = dir;
  while (stat(existing.c_str(), &info) != 0) {
    if (errno != ENOENT) {
      error = dir + ": " + errnoText();
      return false;
    }
    std::string parent = parentOf(existing);
    if (parent == existing) {
      error = dir + ": " + errnoText(ENOENT);
      return false;
    }
    existing = parent;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = dir + ": " + errnoText(ENOTDIR);
    return false;
  }
  return true;
}

bool moec::checkInputFile(const std::string &path, std::string &error) {
  // A missing file or a directory: the reader's own message says it.
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode) || S_ISDIR(info.st_mode))
    return true;
  const char *what = S_ISFIFO(info.st_mode)   ? "a FIFO (it could wait for a writer forever)"
                     : S_ISCHR(info.st_mode)  ? "a character device"
                     : S_ISBLK(info.st_mode)  ? "a block device"
                     : S_ISSOCK(info.st_mode) ? "a socket"
                                              : "not a regular file";
  error = path + ": is " + std::string(what) + "; inputs are read from regular files";
  return false;
}
