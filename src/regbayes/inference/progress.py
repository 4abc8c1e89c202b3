"""The one progress bar of the library (tqdm), or nothing when progress is off."""
from __future__ import annotations


class _Silent:
    def update(self, n=1):
        pass

    def set_postfix(self, **values):
        pass

    def close(self):
        pass


def progress_bar(total: int, desc: str, enabled: bool, unit: str = "it"):
    """A tqdm bar of ``total`` steps when ``enabled``, else an object that ignores calls."""
    if not enabled:
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=False)
