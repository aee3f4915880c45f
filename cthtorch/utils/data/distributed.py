from cthtorch.utils.data.sampler import DistributedSampler  # noqa: F401
