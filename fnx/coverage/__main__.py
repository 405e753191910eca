"""``python -m fnx.coverage [--format table|markdown|json] [--level aten|core|prim]``."""
import sys

from . import main

sys.exit(main())
