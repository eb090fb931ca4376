"""The request queue in front of the engine: at most `max_running` requests are inside the engine
at once (vLLM's --max-num-seqs); the rest wait here in arrival order. Runs on the event loop only.
"""
import asyncio
from collections import deque


class Admission:
    def __init__(self, max_running):
        if max_running < 1:
            raise ValueError(f"max_running {max_running}: must be at least 1")
        self.max_running = max_running
        self.running = 0
        self._queue = deque()  # futures of waiting requests, arrival order

    @property
    def waiting(self):
        return len(self._queue)

    async def acquire(self):
        """Returns once the caller holds a slot. Cancelled while waiting: it leaves the queue."""
        if self.running < self.max_running and not self._queue:
            self.running += 1
            return
        fut = asyncio.get_running_loop().create_future()
        self._queue.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut in self._queue:
                self._queue.remove(fut)
            elif fut.done() and not fut.cancelled():
                self._release_slot()  # the slot was handed over just as the waiter went away
            raise

    def release(self):
        self._release_slot()

    def _release_slot(self):
        # Hand the slot straight to the oldest waiter, so no later arrival overtakes it.
        while self._queue:
            fut = self._queue.popleft()
            if not fut.done():
                fut.set_result(None)
                return
        self.running -= 1
