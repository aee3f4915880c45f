"""Losses not in loss.py: MultiMargin, MultiLabelMargin, MultiLabelSoftMargin, TripletMarginWithDistance, CTC."""
from cthtorch.nn import functional as F
from cthtorch.nn.modules.loss import NLLLoss, _Loss, _WeightedLoss

__all__ = ["MultiMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginWithDistanceLoss",
           "CTCLoss", "NLLLoss2d"]


class MultiMarginLoss(_WeightedLoss):
    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError("MultiMarginLoss: expected weight to be None or 1D tensor, got %dD instead"
                             % weight.dim())
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError("TripletMarginWithDistanceLoss: expected margin to be greater than 0, got %s instead"
                             % margin)
        self.distance_function = distance_function if distance_function is not None else F.pairwise_distance
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    __constants__ = ["blank", "reduction"]

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class NLLLoss2d(NLLLoss):
    pass
