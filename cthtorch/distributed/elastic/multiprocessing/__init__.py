"""torch.distributed.elastic.multiprocessing: only .errors (record) is here;
cthtorch's ranks are started by MPI (cthtorch.distributed.run), not by
elastic's process contexts."""
