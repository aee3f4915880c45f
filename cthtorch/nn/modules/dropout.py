"""torch.nn.modules.dropout (import path kept for user code)."""
from cthtorch.nn.modules.layers import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,  # noqa: F401
                                        FeatureAlphaDropout, _DropoutNd)
