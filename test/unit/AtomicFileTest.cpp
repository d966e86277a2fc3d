//===- AtomicFileTest.cpp - whole outputs or none, on real files ----------===//
//
// runtime/AtomicFile.h against the file kinds a user can point an output
// at (a regular file, a symlink, a character device, a FIFO with and
// without a reader, a directory, a socket), a set whose last target turns
// into a directory before it is published (every earlier target must keep
// what it had), outputs never published (nothing left), and two writers
// publishing sets into one directory at once (one writer's set each time).
// The input check refuses what would block or read as nothing.
//
//===----------------------------------------------------------------------===//

#include "runtime/AtomicFile.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sys/file.h>
#include <fstream>
#include <sstream>
#include <thread>

using namespace moec;

namespace {

/// A fresh directory, removed with what is in it.
class TempDir {
public:
  TempDir() {
    char name[] = "/tmp/moec-atomic-XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string operator/(const std::string &name) const { return path + "/" + name; }
  /// The names in it, sorted, hidden ones too.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    if (DIR *d = opendir(path.c_str())) {
      while (dirent *e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
          names.push_back(e->d_name);
      closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string path;
};

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writePlain(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool isKind(const std::string &path, mode_t kind) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0 && (info.st_mode & S_IFMT) == kind;
}

/// Outputs dir/<prefix>0<suffix> .. holding "new0", "new1", ..., ready to
/// publish as a set.
struct PendingSet {
  PendingSet(const TempDir &dir, int count, const std::string &suffix) {
    std::string error;
    for (int i = 0; i < count; ++i) {
      files.push_back(PendingOutput::create(dir / ("out" + std::to_string(i) + suffix), error));
      EXPECT_TRUE(files.back()) << error;
      if (!files.back())
        return;
      EXPECT_TRUE(files.back()->append("new" + std::to_string(i), error));
      set.push_back(files.back().get());
    }
  }
  std::vector<std::unique_ptr<PendingOutput>> files;
  std::vector<PendingOutput *> set;
};

TEST(AtomicFile, ReplacesARegularFileWhole) {
  TempDir dir;
  writePlain(dir / "out", "old");
  std::string error;
  ASSERT_TRUE(writeFileAtomically(dir / "out", "new contents", error)) << error;
  EXPECT_EQ(readAll(dir / "out"), "new contents");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out"});
}

TEST(AtomicFile, FollowsASymlinkAndKeepsIt) {
  TempDir dir;
  writePlain(dir / "real", "old");
  ASSERT_EQ(symlink("real", (dir / "link").c_str()), 0);
  ASSERT_EQ(symlink("made-by-output", (dir / "dangling").c_str()), 0);
  std::string error;
  ASSERT_TRUE(writeFileAtomically(dir / "link", "through the link", error)) << error;
  EXPECT_TRUE(isKind(dir / "link", S_IFLNK));
  EXPECT_EQ(readAll(dir / "real"), "through the link");
  ASSERT_TRUE(writeFileAtomically(dir / "dangling", "created", error)) << error;
  EXPECT_TRUE(isKind(dir / "dangling", S_IFLNK));
  EXPECT_EQ(readAll(dir / "made-by-output"), "created");
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"dangling", "link", "made-by-output", "real"}));
}

TEST(AtomicFile, WritesThroughACharacterDevice) {
  TempDir dir;
  // A device node of our own where we may make one (root), else the
  // system's: either must stay a device.
  std::string device = dir / "null";
  bool made = mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  // (A nodev mount makes the node but will not open it.)
  int probe = made ? open(device.c_str(), O_WRONLY) : -1;
  if (probe >= 0)
    close(probe);
  else
    device = "/dev/null";
  std::string error;
  ASSERT_TRUE(writeFileAtomically(device, "discarded", error)) << error;
  EXPECT_TRUE(isKind(device, S_IFCHR));
  EXPECT_TRUE(checkOutputFile(device, error)) << error;
  // /dev/full: the write fails with the device's error, and says so.
  EXPECT_FALSE(writeFileAtomically("/dev/full", "x", error));
  EXPECT_EQ(error, "/dev/full: No space left on device");
  EXPECT_TRUE(isKind("/dev/full", S_IFCHR));
}

