"""torch.distributed.elastic: what training scripts import from it. The
launcher itself is cthtorch.distributed.run (ranks started through MPI); of
the elastic agent's API only multiprocessing.errors.record and its
ErrorHandler are here."""
