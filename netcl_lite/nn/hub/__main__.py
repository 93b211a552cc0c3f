"""``python -m netcl_lite.nn.hub [NAME ...]``: fetch each model (all when
none is named) into the cache and print its path.

A file of its own, so that running the package does not import it twice
(Python warns when ``-m`` runs a module that ``netcl_lite.nn`` imported
already; a package's ``__main__`` is imported by nobody else).
"""

from netcl_lite.nn.hub import main

if __name__ == "__main__":
    main()