TEST(AtomicFile, WritesThroughAFifoOnlyWhenRead) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::string error;
  // Nobody reads it: refused at once, not waited on.
  EXPECT_FALSE(writeFileAtomically(dir / "fifo", "lost", error));
  EXPECT_EQ(error, dir / "fifo" + ": a FIFO that no process is reading");
  EXPECT_TRUE(isKind(dir / "fifo", S_IFIFO));
  // A reader gets every byte.
  std::string got;
  int reader = open((dir / "fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  std::string payload(100000, 'x');
  std::thread drain([&] {
    // Non-blocking: a read before the writer opens finds nothing yet.
    char buffer[4096];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (got.size() < payload.size() && std::chrono::steady_clock::now() < deadline) {
      ssize_t n = read(reader, buffer, sizeof buffer);
      if (n > 0)
        got.append(buffer, size_t(n));
      else if (n == 0 || errno == EAGAIN)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      else
        break;
    }
  });
  bool written = writeFileAtomically(dir / "fifo", payload, error);
  drain.join();
  close(reader);
  ASSERT_TRUE(written) << error;
  EXPECT_EQ(got, payload);
  EXPECT_TRUE(isKind(dir / "fifo", S_IFIFO));
  EXPECT_EQ(dir.list(), std::vector<std::string>{"fifo"});
}

TEST(AtomicFile, RefusesDirectoriesSocketsAndBlockDevices) {
  TempDir dir;
  mkdir((dir / "adir").c_str(), 0755);
  std::string error;
  EXPECT_FALSE(checkOutputFile(dir / "adir", error));
  EXPECT_EQ(error, dir / "adir" + ": Is a directory");
  EXPECT_FALSE(writeFileAtomically(dir / "adir", "x", error));

  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::string socketPath = dir / "sock";
  ASSERT_LT(socketPath.size(), sizeof address.sun_path);
  std::strcpy(address.sun_path, socketPath.c_str());
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
  EXPECT_FALSE(writeFileAtomically(socketPath, "x", error));
  EXPECT_NE(error.find("is a socket"), std::string::npos) << error;
  close(sock);

  if (mknod((dir / "disk").c_str(), S_IFBLK | 0600, makedev(7, 200)) == 0) {
    EXPECT_FALSE(checkOutputFile(dir / "disk", error));
    EXPECT_NE(error.find("is a block device"), std::string::npos) << error;
    EXPECT_TRUE(isKind(dir / "disk", S_IFBLK));
  }
  // A link to a directory is the directory.
  ASSERT_EQ(symlink("adir", (dir / "to-dir").c_str()), 0);
  EXPECT_FALSE(checkOutputFile(dir / "to-dir", error));
  EXPECT_NE(error.find("Is a directory"), std::string::npos) << error;
}

TEST(AtomicFile, UnpublishedOutputsLeaveNothing) {
  TempDir dir;
  std::string error;
  {
    auto out = PendingOutput::create(dir / "never", error);
    ASSERT_TRUE(out) << error;
    ASSERT_TRUE(out->append("bytes", error)) << error;
    // Another process can write it through /proc (a linker's -o).
    std::ofstream(out->procPath(), std::ios::binary | std::ios::app) << " and more";
    EXPECT_EQ(dir.list(), std::vector<std::string>{});
  }
  EXPECT_EQ(dir.list(), std::vector<std::string>{});
}

TEST(AtomicFile, ASetIsPublishedWholeOrNotAtAll) {
  TempDir dir;
  writePlain(dir / "out0.npy", "old0");
  writePlain(dir / "out2.npy", "old2");
  std::string error;
  PendingSet pending(dir, 4, ".npy");
  ASSERT_EQ(pending.set.size(), 4u);
  const std::vector<PendingOutput *> &set = pending.set;
  // The last target becomes a directory after the outputs were made: the
  // set fails before any target changes.
  mkdir((dir / "out3.npy").c_str(), 0755);
  EXPECT_FALSE(publishOutputs(set, error));
  EXPECT_EQ(error, dir / "out3.npy" + ": Is a directory");
  EXPECT_EQ(readAll(dir / "out0.npy"), "old0");
  EXPECT_EQ(readAll(dir / "out2.npy"), "old2");
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"out0.npy", "out2.npy", "out3.npy"}));

  // Without the directory the same set goes in whole, and what it
  // replaced is gone.
  rmdir((dir / "out3.npy").c_str());
  ASSERT_TRUE(publishOutputs(set, error)) << error;
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(readAll(dir / ("out" + std::to_string(i) + ".npy")), "new" + std::to_string(i));
  EXPECT_EQ(dir.list(),
            (std::vector<std::string>{"out0.npy", "out1.npy", "out2.npy", "out3.npy"}));
}

TEST(AtomicFile, TwoWritersOfOneSetLeaveOneWritersFiles) {
  TempDir dir;
  auto writer = [&](char tag) {
    for (int round = 0; round < 40; ++round) {
      std::string error;
      std::vector<std::unique_ptr<PendingOutput>> files;
      std::vector<PendingOutput *> set;
      for (int i = 0; i < 3; ++i) {
        files.push_back(PendingOutput::create(dir / ("out" + std::to_string(i)), error));
        ASSERT_TRUE(files.back()) << error;
        ASSERT_TRUE(files.back()->append(std::string(4096 * (i + 1), tag), error));
        set.push_back(files.back().get());
      }
      ASSERT_TRUE(publishOutputs(set, error)) << error;
    }
  };
  std::thread a(writer, 'a'), b(writer, 'b');
  // Meanwhile, every look under the directory's lock finds one writer's set.
  for (int look = 0; look < 200; ++look) {
    int fd = open(dir.path.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    flock(fd, LOCK_EX);
    std::string first = readAll(dir / "out0");
    if (!first.empty()) {
      for (int i = 1; i < 3; ++i)
        EXPECT_EQ(readAll(dir / ("out" + std::to_string(i))),
                  std::string(4096 * (i + 1), first[0]));
    }
    flock(fd, LOCK_UN);
    close(fd);
  }
  a.join();
  b.join();
  char tag = readAll(dir / "out0")[0];
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(readAll(dir / ("out" + std::to_string(i))), std::string(4096 * (i + 1), tag));
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"out0", "out1", "out2"}));
}

