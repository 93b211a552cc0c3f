"""nbval settings for the chapters: stderr (progress bars, warnings) is not
compared; stdout and results are."""


def pytest_collectstart(collector):
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("stderr",)
