"""The lifetime of a C handle shared by an object and the handles it lends. Internal: use the
`cuview` package."""


class _Handle:
    """A C handle that `free` frees once, when closed or when nothing refers to it any more. An
    object and the borrowed handles inside it (a group's part clients, a group frame's part frames)
    share one, so that no reference cycle delays the freeing."""

    def __init__(self, h, free):
        self.h, self._free = h, free

    def close(self):
        if self.h:
            h, self.h = self.h, None
            self._free(h)

    def __del__(self):
        self.close()