TEST(AtomicFile, WritesThroughInheritedDescriptors) {
  TempDir dir;
  std::string error;
  // /dev/fd/N of a pipe (what /dev/stdout is under `moec ... | cat`).
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  ASSERT_TRUE(writeFileAtomically("/dev/fd/" + std::to_string(ends[1]), "through a pipe",
                                  error))
      << error;
  close(ends[1]);
  char buffer[64] = {};
  EXPECT_EQ(read(ends[0], buffer, sizeof buffer), ssize_t(14));
  EXPECT_EQ(std::string(buffer), "through a pipe");
  // A pipe whose reader is gone: an error, not SIGPIPE.
  ASSERT_EQ(pipe(ends), 0);
  close(ends[0]);
  EXPECT_FALSE(writeFileAtomically("/dev/fd/" + std::to_string(ends[1]), "lost", error));
  EXPECT_EQ(error, "/dev/fd/" + std::to_string(ends[1]) + ": the reader went away");
  close(ends[1]);
  // A file opened to append (a shell's >>): appended to, not replaced.
  writePlain(dir / "log", "before;");
  int appended = open((dir / "log").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(appended, 0);
  ASSERT_TRUE(writeFileAtomically("/proc/self/fd/" + std::to_string(appended), "after", error))
      << error;
  close(appended);
  EXPECT_EQ(readAll(dir / "log"), "before;after");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"log"});
  // A descriptor that is not open.
  EXPECT_FALSE(checkOutputFile("/dev/fd/987654", error));
  EXPECT_EQ(error, "/dev/fd/987654: Bad file descriptor");
}

TEST(AtomicFile, AFailedRenameRollsTheSetBack) {
  TempDir dir;
  writePlain(dir / "out0", "old0");
  writePlain(dir / "out2", "old2");
  std::string error;
  PendingSet pending(dir, 4, "");
  ASSERT_EQ(pending.set.size(), 4u);
  const std::vector<PendingOutput *> &set = pending.set;
  // The third rename fails after out0 and out1 were renamed into place:
  // out0 gets its old file back, out1 (new) goes, out2 keeps its own.
  moec::testing::failRenameForTesting(2);
  bool published = publishOutputs(set, error);
  moec::testing::failRenameForTesting(-1);
  EXPECT_FALSE(published);
  EXPECT_EQ(error, dir / "out2" + ": Input/output error");
  EXPECT_EQ(readAll(dir / "out0"), "old0");
  EXPECT_EQ(readAll(dir / "out2"), "old2");
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"out0", "out2"}));
}

TEST(AtomicFile, OneDirectorySpelledTwiceIsLockedOnce) {
  // out/a and out/./b (a symlink into "."): two spellings of one
  // directory, locked once, not twice (which would wait forever).
  TempDir dir;
  mkdir((dir / "out").c_str(), 0755);
  ASSERT_EQ(symlink("./b-real", (dir / "out/b").c_str()), 0);
  std::string error;
  auto a = PendingOutput::create(dir / "out/a", error);
  auto b = PendingOutput::create(dir / "out/b", error);
  ASSERT_TRUE(a && b) << error;
  ASSERT_TRUE(a->append("a", error) && b->append("b", error));
  ASSERT_TRUE(publishOutputs({a.get(), b.get()}, error)) << error;
  EXPECT_EQ(readAll(dir / "out/a"), "a");
  EXPECT_EQ(readAll(dir / "out/b-real"), "b");
}

TEST(AtomicFile, InputsMustBeRegularFiles) {
  TempDir dir;
  writePlain(dir / "file", "x");
  mkfifo((dir / "fifo").c_str(), 0600);
  mkdir((dir / "adir").c_str(), 0755);
  std::string error;
  EXPECT_TRUE(checkInputFile(dir / "file", error)) << error;
  EXPECT_FALSE(checkInputFile(dir / "fifo", error));
  EXPECT_EQ(error, dir / "fifo" + ": is a FIFO (it could wait for a writer forever); inputs are "
                                  "read from regular files");
  EXPECT_FALSE(checkInputFile("/dev/zero", error));
  EXPECT_NE(error.find("a character device"), std::string::npos) << error;
  // Left to the reader, whose message names them as it always did.
  EXPECT_TRUE(checkInputFile(dir / "adir", error));
  EXPECT_TRUE(checkInputFile(dir / "missing", error));
}

} // namespace
