"""Parameters and modules: the layers of a transformer block, built from autodiff ops."""

from .linear import Linear
from .module import Module, Parameter

__all__ = ["Linear", "Module", "Parameter"]
