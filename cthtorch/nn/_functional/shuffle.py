"""channel_shuffle (and its native_ spelling) as a reshape/transpose."""


def channel_shuffle(input, groups):
    if input.dim() < 3:
        raise RuntimeError("channel_shuffle expects input to have at least 3 dimensions, but got input with sizes %s"
                           % list(input.shape))
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of groups:%d" % groups)
    c = input.shape[1]
    if c % groups:
        raise RuntimeError("Number of channels must be divisible by groups. Got %d channels and %d groups."
                           % (c, groups))
    n, rest = input.shape[0], input.shape[2:]
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


native_channel_shuffle = channel_shuffle
