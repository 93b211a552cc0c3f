"""JupyterLab settings for the course (`make lab` and tests/site/test_lab.py).

- The file browser opens in chapters/, also when you follow the printed
  token URL (http://127.0.0.1:8888/lab?token=...).
- Each chapter shows once, as its notebook (NN_name.ipynb). The MyST twin
  NN_name.md is hidden from the listing; jupytext saves it with the notebook,
  and it still opens (as a notebook) by path.
"""

import pathlib

c = get_config()  # noqa: F821 (defined by Jupyter when it reads this file)
HERE = pathlib.Path(__file__).resolve().parent

c.ServerApp.root_dir = str(HERE.parents[1])
c.LabApp.app_settings_dir = str(HERE)  # overrides.json
c.ContentsManager.preferred_dir = "chapters"
c.ContentsManager.hide_globs = [
    "__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~",  # Jupyter's defaults
    "[0-9][0-9]_*.md",  # the chapters' text twins
]
