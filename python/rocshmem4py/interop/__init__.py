"""Framework interop for rocshmem4py: ``rocshmem4py.interop.torch``."""
