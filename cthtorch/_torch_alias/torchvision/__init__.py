"""The opt-in `import torchvision` alias: with the torch alias on sys.path,
`import torchvision` gives cthtorch.vision and every `torchvision.X` the module
cthtorch.vision.X (the finder installed by the torch alias package answers
them). See ../torch/__init__.py."""
import sys

import torch   # the alias package beside this one: installs the finder, makes torch cthtorch
import cthtorch.vision

sys.modules["torchvision"] = cthtorch.vision
