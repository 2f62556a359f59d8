"""The ``dpcert`` command line."""
