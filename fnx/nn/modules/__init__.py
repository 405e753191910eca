"""The layer classes of ``fnx.nn``, one family a file."""
from .module import Module, RemovableHandle  # noqa: F401
from .linear import Identity, Linear, Bilinear  # noqa: F401
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,  # noqa: F401
                   ConvTranspose3d)
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d,  # noqa: F401
                      AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
                      AdaptiveMaxPool1d, AdaptiveMaxPool2d)
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm,  # noqa: F401
                            GroupNorm, RMSNorm, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d)
from .activation import (ReLU, ReLU6, LeakyReLU, PReLU, ELU, SELU, CELU, GELU,  # noqa: F401
                         SiLU, Mish, Tanh, Sigmoid, Hardtanh, Hardsigmoid, Hardswish,
                         Hardshrink, Softshrink, Tanhshrink, Softsign, Softplus, LogSigmoid,
                         Threshold, GLU, Softmax, Softmin, LogSoftmax, MultiheadAttention)
from .container import (Sequential, ModuleList, ModuleDict, ParameterList,  # noqa: F401
                        ParameterDict)
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .loss import (L1Loss, MSELoss, CrossEntropyLoss, NLLLoss, BCELoss,  # noqa: F401
                   BCEWithLogitsLoss, SmoothL1Loss, HuberLoss, KLDivLoss, SoftMarginLoss,
                   MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss,
                   GaussianNLLLoss, PoissonNLLLoss)
from .transformer import Transformer, TransformerEncoderLayer, TransformerEncoder  # noqa: F401

__all__ = [n for n in dir() if n[:1].isupper()]
