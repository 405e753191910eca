"""The layer classes of ``fnx.nn``, one family a file (and ``compiled``: what
``fnx.compile(module)`` returns, registered with ``fnx.compile`` on import)."""
from . import (activation, adaptive, container, conv, dropout, flatten, linear, loss, module,
               normalization, padding, pooling, rnn, sparse, transformer)
from . import compiled  # noqa: F401 - registers OptimizedModule with fnx.compile
# PyTorch's module paths of classes fnx keeps in another family's file
from . import batchnorm, instancenorm  # noqa: F401
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
# resampling and channel rearranging
from . import channelshuffle, fold, pixelshuffle, upsampling
from .channelshuffle import *  # noqa: F403
from .fold import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .upsampling import *  # noqa: F403
from . import distance
from .distance import *  # noqa: F403

__all__ = (activation.__all__ + adaptive.__all__ + container.__all__ + conv.__all__
           + dropout.__all__ + flatten.__all__
           + linear.__all__ + loss.__all__ + module.__all__ + normalization.__all__ +
           padding.__all__ + pooling.__all__ + rnn.__all__ + sparse.__all__ + transformer.__all__
           + channelshuffle.__all__ + fold.__all__ + pixelshuffle.__all__ + upsampling.__all__
           + distance.__all__)
