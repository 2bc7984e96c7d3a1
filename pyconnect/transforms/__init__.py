"""Single message transformations and predicates: the contracts, the chain, the built-in ports and
the ``transforms``/``predicates`` config syntax (see :mod:`pyconnect.transforms.config`)."""

from pyconnect.transforms.base import Predicate, Transformation
from pyconnect.transforms.chain import TransformationChain, TransformationStage

__all__ = ["Predicate", "Transformation", "TransformationChain", "TransformationStage"]
