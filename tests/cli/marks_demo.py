"""A workload for the marks end-to-end test: windows per batch, counts, tags, and the mistakes
the protocol must survive (a malformed line, a mark without t_ns, a window left open)."""
import os
import sys
import time

import wattlab_marks as marks

assert marks.enabled(), "run me under wattlab run --marks"
marks.tag(model="demo/llm-1b", task="marks-demo", gpus=1, precision="bfloat16")
with marks.window("sweep"):
    for batch in (1, 4):
        with marks.window(f"b{batch}", batch=batch) as w:
            time.sleep(0.3)
            w.count(tokens=batch * 32, requests=batch)
        marks.count(steps=1)  # unnamed: goes to every open window ("sweep")
fd = int(os.environ["WATTLAB_MARKS_FD"])
os.write(fd, b"this is not json\n")
os.write(fd, b'{"op":"open","name":"no-stamp"}\n')  # wattlab stamps it on arrival
time.sleep(0.2)
os.write(fd, b'{"op":"close","name":"no-stamp","counts":{"tokens":3}}\n')
marks.open("dangling", batch=2)  # never closed: closed at exit and flagged
marks.count("dangling", tokens=5, requests=1)
sys.exit(3)  # wattlab run exits with the command's status
