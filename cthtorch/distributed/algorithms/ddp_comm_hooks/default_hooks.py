"""The default DDP communication hooks. state is the process group (None: the
default group). allreduce_hook averages the bucket as DDP's built-in
reduction does; the compress hooks average a float16/bfloat16 copy (half the
bytes on the wire) and write it back into the bucket's buffer."""
import cthtorch
import cthtorch.distributed as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook", "fp16_compress_wrapper",
           "bf16_compress_wrapper"]


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def _allreduce_fut(process_group, tensor):
    """tensor averaged over the group, in place; a Future of it."""
    group = _group(process_group)
    tensor.div_(dist.get_world_size(group))
    fut = dist.all_reduce(tensor, group=group, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


def allreduce_hook(process_group, bucket):
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = _group(process_group)
    buffer = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()
    compressed = buffer.to(dtype).div_(dist.get_world_size(group))

    def decompress(fut):
        value = fut if isinstance(fut, cthtorch.Tensor) else fut.value()[0]
        buffer.copy_(value)
        return buffer
    return dist.all_reduce(compressed, group=group, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    return _compress_hook(cthtorch.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    return _compress_hook(cthtorch.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, name, hook):
    """Runs hook on a dtype copy of the bucket and writes the result back."""
    def wrapper(state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))

        def decompress(fut):
            buffer.copy_(fut.value())
            return buffer
        return hook(state, bucket).then(decompress)
    wrapper.__name__ = wrapper.__qualname__ = name
    return wrapper


def fp16_compress_wrapper(hook):
    return _compress_wrapper(cthtorch.float16, "fp16_compress_wrapper_hook", hook)


def bf16_compress_wrapper(hook):
    return _compress_wrapper(cthtorch.bfloat16, "bf16_compress_wrapper_hook", hook)
