"""Root conftest: lets ``pytest fnx/<path>.py`` run one module's doctests.

Under ``--import-mode=importlib`` pytest imports a module it collects from its own spec,
after importing the parent packages; a package whose ``__init__`` imports that module has
then run it once already under its dotted name, and a second run redefines its operators
("operator aten::_softmax is already defined").  Importing each fnx module under its dotted
name first makes pytest find it in ``sys.modules`` and reuse it."""
import importlib
from pathlib import Path

_ROOT = Path(__file__).resolve().parent


def pytest_collect_file(file_path, parent):
    path = Path(file_path).resolve()
    if path.suffix != ".py" or path.parts[:len(_ROOT.parts) + 1] != _ROOT.parts + ("fnx",):
        return None
    parts = path.relative_to(_ROOT).with_suffix("").parts
    if parts[-1] == "__main__":
        return None     # a program (python -m fnx.coverage): running it is not importing it
    importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return None
