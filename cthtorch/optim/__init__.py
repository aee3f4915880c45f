"""cthtorch.optim: optimizers and learning-rate schedulers."""
from cthtorch.optim.optimizer import Optimizer  # noqa: F401
from cthtorch.optim.algorithms import SGD, Adam, AdamW, Adagrad, RMSprop, Adadelta, Adamax  # noqa: F401
from cthtorch.optim.lbfgs import LBFGS  # noqa: F401
from cthtorch.optim import lr_scheduler  # noqa: F401
from cthtorch.optim.algorithms_extra import NAdam, RAdam, ASGD, Rprop  # noqa: F401
from cthtorch.optim.sparse_adam import SparseAdam  # noqa: F401
from cthtorch.optim import swa_utils  # noqa: F401,E402
