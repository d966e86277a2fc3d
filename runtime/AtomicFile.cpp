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
#include <pthread.h>
#include <random>
#include <signal.h>
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

/// Exclusive flocks on a set of directories, taken in one order (device,
/// inode) so that two publishers cannot deadlock, and each directory once
/// however its path is spelled ("out" and "out/."): Linux's flock on a
/// second descriptor of a directory this process has locked would wait
/// forever. Released when destroyed. A directory that cannot be opened for
/// reading is not locked (its renames still are atomic one by one).
class DirectoryLocks {
public:
  explicit DirectoryLocks(const std::vector<std::string> &dirs) {
    std::vector<std::pair<std::pair<dev_t, ino_t>, int>> opened;
    for (const std::string &dir : dirs) {
      int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      struct stat info;
      if (fd < 0)
        continue;
      if (fstat(fd, &info) != 0) {
        close(fd);
        continue;
      }
      opened.push_back({{info.st_dev, info.st_ino}, fd});
    }
    std::sort(opened.begin(), opened.end());
    for (size_t i = 0; i < opened.size(); ++i) {
      if (i > 0 && opened[i].first == opened[i - 1].first) {
        close(opened[i].second);
        continue;
      }
      while (flock(opened[i].second, LOCK_EX) != 0 && errno == EINTR) {
      }
      fds.push_back(opened[i].second);
    }
  }
  ~DirectoryLocks() {
    for (int fd : fds)
      close(fd); // releases the lock
  }
  DirectoryLocks(const DirectoryLocks &) = delete;
  DirectoryLocks &operator=(const DirectoryLocks &) = delete;

private:
  std::vector<int> fds;
};

/// The descriptor `path` names by itself (/dev/stdout, /dev/stderr,
/// /dev/fd/N, /proc/self/fd/N), or -1. Written through that descriptor, an
/// output keeps the shell's redirection as it is (`>>` appends, a pipe
/// stays a pipe); resolved as a path, /proc's links name no file.
int namedDescriptor(const std::string &path) {
  if (path == "/dev/stdout")
    return 1;
  if (path == "/dev/stderr")
    return 2;
  for (const char *prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    std::string p = prefix;
    if (path.compare(0, p.size(), p) != 0 || path.size() == p.size())
      continue;
    std::string digits = path.substr(p.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6)
      return -1;
    return std::atoi(digits.c_str());
  }
  return -1;
}

/// Where an output at `given` goes and how.
struct Resolution {
  std::string path;    // `given` with its symlinks followed (replaced), or `given`
  TargetKind kind = TargetKind::Replace;
  int descriptor = -1; // written through this inherited descriptor
};

bool resolveOutput(const std::string &given, Resolution &r, std::string &error) {
  r = Resolution();
  if (int fd = namedDescriptor(given); fd >= 0) {
    if (fcntl(fd, F_GETFL) == -1) {
      error = given + ": " + errnoText(EBADF);
      return false;
    }
    r.path = given, r.kind = TargetKind::WriteThrough, r.descriptor = fd;
    return true;
  }
  // Whatever links lead there (/proc's to a pipe too), a FIFO or
  // character device is opened through the path given.
  struct stat info;
  if (stat(given.c_str(), &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISCHR(info.st_mode))) {
    r.path = given, r.kind = TargetKind::WriteThrough;
    return true;
  }
  return followLinks(given, r.path, error) && targetKind(given, r.path, r.kind, error);
}

