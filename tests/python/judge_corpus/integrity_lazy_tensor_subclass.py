# expect: rejected  class: lazy-result  device: cpu  problem: level1/1
# Returns a tensor subclass holding the input; the swish is computed only when the checker touches the result
# (every torch function on it), so the timed forward does no work.
import torch
import torch.nn as nn


class DeferredSwish(torch.Tensor):
    @staticmethod
    def __new__(cls, source):
        instance = torch.Tensor._make_subclass(cls, source)
        instance._source = source
        return instance

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}

        def materialise(value):
            if isinstance(value, DeferredSwish):
                source = value._source
                return source * torch.sigmoid(source)
            return value

        with torch._C.DisableTorchFunctionSubclass():
            return func(*[materialise(a) for a in args], **{k: materialise(v) for k, v in kwargs.items()})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return DeferredSwish(x)
