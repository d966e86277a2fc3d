//===- AtomicFile.h - whole outputs or none --------------------*- C++ -*-===//
//
// Every output moec, moe-bench and the runtime write (objects, libraries,
// .npy results, JSON, CSV, plots, tuning tables) goes through here, so that
// what a user had is never lost and what they get is never half a file:
//
//  - An output is written into an unnamed file (O_TMPFILE in the target's
//    directory; an unlinked mkstemp file where the file system has no
//    O_TMPFILE) and only named when published: a process killed while it
//    writes, or a linker killed while it links into it, leaves nothing.
//  - Publishing a regular file (or a new one) renames a uniquely named link
//    of it over the target, so two processes writing the same target at
//    once leave one whole output, never a mix.
//  - A symlink is followed: the output lands where it points, and the link
//    stays. A character device (/dev/null) or a FIFO is written through, not
//    replaced by a regular file; a FIFO nobody reads is refused, not waited
//    on, and one whose reader goes away is an error, not a SIGPIPE.
//    /dev/stdout, /dev/stderr and /dev/fd/N are written through the
//    descriptor (a shell's `>>` appends). A directory, a block device or a
//    socket is refused.
//  - A set of outputs (moec run --output-dir's out<i>.npy) is published as a
//    unit: every target is checked before the first rename, the files they
//    replace are kept until the last rename succeeds (and put back if one
//    fails), and the set's directories are locked (flock) meanwhile, so two
//    runs publishing into one directory leave one run's files.
//
// What is left to chance: a process killed while a set's outputs are
// named and renamed (microseconds, or a copy's time on a file system
// without O_TMPFILE links) leaves hidden names (.NAME.moec-new-*,
// .NAME.moec-old-*) beside the targets, and a set killed half renamed
// stays half renamed. The linker must write its output in place (GNU ld
// and gold do; an lld or mold that makes a temporary beside its -o would
// try to do so in /proc).
//
// Plain C++17 and POSIX; no LLVM (the runtime's rule).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_ATOMICFILE_H
#define MOEC_RUNTIME_ATOMICFILE_H

#include <memory>
#include <string>
#include <vector>

namespace moec {

/// A file with no name: scratch space another process can read or write
/// through procPath() (a linker's input or output), gone when closed or
/// when this process dies.
class AnonymousFile {
public:
  /// An unnamed file in directory `dir`. Null with "dir: reason" in `error`.
  static std::unique_ptr<AnonymousFile> create(const std::string &dir, std::string &error);
  /// In $TMPDIR (else /tmp).
  static std::unique_ptr<AnonymousFile> createTemporary(std::string &error);
  ~AnonymousFile();
  AnonymousFile(const AnonymousFile &) = delete;
  AnonymousFile &operator=(const AnonymousFile &) = delete;

  int fd() const { return descriptor; }
  /// "/proc/<pid>/fd/<n>": this file, for another process.
  std::string procPath() const;
  /// Appends `bytes`; false with the reason in `error`.
  bool append(const std::string &bytes, std::string &error);
  /// What it holds (what another process wrote into it, say).
  std::string contents() const;
  /// Whether it was made with O_TMPFILE (and so can be given a name by
  /// linkat), not unlinked after mkstemp.
  bool linkable() const { return tmpfile; }

private:
  AnonymousFile(int fd, bool tmpfile) : descriptor(fd), tmpfile(tmpfile) {}
  int descriptor;
  bool tmpfile;
};

/// An output on its way to `target`: written into an AnonymousFile, made
/// the target by publishOutputs, and gone without a trace if never
/// published.
class PendingOutput {
public:
  /// Checks `target` as checkOutputFile does and opens the unnamed file.
  static std::unique_ptr<PendingOutput> create(const std::string &target, std::string &error);
  ~PendingOutput();

  const std::string &target() const { return given; }
  /// Where the output lands: `target` with its symlinks followed.
  const std::string &resolvedTarget() const { return resolved; }
  /// Written through (a character device or a FIFO) rather than replaced.
  bool writesThrough() const { return through; }
  AnonymousFile &contents() { return *file; }
  /// The contents for another process to write (a linker's -o).
  std::string procPath() const { return file->procPath(); }
  bool append(const std::string &bytes, std::string &error) {
    return file->append(bytes, error);
  }

private:
  PendingOutput() = default;
  friend bool publishOutputs(const std::vector<PendingOutput *> &, std::string &);
  std::string given, resolved;
  bool through = false;
  int descriptor = -1; // /dev/stdout and the like: written through this
  std::unique_ptr<AnonymousFile> file;
};

/// Makes every output its target, or none: see the file comment. False
/// with "target: reason" in `error`; the targets are then as they were
/// (except what a character device or FIFO already read: those are written
/// first).
bool publishOutputs(const std::vector<PendingOutput *> &outputs, std::string &error);

namespace testing {
/// Makes publishOutputs' rename of the `index`-th replaced output fail
/// (EIO), -1 for none: the roll-back's test (AtomicFileTest).
void failRenameForTesting(int index);
} // namespace testing

/// Writes `bytes` to `path` whole or not at all (a PendingOutput published
/// alone; permissions as a new file's: 0666 less the umask). False with
/// "path: reason" in `error` on failure.
bool writeFileAtomically(const std::string &path, const std::string &bytes,
                         std::string &error);

/// Whether an output can be made at `path`, checked before the work that
/// produces it (a compile, a run, a benchmark): `path`, its symlinks
/// followed, is not a directory, block device or socket, and its directory
/// exists and is writable (a character device or FIFO is written through).
/// False with "path: reason" in `error`.
bool checkOutputFile(const std::string &path, std::string &error);

/// Whether `dir` is a directory or can be made one: the nearest part of it
/// that exists is a directory. Makes nothing. False with "dir: reason".
bool checkOutputDirectory(const std::string &dir, std::string &error);

/// Whether `path` is a file an input can be read from to its end: not a
/// FIFO, device or socket (symlinks followed), which would block or never
/// end. A missing file or a directory passes: the reader that opens it
/// next says so in its own words. False with "path: reason".
bool checkInputFile(const std::string &path, std::string &error);

} // namespace moec

#endif
