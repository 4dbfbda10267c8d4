"""Spark's Python daemon with the builder's modules imported: each task's worker, forked
from it, starts without importing them again (workers end with their task, so that none
keeps an earlier task's memory: without this each task paid the imports). Used in local
mode, where Spark's Python is this one (`spark.python.daemon.module`); on a cluster Spark's
own daemon runs and the workers import what they need.
"""

from __future__ import annotations

from pyspark import daemon

from . import process, spark  # noqa: F401 - imported before the forks, which inherit them

if __name__ == "__main__":
    daemon.manager()
