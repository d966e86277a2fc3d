"""fifo-reader.py FIFO OUT READY: opens FIFO for reading without waiting for
a writer, creates READY (so the test starts its writer only then), and
copies what the writer sends into OUT until the writer closes; gives up
after 30 s so that a test never hangs on it."""
import os
import select
import sys
import time

fifo, out, ready = sys.argv[1:4]
fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
open(ready, "w").close()
data, seen, deadline = b"", False, time.time() + 30
while time.time() < deadline:
    select.select([fd], [], [], 0.1)
    chunk = os.read(fd, 65536)
    if chunk:
        data, seen = data + chunk, True
    elif seen:
        break  # the writer has come and gone
    else:
        time.sleep(0.01)  # no writer yet: EOF until one opens
open(out, "wb").write(data)
