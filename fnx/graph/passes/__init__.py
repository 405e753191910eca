"""Graph passes: plain functions ``Graph -> Graph``, each usable and tested alone."""
from .functionalize import functionalize

__all__ = ["functionalize"]
