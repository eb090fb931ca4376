"""The Python marks client never hurts the measured program: a reader that is gone (even with
SIGPIPE's default action restored) or a pipe that stays full makes a mark return False."""
import fcntl
import os
import subprocess
import sys
import unittest

PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")

CHILD = r"""
import os, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # as a program that restores the default does
import wattlab_marks as marks
ok = marks.open("w", batch=8)
print("sent" if ok else "dropped", flush=True)
print("pending" if signal.SIGPIPE in signal.sigpending() else "clear", flush=True)
"""


def run_child(fd):
    env = dict(os.environ, WATTLAB_MARKS_FD=str(fd), PYTHONPATH=PY)
    return subprocess.run([sys.executable, "-c", CHILD], env=env, pass_fds=(fd,),
                          capture_output=True, text=True, timeout=60)


class MarksClientSafety(unittest.TestCase):
    def test_reader_gone_is_not_fatal(self):
        r, w = os.pipe()
        os.close(r)
        p = run_child(w)
        os.close(w)
        self.assertEqual(p.returncode, 0, p.stderr)  # -13 would be death by SIGPIPE
        self.assertEqual(p.stdout.split(), ["dropped", "clear"])

    def test_full_pipe_drops_the_mark(self):
        r, w = os.pipe()
        flags = fcntl.fcntl(w, fcntl.F_GETFL)
        fcntl.fcntl(w, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        try:
            while True:
                os.write(w, b"x" * 4096)
        except BlockingIOError:
            pass
        fcntl.fcntl(w, fcntl.F_SETFL, flags)
        p = run_child(w)
        os.close(w)
        os.close(r)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["dropped", "clear"])

    def test_a_reader_that_stops_reading_drops_and_counts(self):
        r, w = os.pipe()
        env = dict(os.environ, WATTLAB_MARKS_FD=str(w), PYTHONPATH=PY)
        child = r"""
import signal
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
import wattlab_marks as marks
sent = sum(1 for i in range(3000) if marks.open("a window name long enough to fill the pipe soon", i=i))
print(sent, marks.dropped(), flush=True)
"""
        p = subprocess.run([sys.executable, "-c", child], env=env, pass_fds=(w,),
                           capture_output=True, text=True, timeout=60)
        os.close(w)
        os.close(r)
        self.assertEqual(p.returncode, 0, p.stderr)
        sent, dropped = map(int, p.stdout.split())
        self.assertGreater(sent, 0)
        self.assertGreater(dropped, 0)
        self.assertEqual(sent + dropped, 3000)

    def test_a_live_reader_gets_the_line(self):
        r, w = os.pipe()
        p = run_child(w)
        os.close(w)
        data = os.read(r, 65536).decode()
        os.close(r)
        self.assertEqual(p.stdout.split(), ["sent", "clear"])
        self.assertTrue(data.startswith('{"op":"open","name":"w"') or '"op":"open"' in data, data)


if __name__ == "__main__":
    unittest.main()