/// Blocks SIGPIPE on this thread while it lives, and drops one raised
/// meanwhile: a FIFO's reader that goes away makes the write fail with
/// EPIPE, which is reported, instead of ending the process.
class SigpipeBlocked {
public:
  SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &previous);
  }
  ~SigpipeBlocked() {
    sigset_t pipe, pending;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&previous, SIGPIPE)) {
      timespec zero{0, 0};
      sigtimedwait(&pipe, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

private:
  sigset_t previous;
};

int failRenameAt = -1; // testing::failRenameForTesting

/// The process's umask, read without changing it (umask(2) can only set
/// it, and setting it back races with other threads creating files).
mode_t currentUmask() {
  if (FILE *status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned mask;
    while (std::fgets(line, sizeof line, status))
      if (std::sscanf(line, "Umask: %o", &mask) == 1) {
        std::fclose(status);
        return mode_t(mask);
      }
    std::fclose(status);
  }
  return 022;
}

/// Whether `resolved`'s directory takes a new file: checked before the
/// work that makes an output (the target's own kind is resolveOutput's).
bool directoryTakesFile(const std::string &given, const std::string &resolved,
                        std::string &error) {
  std::string dir = parentOf(resolved);
  struct stat info;
  if (stat(dir.c_str(), &info) != 0) {
    error = given + ": " + errnoText();
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = given + ": " + errnoText(ENOTDIR);
    return false;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    error = given + ": " + errnoText();
    return false;
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// AnonymousFile
//===----------------------------------------------------------------------===//

std::unique_ptr<AnonymousFile> AnonymousFile::create(const std::string &dir,
                                                     std::string &error) {
  // The umask applies to O_TMPFILE's mode as to any new file's.
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  if (fd >= 0)
    return std::unique_ptr<AnonymousFile>(new AnonymousFile(fd, /*tmpfile=*/true));
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
  fchmod(fd, 0666 & ~currentUmask()); // mkostemp makes it 0600
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
  Resolution where;
  if (!resolveOutput(target, where, error) ||
      (where.kind == TargetKind::Replace && !directoryTakesFile(target, where.path, error)))
    return nullptr;
  std::unique_ptr<PendingOutput> out(new PendingOutput());
  out->given = target;
  out->resolved = where.path;
  out->through = where.kind == TargetKind::WriteThrough;
  out->descriptor = where.descriptor;
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
  // 1. The write-through targets first, before any file is replaced: a
  // FIFO nobody reads fails at its open (O_NONBLOCK: ENXIO), and a write
  // that fails leaves the regular targets as they were.
  {
    SigpipeBlocked quiet;
    for (PendingOutput *out : outputs) {
      if (!out->through)
        continue;
      int fd = out->descriptor >= 0
                   ? fcntl(out->descriptor, F_DUPFD_CLOEXEC, 3)
                   : open(out->resolved.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) {
        int err = errno;
        struct stat info;
        bool fifo = stat(out->resolved.c_str(), &info) == 0 && S_ISFIFO(info.st_mode);
        error = out->given + ": " +
                (fifo && err == ENXIO ? std::string("a FIFO that no process is reading")
                                      : errnoText(err));
        return false;
      }
      // Our own open file description only: the blocking writes below.
      if (out->descriptor < 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      std::string why;
      bool written = copyContents(out->file->fd(), fd, why);
      if (close(fd) != 0 && written && errno != EINTR)
        written = false, why = errnoText();
      if (!written) {
        error = out->given + ": " + (why == errnoText(EPIPE) ? "the reader went away" : why);
        return false;
      }
    }
  }

  // 2. The replaced targets: lock their directories, check every target
  // before any is touched, then give each output a hidden name beside its
  // target and keep (a hard link) the file it replaces.
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
  DirectoryLocks locks(dirs);

  auto undo = [&](const std::string &why) {
    for (Replacement &r : replacements) {
      if (r.replaced) {
        if (!r.backup.empty())
          std::rename(r.backup.c_str(), r.out->resolved.c_str());
        else
          unlink(r.out->resolved.c_str());
      } else {
        if (!r.backup.empty())
          unlink(r.backup.c_str());
        if (!r.temp.empty())
          unlink(r.temp.c_str());
      }
    }
    error = why;
    return false;
  };
  for (Replacement &r : replacements) {
    TargetKind kind;
    if (!targetKind(r.out->given, r.out->resolved, kind, error))
      return undo(error);
    if (kind != TargetKind::Replace)
      return undo(r.out->given + ": changed into a device or FIFO while the output was made");
  }
  bool several = replacements.size() > 1;
  for (Replacement &r : replacements) {
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
  // 3. Rename: all or, after a failure, none (the kept files go back).
  for (size_t i = 0; i < replacements.size(); ++i) {
    Replacement &r = replacements[i];
    bool failed = int(i) == failRenameAt ? (errno = EIO, true)
                                         : std::rename(r.temp.c_str(), r.out->resolved.c_str()) != 0;
    if (failed)
      return undo(r.out->given + ": " + errnoText());
    r.replaced = true;
  }
  for (Replacement &r : replacements)
    if (!r.backup.empty())
      unlink(r.backup.c_str());
  return true;
}

void moec::testing::failRenameForTesting(int index) { failRenameAt = index; }

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
  Resolution where;
  if (!resolveOutput(path, where, error))
    return false;
  return where.kind == TargetKind::WriteThrough || directoryTakesFile(path, where.path, error);
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
