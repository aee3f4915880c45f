"""torch.onnx.operators: the two shape helpers that once made dynamic sizes traceable; torch keeps this
module for backward compatibility (fairseq's SinusoidalPositionalEmbedding imports it)."""
import cthtorch

__all__ = []

shape_as_tensor = cthtorch._shape_as_tensor
reshape_from_tensor_shape = cthtorch._reshape_from_tensor
