"""Upstream rocshmem4py's flat extension module, by its name: the raw functions (``(status,
handle)`` from ``rocshmem_team_split_strided``, no team tracking) and the constants. Programs
import ``rocshmem4py``; this module exists for those that reach the raw layer directly."""

from rocshmem4py._raw import *  # noqa: F401,F403
from rocshmem4py._raw import __all__  # noqa: F401
