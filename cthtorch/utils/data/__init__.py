"""cthtorch.utils.data: datasets, samplers, collation and the DataLoader."""
from cthtorch.utils.data.dataset import (  # noqa: F401
    Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset, random_split,
)
from cthtorch.utils.data.sampler import (  # noqa: F401
    Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler, BatchSampler,
)
from cthtorch.utils.data.distributed import DistributedSampler  # noqa: F401
from cthtorch.utils.data._utils.collate import default_collate, default_convert  # noqa: F401
from cthtorch.utils.data.dataloader import DataLoader, get_worker_info  # noqa: F401
from cthtorch.utils.data import distributed  # noqa: F401
