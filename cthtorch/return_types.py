"""Named tuples that ops return, as torch.return_types.max(values=..., indices=...)."""
import collections as _collections

from cthtorch import _C

_fields = {
    "max": ("values", "indices"), "min": ("values", "indices"), "sort": ("values", "indices"),
    "topk": ("values", "indices"), "kthvalue": ("values", "indices"), "median": ("values", "indices"),
    "nanmedian": ("values", "indices"), "mode": ("values", "indices"), "cummax": ("values", "indices"),
    "cummin": ("values", "indices"), "aminmax": ("min", "max"), "frexp": ("mantissa", "exponent"),
    "slogdet": ("sign", "logabsdet"), "qr": ("Q", "R"), "svd": ("U", "S", "V"),
    "linalg_slogdet": ("sign", "logabsdet"), "linalg_qr": ("Q", "R"), "linalg_svd": ("U", "S", "Vh"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_cholesky_ex": ("L", "info"),
    "histogram": ("hist", "bin_edges"), "histogramdd": ("hist", "bin_edges"), "geqrf": ("a", "tau"), "lu_unpack": ("P", "L", "U"),
}


def _make(name, fields):
    base = _collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join("%s=%r" % (f, getattr(self, f)) for f in fields)
        return "torch.return_types.%s(\n%s)" % (name, body)
    cls = type(name, (base,), {"__repr__": __repr__, "__slots__": (), "__module__": "torch.return_types"})
    return cls


for _name, _f in _fields.items():
    globals()[_name] = _make(_name, _f)
# what out=(a, b) returns, as torch.return_types.sort_out
for _name in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin", "frexp",
              "aminmax", "histogram", "slogdet", "qr", "svd", "geqrf", "linalg_slogdet", "linalg_qr", "linalg_svd",
              "linalg_eigh", "linalg_eig", "linalg_lstsq", "linalg_inv_ex", "linalg_cholesky_ex", "lu_unpack"):
    globals()[_name + "_out"] = _make(_name + "_out", _fields[_name])

_C._set_return_types(__import__(__name__, fromlist=["_"]))
