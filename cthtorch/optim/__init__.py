"""cthtorch.optim: optimizers and learning-rate schedulers."""
from cthtorch.optim.optimizer import Optimizer  # noqa: F401
from cthtorch.optim.algorithms import SGD, Adam, AdamW, Adagrad, RMSprop, Adadelta, Adamax  # noqa: F401
from cthtorch.optim.lbfgs import LBFGS  # noqa: F401
from cthtorch.optim import lr_scheduler  # noqa: F401
from cthtorch.optim.nadam import NAdam  # noqa: F401
from cthtorch.optim.radam import RAdam  # noqa: F401
from cthtorch.optim.asgd import ASGD  # noqa: F401
from cthtorch.optim.rprop import Rprop  # noqa: F401
from cthtorch.optim.sparse_adam import SparseAdam  # noqa: F401
from cthtorch.optim.adafactor import Adafactor  # noqa: F401
from cthtorch.optim import swa_utils  # noqa: F401,E402
from cthtorch.optim.muon import Muon  # noqa: F401
