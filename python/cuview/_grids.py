"""cuview.Grid: where a field's cells are in the program's space — given to a Publisher, read back
from a publisher's description (Client.grid, Frame.grid, FieldView.grid). Internal: use the
`cuview` package."""


def _per_axis(values, axes, what, grid, default):
    """`values` as a tuple of floats, one per axis: None gives `default` on every axis, a number the
    same on every axis, a sequence one per axis (slowest first). ValueError naming `what`."""
    if values is None:
        return (float(default),) * axes
    if isinstance(values, (int, float)) or getattr(values, "ndim", None) == 0:
        return (float(values),) * axes
    values = tuple(float(v) for v in values)
    if len(values) != axes:
        raise ValueError(f"{grid}: {what} has {len(values)} values for {axes} axes; give one per axis, slowest "
                         f"first ({', '.join('zyx'[3 - axes:])}), or one number for all")
    return values


class Grid:
    """The grid a publisher's fields lie on, with the program's coordinates: cell index i along axis
    k has its centre at `origin[k] + i * spacing[k]`, in `units`. Every tuple is slowest axis first,
    as NumPy shapes are: (z, y, x) for a volume, (y, x) for a plane.

    Publishing, pass one to cuview.Publisher(grid=...): origin and spacing each a number (the same on
    every axis) or one value per axis; None: 0 and 1 (cell indices). Its shape is the fields':

        grid = cuview.Grid(origin=(0.0, -1.0, -1.0), spacing=(0.5, 0.02, 0.01), units="m")
        cuview.Publisher("heat", fields={"T": T[1:-1, 1:-1, 1:-1]}, grid=grid)

    Reading, Client.grid(field), Frame.grid(field) and FieldView.grid give the grid a field lies on,
    with `shape` (cells per axis) and `axes` (the axes' names, ("z", "y", "x") unless the program
    named them) filled in; coordinates() gives the cell centres. A publisher of protocol 7 names no
    grid: its fields' grid is then "grid", origin 0 and spacing 1."""

    __slots__ = ("name", "shape", "origin", "spacing", "units", "axes")

    def __init__(self, origin=None, spacing=None, units="", name="grid", shape=None, axes=None):
        self.name, self.units = str(name), str(units or "")
        self.shape = None if shape is None else tuple(int(n) for n in shape)
        self.axes = None if axes is None else tuple(str(a) for a in axes)
        # Kept as given until the grid's shape is known (_fitted).
        self.origin, self.spacing = origin, spacing
        if self.shape is not None:
            self._fit(self.shape, f"cuview.Grid '{self.name}'")

    def _fit(self, shape, what):
        """Fixes `shape` and turns origin and spacing into one float per axis. ValueError naming
        `what` for a count that is not the axes'."""
        self.shape = tuple(int(n) for n in shape)
        n = len(self.shape)
        self.origin = _per_axis(self.origin, n, "origin", what, 0.0)
        self.spacing = _per_axis(self.spacing, n, "spacing", what, 1.0)
        if self.axes is None:
            self.axes = tuple("xyzw"[n - 1 - k] for k in range(n))
        return self

    @classmethod
    def _described(cls, d):
        """The Grid of a describe reply's `grids` entry (docs/protocol.md)."""
        return cls(d.get("origin"), d.get("spacing"), d.get("units", ""), d.get("name", "grid"), d["dims"],
                   d.get("axes") or None)

    def coordinates(self):
        """The cell centres along each axis: a tuple of float64 NumPy arrays, slowest axis first, as
        numpy.meshgrid(*grid.coordinates(), indexing="ij") takes them."""
        import numpy as np
        if self.shape is None:
            raise ValueError(f"cuview.Grid '{self.name}' has no shape yet: a publisher's fields give it")
        return tuple(o + s * np.arange(n, dtype=np.float64) for o, s, n in zip(self.origin, self.spacing, self.shape))

    def __eq__(self, other):
        return isinstance(other, Grid) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self):
        units = f", units={self.units!r}" if self.units else ""
        return (f"cuview.Grid(name={self.name!r}, shape={self.shape}, origin={self.origin}, "
                f"spacing={self.spacing}{units}, axes={self.axes})")
